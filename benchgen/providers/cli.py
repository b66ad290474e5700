"""``python -m benchgen.runner``: run a JSONL file of requests through a provider.

Input lines: ``{"id": ..., "prompt": "..."}`` or ``{"id": ..., "messages": [{"role", "content"}...]}``
with optional ``system``, ``max_tokens``, ``temperature``, ``json_mode``. Output: the runner's
records (see :mod:`benchgen.runner`). Rerunning the same command resumes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchgen.errors import BenchgenError, DataError
from benchgen.providers.base import Message, Request


def request_from_dict(d: dict[str, Any]) -> Request:
    """A :class:`Request` from a JSON item (``prompt`` or ``messages``)."""
    if "messages" in d:
        msgs = tuple(
            Message(m["role"], m["content"]) if isinstance(m, dict) else Message(m[0], m[1])
            for m in d["messages"]
        )
    else:
        msgs = (Message("user", str(d["prompt"])),)
    return Request(
        messages=msgs,
        system=d.get("system"),
        temperature=float(d.get("temperature", 0.0)),
        max_tokens=int(d.get("max_tokens", 1024)),
        json_mode=bool(d.get("json_mode", False)),
        item_id=str(d["id"]),
    )


def read_items(path: str | Path) -> Iterator[tuple[str, Request]]:
    """Yield ``(id, Request)`` from a JSONL file."""
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
                yield str(d["id"]), request_from_dict(d)
            except (ValueError, KeyError, TypeError, IndexError) as exc:
                raise DataError(
                    f"{path}:{n}: not a request item ({exc})",
                    hint='each line needs "id" and "prompt" (or "messages")',
                ) from None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchgen.runner", description=__doc__)
    p.add_argument("--spec", required=True, help="PROVIDER:MODEL[@BASE_URL]")
    p.add_argument("--in", dest="inp", required=True, help="input JSONL of requests")
    p.add_argument("--out", required=True, help="output JSONL (appended; rerun resumes)")
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--api-key-env", default=None, help="read the API key from this variable")
    p.add_argument(
        "--cache-dir", default=None, help="response cache dir (default $BENCHGEN_CACHE or .cache/benchgen)"
    )
    p.add_argument("--no-cache", action="store_true")
    p.add_argument("--refresh", action="store_true", help="ignore cached answers (still stores new ones)")
    p.add_argument("--rpm", type=float, default=None, help="requests per minute limit")
    p.add_argument("--tpm", type=float, default=None, help="tokens per minute limit")
    p.add_argument("--max-cost", type=float, default=None, help="stop when this many USD are spent")
    p.add_argument("--pricing", default=None, help="pricing YAML overriding the defaults")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    p.add_argument("--max-attempts", type=int, default=6)
    p.add_argument("--max-consecutive-failures", type=int, default=10)
    p.add_argument("--quiet", action="store_true")
    return p


async def _run(args: argparse.Namespace) -> Any:
    from benchgen.providers.registry import make_provider
    from benchgen.runner import RetryPolicy, run_requests

    items = list(read_items(args.inp))
    provider = make_provider(
        args.spec, args.api_key_env, timeout=args.timeout, max_connections=max(args.concurrency, 16)
    )
    try:
        return await run_requests(
            provider,
            items,
            args.out,
            concurrency=args.concurrency,
            cache=False if args.no_cache else (args.cache_dir or True),
            refresh=args.refresh,
            rpm=args.rpm,
            tpm=args.tpm,
            max_cost=args.max_cost,
            pricing=args.pricing,
            retry=RetryPolicy(max_attempts=args.max_attempts),
            max_consecutive_failures=args.max_consecutive_failures,
            quiet=args.quiet,
        )
    finally:
        await provider.aclose()


def main(argv: list[str] | None = None) -> int:
    import asyncio

    args = build_parser().parse_args(argv)
    try:
        summary = asyncio.run(_run(args))
    except BenchgenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    print(json.dumps(summary.to_dict(), sort_keys=True))
    return 0
