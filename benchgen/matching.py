"""The acceptance rule: does the judge's re-extraction recover the sampled E/N partition?

1. Value matching: a sampled value matches a judge string when its content-token recall
   (``benchgen.text.token_recall``: lower-cased, stop-word-filtered alphanumeric tokens) reaches
   ``tau`` or, when the embedding channel is on (``theta`` set, :mod:`benchgen.embeddings`), their
   sentence-embedding cosine similarity reaches ``theta``. Attribute types are ignored, so
   paraphrases and tense changes still match.
2. Side recall: E-recall is the share of sampled E values the judge placed in ``essential``;
   N-recall the share of sampled N values it placed in ``non_essential``. E-recall is 1 when the
   policy makes E empty. Swapped assignments (a sampled E value found only on the judge's N side,
   and vice versa) and residual judge strings matching no sampled value are recorded; residuals
   are model-leaked sensitive details (``records.sample_row`` folds them into N).
3. Decision: ``score = min(E-recall, N-recall)`` (or their mean); score >= pass -> ``pass``,
   >= soft -> ``soft_fail`` (kept for hard mining), else ``hard_fail`` (dropped, with reason).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from benchgen.text import token_recall

# matcher(values, candidates) -> for each value, the set of candidate indices it matches
Matcher = Callable[[Sequence[str], Sequence[str]], list[set[int]]]


@dataclass(frozen=True)
class AcceptanceThresholds:
    tau: float = 0.5
    pass_threshold: float = 0.8
    soft_threshold: float = 0.5
    combine: Literal["min", "mean"] = "min"
    theta: float | None = None  # embedding cosine threshold; None = token matching only


def token_matcher(tau: float) -> Matcher:
    def match(values: Sequence[str], candidates: Sequence[str]) -> list[set[int]]:
        return [{j for j, c in enumerate(candidates) if token_recall(v, c) >= tau} for v in values]

    return match


@dataclass(frozen=True)
class Decision:
    e_recall: float
    n_recall: float
    score: float
    verdict: str
    reason: str | None
    swapped: tuple[dict[str, str], ...]
    residual: tuple[str, ...]


def decide(
    essential_values: Sequence[str],
    non_essential_values: Sequence[str],
    judge_essential: Sequence[str],
    judge_non_essential: Sequence[str],
    th: AcceptanceThresholds,
    matcher: Matcher | None = None,
) -> Decision:
    """Apply the acceptance rule to one sample (pure function; see the module docstring)."""
    match = matcher or token_matcher(th.tau)
    je, jn = list(judge_essential), list(judge_non_essential)
    e_in_e, e_in_n = match(essential_values, je), match(essential_values, jn)
    n_in_n, n_in_e = match(non_essential_values, jn), match(non_essential_values, je)

    e_hits = sum(1 for m in e_in_e if m)
    n_hits = sum(1 for m in n_in_n if m)
    e_recall = e_hits / len(essential_values) if essential_values else 1.0
    n_recall = n_hits / len(non_essential_values) if non_essential_values else 1.0

    swapped: list[dict[str, str]] = []
    for v, own, other in zip(essential_values, e_in_e, e_in_n, strict=True):
        if not own and other:
            swapped.append({"value": v, "sampled": "essential", "judged": "non_essential"})
    for v, own, other in zip(non_essential_values, n_in_n, n_in_e, strict=True):
        if not own and other:
            swapped.append({"value": v, "sampled": "non_essential", "judged": "essential"})

    used_e = set().union(*e_in_e, *n_in_e) if je else set()
    used_n = set().union(*e_in_n, *n_in_n) if jn else set()
    # a judge string also counts as explained when it lies inside a sampled value (judge copied
    # less): the same matcher applied the other way round (judge string -> sampled values)
    values = [*essential_values, *non_essential_values]
    left = [s for j, s in enumerate(je) if j not in used_e] + [s for j, s in enumerate(jn) if j not in used_n]
    explained = match(left, values) if left and values else [set() for _ in left]
    residual = tuple(s for s, hit in zip(left, explained, strict=True) if not hit)

    score = min(e_recall, n_recall) if th.combine == "min" else (e_recall + n_recall) / 2
    if score >= th.pass_threshold:
        verdict, reason = "pass", None
    else:
        verdict = "soft_fail" if score >= th.soft_threshold else "hard_fail"
        low_e, low_n = e_recall < th.pass_threshold, n_recall < th.pass_threshold
        reason = "low_e_and_n_recall" if low_e and low_n else ("low_e_recall" if low_e else "low_n_recall")
    return Decision(e_recall, n_recall, score, verdict, reason, tuple(swapped), residual)


# -- agreement between two settings of the rule (e.g. token-only vs embedding-augmented) --------
def agreement(
    a: Sequence[str],
    b: Sequence[str],
    labels: Sequence[str] = ("pass", "soft_fail", "hard_fail"),
    names: tuple[str, str] = ("token", "embedding"),
) -> dict[str, Any]:
    """Share of samples with the same verdict under both settings, and the confusion table.

    ``confusion[x][y]`` counts samples judged ``x`` by the first setting and ``y`` by the second.
    """
    if len(a) != len(b):
        raise ValueError("agreement needs two verdict lists of the same length")
    pairs = Counter(zip(a, b, strict=True))
    keys = list(labels) + sorted({x for p in pairs for x in p} - set(labels))
    same = sum(n for (x, y), n in pairs.items() if x == y)
    return {
        "settings": list(names),
        "n": len(a),
        "agreement": same / len(a) if a else 1.0,
        "confusion": {x: {y: pairs.get((x, y), 0) for y in keys} for x in keys},
        "changed": {f"{x}->{y}": n for (x, y), n in sorted(pairs.items()) if x != y},
    }
