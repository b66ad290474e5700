"""Reformulator: offline target rewrites checked by the DelegateCI leak/retention matcher (τ = 0.5)."""

from __future__ import annotations

import json
import re

import pytest
import scripted_server
from builders import make_draft
from scripted_server import ScriptedServer

from benchgen.judge import judge_offline
from benchgen.offline import generate_one
from benchgen.pipeline import LLMOptions, sample
from benchgen.reformulate import (
    Target,
    build_reformulation_request,
    check_rewrite,
    offline_rewrite,
    reformulate,
    reformulation_summary,
)
from benchgen.text import token_recall

TAU = 0.5


@pytest.fixture(scope="module")
def offline_rewrites(tax, judge_cfg):
    drafts = [generate_one(tax, s) for s in sample(tax, 300, seed=29)]
    verdicts = {v.id: v for v in judge_offline(drafts, tax, judge_cfg)}
    kept = [d for d in drafts if d.status == "ok" and verdicts[d.id].verdict in ("pass", "soft_fail")]
    residual = {d.id: verdicts[d.id].residual for d in kept}
    return kept, residual, {r["id"]: r for r in reformulate(kept, "offline", tax, residual)}


def test_offline_rewrites_drop_n_keep_e(offline_rewrites):
    drafts, residual, recs = offline_rewrites
    assert len(drafts) >= 300 and set(recs) == {d.id for d in drafts}
    n_unsat = 0
    for d in drafts:
        r = recs[d.id]
        y = r["target_rewrite"]
        assert r["status"] == "ok" and y and y != d.query or not d.non_essential
        unsat = {u["value"]: u["why"] for u in r["unsatisfiable"]}
        n_unsat += bool(unsat)
        # every E value survives (checked here directly, not through check_rewrite)
        for x in d.essential:
            assert token_recall(x.value, y) >= TAU, (d.query, y, x.value)
        # no N value survives, unless it is recorded as unsatisfiable with a verifiable reason
        for v in [x.value for x in d.non_essential] + list(residual[d.id]):
            if v in unsat:
                if unsat[v] == "n_overlaps_e":
                    assert any(token_recall(v, x.value) >= TAU for x in d.essential)
                continue
            assert token_recall(v, y) < TAU, (d.query, y, v)
        assert r["missing"] == [] and set(r["leaked"]) <= set(unsat)
    assert n_unsat <= 0.03 * len(drafts)  # explicit, rare exceptions (N sharing tokens with E/request)
    s = reformulation_summary(list(recs.values()))
    assert s["samples_with_avoidable_leak"] == 0 and s["samples_with_missing_e"] == 0 and s["failed"] == 0


def test_offline_rewrite_is_deterministic(tax, offline_rewrites):
    drafts, residual, recs = offline_rewrites
    again = {r["id"]: r for r in reformulate(drafts[:50][::-1], "offline", tax, residual)}
    assert all(again[i] == recs[i] for i in again)


def test_generalises_n_inside_an_e_sentence_and_keeps_the_question():
    q = (
        "I take metformin since my diabetes diagnosis, and I am Catholic. "
        "By the way, my email is jo@example.com. As a Dr. Smith patient in Boston, can you plan meals?"
    )
    keep = [Target("metformin", "metformin", "a medication")]
    drop = [
        Target("Catholic", "Catholic", "a religious belief"),
        Target("jo@example.com", "jo@example.com", "an email address"),
        Target("Boston", "Boston", "a city"),
    ]
    y = offline_rewrite(q, keep, drop)
    assert y == (
        "I take metformin since my diabetes diagnosis, and I am a religious belief. "
        "As a Dr. Smith patient in a city, can you plan meals?"
    )
    assert check_rewrite(y, keep, drop, q) == {"leaked": [], "missing": [], "unsatisfiable": []}
    # an N value sharing its tokens with an E value cannot be removed without losing E: recorded
    keep2, drop2 = [Target("Dana Whitfield", "Dana Whitfield", "a name")], [Target("Dana", "Dana", "a name")]
    y2 = offline_rewrite("Write to Dana Whitfield. Dana likes jazz.", keep2, drop2)
    assert "Dana Whitfield" in y2
    assert check_rewrite(y2, keep2, drop2, "Write to Dana Whitfield.")["unsatisfiable"] == [
        {"value": "Dana", "why": "n_overlaps_e"}
    ]


def _draft(i, query, e, n):
    return make_draft(i, query, e, n, prefix="r", attribute="age", family="demographic")


QUERY_RE = re.compile(r'Original request:\n"""\n(.*?)\n"""', re.S)
REWRITES = {
    "I have asthma. I am 52. Plan a run.": "I have asthma. Plan a run.",
    "I have gout. I am 61. Plan a meal.": "I have gout. I am 61. Plan a meal.",
}


def test_llm_reformulator_through_runner(tax, tmp_path, monkeypatch):
    original = scripted_server.default_answer

    def answer(body, wants_json):
        first = next(m["content"] for m in body["messages"] if m["role"] == "user")
        first = first if isinstance(first, str) else scripted_server._text_of(first)
        m = QUERY_RE.search(first)
        if m and m.group(1) in REWRITES:
            return json.dumps({"rewrite": REWRITES[m.group(1)]})
        return original(body, wants_json)

    monkeypatch.setattr(scripted_server, "default_answer", answer)
    drafts = [
        _draft(0, "I have asthma. I am 52. Plan a run.", ["asthma"], ["52"]),
        _draft(1, "I have gout. I am 61. Plan a meal.", ["gout"], ["61"]),
        _draft(2, "<<malformed>> I have flu. I am 30.", ["flu"], ["30"]),
    ]
    req = build_reformulation_request(
        drafts[0].query, [Target("asthma", "asthma", "x")], [Target("52", "52", "a certain age")]
    )
    assert req.json_mode and '- 52 (if needed: "a certain age")' in req.messages[0].content
    with ScriptedServer() as srv:
        llm = LLMOptions(concurrency=2, cache=False)
        recs = {
            r["id"]: r
            for r in reformulate(
                drafts, f"openai:gpt-test@{srv.openai_url}", tax, llm=llm, calls_path=tmp_path / "calls.jsonl"
            )
        }
    assert recs["r0"]["target_rewrite"] == "I have asthma. Plan a run." and recs["r0"]["leaked"] == []
    assert recs["r1"]["leaked"] == ["61"]  # a bad rewrite is recorded, not hidden
    assert recs["r2"]["status"] == "failed" and recs["r2"]["failure_reason"] == "unparsed"
    assert recs["r2"]["target_rewrite"] is None
    s = reformulation_summary(list(recs.values()))
    assert s["failed"] == 1 and s["samples_with_avoidable_leak"] == 1


def test_run_recipe_stores_rewrites(tmp_path):
    from benchgen.pipeline import run_recipe
    from benchgen.recipe import Recipe, load_recipe

    r = Recipe(**{**load_recipe("default").model_dump(), "name": "reform-test", "n": 30, "seed": 5})
    res = run_recipe(r, run_dir=tmp_path / "run", quiet=True, do_release=False)
    lines = [json.loads(x) for x in (tmp_path / "run" / "rewrites.jsonl").read_text().splitlines()]
    released = res.report["counts"]["pass"] + res.report["counts"]["soft_fail"]
    assert len(lines) == released == res.report["reformulation"]["n"]
    assert all(x["target_rewrite"] for x in lines)
    assert (tmp_path / "run" / "audit.md").is_file()
    assert set(res.report["audit"]["tv_distance"]) >= {
        "domain",
        "task_type",
        "subject",
        "style",
        "tone",
        "attribute",
    }
