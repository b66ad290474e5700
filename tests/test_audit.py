"""Acceptance-bias audit: per-stratum acceptance, TV distance sampled -> accepted, flagged strata."""

from __future__ import annotations

import json
from types import SimpleNamespace as NS

import pytest

from benchgen.audit import acceptance_audit, distribution, tv_distance, verdict_summary, write_audit


def _sk(i, domain, attrs=("age",)):
    det = [NS(attribute=a) for a in attrs]
    return NS(
        id=f"s{i}",
        domain=domain,
        task_type="t",
        subject="self",
        style="direct",
        tone="neutral",
        policy="p",
        essential=tuple(det[:1]),
        non_essential=tuple(det[1:]),
    )


def _v(i, verdict, reason=None, swapped=(), residual=()):
    return NS(
        id=f"s{i}",
        verdict=verdict,
        reason=reason,
        e_recall=1.0 if verdict == "pass" else 0.0,
        n_recall=1.0,
        swapped=swapped,
        residual=residual,
    )


def test_tv_distance():
    from collections import Counter

    assert tv_distance(Counter(a=5, b=5), Counter(a=1, b=1)) == 0.0
    assert tv_distance(Counter(a=5, b=5), Counter(a=3)) == pytest.approx(0.5)
    assert tv_distance(Counter(a=2), Counter(b=2)) == 1.0


def test_flags_low_stratum_and_shift():
    # five domains of 20 drafts: four accept 90%, "legal" accepts 20%
    sks, vs = [], []
    for k, dom in enumerate(["a", "b", "c", "d", "legal"]):
        for j in range(20):
            i = k * 20 + j
            sks.append(_sk(i, dom, ("age", "name") if dom == "legal" else ("age",)))
            ok = j < (4 if dom == "legal" else 18)
            vs.append(_v(i, "pass" if ok else "hard_fail", None if ok else "low_e_recall"))
    a = acceptance_audit(sks, vs, flag_sd=1.5, flag_ratio=0.5, min_n=10)
    assert a["acceptance_by"]["domain"]["legal"] == {"n": 20, "accepted": 4, "rate": 0.2}
    flagged = {(f["axis"], f["value"]) for f in a["flagged"]}
    assert ("domain", "legal") in flagged and ("domain", "a") not in flagged
    # sampled: 20% legal; accepted: 4/76 -> TV = 0.2 - 4/76
    assert a["tv_distance"]["domain"] == pytest.approx(0.2 - 4 / 76, abs=1e-4)
    assert a["tv_distance"]["task_type"] == 0.0
    # attribute axis counts a draft once per attribute it carries
    assert a["acceptance_by"]["attribute"]["name"]["n"] == 20
    # min_n: strata too small are never flagged
    assert acceptance_audit(sks, vs, min_n=50)["flagged"] == []


def test_summary_and_files(tmp_path):
    vs = [
        _v(0, "pass"),
        _v(1, "soft_fail", "low_n_recall", residual=("x",)),
        _v(
            2,
            "hard_fail",
            "low_e_recall",
            swapped=({"value": "v", "sampled": "essential", "judged": "non_essential"},),
        ),
        _v(3, "unparsed", "unparsed"),
    ]
    s = verdict_summary(vs)
    assert s["counts"] == {"pass": 1, "soft_fail": 1, "hard_fail": 1, "unparsed": 1}
    assert s["rates"]["unparsed"] == 0.25
    assert s["reasons"] == {"low_e_recall": 1, "low_n_recall": 1, "unparsed": 1}
    assert s["e_recall"]["n"] == 3  # unparsed answers have no recall
    assert s["swapped"] == {"samples": 1, "values": 1, "by_direction": {"essential->non_essential": 1}}
    assert s["residual"] == {"samples": 1, "spans": 1}
    assert distribution([0.0, 0.3, 0.6, 0.9, 1.0])["hist"] == {
        "0": 1,
        "(0,0.5)": 1,
        "[0.5,0.8)": 1,
        "[0.8,1)": 1,
        "1": 1,
    }
    a = acceptance_audit([_sk(i, "d") for i in range(4)], vs)
    j, m = write_audit(tmp_path, {**a, "summary": s})
    assert json.loads(j.read_text())["acceptance_by"]["domain"]["d"]["accepted"] == 1
    md = m.read_text()
    assert "unparsed 1 (25.0%)" in md and "### domain" in md and "No stratum flagged." in md
