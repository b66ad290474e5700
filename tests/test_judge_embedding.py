"""The embedding channel of value matching (θ) and the token-vs-embedding agreement report."""

from __future__ import annotations

from builders import make_draft

from benchgen.embeddings import Embedder
from benchgen.judge import load_judge_config, verdict_agreement, verdict_for
from benchgen.matching import AcceptanceThresholds, decide
from benchgen.pipeline import run_report
from benchgen.records import Verdict

TH = AcceptanceThresholds(tau=0.5, theta=0.75)


def test_paraphrase_matches_by_embedding_only():
    emb = Embedder()
    m = emb.matcher(TH.tau, TH.theta)
    token = decide(["bisexual"], ["Tanzanian"], ["bisexuality"], ["grew up in Tanzania"], TH)
    both = decide(["bisexual"], ["Tanzanian"], ["bisexuality"], ["grew up in Tanzania"], TH, m)
    assert token.verdict == "hard_fail" and len(token.residual) == 2
    assert both.verdict == "pass" and both.residual == ()
    # unrelated details stay unmatched; numbers must agree whatever the cosine says
    assert m(["type 2 diabetes"], ["Catholic", "a vegan diet"]) == [set()]
    assert emb.cosine("46", "47") > TH.theta and m(["46"], ["47"]) == [set()]
    assert emb.cosine("XN000089624", "XE000063198") > TH.theta
    assert m(["XN000089624"], ["XE000063198", "licence XN000089624"]) == [{1}]


def _draft(i, query, e, n):
    return make_draft(i, query, e, n)


def test_agreement_in_run_report(tax, tmp_path):
    cfg = load_judge_config("gpt-4o")  # embedding on
    drafts = [
        _draft(0, "I am bisexual; I get migraines.", ["migraines"], ["bisexual"]),
        _draft(1, "I have asthma. Plan a run.", ["asthma"], []),
    ]
    judged = [(["migraines"], ["bisexuality"]), (["asthma"], [])]
    token_cfg = cfg.thresholds(embedding=False)
    verdicts = [
        verdict_for(d, "test", e, n, cfg, None, token_cfg) for d, (e, n) in zip(drafts, judged, strict=True)
    ]
    unparsed = Verdict(
        id="s2",
        judge="test",
        judge_essential=(),
        judge_non_essential=(),
        e_recall=0,
        n_recall=0,
        score=0,
        verdict="unparsed",
        reason="unparsed",
    )
    drafts.append(_draft(2, "x", [], ["y"]))
    verdicts.append(unparsed)
    agr = verdict_agreement(drafts, verdicts, cfg)
    assert agr["n"] == 2 and agr["agreement"] == 0.5 and agr["changed"] == {"hard_fail->pass": 1}
    rep = run_report([d.skeleton for d in drafts], verdicts, tax, drafts=drafts, cfg=cfg, run_dir=tmp_path)
    assert rep["agreement"]["agreement"] == 0.5
    assert "Agreement token vs embedding: 50.0%" in (tmp_path / "audit.md").read_text()
    # token-only config: no agreement unless asked for
    plain = load_judge_config("default")
    assert "agreement" not in run_report(
        [d.skeleton for d in drafts], verdicts, tax, drafts=drafts, cfg=plain
    )


def test_judge_cli_agreement(tax, tmp_path):
    import json

    from click.testing import CliRunner

    from benchgen.cli import main
    from benchgen.offline import generate_one
    from benchgen.pipeline import sample

    drafts = tmp_path / "drafts.jsonl"
    drafts.write_text(
        "".join(json.dumps(generate_one(tax, s).to_dict()) + "\n" for s in sample(tax, 12, seed=3))
    )
    out = tmp_path / "verdicts.jsonl"
    res = CliRunner().invoke(
        main, ["judge", "--in", str(drafts), "--out", str(out), "--agreement", "--quiet"]
    )
    assert res.exit_code == 0, res.output
    assert "token vs embedding agreement" in res.output and "verdicts: pass" in res.output
    rep = json.loads((tmp_path / "verdicts_report" / "report.json").read_text())
    assert (
        rep["agreement"]["n"]
        == rep["counts"]["pass"] + rep["counts"]["soft_fail"] + rep["counts"]["hard_fail"]
    )
    assert (tmp_path / "verdicts_report" / "audit.md").is_file()
