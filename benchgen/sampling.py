"""The seeded skeleton sampler: axes, E/N partition and confusion injection, before any text.

Determinism: skeleton ``i`` depends only on ``(seed, i)`` and the taxonomy, never on global state
or on which other indices are sampled in the same call, so any chunking of ``range(n)`` yields
byte-identical skeletons.

Balance: categorical axes are assigned by *block permutations*: indices ``[b*k, (b+1)*k)`` receive
a seeded permutation of the ``k`` values, so after ``n`` draws every value's count differs from any
other's by at most one (per axis). Domain and task type are drawn jointly over the 220 cells, so
their cross-stratification is balanced too. Non-essential attributes are read from a rotating,
block-permuted stream of all 30 attributes, which balances attribute marginals across samples.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from benchgen.records import Detail, Skeleton
from benchgen.taxonomy import SamplerSettings, Taxonomy


def _rng(seed: int, *parts: object) -> random.Random:
    return random.Random(":".join(str(p) for p in (seed, *parts)))


def _block_pick(seed: int, axis: str, values: Sequence[Any], i: int) -> Any:
    k = len(values)
    block, pos = divmod(i, k)
    perm = list(values)
    _rng(seed, "axis", axis, block).shuffle(perm)
    return perm[pos]


def _size(rng: random.Random, rng_spec: Any) -> int:
    k = round(rng.gauss(rng_spec.mean, 1.0))
    return max(rng_spec.min, min(rng_spec.max, k))


def settings_with_overrides(tax: Taxonomy, overrides: dict[str, Any] | None) -> SamplerSettings:
    """Merge a recipe's ``sampler:`` overrides (validated by pydantic) into the taxonomy settings."""
    if not overrides:
        return tax.settings
    merged = tax.settings.model_dump()
    for key, val in overrides.items():
        if isinstance(val, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **val}
        else:
            merged[key] = val
    return SamplerSettings(**merged)


