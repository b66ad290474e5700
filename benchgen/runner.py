"""Run many model requests: bounded concurrency, rate limits, retries, cache, resume, budget.

A stage module says "for these ids, here is the Request; write one JSON record per id to this
file" and calls :func:`run_requests` (async) or :func:`run_requests_sync`. Each output line is::

    {"id", "status": "ok"|"failed", "output": {...}|null, "failure_reason": null|"refusal"|
     "truncated"|"content_filter"|"unparsed"|"error"|<stage reason>, "error": detail|null,
     "usage": {"input_tokens", "output_tokens"}, "cached": bool, "attempts": int, "model": spec}

Output order is completion order, not input order. Rerunning on the same output file resumes:
ids already written are skipped (records failed with ``error`` — transport trouble — are dropped
and retried), and the response cache makes a rerun of a finished run cost zero provider calls.

Stops (the completed work is kept, a rerun resumes): :class:`BudgetExceeded` at ``max_cost``,
:class:`TooManyFailures` after ``max_consecutive_failures`` items failed in a row after retries,
:class:`FatalProviderError` on HTTP 400/401/403/404 (not retried). Each carries ``.summary``.

``python -m benchgen.runner --spec ... --in items.jsonl --out out.jsonl`` is a small CLI over it
(:mod:`benchgen.providers.cli`).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from benchgen.errors import BudgetExceeded, ConfigError
from benchgen.pricing import PriceTable
from benchgen.providers.base import (
    Completion,
    FatalProviderError,
    Message,
    Provider,
    Request,
    TooManyFailures,
    TransientProviderError,
    extract_json_object,
    parse_spec,
)
from benchgen.providers.cache import ResponseCache, cache_key
from benchgen.providers.journal import JsonlAppender, load_records
from benchgen.providers.limits import RateLimiter

REPAIR_PROMPT = (
    "Your previous answer was not valid JSON. Reply again with only the JSON object, exactly as "
    "specified: no prose, no Markdown fences, nothing before or after it."
)

Parse = Callable[[str, Completion], dict[str, Any]]
Call = Callable[[Request], Awaitable[Completion]]


class ItemFailure(Exception):
    """Raise from a ``parse`` callback to record the item as failed with ``reason``."""

    def __init__(self, reason: str, detail: str | None = None) -> None:
        super().__init__(detail or reason)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter; ``Retry-After`` is honoured when the server sends it."""

    max_attempts: int = 6
    initial: float = 1.0
    max_wait: float = 60.0

    def delay(self, exc: BaseException | None, attempt_number: int) -> float:
        """Seconds to wait after failed attempt ``attempt_number`` (1-based) raised ``exc``."""
        hint = getattr(exc, "retry_after", None)
        if hint is not None:
            return float(hint) * (1.0 + random.uniform(0.0, 0.1))
        cap = min(self.max_wait, self.initial * 2 ** (attempt_number - 1))
        return random.uniform(cap / 2, cap)

    def wait(self, state: RetryCallState) -> float:
        """tenacity ``wait`` callback."""
        return self.delay(state.outcome.exception() if state.outcome else None, state.attempt_number)


@dataclass
class RunSummary:
    """Totals of one run (what the run manifest records)."""

    stage: str
    model: str
    total: int = 0  # items seen in the input
    skipped: int = 0  # already in the output file before this run
    written: int = 0  # records written by this run
    ok: int = 0
    accepted: int = 0
    failed: dict[str, int] = field(default_factory=dict)
    calls: int = 0  # provider calls, retries included
    retries: int = 0
    cached: int = 0  # answers served from the cache
    input_tokens: int = 0  # billed (non-cached) tokens
    output_tokens: int = 0
    cost_usd: float = 0.0
    elapsed_s: float = 0.0
    stopped: str | None = None  # None | budget | failures | fatal
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class JsonAnswer:
    completion: Completion  # the last answer (the repair answer when one was needed)
    data: dict[str, Any] | None
    repaired: bool
    input_tokens: int
    output_tokens: int


