"""Group-consistent, stratified, deterministic train/validation/test assignment and near-dup removal.

Assignment works on *groups* (the row's ``group`` key: a skeleton and its confusion twin), never on
rows, and is the same for every config, so a group never straddles splits anywhere in a release.

Each group gets a stratum ``(primary config, domain, task_type)`` (primary config: the first config,
in recipe order, holding a row of the group). Strata are visited in sha256 order of their key and,
inside a stratum, groups in sha256 order of ``salt:group``. Every group then goes to the split with
the largest quota deficit (``ratio * rows_seen - rows_assigned``, a smooth weighted round-robin
carried across strata of the same primary config). Within a stratum this cuts the hash-sorted groups
at the ratios; across strata it keeps the global proportions exact even when most strata hold only a
handful of groups. Nothing depends on input order, run time or randomness.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchgen.release.options import SPLITS, NearDupOptions


def _h(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def group_key(row: dict[str, Any]) -> str:
    return str(row.get("group") or row.get("id") or "")


def assign_splits(
    rows: dict[str, list[dict[str, Any]]],
    ratios: dict[str, float],
    *,
    config_order: list[str] | None = None,
    salt: str = "",
) -> dict[str, str]:
    """Map every group key found in ``rows`` to a split name."""
    order = list(config_order or rows)
    order += [c for c in sorted(rows) if c not in order]
    primary: dict[str, str] = {}
    stratum_of: dict[str, tuple[str, str]] = {}
    size: dict[str, int] = defaultdict(int)
    for cfg in order:
        for r in rows.get(cfg, ()):
            g = group_key(r)
            primary.setdefault(g, cfg)
            st = (str(r.get("domain") or ""), str(r.get("task_type") or ""))
            stratum_of[g] = min(stratum_of.get(g, st), st)
            size[g] += 1

    strata: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for g, cfg in primary.items():
        strata[(cfg, *stratum_of[g])].append(g)

    out: dict[str, str] = {}
    for cfg in order:
        keys = sorted((k for k in strata if k[0] == cfg), key=lambda k: _h("\x1f".join(k)))
        seen = 0
        assigned = dict.fromkeys(SPLITS, 0)
        for k in keys:
            for g in sorted(strata[k], key=lambda g: (_h(f"{salt}:{g}"), g)):
                seen += size[g]
                split = max(SPLITS, key=lambda s: (ratios.get(s, 0.0) * seen - assigned[s], -SPLITS.index(s)))
                assigned[split] += size[g]
                out[g] = split
    return out


_WORD = re.compile(r"\w+", re.UNICODE)


def shingles(text: str, k: int) -> set[str]:
    words = _WORD.findall(text.lower())
    if len(words) <= k:
        return {" ".join(words)} if words else set()
    return {" ".join(words[i : i + k]) for i in range(len(words) - k + 1)}


@dataclass
class DedupReport:
    threshold: float
    method: str
    removed: dict[str, dict[str, int]] = field(default_factory=dict)  # config -> split -> n
    pairs: list[dict[str, Any]] = field(default_factory=list)  # removed id, kept id, similarity

    @property
    def total(self) -> int:
        return sum(sum(v.values()) for v in self.removed.values())


# Which side of a cross-split near-duplicate pair is dropped: the evaluation side is kept intact.
_KEEP_PRIORITY = {"test": 0, "validation": 1, "train": 2}


def remove_near_duplicates(
    split_rows: dict[str, dict[str, list[dict[str, Any]]]],
    opts: NearDupOptions,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[dict[str, dict[str, list[dict[str, Any]]]], DedupReport]:
    """Drop rows whose query near-duplicates a query in *another* split (any config).

    ``split_rows`` maps config -> split -> rows. Of a cross-split pair the row in the less protected
    split is dropped (train before validation before test). Candidates come from MinHash LSH and are
    confirmed with the exact Jaccard similarity of word shingles, so the result is deterministic.
    """
    report = DedupReport(threshold=opts.threshold, method=opts.method)
    if not opts.enabled:
        return split_rows, report
    from datasketch import MinHash, MinHashLSH

    items: list[tuple[str, str, dict[str, Any], set[str]]] = []
    for cfg in sorted(split_rows):
        for sp in SPLITS:
            for r in sorted(split_rows[cfg].get(sp, ()), key=lambda r: str(r.get("id"))):
                items.append((cfg, sp, r, shingles(str(r.get("query") or ""), opts.shingle)))
    # Visit the most protected rows first so a dropped row never "protects" another one.
    items.sort(key=lambda it: (_KEEP_PRIORITY[it[1]], it[0], str(it[2].get("id"))))

    # LSH only proposes candidates; a lower LSH threshold raises recall, the exact check decides.
    lsh = MinHashLSH(threshold=min(0.95, max(0.05, opts.threshold * 0.9)), num_perm=opts.num_perm)
    kept: dict[str, tuple[str, set[str], str]] = {}  # key -> (split, shingles, id)
    dropped: set[int] = set()
    total = len(items)
    for i, (cfg, sp, r, sh) in enumerate(items):
        if progress and (i % 200 == 0 or i == total - 1):
            progress(i + 1, total)
        if not sh:
            continue
        m = MinHash(num_perm=opts.num_perm, seed=1)
        for s in sorted(sh):
            m.update(s.encode("utf-8"))
        best: tuple[float, str] | None = None
        for key in sorted(lsh.query(m)):
            ksplit, ksh, kid = kept[key]
            if ksplit == sp:
                continue
            sim = len(sh & ksh) / len(sh | ksh)
            if sim >= opts.threshold and (best is None or sim > best[0]):
                best = (sim, kid)
        if best is not None:
            dropped.add(id(r))
            report.removed.setdefault(cfg, dict.fromkeys(SPLITS, 0))[sp] += 1
            report.pairs.append(
                {
                    "config": cfg,
                    "split": sp,
                    "removed": str(r.get("id")),
                    "kept": best[1],
                    "similarity": round(best[0], 4),
                }
            )
            continue
        key = f"{i}"
        kept[key] = (sp, sh, str(r.get("id")))
        lsh.insert(key, m)
    out = {
        cfg: {sp: [r for r in split_rows[cfg].get(sp, ()) if id(r) not in dropped] for sp in SPLITS}
        for cfg in split_rows
    }
    report.pairs.sort(key=lambda p: (p["config"], p["split"], p["removed"]))
    return out, report


def split_rows(
    rows: dict[str, list[dict[str, Any]]], assignment: dict[str, str]
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Partition each config's rows by the group assignment; rows sorted by id inside a split."""
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for cfg, rs in rows.items():
        parts: dict[str, list[dict[str, Any]]] = {sp: [] for sp in SPLITS}
        for r in rs:
            parts[assignment[group_key(r)]].append(r)
        for sp in SPLITS:
            parts[sp].sort(key=lambda r: (str(r.get("id")), str(r.get("query"))))
        out[cfg] = parts
    return out
