"""Provider adapters through the real anthropic/openai SDKs against the local scripted server;
spec/registry/key handling, family heterogeneity, rate-limit arithmetic, generation prompt."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from scripted_server import ScriptedServer

from benchgen.errors import ConfigError, MissingKeyError
from benchgen.providers.base import (
    Completion,
    FatalProviderError,
    Message,
    Request,
    TransientProviderError,
    check_heterogeneous,
    extract_json_object,
    parse_retry_after,
)
from benchgen.providers.generation import (
    GenerationFailure,
    build_generation_request,
    generation_template_hash,
    parse_generation,
)
from benchgen.providers.limits import RateLimiter, TokenBucket
from benchgen.providers.registry import make_provider, resolve_api_key

KINDS = ("openai", "anthropic")


def spec_for(kind: str, srv: ScriptedServer) -> str:
    return f"openai:gpt-test@{srv.openai_url}" if kind == "openai" else f"anthropic:claude-test@{srv.url}"


def ask(
    kind: str,
    srv: ScriptedServer,
    prompt: str,
    *,
    timeout: float = 5.0,
    json_mode: bool = False,
    system: str | None = None,
    max_tokens: int = 64,
    temperature: float = 0.0,
) -> Completion:
    async def go() -> Completion:
        provider = make_provider(spec_for(kind, srv), timeout=timeout)
        try:
            return await provider.complete(
                Request(
                    (Message("user", prompt),),
                    system=system,
                    json_mode=json_mode,
                    max_tokens=max_tokens,
                    temperature=temperature,
                )
            )
        finally:
            await provider.aclose()

    return asyncio.run(go())


# ---- adapters on the wire --------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_default_answer_usage_and_wire_format(kind, srv):
    c = ask(kind, srv, "hello there", system="Be brief.", max_tokens=77, temperature=0.3)
    assert c.ok and c.failure_reason is None
    assert c.text.startswith("echo ")
    assert c.input_tokens > 0 and c.output_tokens > 0
    entry = srv.log[-1]
    body = entry["body"]
    assert entry["path"] == ("/v1/chat/completions" if kind == "openai" else "/v1/messages")
    assert entry["auth"] == f"Bearer test-{kind}-key"
    if kind == "openai":
        assert body["messages"][0] == {"role": "system", "content": "Be brief."}
        assert body["max_tokens"] == 77  # custom base URL -> max_tokens (OpenAI-compatible servers)
        assert body["temperature"] == 0.3
        assert "response_format" not in body
    else:
        assert body["system"] == "Be brief."
        assert body["max_tokens"] == 77
        assert "temperature" not in body  # API version 2026-10-21 rejects sampling parameters


@pytest.mark.parametrize("kind", KINDS)
def test_json_mode_request(kind, srv):
    c = ask(kind, srv, "give json", json_mode=True)
    assert extract_json_object(c.text) == json.loads(c.text)
    body = srv.log[-1]["body"]
    if kind == "openai":
        assert body["response_format"] == {"type": "json_object"}
    else:
        assert "JSON" in body["system"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("marker,reason", [("truncate", "truncated"), ("refusal", "refusal")])
def test_truncation_and_refusal_are_failures(kind, marker, reason, srv):
    c = ask(kind, srv, f"x <<{marker}>>")
    assert not c.ok
    assert c.failure_reason == reason


def test_openai_content_filter(srv):
    c = ask("openai", srv, "x <<filter>>")
    assert c.finish_reason == "content_filter" and c.failure_reason == "content_filter"


@pytest.mark.parametrize("kind", KINDS)
def test_status_errors_are_classified_and_sdk_does_not_retry(kind, srv):
    with pytest.raises(TransientProviderError) as exc:
        ask(kind, srv, "x <<500>>")
    assert exc.value.status == 500
    with pytest.raises(TransientProviderError) as exc:
        ask(kind, srv, "y <<429:0.7>>")
    assert exc.value.status == 429 and exc.value.retry_after == pytest.approx(0.7)
    with pytest.raises(FatalProviderError) as fatal:
        ask(kind, srv, "z <<401>>")
    assert fatal.value.status == 401 and "key" in str(fatal.value)
    # max_retries=0: the SDK sent each failing request exactly once
    assert srv.by_prompt["x <<500>>"] == 1 and srv.by_prompt["y <<429:0.7>>"] == 1
    assert srv.by_prompt["z <<401>>"] == 1


@pytest.mark.parametrize("kind", KINDS)
def test_timeout_is_transient(kind, srv):
    t0 = time.monotonic()
    with pytest.raises(TransientProviderError) as exc:
        ask(kind, srv, "x <<hang>>", timeout=0.4)
    assert exc.value.kind == "timeout"
    assert time.monotonic() - t0 < 5


def test_bad_key_is_fatal_401(srv, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "bad-key")
    with pytest.raises(FatalProviderError) as exc:
        ask("openai", srv, "hello")
    assert exc.value.status == 401


# ---- keys, specs, families -------------------------------------------------------------------
def test_missing_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("MY_KEY", raising=False)
    with pytest.raises(MissingKeyError, match="ANTHROPIC_API_KEY"):
        make_provider("anthropic:claude-sonnet-4-6")
    with pytest.raises(MissingKeyError, match="OPENAI_API_KEY"):
        make_provider("openai:gpt-4o")
    with pytest.raises(MissingKeyError, match="MY_KEY") as exc:
        make_provider("openai:gpt-4o", api_key_env="MY_KEY")
    assert exc.value.env_var == "MY_KEY"
    # a custom base URL (local OpenAI-compatible server) defaults to the placeholder key
    assert resolve_api_key("openai:qwen2.5-7b-instruct@http://127.0.0.1:8000/v1") == "EMPTY"
    with pytest.raises(MissingKeyError):
        resolve_api_key("anthropic:claude-x@http://127.0.0.1:9")


def test_api_key_env_is_used(srv, monkeypatch):
    monkeypatch.setenv("OTHER_VAR", "test-other-key")
    provider = make_provider(spec_for("openai", srv), api_key_env="OTHER_VAR")

    async def go():
        try:
            return await provider.complete(Request((Message("user", "k"),)))
        finally:
            await provider.aclose()

    asyncio.run(go())
    assert srv.log[-1]["auth"] == "Bearer test-other-key"


def test_heterogeneous_judge():
    with pytest.raises(ConfigError, match="family"):
        check_heterogeneous("anthropic:claude-sonnet-4-6", "anthropic:claude-haiku-4-5")
    with pytest.raises(ConfigError, match="openai-gpt"):
        check_heterogeneous("openai:gpt-4o", "openai:gpt-4o-mini")
    with pytest.raises(ConfigError):  # same family behind different providers/URLs
        check_heterogeneous("openai:qwen2.5-7b@http://a:1/v1", "openai:Qwen/qwen2.5-72b@http://b:2/v1")
    check_heterogeneous("anthropic:claude-sonnet-4-6", "openai:gpt-4o")
    check_heterogeneous("offline", "offline")
    check_heterogeneous("openai:gpt-4o", "openai:gpt-4o-mini", allow_same_family=True)


def test_retry_after_parsing():
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    assert parse_retry_after({}) is None


# ---- rate limiter arithmetic -----------------------------------------------------------------
class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_token_bucket_math():
    clock = FakeClock()
    bucket = TokenBucket(60, capacity=10, clock=clock, sleep=clock.sleep)  # 1 unit/s, burst 10
    assert all(bucket.try_acquire(1) for _ in range(10))
    assert not bucket.try_acquire(1)
    assert bucket.wait_time(1) == pytest.approx(1.0)
    assert bucket.wait_time(3) == pytest.approx(3.0)
    clock.now += 0.5
    assert bucket.wait_time(1) == pytest.approx(0.5)
    clock.now += 100  # refill is capped at capacity
    assert bucket.level == pytest.approx(10)

    async def take(n: int) -> float:
        total = 0.0
        for _ in range(n):
            total += await bucket.acquire(1)
        return total

    waited = asyncio.run(take(15))  # 10 from the burst, then 5 at 1/s
    assert waited == pytest.approx(5.0)
    assert sum(clock.slept) == pytest.approx(5.0)


def test_tokens_per_minute_settles_to_real_usage():
    clock = FakeClock()
    limiter = RateLimiter(rpm=600, tpm=6000, clock=clock, sleep=clock.sleep)  # 100 tokens/s
    req = Request((Message("user", "x" * 400),), max_tokens=900)  # estimate 101 + 900 = 1001
    est = asyncio.run(limiter.acquire(req))
    assert est == 1001
    assert limiter.tokens.level == pytest.approx(6000 - 1001)
    limiter.settle(est, 200)  # real usage was lower: refund 801
    assert limiter.tokens.level == pytest.approx(6000 - 200)
    limiter.settle(0, 7000)  # overshoot -> negative balance -> next call waits
    assert limiter.tokens.level < 0
    asyncio.run(limiter.acquire(Request((Message("user", "hi"),), max_tokens=99)))
    assert sum(clock.slept) == pytest.approx((1200 + 100) / 100, rel=0.02)


# ---- generation prompt -----------------------------------------------------------------------
SKELETON = {
    "id": "sk-1",
    "domain": "health",
    "task_type": "summarisation",
    "subject": "self",
    "relation": "I",
    "style": "direct",
    "tone": "neutral",
    "essential": [
        {
            "attribute": "medication",
            "family": "health",
            "subject": "self",
            "relation": "my",
            "value": "metformin",
            "span": "",
        }
    ],
    "non_essential": [
        {
            "attribute": "street",
            "family": "location",
            "subject": "self",
            "relation": "my",
            "value": "O'Brien Street",
            "span": "",
        }
    ],
}


def test_generation_request_and_parse(tax):
    req = build_generation_request(SKELETON, tax)
    assert req.json_mode and req.item_id == "sk-1"
    user = req.messages[0].content
    assert '"metformin"' in user and "O'Brien Street" in user and "Health" in user
    assert "spans" in req.system
    assert len(generation_template_hash()) == 64
    ok = parse_generation(
        json.dumps(
            {
                "query": "I take metformin; I live on O'Brien Street.",
                "spans": {"metformin": "metformin", "O'Brien Street": "O'Brien Street"},
            }
        ),
        SKELETON,
    )
    assert ok == (
        "I take metformin; I live on O'Brien Street.",
        {"metformin": "metformin", "O'Brien Street": "O'Brien Street"},
    )
    bad = parse_generation(
        json.dumps({"query": "I take it.", "spans": {"metformin": "Metformin", "O'Brien Street": "x"}}),
        SKELETON,
    )
    assert isinstance(bad, GenerationFailure) and bad == "span_not_in_query" and "Metformin" in bad.detail
    assert (
        parse_generation('{"query": "I take metformin", "spans": {"metformin": "metformin"}}', SKELETON)
        == "span_missing"
    )
    assert parse_generation("not json", SKELETON) == "unparsed"
    assert parse_generation('{"spans": {}}', SKELETON) == "missing_query"


def test_generation_request_without_taxonomy():
    req = build_generation_request(SKELETON, None)
    assert "summarisation" in req.messages[0].content


@pytest.mark.parametrize("kind", KINDS)
def test_connection_refused_is_transient(kind, monkeypatch):
    import socket

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    spec = (
        f"openai:m@http://127.0.0.1:{port}/v1"
        if kind == "openai"
        else f"anthropic:claude-x@http://127.0.0.1:{port}"
    )

    async def go():
        provider = make_provider(spec, timeout=2)
        try:
            return await provider.complete(Request((Message("user", "hi"),)))
        finally:
            await provider.aclose()

    with pytest.raises(TransientProviderError) as exc:
        asyncio.run(go())
    # openai's vendored aiohttp transport maps refused connections to ConnectTimeout
    assert exc.value.kind in ("connection", "timeout") and exc.value.status is None
