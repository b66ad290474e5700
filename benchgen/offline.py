"""The offline generator: a deterministic, CheckList-style template renderer (no network).

For one skeleton it renders every detail as a clause from the attribute's phrasings (style-specific),
phrases the task request from the task's request templates, and lays the pieces out with one of
several Jinja layouts per disclosure style (``prompts/offline/<style>.j2``), wrapped in a tone's
opener and closer. Essential details are tied to the task; non-essential details are asides.

Labels stay correct by construction: each value is inserted verbatim, and its span is looked up
in the final query (case-insensitively, to survive sentence-initial capitalisation). A value that
cannot be found is a generation failure, never a silently wrong label.
"""

from __future__ import annotations

import random
import re

from benchgen.records import Detail, Draft, Skeleton
from benchgen.taxonomy import Taxonomy
from benchgen.templates import capitalize_first, render, render_string, template_hash

GENERATOR_SPEC = "offline"
N_VARIANTS = 3


def subject_forms(subject: str, relation: str) -> dict[str, str]:
    """Grammatical forms for the phrasing variables S, P, O, be, have, s, do, was."""
    if subject == "self":
        return {"S": "I", "P": "my", "O": "me", "be": "am", "have": "have", "s": "", "do": "do", "was": "was"}
    return {
        "S": relation,
        "P": f"{relation}'s",
        "O": relation,
        "be": "is",
        "have": "has",
        "s": "s",
        "do": "does",
        "was": "was",
    }


def _clause(tax: Taxonomy, d: Detail, style: str, rng: random.Random) -> str:
    phr: dict[str, list[str]] = {str(k): v for k, v in tax.attribute[d.attribute].phrasings.items()}
    key = style if style in phr else rng.choice(["direct", "narrative"])
    src = rng.choice(phr[key])
    return render_string(src, value=d.value, **subject_forms(d.subject, d.relation))


def _find_span(query: str, value: str) -> str | None:
    """The value's occurrence in the query, preferring a whole-word hit ("33" not inside "555-0133")."""
    m = re.search(rf"(?<!\w){re.escape(value)}(?!\w)", query, flags=re.IGNORECASE) or re.search(
        re.escape(value), query, flags=re.IGNORECASE
    )
    return query[m.start() : m.end()] if m else None


def _tidy(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([.,;:!?])", r"\1", text)
    text = re.sub(r"\.\.+", ".", text)
    # capitalise the first letter of every sentence (values found case-insensitively afterwards)
    return re.sub(r"(^|[.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)


def generate_one(tax: Taxonomy, sk: Skeleton) -> Draft:
    rng = random.Random(f"{sk.seed}:{sk.id}:generate")
    template = f"offline/{sk.style}.j2"
    e = [_clause(tax, d, sk.style, rng) for d in sk.essential]
    n = [_clause(tax, d, sk.style, rng) for d in sk.non_essential]
    mixed = [("E", c) for c in e] + [("N", c) for c in n]
    rng.shuffle(mixed)
    forms = subject_forms(sk.subject, sk.relation)
    task = tax.task[sk.task_type]
    topic = rng.choice(tax.domain[sk.domain].topics)
    request = render_string(
        rng.choice(task.requests), topic=topic, who=forms["O"], whose=forms["P"], has_e=bool(sk.essential)
    )
    tone = tax.tone[sk.tone]
    query = render(
        template,
        opener=rng.choice(tone.openers),
        closer=rng.choice(tone.closers),
        request=capitalize_first(request),
        e=e,
        n=n,
        mixed=mixed,
        variant=rng.randrange(N_VARIANTS),
    )
    query = _tidy(query)
    spans: dict[int, str] = {}
    details = [*sk.essential, *sk.non_essential]
    missing = []
    for k, d in enumerate(details):
        span = _find_span(query, d.value)
        if span is None:
            missing.append(d.attribute)
        else:
            spans[k] = span
    th = template_hash(template)
    if missing:
        return Draft(
            skeleton=sk,
            query=query,
            essential=sk.essential,
            non_essential=sk.non_essential,
            generator=GENERATOR_SPEC,
            template=template,
            template_hash=th,
            status="failed",
            failure_reason=f"span_not_found:{','.join(missing)}",
        )
    filled = [Detail(**{**d.to_dict(), "span": spans[k]}) for k, d in enumerate(details)]
    ne = len(sk.essential)
    return Draft(
        skeleton=sk,
        query=query,
        essential=tuple(filled[:ne]),
        non_essential=tuple(filled[ne:]),
        generator=GENERATOR_SPEC,
        template=template,
        template_hash=th,
    )
