"""Shared text normalisation: the content-token view used by the acceptance rule and the metrics.

T(s) = lower-cased alphanumeric tokens of ``s`` minus stop words, kept as a multiset (``Counter``).
One definition serves the judge's acceptance rule (issue: token recall >= tau) and the DelegateCI
leak/retention metrics, so a value "matches" in exactly the same way everywhere.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

_TOKEN_RE = re.compile(r"[a-z0-9]+")

# Function words only: articles, pronouns, auxiliaries, prepositions, conjunctions and a few
# discourse fillers. Content words that carry privacy meaning ("bill", "call", "fire", "system")
# are deliberately *not* here, unlike some IR stop lists.
STOP_WORDS: frozenset[str] = frozenset(
    """
    a an the and or but nor so yet if then than that this these those there here
    i me my mine myself we us our ours ourselves you your yours yourself yourselves
    he him his himself she her hers herself it its itself they them their theirs themselves
    who whom whose which what when where why how
    am is are was were be been being have has had having do does did doing done
    will would shall should can could may might must ought
    to of in on at by for with about against between into through during before after above below
    from up down out off over under again further once
    all any both each few more most other some such only own same too very just also
    not no s t d ll m re ve
    as until while because since although though whether
    please hi hello hey thanks thank
    """.split()
)


def tokens(text: str | None) -> list[str]:
    """All lower-cased alphanumeric tokens of ``text`` (stop words included)."""
    if not text:
        return []
    return _TOKEN_RE.findall(text.lower())


def content_tokens(text: str | None) -> Counter[str]:
    """T(s): the multiset of lower-cased alphanumeric non-stop-word tokens."""
    return Counter(t for t in tokens(text) if t not in STOP_WORDS)


def token_recall(span: str | None, text: str | None | Counter[str]) -> float:
    """|T(span) ∩ T(text)| / |T(span)| with multiset intersection.

    Returns 0.0 when ``span`` has no content tokens (nothing to recall is not evidence of a match).
    ``text`` may be a pre-computed :func:`content_tokens` counter to avoid re-tokenising.
    """
    ts = content_tokens(span)
    total = sum(ts.values())
    if total == 0:
        return 0.0
    tt = text if isinstance(text, Counter) else content_tokens(text)
    return sum((ts & tt).values()) / total


def best_recall(span: str, candidates: Iterable[str]) -> tuple[float, int]:
    """Highest :func:`token_recall` of ``span`` against any candidate, and its index (-1 if none)."""
    best, idx = 0.0, -1
    for i, c in enumerate(candidates):
        r = token_recall(span, c)
        if r > best:
            best, idx = r, i
    return best, idx