async def complete_json(call: Provider | Call, request: Request, *, repair: bool = True) -> JsonAnswer:
    """Ask for a JSON object; if the answer does not parse, re-ask once for valid JSON only.

    ``data`` is None when even the repair answer is not a JSON object (record it as ``unparsed``)
    or the answer failed (refusal / truncation / content filter: see ``completion.failure_reason``).
    """
    fn: Call = call.complete if isinstance(call, Provider) else call
    first = await fn(request)
    tin, tout = first.input_tokens, first.output_tokens
    if not first.ok:
        return JsonAnswer(first, None, False, tin, tout)
    data = extract_json_object(first.text)
    if data is not None or not repair:
        return JsonAnswer(first, data, False, tin, tout)
    follow_up = Request(
        messages=(*request.messages, Message("assistant", first.text), Message("user", REPAIR_PROMPT)),
        system=request.system,
        temperature=request.temperature,
        max_tokens=request.max_tokens,
        json_mode=request.json_mode,
        item_id=request.item_id,
    )
    second = await fn(follow_up)
    tin, tout = tin + second.input_tokens, tout + second.output_tokens
    data = extract_json_object(second.text) if second.ok else None
    return JsonAnswer(second, data, True, tin, tout)


def default_parse(item_id: str, completion: Completion) -> dict[str, Any]:
    """Output of an item: the parsed JSON object in JSON mode, else ``{"text": ...}``."""
    data = completion.extra.get("json")
    return dict(data) if isinstance(data, dict) else {"text": completion.text}


@dataclass
class _Item:
    """Per-item bookkeeping (items run concurrently, so it cannot live on the run)."""

    attempts: int = 0
    cached: bool = True


