"""`benchgen calibrate capid` on the shared CAPID predictions (GPT-4.1-mini) and on hand-made records."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from benchgen.calibrate import calibrate_capid, load_capid
from benchgen.cli import main
from benchgen.judge import load_judge_config


def test_capid_token_figures(shared_data):
    path = shared_data / "capid" / "predicted_openai_test.jsonl"
    res = CliRunner().invoke(main, ["calibrate", "capid", str(path), "--no-embedding", "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.output)
    assert rep["records"] == 200
    assert (rep["gold_essential_values"], rep["gold_non_essential_values"]) == (382, 777)
    tok = rep["token"]
    assert tok["counts"] == {"pass": 73, "soft_fail": 102, "hard_fail": 25, "unparsed": 0}
    assert tok["reasons"] == {"low_e_and_n_recall": 23, "low_e_recall": 54, "low_n_recall": 50}
    assert tok["e_recall"]["mean"] == pytest.approx(0.7738) and tok["n_recall"]["mean"] == pytest.approx(
        0.8462
    )
    assert (tok["swapped"]["values"], tok["swapped"]["samples"]) == (160, 113)
    assert (tok["residual"]["spans"], tok["residual"]["samples"]) == (121, 69)
    assert "embedding" not in rep and "agreement" not in rep
    table = CliRunner().invoke(main, ["calibrate", "capid", str(path), "--no-embedding"])
    assert table.exit_code == 0 and "73 (36.5%)" in table.output and "swapped values" in table.output


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_capid_quirks_and_embedding_agreement(tmp_path):
    recs = [
        # pass by tokens; relevance written high/low in the prediction
        {
            "groundtruth": {
                "Stage 4 cancer": {"type": "health", "relevance": "1"},
                "58 years old": {"type": "age", "relevance": "0"},
            },
            "parsed": {
                "Stage 4 cancer treatment": {"type": "health", "relevance": "high"},
                "58 years old": {"type": "age", "relevance": "low"},
            },
        },
        # paraphrase only the embedding channel matches ("bisexual" / "bisexuality")
        {
            "groundtruth": {
                "bisexual": {"type": "sexual orientation", "relevance": "0"},
                "migraines": {"type": "health", "relevance": "1"},
            },
            "parsed": {
                "bisexuality": {"type": "sexual orientation", "relevance": "0"},
                "migraines": {"type": "health", "relevance": "1"},
            },
        },
        # prediction missing -> unparsed; unknown relevance label left out and counted
        {"groundtruth": {"Anna": {"type": "name", "relevance": "?"}}, "parsed": None},
        # swapped: the model calls the essential value non-essential
        {
            "groundtruth": {"Vancouver": {"type": "location", "relevance": "1"}},
            "parsed": {"Vancouver": {"type": "location", "relevance": "0"}, "my dog Rex": "pet"},
        },
    ]
    path = _write(tmp_path / "capid.jsonl", recs)
    cases = load_capid(path)
    assert cases[2].judge is None and cases[2].unlabelled_gold == 1
    assert cases[3].judge == (("",) * 0, ("Vancouver",)) and cases[3].unlabelled_pred == 1
    rep = calibrate_capid(path, load_judge_config(), embedding=True)
    assert [rep["token"]["counts"][k] for k in ("pass", "soft_fail", "hard_fail", "unparsed")] == [1, 0, 2, 1]
    assert [rep["embedding"]["counts"][k] for k in ("pass", "soft_fail", "hard_fail", "unparsed")] == [
        2,
        0,
        1,
        1,
    ]
    assert rep["agreement"]["agreement"] == 0.75
    assert rep["agreement"]["changed"] == {"hard_fail->pass": 1}
    assert rep["token"]["swapped"]["by_direction"] == {"essential->non_essential": 1}
    assert rep["unlabelled_gold"] == 1 and rep["unlabelled_pred"] == 1
