"""Runner: retries, timeouts, failure reasons, JSON repair, cache, budget, consecutive-failure stop,
resume after a torn write; all through the real SDKs against the scripted server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from scripted_server import ScriptedServer

from benchgen.errors import BudgetExceeded, ConfigError
from benchgen.providers.base import FatalProviderError, Message, Request, TooManyFailures
from benchgen.providers.generation import build_generation_request, generation_parser
from benchgen.providers.journal import load_records
from benchgen.providers.registry import make_provider
from benchgen.runner import RetryPolicy, complete_json, run_requests

FAST = RetryPolicy(max_attempts=4, initial=0.01, max_wait=0.05)


def spec_for(kind: str, srv: ScriptedServer) -> str:
    return f"openai:m@{srv.openai_url}" if kind == "openai" else f"anthropic:claude-test@{srv.url}"


def items(prompts: list[str], json_mode: bool = False) -> list[tuple[str, Request]]:
    return [
        (f"id{i}", Request((Message("user", p),), json_mode=json_mode, item_id=f"id{i}"))
        for i, p in enumerate(prompts)
    ]


def run(kind: str, srv: ScriptedServer, its, out: Path, *, timeout: float = 5.0, **kw):
    kw.setdefault("retry", FAST)
    kw.setdefault("quiet", True)

    async def go():
        provider = make_provider(spec_for(kind, srv), timeout=timeout)
        try:
            return await run_requests(provider, its, out, **kw)
        finally:
            await provider.aclose()

    return asyncio.run(go())


def read(out: Path) -> list[dict]:
    return [json.loads(line) for line in out.read_text().splitlines()]


def by_id(out: Path) -> dict[str, dict]:
    recs = read(out)
    ids = [r["id"] for r in recs]
    assert len(ids) == len(set(ids)), "duplicate ids in output"
    return {r["id"]: r for r in recs}


KINDS = ("openai", "anthropic")


@pytest.mark.parametrize("kind", KINDS)
def test_retry_after_is_honoured(kind, srv, tmp_path):
    prompt = "p <<429x1:0.4>>"
    summary = run(kind, srv, items([prompt]), tmp_path / "out.jsonl", cache=False)
    rec = by_id(tmp_path / "out.jsonl")["id0"]
    assert rec["status"] == "ok" and rec["attempts"] == 2
    assert srv.by_prompt[prompt] == 2
    assert summary.retries == 1 and summary.calls == 2
    first, second = (e["t"] for e in srv.log if e["prompt"] == prompt)
    # the backoff alone (initial 0.01 s) would have retried far sooner than Retry-After: 0.4
    assert 0.4 <= second - first < 1.0


@pytest.mark.parametrize("kind", KINDS)
def test_500_retried_then_ok(kind, srv, tmp_path):
    summary = run(kind, srv, items(["a <<500x2>>", "b"]), tmp_path / "out.jsonl", cache=False)
    recs = by_id(tmp_path / "out.jsonl")
    assert recs["id0"]["status"] == "ok" and recs["id0"]["attempts"] == 3
    assert srv.by_prompt["a <<500x2>>"] == 3 and srv.by_prompt["b"] == 1
    assert summary.ok == 2 and summary.retries == 2


@pytest.mark.parametrize("kind", KINDS)
def test_401_not_retried_and_stops_the_run(kind, srv, tmp_path):
    out = tmp_path / "out.jsonl"
    prompts = ["fine 0", "fine 1", "bad <<401>>"] + [f"later {i}" for i in range(20)]
    with pytest.raises(FatalProviderError) as exc:
        run(kind, srv, items(prompts), out, cache=False, concurrency=1)
    assert exc.value.status == 401 and "key" in str(exc.value)
    assert srv.by_prompt["bad <<401>>"] == 1  # not retried
    assert exc.value.summary.stopped == "fatal"
    recs = by_id(out)
    assert set(recs) == {"id0", "id1"}  # completed work kept, the failed item is not recorded
    assert sum(srv.by_prompt[f"later {i}"] for i in range(20)) == 0  # stopped: no hammering


@pytest.mark.parametrize("kind", KINDS)
def test_timeout_is_retried(kind, srv, tmp_path):
    run(kind, srv, items(["slowpoke <<hangx1>>"]), tmp_path / "out.jsonl", cache=False, timeout=0.4)
    rec = by_id(tmp_path / "out.jsonl")["id0"]
    assert rec["status"] == "ok" and rec["attempts"] == 2
    assert srv.by_prompt["slowpoke <<hangx1>>"] == 2


@pytest.mark.parametrize("kind", KINDS)
def test_failure_reasons_recorded(kind, srv, tmp_path):
    prompts = ["t <<truncate>>", "r <<refusal>>", "f <<filter>>", "ok"]
    summary = run(kind, srv, items(prompts), tmp_path / "out.jsonl", cache=False)
    recs = by_id(tmp_path / "out.jsonl")
    assert recs["id0"]["failure_reason"] == "truncated"
    assert recs["id1"]["failure_reason"] == "refusal"
    assert recs["id2"]["failure_reason"] == ("content_filter" if kind == "openai" else "refusal")
    assert recs["id3"]["status"] == "ok" and recs["id3"]["output"]["text"].startswith("echo")
    assert all(r["status"] == "failed" and r["output"] is None for k, r in recs.items() if k != "id3")
    assert summary.ok == 1 and sum(summary.failed.values()) == 3
    assert all(srv.by_prompt[p] == 1 for p in prompts)  # model answers are not retried


@pytest.mark.parametrize("kind", KINDS)
def test_malformed_json_repair_then_unparsed(kind, srv, tmp_path):
    prompts = ["m1 <<malformedx1>>", "m2 <<malformed>>", "good"]
    run(kind, srv, items(prompts, json_mode=True), tmp_path / "out.jsonl", cache=False)
    recs = by_id(tmp_path / "out.jsonl")
    assert recs["id0"]["status"] == "ok" and recs["id0"]["output"]["answer"] == "echo"  # repaired
    assert recs["id1"]["failure_reason"] == "unparsed" and "unterminated" in recs["id1"]["error"]
    assert recs["id2"]["status"] == "ok"
    assert srv.by_prompt["m1 <<malformedx1>>"] == 2 and srv.by_prompt["m2 <<malformed>>"] == 2
    assert srv.by_prompt["good"] == 1
    repair = [e for e in srv.log if e["prompt"] == "m2 <<malformed>>"][-1]["body"]["messages"]
    assert repair[-2]["role"] == "assistant" and "valid JSON" in repair[-1]["content"]


def test_complete_json_helper(srv):
    async def go():
        provider = make_provider(spec_for("openai", srv))
        try:
            return await complete_json(
                provider, Request((Message("user", "h <<malformedx1>>"),), json_mode=True)
            )
        finally:
            await provider.aclose()

    ans = asyncio.run(go())
    assert ans.repaired and ans.data == {"answer": "echo", "digest": ans.data["digest"]}
    assert ans.input_tokens > 0


@pytest.mark.parametrize("kind", KINDS)
def test_cache_second_run_zero_calls_refresh_calls(kind, srv, tmp_path):
    prompts = [f"cache me {i}" for i in range(12)] + ["m <<malformedx1>>"]
    its = items(prompts, json_mode=True)
    first = run(kind, srv, its, tmp_path / "a.jsonl", concurrency=4)
    calls = srv.total
    assert calls == 14 and first.cached == 0  # 13 items + 1 repair re-ask
    second = run(kind, srv, its, tmp_path / "b.jsonl", concurrency=4)  # fresh output, same cache
    assert srv.total == calls  # zero provider calls
    assert second.calls == 0 and second.cached == 14
    assert all(r["cached"] for r in read(tmp_path / "b.jsonl"))
    assert by_id(tmp_path / "a.jsonl")["id12"]["output"] == by_id(tmp_path / "b.jsonl")["id12"]["output"]
    resumed = run(kind, srv, its, tmp_path / "a.jsonl")  # same output: everything skipped
    assert resumed.skipped == 13 and resumed.written == 0 and srv.total == calls
    refreshed = run(kind, srv, its, tmp_path / "c.jsonl", refresh=True, concurrency=4)
    # every item asked again (the once-malformed one now answers well, so no repair re-ask)
    assert srv.total == calls + 13 and refreshed.calls == 13 and refreshed.cached == 0


def test_api_key_never_written(srv, tmp_path):
    run("openai", srv, items(["k1", "k2"], json_mode=True), tmp_path / "out.jsonl")
    blobs = [p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()]
    assert blobs and not any(b"test-openai-key" in b for b in blobs)


def test_max_cost_stops_and_keeps_completed_work(srv, tmp_path):
    out = tmp_path / "out.jsonl"
    pricing = {"base_url_models": {"m": {"input": 1000.0, "output": 1000.0}}}  # ~$0.04 per call here
    its = items([f"budget item {i}" for i in range(10)])
    with pytest.raises(BudgetExceeded) as exc:
        run("openai", srv, its, out, cache=False, concurrency=1, max_cost=0.1, pricing=pricing)
    s = exc.value.summary
    assert s.stopped == "budget" and s.cost_usd >= 0.1
    done = by_id(out)
    assert 1 <= len(done) < 10 and len(done) == s.written == srv.total
    per_call = s.cost_usd / s.written
    assert s.cost_usd - per_call < 0.1  # stopped at the first record that crossed the budget
    rest = run("openai", srv, its, out, cache=False, concurrency=1, max_cost=10.0, pricing=pricing)
    assert rest.skipped == len(done) and len(by_id(out)) == 10
    assert srv.total == 10  # nothing re-requested


def test_no_budget_left_makes_no_call(srv, tmp_path):
    pricing = {"base_url_models": {"m": {"input": 1.0, "output": 1.0}}}
    with pytest.raises(BudgetExceeded) as exc:
        run("openai", srv, items(["x"]), tmp_path / "o.jsonl", max_cost=0.0, pricing=pricing)
    assert exc.value.summary.stopped == "budget" and srv.total == 0


def test_max_cost_needs_a_price(srv, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    with pytest.raises(ConfigError, match="no price"):
        asyncio.run(
            run_requests(
                make_provider("openai:mystery-model"), [], tmp_path / "o.jsonl", max_cost=1.0, quiet=True
            )
        )


def test_consecutive_failures_stop_then_rerun_retries_errors(srv, tmp_path):
    out = tmp_path / "out.jsonl"
    its = items([f"down {i} <<500>>" for i in range(8)] + [f"up {i}" for i in range(4)])
    policy = RetryPolicy(max_attempts=2, initial=0.001, max_wait=0.002)
    with pytest.raises(TooManyFailures, match="3 consecutive") as exc:
        run("openai", srv, its, out, cache=False, concurrency=1, retry=policy, max_consecutive_failures=3)
    assert exc.value.summary.stopped == "failures"
    assert srv.total == 6  # 3 items x 2 attempts, then stop
    recs = read(out)
    assert [r["failure_reason"] for r in recs] == ["error"] * 3
    # a rerun drops the transient-error records and asks again (no duplicate ids left behind)
    with pytest.raises(TooManyFailures):
        run("openai", srv, its, out, cache=False, concurrency=1, retry=policy, max_consecutive_failures=3)
    assert len(by_id(out)) == 3


def test_resume_drops_torn_last_line(srv, tmp_path):
    out = tmp_path / "out.jsonl"
    its = items([f"torn {i}" for i in range(5)])
    run("openai", srv, its[:2], out, cache=False)
    with open(out, "ab") as fh:
        fh.write(b'{"id": "id2", "status": "ok", "outp')  # killed mid-write
    assert set(load_records(out)) == {"id0", "id1"}
    assert out.read_bytes().endswith(b"}\n")  # torn tail cut off
    before = srv.total
    run("openai", srv, its, out, cache=False)
    recs = by_id(out)
    assert sorted(recs) == [f"id{i}" for i in range(5)]
    assert srv.total - before == 3 and srv.by_prompt["torn 0"] == 1


def test_generation_end_to_end(srv, tmp_path):
    skeletons = {}
    for i in range(3):
        sk = {
            "id": f"s{i}",
            "domain": "finance",
            "task_type": "email",
            "subject": "self",
            "relation": "I",
            "style": "narrative",
            "tone": "casual",
            "essential": [{"attribute": "income", "value": f"${50 + i},000 a year", "relation": "my"}],
            "non_essential": [{"attribute": "pet", "value": f"a cat called Rex {i}", "relation": "my"}],
        }
        skeletons[sk["id"]] = sk
    its = [(k, build_generation_request(v, None)) for k, v in skeletons.items()]
    summary = run(
        "anthropic", srv, its, tmp_path / "gen.jsonl", parse=generation_parser(skeletons), stage="generate"
    )
    recs = by_id(tmp_path / "gen.jsonl")
    assert summary.ok == 3
    for k, rec in recs.items():
        q, spans = rec["output"]["query"], rec["output"]["spans"]
        assert set(spans) == {d["value"] for d in skeletons[k]["essential"] + skeletons[k]["non_essential"]}
        assert all(s in q for s in spans.values())
