"""The reformulator stage: the target rewrite y* of each released query.

y* keeps every essential (E) detail and removes or generalises every non-essential (N) detail —
the sampled N values plus the judge's residual (model-leaked) spans, which ``sample_row`` folds
into N. Two implementations:

* **offline** (deterministic, no network): the query is split into sentences at boundaries that
  never fall inside a detail span. A sentence that carries an N span but no E span is dropped
  (unless it is the request itself — a question — or the only sentence); N spans left in the
  kept sentences are replaced by their attribute's ``generalisation`` ("a medication"), or the
  family's. The offline generator writes one detail clause per sentence, so this removes N
  cleanly without touching E.
* **LLM** (any provider spec, through :mod:`benchgen.runner`): ``prompts/reformulator/*.j2`` in
  JSON mode, answer ``{"rewrite": "..."}``.

Every rewrite is checked with the DelegateCI leak/retention matcher
(:func:`benchgen.metrics.delegateci.score_samples`, token recall τ = 0.5): ``leaked`` lists N
values still present, ``missing`` E values not retained. Cases the check cannot be satisfied on
are recorded explicitly, never hidden by loosening the check: ``unsatisfiable`` lists N values
that lexically overlap an E value (``n_overlaps_e``: keeping E keeps them) and N values whose
tokens also occur in text a rewrite must keep — the request or an E span (``n_tokens_in_kept_text``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchgen.metrics.delegateci import Item, RewriteSample, excluded_non_essential, score_samples
from benchgen.providers.base import Completion, Message, Request
from benchgen.records import Draft
from benchgen.taxonomy import Taxonomy
from benchgen.templates import render
from benchgen.text import content_tokens, token_recall

LEAKED_GENERALISATION = "a personal detail"
_BOUNDARY = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Target:
    """One detail to keep (E) or drop (N), with its span in the query and a generic replacement."""

    value: str
    span: str
    generalisation: str


def targets(draft: Draft, tax: Taxonomy, residual: Sequence[str] = ()) -> tuple[list[Target], list[Target]]:
    """(E targets, N targets) of a draft; residual judge spans join N."""

    def gen(attribute: str, family: str) -> str:
        a, f = tax.attribute.get(attribute), tax.family.get(family)
        return (
            a.generalisation
            if a is not None
            else f.generalisation
            if f is not None
            else LEAKED_GENERALISATION
        )

    e = [Target(x.value, x.span or x.value, gen(x.attribute, x.family)) for x in draft.essential]
    n = [Target(x.value, x.span or x.value, gen(x.attribute, x.family)) for x in draft.non_essential]
    n += [Target(s, s, LEAKED_GENERALISATION) for s in residual if s not in {t.value for t in n}]
    return e, n


def _occurrences(text: str, span: str) -> list[tuple[int, int]]:
    if not span:
        return []
    return [(m.start(), m.end()) for m in re.finditer(re.escape(span), text, flags=re.IGNORECASE)]


def _sentences(text: str, protected: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    cuts = [m.start() for m in _BOUNDARY.finditer(text) if not any(a < m.start() < b for a, b in protected)]
    bounds, start = [], 0
    for c in cuts:
        bounds.append((start, c))
        start = c
    bounds.append((start, len(text)))
    return bounds


def _tidy(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([.,;:!?])", r"\1", text)
    return re.sub(r"(^|[.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)


def offline_rewrite(query: str, keep: Sequence[Target], drop: Sequence[Target]) -> str:
    """Drop N-only sentences, generalise N spans inside kept sentences (see the module docstring)."""
    e_iv = [iv for t in keep for iv in _occurrences(query, t.span)]
    n_iv = [(iv, t) for t in drop for iv in _occurrences(query, t.span)]
    # an N occurrence inside an E span is part of E (kept; the check records it as unsatisfiable)
    n_iv = [(iv, t) for iv, t in n_iv if not any(a <= iv[0] and iv[1] <= b for a, b in e_iv)]
    sents = _sentences(query, e_iv + [iv for iv, _ in n_iv])
    out = []
    for s, e in sents:
        has_e = any(s <= a < e for a, _ in e_iv)
        mine = [(iv, t) for iv, t in n_iv if s <= iv[0] < e]
        text = query[s:e]
        if mine and not has_e and not text.rstrip().endswith("?") and len(sents) > 1:
            continue
        for (a, b), t in sorted(mine, key=lambda x: -x[0][0]):  # right to left keeps offsets valid
            text = text[: a - s] + t.generalisation + text[b - s :]
        out.append(text)
    return _tidy(" ".join(out))


def check_rewrite(
    rewrite: str | None, keep: Sequence[Target], drop: Sequence[Target], query: str = "", tau: float = 0.5
) -> dict[str, Any]:
    """DelegateCI leak/retention check of one rewrite (τ = 0.5 token recall, lexical only)."""
    from benchgen.metrics.delegateci import Matcher

    e_items = tuple(Item(t.value) for t in keep)
    n_items = tuple(Item(t.value) for t in drop)
    (res,) = score_samples([RewriteSample("x", rewrite or "", e_items, n_items)], Matcher(tau_lex=tau))
    unsat = [
        {"value": t.value, "why": "n_overlaps_e"}
        for t, x in zip(drop, excluded_non_essential(e_items, n_items, tau), strict=True)
        if x
    ]
    leaked = [i.text for i, hit in res.leaked if hit]
    if query:  # tokens that survive in text a rewrite must keep: the query minus every N span
        kept = query
        for t in drop:
            kept = re.sub(re.escape(t.span), " ", kept, flags=re.IGNORECASE) if t.span else kept
        kept_tokens = content_tokens(kept)
        unsat += [
            {"value": v, "why": "n_tokens_in_kept_text"}
            for v in leaked
            if token_recall(v, kept_tokens) >= tau
        ]
    return {
        "leaked": leaked,
        "missing": [i.text for i, hit in res.retained if not hit],
        "unsatisfiable": unsat,
    }


# -- LLM reformulator ---------------------------------------------------------------------------
def build_reformulation_request(
    query: str,
    keep: Sequence[Target],
    drop: Sequence[Target],
    item_id: str = "",
    prompt: str = "reformulator",
) -> Request:
    ctx: dict[str, Any] = {
        "query": query,
        "keep": [t.value for t in keep],
        "drop": [{"value": t.value, "generalisation": t.generalisation} for t in drop],
    }
    return Request(
        messages=(Message("user", render(f"{prompt}/user.j2", **ctx).strip()),),
        system=render(f"{prompt}/system.j2", **ctx).strip(),
        temperature=0.0,
        max_tokens=2048,
        json_mode=True,
        item_id=item_id,
    )


def parse_rewrite(data: Any) -> str:
    if (
        not isinstance(data, Mapping)
        or not isinstance(data.get("rewrite"), str)
        or not data["rewrite"].strip()
    ):
        raise ValueError("expected a JSON object with a non-empty string 'rewrite'")
    return data["rewrite"].strip()


def _parser() -> Any:
    from benchgen.runner import ItemFailure

    def parse(item_id: str, completion: Completion) -> dict[str, Any]:
        try:
            return {"rewrite": parse_rewrite(completion.extra.get("json"))}
        except ValueError as exc:
            raise ItemFailure("unparsed", f"{exc}: {completion.text[:500]}") from None

    return parse


def reformulate(
    drafts: Sequence[Draft],
    spec: str,
    tax: Taxonomy,
    residual: Mapping[str, Sequence[str]] | None = None,
    *,
    llm: Any = None,
    calls_path: Path | None = None,
    quiet: bool = True,
) -> Iterable[dict[str, Any]]:
    """One record per draft: ``{"id", "reformulator", "target_rewrite", "status", "failure_reason",
    "leaked", "missing", "unsatisfiable"}``. ``llm`` is a :class:`benchgen.pipeline.LLMOptions`."""
    from benchgen.providers.base import parse_spec

    residual = residual or {}
    plan = {d.id: (d, *targets(d, tax, residual.get(d.id, ()))) for d in drafts if d.status == "ok"}
    ps = parse_spec(spec)
    answers: dict[str, dict[str, Any]] = {}
    if ps.provider != "offline":
        from benchgen.providers.journal import load_records

        calls = calls_path or Path("runs") / "reformulate_calls.jsonl"
        items = [(i, build_reformulation_request(d.query, e, n, i)) for i, (d, e, n) in plan.items()]
        llm.run(str(ps), items, calls, stage="reformulate", parse=_parser(), quiet=quiet)
        answers = load_records(calls)
    for i, (d, e, n) in plan.items():
        rec: dict[str, Any] = {"id": i, "reformulator": str(ps), "status": "ok", "failure_reason": None}
        if ps.provider == "offline":
            rec["target_rewrite"] = offline_rewrite(d.query, e, n)
        else:
            ans = answers.get(i)
            if ans is None or ans.get("failure_reason") == "error":
                continue  # not answered: stays to-do for the next run
            if ans.get("status") != "ok":
                rec.update(
                    status="failed", failure_reason=str(ans.get("failure_reason")), target_rewrite=None
                )
            else:
                rec["target_rewrite"] = ans["output"]["rewrite"]
        rec.update(
            check_rewrite(rec["target_rewrite"], e, n, d.query)
            if rec["target_rewrite"] is not None
            else {"leaked": [], "missing": [], "unsatisfiable": []}
        )
        yield rec


def reformulation_summary(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts for the run report: failures, leaks, missing E, unsatisfiable cases by reason."""
    from collections import Counter

    unsat = {(r["id"], u["value"]) for r in records for u in r.get("unsatisfiable") or ()}
    why = Counter(u["why"] for r in records for u in r.get("unsatisfiable") or ())
    return {
        "n": len(records),
        "failed": sum(r.get("status") != "ok" for r in records),
        "samples_with_leak": sum(1 for r in records if r.get("leaked")),
        "samples_with_avoidable_leak": sum(
            1 for r in records if any((r["id"], v) not in unsat for v in r.get("leaked") or ())
        ),
        "samples_with_missing_e": sum(1 for r in records if r.get("missing")),
        "unsatisfiable": dict(sorted(why.items())),
    }
