"""Reference rewriters ("baselines") scored by ``benchgen evaluate`` (issue 6).

* ``identity``       — the unprotected query (upper bound on leak, and on retention).
* ``deletion``       — remove the non-essential (N) spans.
* ``masking``        — replace each N span with ``***``.
* ``placeholder``    — replace each N span with an attribute tag, e.g. ``[MEDICATION]``.
* ``generalisation`` — replace each N span with its family-level phrase ("a health condition").
* ``pii_redactor``   — type-based redaction: regexes for emails, phones, SSNs, URLs, card numbers
  and dates, applied to the whole query (no notion of E vs N).

Span-based baselines run in two modes: ``oracle`` (the row's gold ``non_essential[].span``) and
``detected`` (the N spans found by the offline judge's extractor, :func:`benchgen.judge.extract`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from benchgen.errors import BenchgenError, NotAvailableError

SPAN_BASELINES = ("deletion", "masking", "placeholder", "generalisation")
BASELINES = ("identity", *SPAN_BASELINES, "pii_redactor")
MODES = ("oracle", "detected")

# Used when the taxonomy (samplers/attributes.yaml) cannot be loaded or lacks the family.
FALLBACK_GENERALISATION = {
    "health": "a health condition",
    "finance": "a financial matter",
    "identity": "a personal identifier",
    "contact": "some contact details",
    "location": "a place",
    "demographic": "a personal characteristic",
    "relationship": "a personal relationship",
    "occupation": "a job",
    "education": "an educational background",
    "legal": "a legal matter",
    "belief": "a personal belief",
    "datetime": "a date",
    "model_leaked": "a personal detail",
}
DEFAULT_GENERALISATION = "a personal detail"

PII_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("EMAIL", re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")),
    ("URL", re.compile(r"\b(?:https?://|www\.)\S+[^\s.,;:!?)\]]")),
    ("SSN", re.compile(r"\b\d{3}-\d{2}-\d{4}\b")),
    ("CARD", re.compile(r"\b(?:\d{4}[- ]?){3}\d{4}\b|\b\d{4}[- ]?\d{6}[- ]?\d{5}\b")),
    ("PHONE", re.compile(r"(?:\+\d{1,3}[\s.-]?)?(?:\(\d{3}\)\s?|\b\d{3}[\s.-])\d{3}[\s.-]\d{4}\b")),
    (
        "DATE",
        re.compile(
            r"\b(?:\d{4}-\d{2}-\d{2}|\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}"
            r"|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?(?:,? \d{4})?"
            r"|\d{1,2}(?:st|nd|rd|th)? (?:of )?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*,? \d{4})\b"
        ),
    ),
)


@lru_cache(maxsize=1)
def _taxonomy_phrases() -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """(family -> phrase, attribute -> phrase, lower-cased value -> attribute) from the taxonomy."""
    try:
        from benchgen.taxonomy import load_taxonomy

        tax = load_taxonomy()
    except (BenchgenError, ImportError, OSError):
        return {}, {}, {}
    fams = {f.id: f.generalisation for f in tax.families}
    attrs = {a.id: a.generalisation for a in tax.attributes}
    values = {v.lower(): a.id for a in tax.attributes for v in a.values}
    return fams, attrs, values


def generalisation_for(family: str, attribute: str = "") -> str:
    """Family-level phrase (taxonomy, then fallback table), else the attribute's phrase, else generic."""
    fams, attrs, _ = _taxonomy_phrases()
    return (
        fams.get(family)
        or FALLBACK_GENERALISATION.get(family)
        or attrs.get(attribute)
        or DEFAULT_GENERALISATION
    )


def _tidy(text: str) -> str:
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)
    text = re.sub(r"([,;:])(?:\s*[,;:])+", r"\1", text)
    text = re.sub(r"\(\s*\)", "", text)
    return re.sub(r"[ \t]+", " ", text).strip()


