"""CAPID span / type / relevance metrics (Ponomarenko et al., "CAPID: Context-Aware PII Detection
for Question-Answering Systems", Table 2).

Definitions (issue 6, "CAPID span / type / relevance metrics"):

* A span is normalised by lower-casing, stripping and removing ASCII punctuation.
* Span similarity ``sim(p, g)``: when both normalised spans are a single whitespace token, the
  character-level F1 over the multisets of characters; otherwise the F1 over the *sets* of
  whitespace tokens.
* Per sample, each predicted span (in order) takes the gold span with the highest similarity (the
  first on ties). If that similarity exceeds 0.2 and the gold span is not yet covered, the pair is
  matched and the gold span becomes covered. A prediction whose best gold span is already covered is
  *not* re-assigned to its second-best gold span (CAPID's convention).
* span precision = covered / predicted, span recall = covered / gold, span F1 from the two;
  coverage = mean similarity over matched pairs; type / relevance accuracy = share of matched pairs
  whose (lower-cased) label equals the gold label; low- / high-relevance accuracy = relevance
  accuracy restricted to matched pairs whose gold relevance is "0" / "1".
* Corpus figures are plain means over *all* samples; a sample where a figure is undefined (nothing
  predicted, nothing matched, no matched low-relevance gold span, ...) contributes 0. This is the
  convention of the CAPID authors' evaluation script and is what reproduces their Table 2.

Real-data quirks are tolerated: a ``null``/non-dict prediction counts as no predictions, a span whose
value is not a dict keeps the span with empty labels, and relevance written as "high"/"low"
(or "true"/"false", "yes"/"no", "essential"/"non-essential") is mapped to "1"/"0".
"""

from __future__ import annotations

import json
import string
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchgen.errors import DataError

SPAN_THRESHOLD = 0.2
_PUNCT = str.maketrans("", "", string.punctuation)
_REL_ALIASES = {
    "1": "1",
    "high": "1",
    "true": "1",
    "yes": "1",
    "essential": "1",
    "relevant": "1",
    "0": "0",
    "low": "0",
    "false": "0",
    "no": "0",
    "non-essential": "0",
    "nonessential": "0",
    "irrelevant": "0",
    "not relevant": "0",
}


@dataclass(frozen=True)
class Span:
    """One labelled span: normalised-for-matching text plus lower-cased type and relevance."""

    text: str
    type: str
    relevance: str


def normalise(span: str) -> str:
    """Lower-case, strip and remove ASCII punctuation (``string.punctuation``)."""
    return str(span).lower().strip().translate(_PUNCT)


def _f1(inter: int, n_pred: int, n_gold: int) -> float:
    if inter == 0 or n_pred == 0 or n_gold == 0:
        return 0.0
    p, r = inter / n_pred, inter / n_gold
    return 2 * p * r / (p + r)


def char_f1(pred: str, gold: str) -> float:
    """F1 over the multisets of characters of two strings."""
    inter = sum((Counter(pred) & Counter(gold)).values())
    return _f1(inter, len(pred), len(gold))


def span_similarity(pred: str, gold: str) -> float:
    """Similarity of two raw spans: char-F1 if both are one token, else token-set F1."""
    p, g = normalise(pred), normalise(gold)
    pt, gt = p.split(), g.split()
    if len(pt) == 1 and len(gt) == 1:
        return char_f1(p, g)
    ps, gs = set(pt), set(gt)
    return _f1(len(ps & gs), len(ps), len(gs))


def normalise_relevance(value: Any) -> str:
    """Map a relevance label to "1" (essential) / "0" (non-essential); unknown labels pass through."""
    s = str(value if value is not None else "").strip().lower()
    return _REL_ALIASES.get(s, s)


def flatten(spans: Any) -> list[Span]:
    """CAPID span dict ``{span: {type, relevance}}`` -> list of :class:`Span` (quirk-tolerant)."""
    if not isinstance(spans, Mapping):
        return []
    out = []
    for key, vals in spans.items():
        text = str(key).strip().lower()
        if not text:
            continue
        vals = vals if isinstance(vals, Mapping) else {}
        typ = vals.get("type")
        out.append(
            Span(
                text,
                str(typ).strip().lower() if typ is not None else "",
                normalise_relevance(vals.get("relevance")),
            )
        )
    return out


