"""``benchgen evaluate RELEASE``: score baselines or external rewrites on a release split (issue 6).

A release is ``<release>/data/<config>/<split>-*.parquet`` (plus a README card). Each rewriter
produces one rewrite per row; rows are scored with the DelegateCI metrics (SLR / NE / EA, overall and
per domain / task type / attribute family, :mod:`benchgen.metrics.delegateci`) and the mean DelegateCI
reward (:mod:`benchgen.metrics.reward`, anchored at ``target_rewrite`` when present).

An external system is scored from a rewrites file: JSONL lines ``{"id": ..., "rewrite": ...}``.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchgen import baselines
from benchgen.errors import DataError
from benchgen.metrics.capid import read_jsonl
from benchgen.metrics.delegateci import LeakReport, Matcher, from_benchgen, score_rewrites
from benchgen.metrics.reward import reward


@dataclass
class RewriterResult:
    rewriter: str
    mode: str  # oracle | detected | "-" (not span-based)
    report: LeakReport
    mean_reward: float

    def to_dict(self) -> dict[str, Any]:
        return _nan_to_none(
            {
                "rewriter": self.rewriter,
                "mode": self.mode,
                "mean_reward": self.mean_reward,
                **self.report.to_dict(),
            }
        )


def _nan_to_none(obj: Any) -> Any:
    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: _nan_to_none(v) for k, v in obj.items()}
    return obj


def load_split(release: str | Path, config: str = "general", split: str = "test") -> list[dict[str, Any]]:
    """Rows of ``<release>/data/<config>/<split>-*.parquet`` as dicts (pyarrow)."""
    import pyarrow.parquet as pq

    root = Path(release)
    if not root.is_dir():
        raise DataError(
            f"release folder not found: {root}",
            hint="pass releases/build/<name>/<version> (the folder holding README.md and data/)",
        )
    files = sorted((root / "data" / config).glob(f"{split}-*.parquet"))
    if not files:
        avail = (
            sorted(p.name for p in (root / "data").glob("*/*.parquet")) if (root / "data").is_dir() else []
        )
        raise DataError(
            f"no {split} split for config {config!r} under {root / 'data' / config}",
            hint=f"available parquet files: {', '.join(avail) or 'none'}; check --config / --split",
        )
    rows: list[dict[str, Any]] = []
    for f in files:
        rows.extend(pq.read_table(f).to_pylist())
    for key in ("id", "query", "essential", "non_essential"):
        if rows and key not in rows[0]:
            raise DataError(f"{files[0]}: rows have no column {key!r}", hint="is this a benchgen release?")
    return rows


def load_rewrites(path: str | Path, ids: Sequence[str]) -> dict[str, str]:
    """``{"id", "rewrite"}`` JSONL -> id -> rewrite; every release id must be present."""
    mapping: dict[str, str] = {}
    for i, rec in enumerate(read_jsonl(path), 1):
        if "id" not in rec or "rewrite" not in rec:
            raise DataError(
                f"{path}: line {i} needs fields 'id' and 'rewrite'",
                hint='write one {"id": ..., "rewrite": ...} object per line',
            )
        mapping[str(rec["id"])] = str(rec["rewrite"] or "")
    missing = [x for x in ids if x not in mapping]
    if missing:
        raise DataError(
            f"{path}: no rewrite for {len(missing)} of {len(ids)} ids (first: {missing[0]!r})",
            hint="produce a rewrite for every row of the split (an empty string is allowed)",
        )
    return mapping


def score_rows(
    rows: Sequence[Mapping[str, Any]],
    rewrites: Sequence[str],
    name: str,
    mode: str,
    matcher: Matcher | None = None,
) -> RewriterResult:
    """DelegateCI report and mean reward of ``rewrites`` (aligned with ``rows``)."""
    samples = [
        from_benchgen({**row, "rewrite": rw}, i)
        for i, (row, rw) in enumerate(zip(rows, rewrites, strict=True))
    ]
    rep = score_rewrites(samples, matcher)
    rewards = [
        reward(rw, list(s.essential), list(s.non_essential), row.get("target_rewrite"))
        for row, rw, s in zip(rows, rewrites, samples, strict=True)
    ]
    return RewriterResult(name, mode, rep, sum(rewards) / len(rewards) if rewards else math.nan)


def run(
    release: str | Path,
    config: str = "general",
    split: str = "test",
    rewriters: Sequence[str] = ("all",),
    mode: str = "oracle",
    matcher: Matcher | None = None,
) -> list[RewriterResult]:
    """Score each rewriter (baseline name, ``all``, or a rewrites JSONL path) on the split."""
    rows = load_split(release, config, split)
    if not rows:
        raise DataError(f"{release}: the {config}/{split} split is empty")
    names: list[str] = []
    for r in rewriters:
        names.extend(baselines.BASELINES if r == "all" else [r])
    out = []
    for name in names:
        if name.endswith(".jsonl") or Path(name).is_file():
            mapping = load_rewrites(name, [str(r["id"]) for r in rows])
            rws = [mapping[str(r["id"])] for r in rows]
            out.append(score_rows(rows, rws, Path(name).stem, "-", matcher))
            continue
        fn = baselines.get(name, mode)
        used_mode = mode if name in baselines.SPAN_BASELINES else "-"
        out.append(score_rows(rows, [fn(r) for r in rows], name, used_mode, matcher))
    return out


def _fmt(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:.4f}"


def results_table(results: Sequence[RewriterResult], title: str = "") -> Any:
    """A rich table: one row per rewriter (overall figures)."""
    from rich.table import Table

    t = Table(title=title or "benchgen evaluate")
    for col in ("rewriter", "mode", "SLR ↓", "NE ↓", "EA ↑", "reward ↑", "samples"):
        t.add_column(col, justify="left" if col in ("rewriter", "mode") else "right")
    for r in results:
        rep = r.report
        t.add_row(
            r.rewriter,
            r.mode,
            _fmt(rep.slr),
            _fmt(rep.ne),
            _fmt(rep.ea),
            _fmt(r.mean_reward),
            str(rep.n_samples),
        )
    return t


CSV_FIELDS = (
    "rewriter",
    "mode",
    "group",
    "value",
    "slr",
    "ne",
    "ea",
    "mean_reward",
    "n_samples",
    "n_samples_with_n",
    "n_items",
    "n_leaked",
    "e_items",
    "e_retained",
    "n_excluded",
)


def write_results(results: Sequence[RewriterResult], out_dir: str | Path) -> list[Path]:
    """Write ``results.json`` (with breakdowns) and ``results.csv`` (one row per rewriter x group)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    jp, cp = out / "results.json", out / "results.csv"
    jp.write_text(json.dumps([r.to_dict() for r in results], indent=2) + "\n", encoding="utf-8")
    with cp.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=CSV_FIELDS)
        w.writeheader()
        for r in results:
            groups = [("overall", "", r.report)] + [
                (g, v, rep) for g, sub in r.report.by.items() for v, rep in sub.items()
            ]
            for g, v, rep in groups:
                d = rep.to_dict()
                w.writerow(
                    {
                        "rewriter": r.rewriter,
                        "mode": r.mode,
                        "group": g,
                        "value": v,
                        "mean_reward": ""
                        if g != "overall" or math.isnan(r.mean_reward)
                        else f"{r.mean_reward:.6f}",
                        **{
                            k: ("" if isinstance(d[k], float) and math.isnan(d[k]) else d[k])
                            for k in CSV_FIELDS
                            if k in d
                        },
                    }
                )
    return [jp, cp]
