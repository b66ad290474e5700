"""Baselines and ``benchgen evaluate`` on a tiny hand-built release (no pipeline involved)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from benchgen import baselines
from benchgen.errors import DataError, NotAvailableError
from benchgen.evaluate import load_rewrites, load_split, run
from benchgen.metrics.cli import evaluate


def _d(attr: str, fam: str, value: str, span: str) -> dict[str, str]:
    return {
        "attribute": attr,
        "family": fam,
        "subject": "self",
        "relation": "I",
        "value": value,
        "span": span,
    }


ROWS = [
    {
        "id": "r1",
        "query": "I take metformin for my diabetes; by the way my email is anna.k@example.com. What dose is safe?",
        "target_rewrite": "What metformin dose is safe for diabetes?",
        "domain": "health",
        "task_type": "advice",
        "essential": [
            _d("medication", "health", "metformin", "I take metformin"),
            _d("condition", "health", "diabetes", "my diabetes"),
        ],
        "non_essential": [_d("email", "contact", "anna.k@example.com", "my email is anna.k@example.com")],
    },
    {
        "id": "r2",
        "query": "My salary is 4200 euros and I am going through a divorce. How should I budget?",
        "target_rewrite": None,
        "domain": "finance",
        "task_type": "planning",
        "essential": [_d("income", "finance", "4200 euros", "My salary is 4200 euros")],
        "non_essential": [_d("life_event", "relationship", "divorce", "going through a divorce")],
    },
]
COMMON = {
    "subject": "self",
    "style": "direct",
    "tone": "neutral",
    "policy": "p",
    "confusion": None,
    "judge": {"verdict": "pass", "score": 1.0},
    "provenance": {"generator": "offline", "seed": 1},
}


@pytest.fixture()
def release(tmp_path: Path) -> Path:
    root = tmp_path / "releases" / "build" / "tiny" / "0.1.0"
    data = root / "data" / "general"
    data.mkdir(parents=True)
    rows = [{**COMMON, **r} for r in ROWS]
    for split in ("train", "validation", "test"):
        pq.write_table(pa.Table.from_pylist(rows), data / f"{split}-00000-of-00001.parquet")
    (root / "README.md").write_text("# tiny\n")
    return root


def test_span_baselines_oracle() -> None:
    r1 = ROWS[0]
    assert baselines.rewrite("identity", r1) == r1["query"]
    dele = baselines.rewrite("deletion", r1)
    assert "anna" not in dele and "metformin" in dele and "diabetes" in dele and "  " not in dele
    assert "***" in baselines.rewrite("masking", r1)
    assert "[EMAIL]" in baselines.rewrite("placeholder", r1)
    gen = baselines.rewrite("generalisation", ROWS[1])
    assert "divorce" not in gen and baselines.generalisation_for("relationship", "life_event") in gen
    with pytest.raises(NotAvailableError):
        baselines.get("nope")


def test_replace_spans_longest_first_and_no_rematch() -> None:
    q = "Anna Smith met Anna."
    assert (
        baselines.replace_spans(q, [("Anna", "X"), ("Anna Smith", "Anna's friend")]) == "Anna's friend met X."
    )
    assert baselines.replace_spans("call BOB now", [("bob", "")]) == "call now"


def test_pii_redactor() -> None:
    q = (
        "Mail jo.doe@mail.org or call (555) 123-4567 / +1 555-987-6543; SSN 123-45-6789, card "
        "4111 1111 1111 1111, see https://example.com/x, born 03/14/1990 or March 14, 1990 or 1990-03-14."
    )
    out = baselines.redact_pii(q)
    for tag in ("[EMAIL]", "[PHONE]", "[SSN]", "[CARD]", "[URL]", "[DATE]"):
        assert tag in out, (tag, out)
    for secret in ("jo.doe", "123-4567", "987-6543", "123-45-6789", "4111", "example.com", "1990"):
        assert secret not in out, (secret, out)
    assert baselines.redact_pii("I have 3 kids and 2 cats.") == "I have 3 kids and 2 cats."


def test_detected_mode_uses_judge_extractor(monkeypatch: pytest.MonkeyPatch) -> None:
    import benchgen.judge as judge

    monkeypatch.setattr(judge, "extract", lambda q: (["metformin"], ["anna.k@example.com"]))
    out = baselines.rewrite("deletion", ROWS[0], mode="detected")
    assert "anna.k@example.com" not in out and "my email is" in out


def test_evaluate_run_figures(release: Path) -> None:
    res = {r.rewriter: r for r in run(release, rewriters=["all"])}
    assert set(res) == set(baselines.BASELINES)
    ident, dele = res["identity"].report, res["deletion"].report
    assert (ident.slr, ident.ne, ident.ea) == (1.0, 1.0, 1.0)
    assert (dele.slr, dele.ne, dele.ea) == (0.0, 0.0, 1.0)
    assert res["pii_redactor"].report.slr == 0.5  # catches the email, not the divorce
    assert res["identity"].mean_reward == -1.0 and res["deletion"].mean_reward > 0
    assert res["identity"].mode == "-" and res["masking"].mode == "oracle"
    assert ident.by["domain"]["health"].n_samples == 1


def test_rewrites_file_and_errors(release: Path, tmp_path: Path) -> None:
    f = tmp_path / "mine.jsonl"
    f.write_text(
        json.dumps({"id": "r1", "rewrite": "metformin dose for diabetes?"})
        + "\n"
        + json.dumps({"id": "r2", "rewrite": "budget on 4200 euros after a divorce"})
        + "\n"
    )
    (r,) = run(release, rewriters=[str(f)])
    assert r.rewriter == "mine" and r.report.slr == 0.5 and r.report.ea == 1.0
    with pytest.raises(DataError, match="no rewrite for 1 of 3"):
        load_rewrites(f, ["r1", "r2", "r3"])
    with pytest.raises(DataError, match="no test2 split"):
        load_split(release, split="test2")
    with pytest.raises(DataError, match="not found"):
        load_split(tmp_path / "missing")


def test_cli_evaluate_writes_json_and_csv(release: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = CliRunner().invoke(
        evaluate, [str(release), "--rewriter", "identity", "--rewriter", "deletion", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert "identity" in res.output and "deletion" in res.output
    data = json.loads((out / "results.json").read_text())
    assert [d["rewriter"] for d in data] == ["identity", "deletion"] and data[1]["slr"] == 0.0
    rows = list(csv.DictReader((out / "results.csv").open()))
    overall = [r for r in rows if r["group"] == "overall"]
    assert [r["rewriter"] for r in overall] == ["identity", "deletion"]
    assert {r["group"] for r in rows} >= {"domain", "task_type", "family"}


def test_replace_spans_numbers_do_not_hit_earlier_replacements() -> None:
    assert baselines.replace_spans(
        "I am 30, born 1994", [("born 1994", "[DATE]"), ("30", "[AGE]"), ("1", "x")]
    ) == ("I am [AGE], [DATE]")