class Sampler:
    """Draws skeletons from a validated taxonomy."""

    def __init__(self, tax: Taxonomy, seed: int, settings: SamplerSettings | None = None) -> None:
        self.tax = tax
        self.seed = seed
        self.settings = settings or tax.settings
        self.cells = [(d.id, t.id) for d in tax.domains for t in tax.tasks]
        self.attr_ids = [a.id for a in tax.attributes]
        self._addressed_tasks = [t.id for t in tax.tasks if "name" in tax.policy[t.policy].forced]
        self._domain_tasks = [
            t.id
            for t in tax.tasks
            if tax.policy[t.policy].draw_from == "domain_pool" and not tax.policy[t.policy].forced
        ]

    # -- public ---------------------------------------------------------------------------
    def skeletons(self, n: int, start: int = 0) -> Iterator[Skeleton]:
        """Skeletons for base indices ``start .. start+n-1`` (each followed by its confusion twin)."""
        for i in range(start, start + n):
            yield from self.sample(i)

    def sample(self, i: int) -> list[Skeleton]:
        base = self._base(i)
        out = [base]
        conf = self.settings.confusion
        rng = _rng(self.seed, i, "confusion")
        if conf.probability > 0 and rng.random() < conf.probability:
            kinds = sorted(conf.types)
            kind = rng.choices(kinds, weights=[conf.types[k] for k in kinds])[0]
            twin = self._shared_attribute(base, rng) if kind == "shared-attribute" else self._trap(base, rng)
            out.append(twin)
        return out

    # -- internals ------------------------------------------------------------------------
    def _detail(
        self,
        attr: str,
        subject: str,
        relation: str,
        rng: random.Random,
        exclude: frozenset[str] | set[str] = frozenset(),
    ) -> Detail:
        a = self.tax.attribute[attr]
        choices = [v for v in a.values if v not in exclude] or list(a.values)
        return Detail(
            attribute=attr, family=a.family, subject=subject, relation=relation, value=rng.choice(choices)
        )

    def _draw_essential(
        self, domain: str, task: str, subject: str, relation: str, rng: random.Random
    ) -> list[Detail]:
        pol = self.tax.task_policy(task)
        if pol.draw_from == "none":
            return []
        k = _size(rng, self.settings.n_essential)
        forced = list(pol.forced)
        pool = [a for a in self.tax.domain[domain].essential_pool if a not in forced]
        n_draw = max(0, k - len(forced))
        if pol.max_drawn is not None:
            n_draw = min(n_draw, pol.max_drawn)
        drawn = rng.sample(pool, min(n_draw, len(pool)))
        return [self._detail(a, subject, relation, rng) for a in forced + drawn]

    def _draw_non_essential(
        self, i: int, taken: set[str], subject: str, relation: str, rng: random.Random
    ) -> list[Detail]:
        k = _size(rng, self.settings.n_non_essential)
        width = self.settings.n_non_essential.max + self.settings.n_essential.max
        chosen: list[str] = []
        for p in range(i * width, (i + 1) * width):
            a = _block_pick(self.seed, "n_attr", self.attr_ids, p)
            if a not in taken and a not in chosen:
                chosen.append(a)
            if len(chosen) == k:
                break
        rest = [a for a in self.attr_ids if a not in taken and a not in chosen]
        while len(chosen) < k and rest:
            chosen.append(rest.pop(rng.randrange(len(rest))))
        return [self._detail(a, subject, relation, rng) for a in chosen]

    def _base(self, i: int) -> Skeleton:
        domain, task = _block_pick(self.seed, "cell", self.cells, i)
        subject = _block_pick(self.seed, "subject", [s.id for s in self.tax.subjects], i)
        style = _block_pick(self.seed, "style", [s.id for s in self.tax.styles], i)
        tone = _block_pick(self.seed, "tone", [t.id for t in self.tax.tones], i)
        rng = _rng(self.seed, i, "base")
        relation = rng.choice(self.tax.subject[subject].relations)
        essential = self._draw_essential(domain, task, subject, relation, rng)
        non_essential = self._draw_non_essential(i, {d.attribute for d in essential}, subject, relation, rng)
        sid = f"bg-{self.seed}-{i:06d}"
        return Skeleton(
            id=sid,
            seed=self.seed,
            index=i,
            group=sid,
            domain=domain,
            task_type=task,
            subject=subject,
            relation=relation,
            style=style,
            tone=tone,
            policy=self.tax.task[task].policy,
            confusion=None,
            essential=tuple(essential),
            non_essential=tuple(non_essential),
        )

    def _third_party(self, base: Skeleton, rng: random.Random) -> str:
        rels = [r for r in self.tax.subject["third_party"].relations if r != base.relation]
        return rng.choice(rels)

    def _shared_attribute(self, base: Skeleton, rng: random.Random) -> Skeleton:
        """Same attribute type in E (about the subject) and in N (about a third party)."""
        sk = base
        if not sk.essential:  # switch to a task whose policy yields E, then redraw E
            task = rng.choice(self._domain_tasks)
            ess = self._draw_essential(sk.domain, task, sk.subject, sk.relation, rng)
            sk = replace(sk, task_type=task, policy=self.tax.task[task].policy, essential=tuple(ess))
        target = rng.choice(list(sk.essential))
        n_keep = [
            d
            for d in sk.non_essential
            if d.attribute != target.attribute and d.attribute not in {e.attribute for e in sk.essential}
        ]
        n_keep = n_keep[: max(0, len(n_keep) - 1)]
        shadow = self._detail(
            target.attribute, "third_party", self._third_party(base, rng), rng, exclude={target.value}
        )
        return replace(
            sk, id=f"{base.id}-c", confusion="shared-attribute", non_essential=tuple([*n_keep, shadow])
        )

    def _trap(self, base: Skeleton, rng: random.Random) -> Skeleton:
        """Over-removal trap: an addressed-person task whose answer needs a sensitive-looking detail."""
        task = rng.choice(self._addressed_tasks)
        sens = set(self.settings.confusion.sensitive_families)
        pool = [
            a
            for a in self.tax.domain[base.domain].essential_pool
            if a != "name" and self.tax.attribute[a].family in sens
        ]
        if not pool:
            pool = [a.id for a in self.tax.attributes if a.family in sens and a.id != "name"]
        trap_attr = rng.choice(pool)
        ess = [
            self._detail("name", base.subject, base.relation, rng),
            self._detail(trap_attr, base.subject, base.relation, rng),
        ]
        taken = {d.attribute for d in ess}
        n_keep = tuple(d for d in base.non_essential if d.attribute not in taken)
        return replace(
            base,
            id=f"{base.id}-c",
            task_type=task,
            policy=self.tax.task[task].policy,
            confusion="over-removal-trap",
            essential=tuple(ess),
            non_essential=n_keep,
        )


AXES = ("domain", "task_type", "subject", "style", "tone")


def balance_report(skeletons: Sequence[Skeleton], tax: Taxonomy | None = None) -> dict[str, dict[str, Any]]:
    """Per-axis counts and the max/min count ratio (1.0 = perfectly balanced)."""
    report: dict[str, dict[str, Any]] = {}
    universe: dict[str, list[str]] = {}
    if tax is not None:
        universe = {
            "domain": [d.id for d in tax.domains],
            "task_type": [t.id for t in tax.tasks],
            "subject": [s.id for s in tax.subjects],
            "style": [s.id for s in tax.styles],
            "tone": [t.id for t in tax.tones],
            "attribute": [a.id for a in tax.attributes],
        }
    series: dict[str, Counter[str]] = {ax: Counter(getattr(s, ax) for s in skeletons) for ax in AXES}
    series["attribute"] = Counter(d.attribute for s in skeletons for d in (*s.essential, *s.non_essential))
    series["attribute_non_essential"] = Counter(d.attribute for s in skeletons for d in s.non_essential)
    series["policy"] = Counter(s.policy for s in skeletons)
    series["confusion"] = Counter(s.confusion or "none" for s in skeletons)
    for ax, cnt in series.items():
        for v in universe.get(ax.replace("_non_essential", ""), []):
            cnt.setdefault(v, 0)
        lo, hi = (min(cnt.values()), max(cnt.values())) if cnt else (0, 0)
        report[ax] = {
            "counts": dict(sorted(cnt.items())),
            "min": lo,
            "max": hi,
            "max_min_ratio": (hi / lo) if lo else float("inf"),
        }
    return report