class _Run:
    """State of one :func:`run_requests` call."""

    def __init__(
        self,
        provider: Provider,
        *,
        stage: str,
        cache: ResponseCache | None,
        refresh: bool,
        limiter: RateLimiter,
        retry: RetryPolicy,
        prices: PriceTable,
        max_cost: float | None,
        max_consecutive_failures: int,
        parse: Parse,
        accept: Callable[[dict[str, Any]], bool] | None,
        repair_json: bool,
    ) -> None:
        self.provider = provider
        self.cache = cache
        self.refresh = refresh
        self.limiter = limiter
        self.retry = retry
        self.price = prices.price(provider.spec)
        self.max_cost = max_cost
        self.max_failures = max_consecutive_failures
        self.parse = parse
        self.accept = accept
        self.repair_json = repair_json
        self.summary = RunSummary(stage=stage, model=str(provider.spec))
        self.consecutive_failures = 0
        self.stop_exc: BaseException | None = None

    async def call(self, request: Request, ctx: _Item) -> Completion:
        """One answer: cache, then rate limit + tenacity retries around the provider."""
        key = cache_key(self.provider.spec, request) if self.cache is not None else ""
        if self.cache is not None and not self.refresh:
            hit = self.cache.get(key)
            if hit is not None:
                self.summary.cached += 1
                return hit
        ctx.cached = False
        try:  # fast path: the first attempt runs without building a tenacity controller
            completion, estimate = await self._attempt(request, ctx)
        except TransientProviderError as first:
            if self.retry.max_attempts <= 1:
                raise
            completion, estimate = await self._retry(request, ctx, first)
        if self.limiter.active:
            self.limiter.settle(estimate, completion.input_tokens + completion.output_tokens)
        s = self.summary
        s.input_tokens += completion.input_tokens
        s.output_tokens += completion.output_tokens
        if self.price is not None:
            s.cost_usd += self.price.cost(completion.input_tokens, completion.output_tokens)
        if self.cache is not None:
            self.cache.put(key, completion)
        return completion

    async def _attempt(self, request: Request, ctx: _Item) -> tuple[Completion, int]:
        estimate = await self.limiter.acquire(request) if self.limiter.active else 0
        self.summary.calls += 1
        ctx.attempts += 1
        return await self.provider.complete(request), estimate

    async def _retry(
        self, request: Request, ctx: _Item, first: TransientProviderError
    ) -> tuple[Completion, int]:
        """Attempts 2..max_attempts with tenacity (exponential backoff + jitter, Retry-After)."""
        policy = self.retry
        await asyncio.sleep(policy.delay(first, 1))
        async for attempt in AsyncRetrying(
            retry=retry_if_exception_type(TransientProviderError),
            stop=stop_after_attempt(policy.max_attempts - 1),  # the first attempt already ran
            wait=lambda st: policy.delay(
                st.outcome.exception() if st.outcome else None, st.attempt_number + 1
            ),
            reraise=True,
        ):
            with attempt:
                self.summary.retries += 1
                result = await self._attempt(request, ctx)
        return result

    async def process(self, item_id: str, request: Request) -> dict[str, Any]:
        """Answer one item and build its output record (never raises for item-level failures)."""
        ctx = _Item()

        def call(r: Request) -> Awaitable[Completion]:
            return self.call(r, ctx)

        rec: dict[str, Any] = {
            "id": item_id,
            "model": str(self.provider.spec),
            "status": "failed",
            "output": None,
            "failure_reason": None,
            "error": None,
        }
        usage = {"input_tokens": 0, "output_tokens": 0}
        try:
            if request.json_mode:
                ans = await complete_json(call, request, repair=self.repair_json)
                completion = ans.completion
                usage = {"input_tokens": ans.input_tokens, "output_tokens": ans.output_tokens}
                if ans.data is not None:
                    completion.extra["json"] = ans.data
                elif completion.ok:
                    rec["failure_reason"], rec["error"] = "unparsed", completion.text[:2000]
            else:
                completion = await call(request)
                usage = {"input_tokens": completion.input_tokens, "output_tokens": completion.output_tokens}
        except TransientProviderError as exc:
            rec["failure_reason"], rec["error"] = "error", f"{exc.message} (after {ctx.attempts} attempts)"
            completion = None
        self.consecutive_failures = self.consecutive_failures + 1 if completion is None else 0
        if completion is not None and rec["failure_reason"] is None:
            if not completion.ok:
                rec["failure_reason"] = completion.failure_reason
                rec["error"] = completion.extra.get("detail") or completion.extra.get("refusal")
            else:
                try:
                    rec["output"] = self.parse(item_id, completion)
                    rec["status"] = "ok"
                except ItemFailure as exc:
                    rec["failure_reason"], rec["error"] = exc.reason, exc.detail
                except Exception as exc:  # a bug in a stage's parser must not kill a long run
                    rec["failure_reason"], rec["error"] = "parse_error", f"{type(exc).__name__}: {exc}"
        rec["usage"] = usage
        rec["cached"] = ctx.cached and completion is not None
        rec["attempts"] = ctx.attempts
        return rec

    def account(self, rec: dict[str, Any]) -> None:
        s = self.summary
        s.written += 1
        if rec["status"] == "ok":
            s.ok += 1
            if self.accept is None or self.accept(rec):
                s.accepted += 1
        else:
            reason = str(rec["failure_reason"])
            s.failed[reason] = s.failed.get(reason, 0) + 1
        if self.stop_exc is None and self.max_cost is not None and s.cost_usd >= self.max_cost:
            s.stopped = "budget"
            self.stop_exc = BudgetExceeded(
                f"budget reached: spent ${s.cost_usd:.4f} of --max-cost ${self.max_cost:.4f} "
                f"({s.written} records written this run)",
                hint="completed work is kept; rerun with a higher --max-cost to resume",
            )
        if self.stop_exc is None and self.consecutive_failures >= self.max_failures:
            s.stopped = "failures"
            self.stop_exc = TooManyFailures(
                f"stopped after {self.consecutive_failures} consecutive failed requests to {s.model} "
                f"(last error: {rec['error']})",
                hint="check the provider status, base URL and rate limits; completed work is kept and a "
                "rerun resumes",
            )


