"""Crash safety: SIGKILL ``python -m benchgen.runner`` mid-run, rerun, and check the output has no
duplicates and no gaps and that no already-written id was requested again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from scripted_server import ScriptedServer

REPO = Path(__file__).resolve().parents[1]
N = 40


@pytest.fixture
def slow_server():
    with ScriptedServer(latency=0.15) as srv:
        yield srv


def _cmd(srv: ScriptedServer, inp: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "benchgen.runner",
        "--spec",
        f"openai:m@{srv.openai_url}",
        "--in",
        str(inp),
        "--out",
        str(out),
        "--concurrency",
        "4",
        "--quiet",
        *extra,
    ]


def _lines(out: Path) -> list[dict]:
    if not out.exists():
        return []
    # only complete lines count as written (a torn tail is what resume must drop)
    raw = out.read_text()
    return [json.loads(x) for x in raw.split("\n")[:-1] if x.strip()]


@pytest.mark.parametrize("cache", [False, True], ids=["no-cache", "cache"])
def test_sigkill_and_resume(slow_server, tmp_path, cache):
    srv = slow_server
    inp, out = tmp_path / "items.jsonl", tmp_path / "out.jsonl"
    prompts = {f"item-{i:03d}": f"please answer item {i}" for i in range(N)}
    inp.write_text("".join(json.dumps({"id": k, "prompt": p}) + "\n" for k, p in prompts.items()))
    extra = ("--cache-dir", str(tmp_path / "cache")) if cache else ("--no-cache",)
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env["PYTHONPATH"] = str(REPO)

    proc = subprocess.Popen(
        _cmd(srv, inp, out, *extra), cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 30
    while len(_lines(out)) < 8:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else "runner exited early"
        assert time.monotonic() < deadline, "runner made no progress"
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    assert proc.returncode == -signal.SIGKILL
    written_before = {r["id"] for r in _lines(out)}
    assert 8 <= len(written_before) < N, "the kill should land mid-run"
    calls_before = srv.total

    done = subprocess.run(_cmd(srv, inp, out, *extra), cwd=tmp_path, env=env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    summary = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert summary["skipped"] == len(written_before)

    final = _lines(out)
    ids = [r["id"] for r in final]
    assert len(ids) == len(set(ids)), "duplicates after resume"
    assert set(ids) == set(prompts), "gaps after resume"
    assert out.read_bytes().endswith(b"\n")
    assert all(r["status"] == "ok" for r in final)
    for rid in written_before:  # never requested again
        assert srv.by_prompt[prompts[rid]] == 1, rid
    # the rerun asked only for what was missing (plus at most the ones in flight at the kill)
    assert srv.total - calls_before <= N - len(written_before)
    assert srv.total <= N + 4  # at most `concurrency` requests were lost in flight
