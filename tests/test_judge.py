"""LLM judge end to end against the scripted OpenAI / Anthropic server, plus judge config, prompt and
parser units. The server's default JSON answer is swapped for a judge answer keyed by the query."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import scripted_server
from builders import make_draft
from scripted_server import ScriptedServer

from benchgen.errors import ConfigError
from benchgen.judge import (
    build_judge_request,
    judge_parser,
    load_judge_config,
    offline_answer,
    parse_judge_output,
)
from benchgen.pipeline import LLMOptions, judge, run_report
from benchgen.providers.base import Completion
from benchgen.records import Draft, sample_row

QUERY_RE = re.compile(r'Request:\n"""\n(.*?)\n"""', re.S)


def _draft(i: int, query: str, e: list[str], n: list[str], generator: str = "offline") -> Draft:
    return make_draft(i, query, e, n, generator=generator)


CASES = [
    # pass: both sides recovered
    (
        "For context, I have type 2 diabetes. By the way, I am divorced. Plan my meals.",
        ["type 2 diabetes"],
        ["divorced"],
        {"essential_attributes": ["type 2 diabetes"], "nonessential_attributes": ["divorced"]},
        "pass",
    ),
    # swapped: the judge puts the E value on the N side -> hard fail, swap logged
    (
        "I take metformin. I am Catholic. Which snacks are fine?",
        ["metformin"],
        ["Catholic"],
        {"essential_attributes": ["Catholic"], "nonessential_attributes": ["metformin"]},
        "hard_fail",
    ),
    # residual: the judge flags a detail matching no sampled value (model-leaked)
    (
        "I have asthma and live in Boston. Suggest a workout.",
        ["asthma"],
        [],
        {"essential_attributes": ["asthma"], "nonessential_attributes": ["live in Boston"]},
        "pass",
    ),
    # wrong shape after a valid JSON answer -> unparsed
    ("Shape problem: I am 52. Help.", ["52"], [], {"answer": "echo"}, "unparsed"),
    # not JSON even after the repair re-ask -> unparsed (not a rejection)
    ("<<malformed>> I am 40 and vegan. Recipes?", ["vegan"], ["40"], None, "unparsed"),
    # not JSON the first time only: the repair re-ask succeeds
    (
        "<<malformedx1>> My sister is Dana Whitfield; write her a card.",
        ["Dana Whitfield"],
        [],
        {"essential_attributes": ["Dana Whitfield"], "nonessential_attributes": []},
        "pass",
    ),
]
ANSWERS = {q: a for q, _, _, a, _ in CASES if a is not None}


@pytest.fixture
def srv(server, monkeypatch):
    server.reset()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-anthropic-key")
    monkeypatch.setenv("OPENAI_API_KEY", "test-openai-key")
    original = scripted_server.default_answer

    def answer(body, wants_json):
        first = next(
            (
                scripted_server._text_of(m.get("content"))
                for m in body.get("messages", [])
                if m.get("role") == "user"
            ),
            "",
        )
        m = QUERY_RE.search(first)
        if m and m.group(1) in ANSWERS:
            return json.dumps(ANSWERS[m.group(1)])
        return original(body, wants_json)

    monkeypatch.setattr(scripted_server, "default_answer", answer)
    return server


def _spec(kind: str, srv: ScriptedServer) -> str:
    return f"openai:gpt-test@{srv.openai_url}" if kind == "openai" else f"anthropic:claude-test@{srv.url}"


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_llm_judge_end_to_end(kind, srv, tmp_path, tax, judge_cfg):
    drafts = [_draft(i, q, e, n) for i, (q, e, n, _, _) in enumerate(CASES)]
    llm = LLMOptions(concurrency=4, cache=tmp_path / "cache")
    calls = tmp_path / "judge_calls.jsonl"
    verdicts = list(judge(drafts, _spec(kind, srv), tax, judge_cfg, quiet=True, llm=llm, calls_path=calls))
    got = {v.id: v for v in verdicts}
    assert [got[d.id].verdict for d in drafts] == [c[4] for c in CASES]
    swapped = got["s1"]
    assert swapped.e_recall == 0.0 and swapped.n_recall == 0.0 and swapped.reason == "low_e_and_n_recall"
    assert {s["value"] for s in swapped.swapped} == {"metformin", "Catholic"}
    assert got["s2"].residual == ("live in Boston",)
    assert got["s3"].reason == got["s4"].reason == "unparsed"
    assert got["s4"].score == 0.0 and got["s4"].judge_essential == ()
    # the residual is folded into N on the released row, recorded as model-leaked
    row = sample_row(drafts[2], got["s2"], seed=1, benchgen_version="t")
    assert row["non_essential"][-1]["attribute"] == "model_leaked"
    assert row["judge"]["residual"] == ["live in Boston"]
    # the judge saw only the query: no sampled labels or values beyond the text in any request
    for entry in srv.log:
        body = json.dumps(entry["body"])
        assert "non_essential" not in body and "skeleton" not in body
    # the malformed-once query needed a repair re-ask; malformed-always two calls and no more
    prompts = [e["prompt"] for e in srv.log]
    assert sum("<<malformedx1>>" in p for p in prompts) == 2
    assert sum("<<malformed>>" in p for p in prompts) == 2
    assert llm.summaries[-1]["stage"] == "judge" and llm.summaries[-1]["failed"] == {"unparsed": 2}

    # resume + cache: a rerun on the same journal makes no provider call and gives the same verdicts
    before = srv.total
    again = list(judge(drafts, _spec(kind, srv), tax, judge_cfg, quiet=True, llm=llm, calls_path=calls))
    assert srv.total == before
    assert [v.to_dict() for v in again] == [got[d.id].to_dict() for d in drafts]

    report = run_report(
        [d.skeleton for d in drafts], verdicts, tax, drafts=drafts, cfg=judge_cfg, run_dir=tmp_path / "rep"
    )
    assert report["counts"] == {"pass": 3, "soft_fail": 0, "hard_fail": 1, "unparsed": 2}
    assert report["reject_reasons"] == {"low_e_and_n_recall": 1, "unparsed": 2}
    assert report["judge"]["residual"] == {"samples": 1, "spans": 1}
    assert (tmp_path / "rep" / "audit.json").is_file() and (tmp_path / "rep" / "audit.md").is_file()


def test_request_and_parser(judge_cfg):
    req = build_judge_request("I am 52. Help.", judge_cfg, "x")
    assert req.json_mode and req.temperature == 0.0
    assert "I am 52. Help." in req.messages[0].content
    assert "essential_attributes" in req.system and "nonessential_attributes" in req.system
    assert parse_judge_output(
        {"essential_attributes": ["a", {"span": "b"}, "a"], "Nonessential_Attributes": []}
    ) == (["a", "b"], [])
    for bad in (
        [],
        {"essential_attributes": []},
        {"essential_attributes": "x", "nonessential_attributes": []},
    ):
        with pytest.raises(ValueError):
            parse_judge_output(bad)
    from benchgen.runner import ItemFailure

    with pytest.raises(ItemFailure) as e:
        judge_parser()("x", Completion(text='{"answer": 1}', extra={"json": {"answer": 1}}))
    assert e.value.reason == "unparsed"


def test_offline_answer_same_shape(tax, judge_cfg):
    allergy = tax.attribute["allergies"].values[0]
    ans = offline_answer(f"For context, I have {allergy}. Plan a menu.", tax, judge_cfg)
    assert set(ans) == {"essential_attributes", "nonessential_attributes"}
    assert parse_judge_output(ans) == ([allergy], [])


def test_heterogeneity_enforced(tax, judge_cfg, tmp_path):
    d = _draft(0, "I am 52.", ["52"], [], generator="openai:gpt-4o")
    with pytest.raises(ConfigError, match="family"):
        list(
            judge(
                [d],
                "openai:gpt-4o-mini@http://127.0.0.1:9/v1",
                tax,
                judge_cfg,
                quiet=True,
                llm=LLMOptions(cache=False),
                calls_path=tmp_path / "c.jsonl",
            )
        )


def test_same_family_allowed_explicitly(srv, tax, judge_cfg, tmp_path):
    q, e, n, _, verdict = CASES[0]
    d = _draft(0, q, e, n, generator="openai:gpt-4o")
    vs = list(
        judge(
            [d],
            _spec("openai", srv),
            tax,
            judge_cfg,
            quiet=True,
            llm=LLMOptions(cache=False),
            calls_path=tmp_path / "c.jsonl",
            allow_same_family=True,
        )
    )
    assert [v.verdict for v in vs] == [verdict]


def test_judge_configs(tmp_path):
    gpt = load_judge_config("gpt-4o")
    default = load_judge_config("default")
    assert gpt.model == "openai:gpt-4o" and gpt.matching.embedding and gpt.temperature == 0.0
    assert gpt.acceptance == default.acceptance and gpt.offline == default.offline  # extends default
    assert default.model == "offline" and not default.matching.embedding
    assert default.thresholds().theta is None and gpt.thresholds().theta == gpt.matching.theta
    # the older spelling `judge:` still loads; unknown keys are refused
    old = tmp_path / "old.yaml"
    old.write_text("extends: default\nname: old\njudge: offline\n")
    (tmp_path / "default.yaml").write_text(Path(default.source).read_text())
    assert load_judge_config(old).model == "offline"
    bad = tmp_path / "bad.yaml"
    bad.write_text("extends: default\nname: bad\nmatching: {tau: 0.5, typo: 1}\n")
    with pytest.raises(ConfigError, match="typo"):
        load_judge_config(bad)
