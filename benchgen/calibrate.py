"""Calibrate the acceptance rule on real data: how does it behave on a real model's answers?

CAPID (``benchgen calibrate capid FILE``): each record's gold annotation ``groundtruth`` —
``{span: {"type", "relevance": "1" essential | "0" not}}`` — is taken as the *sampled* partition,
and a model's prediction ``parsed`` (same shape; GPT-4.1-mini in ``predicted_openai_test.jsonl``)
as the *judge output*. The rule of ``judges/<config>.yaml`` is applied to every record, once with
token matching only and once with the embedding channel, and the same figures as a run report are
produced: pass / soft / hard / unparsed rates with reasons, E/N-recall distributions, swapped
assignments, residual spans, and token-vs-embedding agreement.

Quirks of real data, handled explicitly: a missing / non-dict ``parsed`` is ``unparsed``;
relevance written "high"/"low" (and similar) is mapped by
:func:`benchgen.metrics.capid.normalise_relevance`; gold or predicted spans whose relevance is
neither "1" nor "0" are left out and counted (``unlabelled_gold`` / ``unlabelled_pred``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchgen.audit import VERDICT_KEYS, verdict_summary
from benchgen.judge import JudgeConfig, make_matcher
from benchgen.matching import agreement, decide
from benchgen.metrics.capid import normalise_relevance, read_jsonl


@dataclass(frozen=True)
class Case:
    id: str
    essential: tuple[str, ...]
    non_essential: tuple[str, ...]
    judge: tuple[tuple[str, ...], tuple[str, ...]] | None  # None: prediction missing / not a dict
    unlabelled_gold: int = 0
    unlabelled_pred: int = 0


@dataclass(frozen=True)
class Outcome:
    """Verdict-like record (what :func:`benchgen.audit.verdict_summary` reads)."""

    id: str
    verdict: str
    reason: str | None
    e_recall: float
    n_recall: float
    swapped: tuple[dict[str, str], ...] = ()
    residual: tuple[str, ...] = ()


def _split(spans: Any) -> tuple[list[str], list[str], int]:
    e: list[str] = []
    n: list[str] = []
    bad = 0
    for key, vals in spans.items():
        text = str(key).strip()
        if not text:
            continue
        rel = normalise_relevance(vals.get("relevance") if isinstance(vals, Mapping) else None)
        if rel == "1":
            e.append(text)
        elif rel == "0":
            n.append(text)
        else:
            bad += 1
    return e, n, bad


def load_capid(path: str | Path, gold_field: str = "groundtruth", pred_field: str = "parsed") -> list[Case]:
    cases = []
    for i, r in enumerate(read_jsonl(path)):
        gold = r.get(gold_field)
        ge, gn, gbad = _split(gold if isinstance(gold, Mapping) else {})
        pred = r.get(pred_field)
        if isinstance(pred, Mapping):
            pe, pn, pbad = _split(pred)
            cases.append(Case(str(r.get("id", i)), tuple(ge), tuple(gn), (tuple(pe), tuple(pn)), gbad, pbad))
        else:
            cases.append(Case(str(r.get("id", i)), tuple(ge), tuple(gn), None, gbad, 0))
    return cases


def _outcomes(cases: list[Case], cfg: JudgeConfig, embedding: bool) -> list[Outcome]:
    texts = [
        t
        for c in cases
        for t in (*c.essential, *c.non_essential, *(c.judge[0] + c.judge[1] if c.judge else ()))
    ]
    th, matcher = make_matcher(cfg, embedding, texts)
    out = []
    for c in cases:
        if c.judge is None:
            out.append(Outcome(c.id, "unparsed", "unparsed", 0.0, 0.0))
            continue
        d = decide(c.essential, c.non_essential, c.judge[0], c.judge[1], th, matcher)
        out.append(Outcome(c.id, d.verdict, d.reason, d.e_recall, d.n_recall, d.swapped, d.residual))
    return out


def calibrate_capid(path: str | Path, cfg: JudgeConfig, *, embedding: bool = True) -> dict[str, Any]:
    """Figures of the acceptance rule on a CAPID prediction file (see the module docstring)."""
    cases = load_capid(path)
    token = _outcomes(cases, cfg, embedding=False)
    report: dict[str, Any] = {
        "source": str(path),
        "judge_config": cfg.name,
        "thresholds": {
            "tau": cfg.matching.tau,
            "theta": cfg.matching.theta if embedding else None,
            "pass": cfg.acceptance.pass_threshold,
            "soft": cfg.acceptance.soft_threshold,
            "combine": cfg.acceptance.combine,
        },
        "records": len(cases),
        "gold_essential_values": sum(len(c.essential) for c in cases),
        "gold_non_essential_values": sum(len(c.non_essential) for c in cases),
        "records_without_gold_essential": sum(1 for c in cases if not c.essential),
        "unlabelled_gold": sum(c.unlabelled_gold for c in cases),
        "unlabelled_pred": sum(c.unlabelled_pred for c in cases),
        "token": verdict_summary(token),
    }
    if embedding:
        emb = _outcomes(cases, cfg, embedding=True)
        report["embedding"] = verdict_summary(emb)
        report["agreement"] = agreement(
            [o.verdict for o in token], [o.verdict for o in emb], labels=VERDICT_KEYS
        )
    return report


def format_table(report: dict[str, Any]) -> str:
    """Plain-text table of a calibration report (one column per matching setting)."""
    cols = [k for k in ("token", "embedding") if k in report]
    th = report["thresholds"]
    lines = [
        f"{report['source']}: {report['records']} records, gold E {report['gold_essential_values']} / "
        f"N {report['gold_non_essential_values']} values; rule tau={th['tau']} theta={th['theta']} "
        f"pass>={th['pass']} soft>={th['soft']} ({th['combine']})",
        "",
    ]
    rows: list[tuple[str, list[str]]] = []
    for k in VERDICT_KEYS:
        rows.append((k, [f"{report[c]['counts'][k]} ({100 * report[c]['rates'][k]:.1f}%)" for c in cols]))
    reasons = sorted({r for c in cols for r in report[c]["reasons"]})
    rows += [(f"  reason {r}", [str(report[c]["reasons"].get(r, 0)) for c in cols]) for r in reasons]
    for side in ("e_recall", "n_recall"):
        rows.append(
            (
                f"{side} mean / median",
                [f"{report[c][side]['mean']} / {report[c][side]['median']}" for c in cols],
            )
        )
        rows.append(
            (
                f"{side} hist 0|<.5|<.8|<1|1",
                ["|".join(str(v) for v in report[c][side]["hist"].values()) for c in cols],
            )
        )
    rows.append(
        (
            "swapped values (samples)",
            [f"{report[c]['swapped']['values']} ({report[c]['swapped']['samples']})" for c in cols],
        )
    )
    rows.append(
        (
            "residual spans (samples)",
            [f"{report[c]['residual']['spans']} ({report[c]['residual']['samples']})" for c in cols],
        )
    )
    w = max(len(r[0]) for r in rows) + 2
    lines.append(" " * w + "".join(f"{c:>24}" for c in cols))
    lines += [f"{name:<{w}}" + "".join(f"{v:>24}" for v in vals) for name, vals in rows]
    agr = report.get("agreement")
    if agr:
        keys = [
            k
            for k in agr["confusion"]
            if any(agr["confusion"][k].values()) or any(agr["confusion"][x][k] for x in agr["confusion"])
        ]
        lines += [
            "",
            f"token vs embedding agreement: {agr['agreement']:.3f} ({agr['n']} records); "
            "rows token, columns embedding",
            " " * 12 + "".join(f"{k:>11}" for k in keys),
        ]
        lines += [f"{a:<12}" + "".join(f"{agr['confusion'][a][b]:>11}" for b in keys) for a in keys]
    return "\n".join(lines)