@dataclass(frozen=True)
class CapidScores:
    """Per-sample or averaged CAPID figures (keys of the ``--json`` output)."""

    span_precision: float
    span_recall: float
    span_f1: float
    coverage: float
    type_accuracy: float
    relevance_accuracy: float
    relevance_low_accuracy: float
    relevance_high_accuracy: float
    n_samples: int = 1

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else 0.0


def score_sample(
    pred: Iterable[Span], gold: Iterable[Span], threshold: float = SPAN_THRESHOLD
) -> CapidScores:
    """Score one sample's predicted spans against its gold spans (definitions in the module doc)."""
    pred, gold = list(pred), list(gold)
    covered: set[int] = set()
    sims: list[float] = []
    tp_type = tp_rel = 0
    n_low = n_high = tp_low = tp_high = 0
    for p in pred:
        best, best_i = 0.0, -1
        for i, g in enumerate(gold):
            s = span_similarity(p.text, g.text)
            if s > best:
                best, best_i = s, i
        if best_i < 0 or best <= threshold or best_i in covered:
            continue
        covered.add(best_i)
        g = gold[best_i]
        sims.append(best)
        tp_type += p.type == g.type
        ok_rel = p.relevance == g.relevance
        tp_rel += ok_rel
        if g.relevance == "0":
            n_low += 1
            tp_low += ok_rel
        elif g.relevance == "1":
            n_high += 1
            tp_high += ok_rel
    m = len(covered)
    precision, recall = _ratio(m, len(pred)), _ratio(m, len(gold))
    return CapidScores(
        span_precision=precision,
        span_recall=recall,
        span_f1=_ratio(2 * precision * recall, precision + recall),
        coverage=_ratio(sum(sims), m),
        type_accuracy=_ratio(tp_type, m),
        relevance_accuracy=_ratio(tp_rel, m),
        relevance_low_accuracy=_ratio(tp_low, n_low),
        relevance_high_accuracy=_ratio(tp_high, n_high),
    )


def average(scores: list[CapidScores]) -> CapidScores:
    """Plain mean over samples of every figure (undefined per-sample figures are already 0)."""
    n = len(scores)
    keys = [k for k in CapidScores.__dataclass_fields__ if k != "n_samples"]
    means = {k: _ratio(sum(getattr(s, k) for s in scores), n) for k in keys}
    return CapidScores(**means, n_samples=n)


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSONL file; raise :class:`DataError` naming the file and the bad line."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"file not found: {p}", hint="pass the path of an existing JSONL file")
    rows = []
    with p.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(
                    f"{p}:{lineno}: not valid JSON ({exc.msg})",
                    hint="fix or remove that line; each line must be one JSON object",
                ) from exc
            if not isinstance(obj, dict):
                raise DataError(f"{p}:{lineno}: expected a JSON object, got {type(obj).__name__}")
            rows.append(obj)
    return rows


def score_records(
    records: list[dict[str, Any]],
    gold_field: str = "groundtruth",
    pred_field: str = "parsed",
    source: str = "input",
) -> CapidScores:
    """Average CAPID scores over records carrying ``gold_field`` and ``pred_field`` span dicts."""
    if not records:
        raise DataError(f"{source}: no records to score", hint="the file is empty")
    out = []
    for i, rec in enumerate(records, 1):
        if gold_field not in rec:
            raise DataError(
                f"{source}: record {i} has no field {gold_field!r}",
                hint=f"available fields: {', '.join(sorted(rec))}; use --gold-field",
            )
        if pred_field not in rec:
            raise DataError(
                f"{source}: record {i} has no field {pred_field!r}",
                hint=f"available fields: {', '.join(sorted(rec))}; use --pred-field",
            )
        out.append(score_sample(flatten(rec[pred_field]), flatten(rec[gold_field])))
    return average(out)


def score_file(path: str | Path, gold_field: str = "groundtruth", pred_field: str = "parsed") -> CapidScores:
    """``benchgen score capid FILE``: read a JSONL file and average the CAPID scores."""
    return score_records(read_jsonl(path), gold_field, pred_field, source=str(path))
