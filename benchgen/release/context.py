"""Everything the document writers (card, datasheet, croissant, manifest) read, in one place.

Only reproducible facts live here: run timestamps are deliberately left out so that rebuilding a
release from the same inputs gives byte-identical files.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from benchgen.release.options import SPLITS, CardOptions, ReleaseOptions
from benchgen.release.parquet import SplitFiles
from benchgen.release.splits import DedupReport

# run_meta keys that change between otherwise identical runs and must never reach release files.
VOLATILE_KEYS = ("started_at", "finished_at", "duration", "duration_s", "run_dir", "hostname")


@dataclass
class ReleaseContext:
    recipe: Any  # benchgen.recipe.Recipe
    card: CardOptions
    options: ReleaseOptions
    meta: dict[str, Any]  # run_meta without VOLATILE_KEYS
    files: dict[str, dict[str, SplitFiles]]  # config -> split -> files
    rows: dict[str, dict[str, list[dict[str, Any]]]]  # config -> split -> rows (after dedup)
    dedup: DedupReport
    changelog_entry: str
    empty_configs: list[str] = field(default_factory=list)  # configs of the recipe with no rows
    figures: list[tuple[str, str]] = field(default_factory=list)  # (relative path, caption)

    # ---- convenience accessors -------------------------------------------------------------
    @property
    def name(self) -> str:
        return str(self.recipe.name)

    @property
    def version(self) -> str:
        return str(self.recipe.version)

    @property
    def configs(self) -> list[str]:
        """Configs that hold data (empty ones are in ``empty_configs``)."""
        return list(self.files)

    def splits(self, config: str) -> list[str]:
        """The non-empty splits of a config, in train/validation/test order."""
        return [s for s in SPLITS if s in self.files.get(config, {})]

    def count(self, config: str, split: str | None = None) -> int:
        parts = self.files.get(config, {})
        if split is not None:
            return parts[split].num_examples if split in parts else 0
        return sum(p.num_examples for p in parts.values())

    @property
    def total(self) -> int:
        return sum(self.count(c) for c in self.configs)

    def counts(self) -> dict[str, dict[str, int]]:
        return {c: {s: self.count(c, s) for s in SPLITS} for c in self.configs}

    def all_rows(self) -> list[dict[str, Any]]:
        return [r for c in self.configs for s in self.splits(c) for r in self.rows[c][s]]

    def model(self, role: str) -> str:
        v = self.meta.get(role)
        if v:
            return str(v)
        return str(getattr(self.recipe, role, "") or "unknown")

    @property
    def seed(self) -> Any:
        return self.meta.get("seed", self.recipe.seed)

    @property
    def benchgen_version(self) -> str:
        if self.meta.get("benchgen_version"):
            return str(self.meta["benchgen_version"])
        from benchgen import __version__

        return __version__

    @property
    def release_date(self) -> str | None:
        """The ISO date on this version's CHANGELOG heading (``## 0.1.0 - 2025-01-31``), if any."""
        first = self.changelog_entry.splitlines()[0] if self.changelog_entry else ""
        m = re.search(r"\d{4}-\d{2}-\d{2}", first)
        return m.group(0) if m else None

    @property
    def pretty_name(self) -> str:
        return self.card.pretty_name or self.name

    @property
    def repo_id(self) -> str:
        return self.card.repo_id or f"ORG/{self.name}"

    def attribute_counts(self) -> dict[str, Counter[str]]:
        """Attribute frequency over all released rows, split by side (E / N)."""
        out: dict[str, Counter[str]] = {"E": Counter(), "N": Counter()}
        for r in self.all_rows():
            for d in r.get("essential") or ():
                out["E"][str(d.get("attribute"))] += 1
            for d in r.get("non_essential") or ():
                out["N"][str(d.get("attribute"))] += 1
        return out

    def acceptance_by_stratum(self) -> tuple[dict[tuple[str, str], float], str]:
        """Acceptance rate per domain x task: from ``run_meta["audit"]`` when given, else from rows.

        Returns the rates and a note on where they came from.
        """
        audit = self.meta.get("audit") or {}
        given = audit.get("acceptance_by_stratum") or audit.get("acceptance_rate_by_stratum") or {}
        rates: dict[tuple[str, str], float] = {}
        for k, v in sorted(given.items()) if isinstance(given, dict) else ():
            if isinstance(v, dict):
                v = v.get("rate", v.get("acceptance_rate"))
            parts = str(k).replace("×", "|").replace("/", "|").split("|") if not isinstance(k, tuple) else k
            if len(parts) == 2 and isinstance(v, int | float):
                rates[(str(parts[0]).strip(), str(parts[1]).strip())] = float(v)
        if rates:
            return rates, "acceptance rate per stratum from the run's audit"
        seen: Counter[tuple[str, str]] = Counter()
        passed: Counter[tuple[str, str]] = Counter()
        for r in self.all_rows():
            key = (str(r.get("domain")), str(r.get("task_type")))
            seen[key] += 1
            passed[key] += (r.get("judge") or {}).get("verdict") == "pass"
        return (
            {k: passed[k] / seen[k] for k in sorted(seen)},
            "share of released rows (all configs) with judge verdict `pass`; rejected drafts are "
            "not released, so this over-states acceptance",
        )


def clean_meta(run_meta: dict[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (run_meta or {}).items() if k not in VOLATILE_KEYS}