def replace_spans(query: str, spans: Sequence[tuple[str, str]]) -> str:
    """Replace each (span, replacement) in ``query``: all occurrences, longest span first.

    Matching is exact, falling back to case-insensitive. Occurrences are located on the original
    query and an occurrence overlapping an already claimed one is skipped, so a replacement is never
    re-matched by a later (shorter) span.
    """
    claimed: list[tuple[int, int, str]] = []
    for span, repl in sorted((s for s in spans if s[0].strip()), key=lambda s: -len(s[0])):
        hits = [m.span() for m in re.finditer(re.escape(span), query)]
        if not hits:
            hits = [m.span() for m in re.finditer(re.escape(span), query, flags=re.I)]
        for a, b in hits:
            if all(b <= x or a >= y for x, y, _ in claimed):
                claimed.append((a, b, repl))
    out, pos = [], 0
    for a, b, repl in sorted(claimed):
        out.append(query[pos:a])
        out.append(repl)
        pos = b
    out.append(query[pos:])
    return _tidy("".join(out))


def redact_pii(query: str) -> str:
    """Type-based redaction: replace every regex PII match with ``[TYPE]``."""
    out = query
    for name, pat in PII_PATTERNS:
        out = pat.sub(f"[{name}]", out)
    return out


def oracle_spans(row: Mapping[str, Any]) -> list[dict[str, str]]:
    """The row's gold N items that have a span (span, attribute, family)."""
    return [
        {
            "span": str(x.get("span") or x.get("value") or ""),
            "attribute": str(x.get("attribute") or ""),
            "family": str(x.get("family") or ""),
        }
        for x in row.get("non_essential") or ()
    ]


def detected_spans(row: Mapping[str, Any]) -> list[dict[str, str]]:
    """N spans from the offline judge's extractor; attribute/family guessed from the value banks."""
    try:
        from benchgen.judge import extract
    except ImportError as exc:
        raise NotAvailableError(
            "detected mode needs benchgen.judge.extract, which this build lacks", hint="use --mode oracle"
        ) from exc
    try:
        _, non = extract(str(row.get("query") or ""))
    except BenchgenError as exc:  # e.g. the taxonomy or judge config cannot be loaded
        raise NotAvailableError(
            f"detected mode: the offline extractor failed: {exc.message}",
            hint="use --mode oracle, or fix the taxonomy / judge config",
        ) from exc
    _, _, values = _taxonomy_phrases()
    out = []
    for span in non:
        attr = values.get(span.lower(), "")
        fam = ""
        if attr:
            from benchgen.taxonomy import load_taxonomy

            fam = load_taxonomy().attribute[attr].family
        out.append({"span": span, "attribute": attr, "family": fam})
    return out


def _repl(kind: str, item: Mapping[str, str]) -> str:
    if kind == "deletion":
        return ""
    if kind == "masking":
        return "***"
    if kind == "placeholder":
        tag = re.sub(r"[^A-Za-z0-9]+", "_", item.get("attribute") or "detail").strip("_").upper()
        return f"[{tag or 'DETAIL'}]"
    return generalisation_for(item.get("family", ""), item.get("attribute", ""))


def rewrite(name: str, row: Mapping[str, Any], mode: str = "oracle") -> str:
    """Apply baseline ``name`` to one release row (``mode`` matters for span-based baselines only)."""
    query = str(row.get("query") or "")
    if name == "identity":
        return query
    if name == "pii_redactor":
        return redact_pii(query)
    if name not in SPAN_BASELINES:
        raise NotAvailableError(f"unknown baseline {name!r}", hint=f"choose from {', '.join(BASELINES)}")
    if mode not in MODES:
        raise NotAvailableError(f"unknown span mode {mode!r}", hint="use oracle or detected")
    items = oracle_spans(row) if mode == "oracle" else detected_spans(row)
    return replace_spans(query, [(it["span"], _repl(name, it)) for it in items])


def get(name: str, mode: str = "oracle") -> Callable[[Mapping[str, Any]], str]:
    """A one-argument rewriter for baseline ``name`` in ``mode``."""
    if name not in BASELINES:
        raise NotAvailableError(
            f"unknown baseline {name!r}",
            hint=f"choose from {', '.join(BASELINES)} or pass a rewrites JSONL file",
        )
    return lambda row: rewrite(name, row, mode)
