"""`benchgen run` with an LLM generator behind OpenAI- and Anthropic-compatible base URLs
(the real SDKs against the local scripted server), cache reuse, key and family checks."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from benchgen.cli import main


def _run(args):
    return CliRunner().invoke(
        main, ["run", "default", "--n", "8", "--seed", "4", "--no-release", "--quiet", *args]
    )


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_run_with_llm_generator(srv, tmp_path, kind):
    spec = (
        f"openai:qwen2.5-7b-instruct@{srv.openai_url}"
        if kind == "openai"
        else f"anthropic:claude-test@{srv.url}"
    )
    path = "/v1/chat/completions" if kind == "openai" else "/v1/messages"
    res = _run(["--generator", spec, "--judge", "offline", "--run-dir", str(tmp_path / "run")])
    assert res.exit_code == 0, res.output
    skeletons = (tmp_path / "run" / "skeletons.jsonl").read_text().splitlines()
    drafts = [json.loads(x) for x in (tmp_path / "run" / "drafts.jsonl").read_text().splitlines()]
    assert len(drafts) == len(skeletons) and srv.paths[path] == len(skeletons)
    for d in drafts:
        assert d["status"] == "ok" and d["generator"] == spec
        for item in d["essential"] + d["non_essential"]:
            assert item["span"] and item["span"] in d["query"]
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["usage"]["input_tokens"] > 0
    assert sum(report["counts"].values()) == len(skeletons)

    # rerun on the same run dir: nothing requested, and usage (read from the saved call journal,
    # not from this process) is unchanged, so a release built from it stays byte-identical
    before = srv.total
    res = _run(["--generator", spec, "--judge", "offline", "--run-dir", str(tmp_path / "run")])
    assert res.exit_code == 0 and srv.total == before
    assert json.loads((tmp_path / "run" / "report.json").read_text())["usage"] == report["usage"]
    assert report["usage"]["by_stage_model"][f"generate:{spec}"]["calls"] == len(skeletons)

    # same recipe, new run dir: every answer comes from the cache -> zero provider calls
    res = _run(["--generator", spec, "--judge", "offline", "--run-dir", str(tmp_path / "run2")])
    assert res.exit_code == 0, res.output
    assert srv.total == before
    # --refresh bypasses the cache
    res = _run(["--generator", spec, "--judge", "offline", "--run-dir", str(tmp_path / "run3"), "--refresh"])
    assert res.exit_code == 0 and srv.total == before + len(skeletons)


def test_missing_key_fails_before_any_work(srv, tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    res = _run(["--generator", f"anthropic:claude-test@{srv.url}", "--run-dir", str(tmp_path / "r")])
    assert res.exit_code != 0
    assert "ANTHROPIC_API_KEY" in res.output and "Traceback" not in res.output
    assert srv.total == 0 and not (tmp_path / "r").exists()
    assert "test-openai-key" not in res.output


def test_same_family_refused_unless_allowed(srv, tmp_path):
    args = [
        "--generator",
        f"openai:gpt-4o@{srv.openai_url}",
        "--judge",
        f"openai:gpt-4o-mini@{srv.openai_url}",
        "--run-dir",
        str(tmp_path / "r"),
    ]
    res = _run(args)
    assert res.exit_code == 2 and "family" in res.output
    assert srv.total == 0


def test_fatal_401_stops_with_clear_message(srv, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "bad-key")
    res = _run(["--generator", f"openai:m@{srv.openai_url}", "--run-dir", str(tmp_path / "r")])
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert "401" in res.output or "auth" in res.output.lower()
    assert srv.total <= 16  # no retries of a 401: at most one call per worker in flight