async def run_requests(
    provider: Provider | str,
    items: Iterable[tuple[str, Request]],
    out_path: str | Path,
    *,
    concurrency: int = 16,
    parse: Parse = default_parse,
    stage: str = "run",
    cache: ResponseCache | str | Path | bool | None = True,
    refresh: bool = False,
    rpm: float | None = None,
    tpm: float | None = None,
    retry: RetryPolicy | None = None,
    max_cost: float | None = None,
    pricing: str | Path | dict[str, Any] | None = None,
    max_consecutive_failures: int = 10,
    accept: Callable[[dict[str, Any]], bool] | None = None,
    repair_json: bool = True,
    quiet: bool = False,
    total: int | None = None,
    api_key_env: str | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
) -> RunSummary:
    """Answer every ``(id, Request)`` not yet in ``out_path`` and append one record per id.

    ``provider`` is a :class:`Provider` (the caller closes it) or a spec string (built with
    :func:`make_provider` and closed here). ``cache``: True -> default dir (``$BENCHGEN_CACHE`` or
    ``.cache/benchgen``), a path -> that dir, a :class:`ResponseCache`, or False/None -> no cache.
    ``parse(id, completion)`` turns a successful answer into the record's ``output`` (raise
    :class:`ItemFailure` to record a stage-specific failure). Requests with ``json_mode`` go
    through :func:`complete_json` (one repair re-ask, then ``unparsed``).
    """
    spec = parse_spec(provider) if isinstance(provider, str) else provider.spec
    if concurrency < 1:
        raise ConfigError("concurrency must be >= 1")
    prices = PriceTable.load(pricing)
    if max_cost is not None and prices.price(spec) is None:
        raise ConfigError(
            f"--max-cost is set but no price is known for model {spec.model!r}",
            hint="add it to a pricing YAML (models: {NAME: {input: USD/Mtok, output: USD/Mtok}}) and "
            "pass it with BENCHGEN_PRICING=path",
        )
    done = load_records(out_path)
    if max_cost is not None and max_cost <= 0:
        exc = BudgetExceeded(
            f"no budget left for {spec} (--max-cost reached before this stage started)",
            hint="completed work is kept; rerun with a higher --max-cost to resume",
        )
        exc.summary = RunSummary(stage=stage, model=str(spec), stopped="budget", message=exc.message)  # type: ignore[attr-defined]
        raise exc
    own_provider = isinstance(provider, str)
    if isinstance(provider, str):
        from benchgen.providers.registry import make_provider

        provider = make_provider(provider, api_key_env, max_connections=max(concurrency, 16))
    own_cache = not isinstance(cache, ResponseCache) and cache not in (None, False)
    store: ResponseCache | None
    if isinstance(cache, ResponseCache):
        store = cache
    elif cache in (None, False):
        store = None
    else:
        store = ResponseCache(None if cache is True else Path(str(cache)))
    run = _Run(
        provider,
        stage=stage,
        cache=store,
        refresh=refresh,
        limiter=RateLimiter(rpm, tpm),
        retry=retry or RetryPolicy(),
        prices=prices,
        max_cost=max_cost,
        max_consecutive_failures=max_consecutive_failures,
        parse=parse,
        accept=accept,
        repair_json=repair_json,
    )
    out = JsonlAppender(out_path)
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    from benchgen.providers.progress import RunProgress  # keeps rich off the import path

    bar = RunProgress(stage, total=total, quiet=quiet, done_before=len(done))
    iterator = iter(items)
    started: set[str] = set()
    t0 = time.monotonic()
    s = run.summary

    async def worker() -> None:
        for item_id, request in iterator:
            if run.stop_exc is not None:
                return
            s.total += 1
            if item_id in done or item_id in started:
                s.skipped += item_id in done
                continue
            started.add(item_id)
            try:
                rec = await run.process(item_id, request)
            except FatalProviderError as exc:
                s.stopped = s.stopped or "fatal"
                run.stop_exc = run.stop_exc or exc
                return
            except BaseException as exc:  # a crash: stop the other workers too, keep written work
                run.stop_exc = run.stop_exc or exc
                raise
            out.write(rec)
            run.account(rec)
            bar.update(s)
            if on_record is not None:
                on_record(rec)

    tasks = [asyncio.create_task(worker()) for _ in range(concurrency)]
    try:
        await asyncio.gather(*tasks)
    finally:
        for t in tasks:
            t.cancel()
        s.elapsed_s = round(time.monotonic() - t0, 3)
        bar.close(s)
        await out.aclose()
        if store is not None:
            store.close() if own_cache else store.flush()
        if own_provider:
            await provider.aclose()
    if run.stop_exc is not None:
        s.message = str(run.stop_exc)
        run.stop_exc.summary = s  # type: ignore[attr-defined]
        raise run.stop_exc
    return s


def run_requests_sync(*args: Any, **kwargs: Any) -> RunSummary:
    """Blocking wrapper around :func:`run_requests` (same arguments)."""
    return asyncio.run(run_requests(*args, **kwargs))


if __name__ == "__main__":  # pragma: no cover - exercised by the SIGKILL test in a subprocess
    from benchgen.providers.cli import main

    raise SystemExit(main())
