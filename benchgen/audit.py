"""Judge outcome figures and the acceptance-bias audit of a run.

* :func:`verdict_summary` — pass / soft-fail / hard-fail / unparsed counts and rates, counts per
  reason, E/N-recall distributions, swapped assignments and residual (model-leaked) spans. It
  takes anything with the :class:`~benchgen.records.Verdict` attributes (``verdict``, ``reason``,
  ``e_recall``, ``n_recall``, ``swapped``, ``residual``), so the CAPID calibration reuses it.
* :func:`acceptance_audit` — acceptance rate (verdict ``pass``) per domain, task type, subject,
  style, tone, policy and attribute; the total-variation distance between the sampled (judged)
  and the accepted distribution of each axis; strata whose acceptance is far below the axis mean
  (rate < mean − ``flag_sd``·sd or rate < ``flag_ratio``·mean, among strata with ≥ ``min_n``
  judged drafts). A judge that accepts some strata much less often than others silently reshapes
  the released distribution; this is where that shows.
* :func:`write_audit` — ``audit.json`` and a readable ``audit.md`` in the run directory.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

VERDICT_KEYS = ("pass", "soft_fail", "hard_fail", "unparsed")
AUDIT_AXES = ("domain", "task_type", "subject", "style", "tone", "policy", "attribute")
_BINS = (
    ("0", 0.0, 0.0),
    ("(0,0.5)", 0.0, 0.5),
    ("[0.5,0.8)", 0.5, 0.8),
    ("[0.8,1)", 0.8, 1.0),
    ("1", 1.0, 1.0),
)


def _bin(x: float) -> str:
    if x <= 0.0:
        return "0"
    if x >= 1.0:
        return "1"
    return next(name for name, _, hi in _BINS[1:4] if x < hi)


def distribution(xs: Sequence[float]) -> dict[str, Any]:
    """Mean, quartiles and a histogram over fixed bins (0, (0,.5), [.5,.8), [.8,1), 1)."""
    if not xs:
        return {
            "n": 0,
            "mean": None,
            "q25": None,
            "median": None,
            "q75": None,
            "hist": {b[0]: 0 for b in _BINS},
        }
    s = sorted(xs)
    q = statistics.quantiles(s, n=4, method="inclusive") if len(s) > 1 else [s[0]] * 3
    h = Counter(_bin(x) for x in s)
    return {
        "n": len(s),
        "mean": round(sum(s) / len(s), 4),
        "q25": round(q[0], 4),
        "median": round(q[1], 4),
        "q75": round(q[2], 4),
        "hist": {b[0]: h.get(b[0], 0) for b in _BINS},
    }


def verdict_summary(verdicts: Sequence[Any]) -> dict[str, Any]:
    """Outcome figures of a set of verdicts (see the module docstring)."""
    counts = Counter(v.verdict for v in verdicts)
    n = len(verdicts)
    judged = [
        v for v in verdicts if v.verdict != "unparsed" and not str(v.reason or "").startswith("generation_")
    ]
    swaps = Counter(f"{s['sampled']}->{s['judged']}" for v in judged for s in v.swapped)
    return {
        "n": n,
        "counts": {k: counts.get(k, 0) for k in VERDICT_KEYS},
        "rates": {k: (counts.get(k, 0) / n if n else 0.0) for k in VERDICT_KEYS},
        "reasons": dict(sorted(Counter(v.reason for v in verdicts if v.reason).items())),
        "e_recall": distribution([v.e_recall for v in judged]),
        "n_recall": distribution([v.n_recall for v in judged]),
        "swapped": {
            "samples": sum(1 for v in judged if v.swapped),
            "values": sum(swaps.values()),
            "by_direction": dict(sorted(swaps.items())),
        },
        "residual": {
            "samples": sum(1 for v in judged if v.residual),
            "spans": sum(len(v.residual) for v in judged),
        },
    }


def _keys(sk: Any, axis: str) -> list[str]:
    if axis == "attribute":
        return sorted({d.attribute for d in (*sk.essential, *sk.non_essential)})
    return [str(getattr(sk, axis))]


def tv_distance(p: Counter[str], q: Counter[str]) -> float:
    """Total-variation distance between two count distributions (0 = identical, 1 = disjoint)."""
    tp, tq = sum(p.values()), sum(q.values())
    if not tp or not tq:
        return 0.0 if tp == tq else 1.0
    return 0.5 * sum(abs(p[k] / tp - q[k] / tq) for k in set(p) | set(q))


def acceptance_audit(
    skeletons: Sequence[Any],
    verdicts: Sequence[Any],
    *,
    flag_sd: float = 2.0,
    flag_ratio: float = 0.5,
    min_n: int = 10,
) -> dict[str, Any]:
    """Acceptance per stratum, sampled-vs-accepted TV distance per axis, and flagged strata."""
    by_id = {s.id: s for s in skeletons}
    judged = [v for v in verdicts if v.id in by_id]
    acceptance_by: dict[str, dict[str, dict[str, float]]] = {}
    shift: dict[str, float] = {}
    flagged: list[dict[str, Any]] = []
    for ax in AUDIT_AXES:
        tot: Counter[str] = Counter()
        ok: Counter[str] = Counter()
        for v in judged:
            for k in _keys(by_id[v.id], ax):
                tot[k] += 1
                ok[k] += v.verdict == "pass"
        acceptance_by[ax] = {k: {"n": tot[k], "accepted": ok[k], "rate": ok[k] / tot[k]} for k in sorted(tot)}
        shift[ax] = round(tv_distance(tot, ok), 4)
        rates = [r["rate"] for r in acceptance_by[ax].values() if r["n"] >= min_n]
        if len(rates) < 2:
            continue
        mean, sd = statistics.fmean(rates), statistics.pstdev(rates)
        for k, r in acceptance_by[ax].items():
            if r["n"] < min_n:
                continue
            why = [
                w
                for w, hit in (
                    (f"< mean - {flag_sd:g} sd", r["rate"] < mean - flag_sd * sd),
                    (f"< {flag_ratio:g} x mean", r["rate"] < flag_ratio * mean),
                )
                if hit
            ]
            if why:
                flagged.append(
                    {
                        "axis": ax,
                        "value": k,
                        "n": r["n"],
                        "rate": round(r["rate"], 4),
                        "axis_mean": round(mean, 4),
                        "axis_sd": round(sd, 4),
                        "why": why,
                    }
                )
    n_pass = sum(v.verdict == "pass" for v in judged)
    return {
        "n_judged": len(judged),
        "acceptance_rate": n_pass / len(judged) if judged else 0.0,
        "acceptance_by": acceptance_by,
        "tv_distance": shift,
        "flagged": flagged,
        "flag_rule": {"flag_sd": flag_sd, "flag_ratio": flag_ratio, "min_n": min_n},
    }


def _pct(x: float | None) -> str:
    return "" if x is None else f"{100 * x:.1f}%"


def audit_markdown(audit: dict[str, Any]) -> str:
    """A readable rendering of the audit (``audit.md``)."""
    out = ["# Judge audit", ""]
    s = audit.get("summary")
    if s:
        out += [
            f"{s['n']} judged drafts: "
            + ", ".join(f"{k} {s['counts'][k]} ({_pct(s['rates'][k])})" for k in VERDICT_KEYS),
            "",
        ]
        if s["reasons"]:
            out += [
                "| reason | count |",
                "|---|---|",
                *[f"| {k} | {v} |" for k, v in s["reasons"].items()],
                "",
            ]
        for side in ("e_recall", "n_recall"):
            d = s[side]
            out.append(
                f"- {side}: mean {d['mean']}, median {d['median']}, histogram "
                + ", ".join(f"{k}: {v}" for k, v in d["hist"].items())
            )
        out += [
            f"- swapped assignments: {s['swapped']['values']} in {s['swapped']['samples']} samples "
            f"{s['swapped']['by_direction']}",
            f"- residual (model-leaked, folded into N): {s['residual']['spans']} spans in "
            f"{s['residual']['samples']} samples",
            "",
        ]
    agr = audit.get("agreement")
    if agr:
        keys = list(agr["confusion"])
        out += [
            f"## Agreement {agr['settings'][0]} vs {agr['settings'][1]}: {_pct(agr['agreement'])} "
            f"of {agr['n']}",
            "",
            f"| {agr['settings'][0]} \\ {agr['settings'][1]} | " + " | ".join(keys) + " |",
            "|---" * (len(keys) + 1) + "|",
            *[f"| {a} | " + " | ".join(str(agr["confusion"][a][b]) for b in keys) + " |" for a in keys],
            "",
        ]
    out += [f"## Acceptance (verdict pass): {_pct(audit['acceptance_rate'])} of {audit['n_judged']}", ""]
    rule = audit["flag_rule"]
    if audit["flagged"]:
        out += [
            f"Flagged strata (rate < mean − {rule['flag_sd']} sd or < {rule['flag_ratio']} × mean, "
            f"n ≥ {rule['min_n']}):",
            "",
            "| axis | value | n | rate | axis mean | why |",
            "|---|---|---|---|---|---|",
            *[
                f"| {f['axis']} | {f['value']} | {f['n']} | {_pct(f['rate'])} | {_pct(f['axis_mean'])} | "
                f"{'; '.join(f['why'])} |"
                for f in audit["flagged"]
            ],
            "",
        ]
    else:
        out += ["No stratum flagged.", ""]
    for ax, rows in audit["acceptance_by"].items():
        out += [
            f"### {ax} (TV distance sampled → accepted: {audit['tv_distance'][ax]})",
            "",
            "| value | judged | accepted | rate |",
            "|---|---|---|---|",
            *[f"| {k} | {r['n']} | {r['accepted']} | {_pct(r['rate'])} |" for k, r in rows.items()],
            "",
        ]
    return "\n".join(out)


def write_audit(run_dir: str | Path, audit: dict[str, Any]) -> tuple[Path, Path]:
    d = Path(run_dir)
    d.mkdir(parents=True, exist_ok=True)
    j, m = d / "audit.json", d / "audit.md"
    j.write_text(json.dumps(audit, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    m.write_text(audit_markdown(audit), encoding="utf-8")
    return j, m
