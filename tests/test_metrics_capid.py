"""CAPID span / type / relevance metrics: hand-made definitions and the paper's Table 2 row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchgen.errors import DataError
from benchgen.metrics.capid import (
    Span,
    char_f1,
    flatten,
    normalise,
    score_file,
    score_records,
    score_sample,
    span_similarity,
)
from benchgen.metrics.cli import score

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
OPENAI = DATA / "capid" / "predicted_openai_test.jsonl"


def S(text: str, typ: str = "t", rel: str = "0") -> Span:
    return Span(text.lower(), typ, rel)


def test_normalise_and_similarity() -> None:
    assert normalise("  Bachelor's Degree! ") == "bachelors degree"
    # one token each: character multiset F1 ("abc" vs "abd": 2 shared of 3 and 3)
    assert char_f1("abc", "abd") == pytest.approx(2 / 3)
    assert span_similarity("Anna", "anna.") == 1.0
    # multi-token: F1 over token sets; duplicates do not count twice
    assert span_similarity("stage 4 cancer treatment", "Stage 4 cancer") == pytest.approx(2 * 0.75 * 1 / 1.75)
    assert span_similarity("the the cat", "cat") == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert span_similarity("dog", "cat") == 0.0


def test_matching_first_best_and_no_reassignment() -> None:
    gold = [S("medical debt", "finance", "1"), S("58 years old", "age", "0")]
    pred = [S("medical debt", "finance", "1"), S("debt medical", "health", "0"), S("58 years", "age", "1")]
    s = score_sample(pred, gold)
    # 2nd prediction's best gold is already covered -> unmatched, not re-assigned
    assert s.span_precision == pytest.approx(2 / 3)
    assert s.span_recall == 1.0
    assert s.span_f1 == pytest.approx(2 * (2 / 3) / (2 / 3 + 1))
    assert s.coverage == pytest.approx((1.0 + 0.8) / 2)
    assert s.type_accuracy == 1.0
    assert s.relevance_accuracy == 0.5
    assert s.relevance_high_accuracy == 1.0 and s.relevance_low_accuracy == 0.0


def test_threshold_is_strict_and_ties_take_first() -> None:
    # similarity exactly 0.2 is not a match: token F1 of 1 shared token in 1 vs 9 tokens = 0.2
    gold = [S("a b c d e f g h i")]
    assert span_similarity("a", "a b c d e f g h i") == pytest.approx(0.2)
    assert score_sample([S("a")], gold).span_precision == 0.0
    tie = score_sample([S("x y", rel="1")], [S("x z", rel="0"), S("y z", rel="1")])
    assert tie.relevance_accuracy == 0.0  # matched the first gold span (relevance "0")


def test_empty_and_quirks() -> None:
    zero = score_sample([], [])
    assert zero.span_f1 == 0.0 and zero.coverage == 0.0
    assert flatten(None) == [] and flatten("not a dict") == [] and flatten(["x"]) == []
    items = flatten({"Anna": "name", "Bob": {"type": None, "relevance": "HIGH"}, " ": {}})
    assert items == [Span("anna", "", ""), Span("bob", "", "1")]
    assert flatten({"x": {"type": "Age", "relevance": "low"}}) == [Span("x", "age", "0")]


def test_average_counts_unmatched_samples_as_zero() -> None:
    recs = [
        {
            "groundtruth": {"a b": {"type": "t", "relevance": "0"}},
            "parsed": {"a b": {"type": "t", "relevance": "0"}},
        },
        {"groundtruth": {"a b": {"type": "t", "relevance": "1"}}, "parsed": {}},
    ]
    s = score_records(recs)
    assert s.n_samples == 2
    assert s.span_precision == 0.5 and s.relevance_low_accuracy == 0.5 and s.relevance_high_accuracy == 0.0


def test_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        score_file(tmp_path / "nope.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"groundtruth": {}, "parsed": {}}\n{oops\n')
    with pytest.raises(DataError, match=r"bad.jsonl:2"):
        score_file(bad)
    miss = tmp_path / "miss.jsonl"
    miss.write_text('{"groundtruth": {}}\n')
    with pytest.raises(DataError, match="'parsed'"):
        score_file(miss)


def test_cli_json(tmp_path: Path) -> None:
    f = tmp_path / "x.jsonl"
    f.write_text(
        json.dumps(
            {
                "gold": {"Anna": {"type": "name", "relevance": "0"}},
                "pred": {"anna": {"type": "name", "relevance": "0"}},
            }
        )
        + "\n"
    )
    res = CliRunner().invoke(
        score, ["capid", str(f), "--gold-field", "gold", "--pred-field", "pred", "--json"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert set(out) == {
        "span_precision",
        "span_recall",
        "span_f1",
        "coverage",
        "type_accuracy",
        "relevance_accuracy",
        "relevance_low_accuracy",
        "relevance_high_accuracy",
        "n_samples",
    }
    assert out["span_f1"] == 1.0 and out["n_samples"] == 1
    table = CliRunner().invoke(score, ["capid", str(f), "--gold-field", "gold", "--pred-field", "pred"])
    assert table.exit_code == 0 and "span_f1" in table.output


def test_reproduces_capid_table2_gpt41_mini() -> None:
    if not OPENAI.is_file():
        pytest.skip(f"shared CAPID data not found at {OPENAI} (../shared/data beside the repo)")
    res = CliRunner().invoke(score, ["capid", str(OPENAI), "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    expected = {
        "span_precision": 0.8724,
        "span_recall": 0.9438,
        "span_f1": 0.8986,
        "coverage": 0.8957,
        "type_accuracy": 0.9008,
        "relevance_accuracy": 0.8396,
        "relevance_low_accuracy": 0.8772,
        "relevance_high_accuracy": 0.7254,
    }
    assert {k: round(got[k], 4) for k in expected} == expected
    assert got["n_samples"] == 200
