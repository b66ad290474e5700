"""Throughput: benchgen's runner vs a bare SDK loop against the scripted server (``make bench``).

The scripted server (tests/scripted_server.py) runs in its own process with a fixed latency
(default 0.25 s). For each concurrency C (default 64 and 256) two client phases run, each in a
fresh subprocess (so peak memory is per phase), against the same server:

* ``bare``: ``openai.AsyncOpenAI`` with ``DefaultAioHttpClient``, ``max_retries=0``, an
  ``asyncio.Semaphore(C)`` and ``gather`` over N ``chat.completions.create`` calls;
* ``runner``: :func:`benchgen.runner.run_requests` through ``make_provider("openai:...@URL")``
  (same SDK and aiohttp transport) at ``concurrency=C``, with the response cache and the
  append-only JSONL output enabled (as in real runs) and the progress bar off.

Each phase first warms up (C calls), then times N calls (default 16*C) with unique prompts;
phases are repeated (default 2, interleaved) and the best of each is kept, since other processes
on a small machine add noise. CPU ms/call (process time incl. setup and warm-up) is load-independent.
Printed: calls/s for both, their ratio (goal >= 0.9) and each phase's peak RSS (getrusage).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


async def _bare(url: str, n: int, c: int, tag: str) -> float:
    import httpx2
    import openai

    client = openai.AsyncOpenAI(
        api_key="EMPTY",
        base_url=url,
        max_retries=0,
        http_client=openai.DefaultAioHttpClient(
            limits=httpx2.Limits(max_connections=max(c, 16), max_keepalive_connections=max(c, 16))
        ),
    )
    sem = asyncio.Semaphore(c)

    async def one(i: int) -> None:
        async with sem:
            await client.chat.completions.create(
                model="bench",
                messages=[{"role": "user", "content": f"bare {tag} {i}"}],
                max_tokens=64,
                temperature=0.0,
            )

    await asyncio.gather(*(one(i) for i in range(c)))  # warm-up: open the connections
    t0 = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(c, c + n)))
    elapsed = time.perf_counter() - t0
    await client.close()
    return n / elapsed


async def _runner(url: str, n: int, c: int, tag: str) -> float:
    from benchgen.providers.base import Message, Request
    from benchgen.providers.registry import make_provider
    from benchgen.runner import run_requests

    def items(lo: int, hi: int) -> list[tuple[str, Request]]:
        return [
            (f"r{i}", Request((Message("user", f"runner {tag} {i}"),), max_tokens=64)) for i in range(lo, hi)
        ]

    provider = make_provider(f"openai:bench@{url}", max_connections=max(c, 16))
    with tempfile.TemporaryDirectory() as tmp:
        await run_requests(
            provider,
            items(0, c),
            Path(tmp) / "warm.jsonl",
            concurrency=c,
            cache=Path(tmp) / "cache",
            quiet=True,
        )
        t0 = time.perf_counter()
        summary = await run_requests(
            provider,
            items(c, c + n),
            Path(tmp) / "out.jsonl",
            concurrency=c,
            cache=Path(tmp) / "cache",
            quiet=True,
        )
        elapsed = time.perf_counter() - t0
    await provider.aclose()
    assert summary.ok == n, summary
    return n / elapsed


def phase_main(args: argparse.Namespace) -> None:
    fn = _bare if args.phase == "bare" else _runner
    cpu0 = time.process_time()
    rate = asyncio.run(fn(args.url, args.n, args.c, f"{time.time_ns()}"))
    cpu_ms = (time.process_time() - cpu0) * 1000 / (args.n + args.c)  # incl. warm-up and setup
    print(json.dumps({"calls_per_s": rate, "peak_rss_mb": _peak_rss_mb(), "cpu_ms_per_call": cpu_ms}))


def run_phase(phase: str, url: str, n: int, c: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--phase", phase, "--url", url, "--n", str(n), "--c", str(c)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    if out.returncode != 0:
        raise SystemExit(f"{phase} phase failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--latency", type=float, default=0.25)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--n", type=int, default=None, help="calls per phase (default 16 x concurrency)")
    ap.add_argument("--repeats", type=int, default=2, help="repeat each phase (interleaved), keep the best")
    ap.add_argument("--phase", choices=["bare", "runner"], help=argparse.SUPPRESS)
    ap.add_argument("--url", help=argparse.SUPPRESS)
    ap.add_argument("--c", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.phase:
        phase_main(args)
        return

    server = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "scripted_server.py"), "--latency", str(args.latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip() + "/v1"
        print(
            f"scripted server at {url}, latency {args.latency:g}s, {os.cpu_count()} CPUs; "
            f"client phases run in separate processes"
        )
        print(
            f"{'C':>5} {'N':>6} {'bare calls/s':>13} {'runner calls/s':>15} {'ratio':>6} "
            f"{'bare peak MB':>13} {'runner peak MB':>15} {'bare CPU ms/call':>17} {'runner CPU ms/call':>19}"
        )
        ratios = []
        for c in args.concurrency:
            n = args.n or 16 * c
            runs: dict[str, list[dict[str, float]]] = {"bare": [], "runner": []}
            for _ in range(args.repeats):  # interleaved, best of each: robust to load from other processes
                for phase in ("bare", "runner"):
                    runs[phase].append(run_phase(phase, url, n, c))
            bare = max(runs["bare"], key=lambda r: r["calls_per_s"])
            runner = max(runs["runner"], key=lambda r: r["calls_per_s"])
            ratio = runner["calls_per_s"] / bare["calls_per_s"]
            ratios.append(ratio)
            print(
                f"{c:>5} {n:>6} {bare['calls_per_s']:>13.1f} {runner['calls_per_s']:>15.1f} {ratio:>6.2f} "
                f"{bare['peak_rss_mb']:>13.1f} {runner['peak_rss_mb']:>15.1f} "
                f"{bare['cpu_ms_per_call']:>17.2f} {runner['cpu_ms_per_call']:>19.2f}",
                flush=True,
            )
        verdict = "OK" if all(r >= 0.9 for r in ratios) else "BELOW GOAL"
        print(f"goal: runner/bare >= 0.90 at every C -> {verdict}")
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
