"""The DelegateCI reward for training rewriters (issue 6).

    r(y) = leak_penalty                               if some non-essential item leaks into y
         = empty_penalty                              if y has no content tokens
         = R_E(y) ** alpha * B(|y|)                   otherwise

* Leak is the DelegateCI test (:mod:`benchgen.metrics.delegateci`): an N item (not lexically
  overlapping an E item) with lexical coverage >= ``tau_lex``. Any leak gives the lower bound, so a
  leaking rewrite can never outscore a non-leaking one ("leak dominates").
* ``R_E`` is the E-recall: the mean lexical coverage ``|T(e) ∩ T(y)| / |T(e)|`` over E items (1 when
  there are none). The mean of coverages (not the share of items over ``tau_lex``) keeps the signal
  dense for RL; ``alpha < 1`` makes it concave, so the first essential details are worth most.
* ``B`` is a one-sided brevity factor anchored at ``A`` = the word length of ``target_rewrite``:
  ``B = 1`` when ``|y| <= A`` and ``(A / |y|) ** beta`` when longer. Without an anchor ``B = 1``.
  Padding (adding words that carry no essential token) therefore never raises the reward.
* Non-leaking, non-empty rewards lie in ``[0, 1]``; ``empty_penalty`` sits between the leak bound
  and 0 so that saying nothing is better than leaking but worse than any faithful attempt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchgen.metrics.delegateci import Item, excluded_non_essential
from benchgen.text import content_tokens, token_recall, tokens


@dataclass(frozen=True)
class RewardConfig:
    """Exponents and bounds of the reward. ``alpha`` in (0, 1] keeps the recall term concave."""

    leak_penalty: float = -1.0
    empty_penalty: float = -0.5
    alpha: float = 0.5  # recall exponent
    beta: float = 1.0  # brevity decay exponent
    tau_lex: float = 0.5  # leak threshold, as in the DelegateCI metrics

    def __post_init__(self) -> None:
        if not 0 < self.alpha <= 1:
            raise ValueError("alpha must be in (0, 1] so the recall term is concave and monotone")
        if self.beta < 0:
            raise ValueError("beta must be >= 0 (0 disables the brevity factor)")
        if not self.leak_penalty <= self.empty_penalty <= 0:
            raise ValueError("need leak_penalty <= empty_penalty <= 0")


@dataclass(frozen=True)
class RewardBreakdown:
    reward: float
    leaked: bool
    empty: bool
    e_recall: float
    brevity: float


def _items(xs: Sequence[Item | str]) -> list[Item]:
    return [x if isinstance(x, Item) else Item(str(x)) for x in xs]


def e_recall(rewrite: str, essential: Sequence[Item | str]) -> float:
    """Mean lexical coverage of the E items by ``rewrite`` (1.0 when there are no E items)."""
    es = _items(essential)
    if not es:
        return 1.0
    ty = content_tokens(rewrite)
    return sum(token_recall(e.text, ty) for e in es) / len(es)


def brevity(length: int, anchor: int | None, beta: float) -> float:
    """One-sided brevity factor: 1 up to the anchor length, ``(anchor / length) ** beta`` beyond."""
    if anchor is None or length <= anchor:
        return 1.0
    return (max(anchor, 1) / length) ** beta


def reward_breakdown(
    rewrite: str,
    essential: Sequence[Item | str],
    non_essential: Sequence[Item | str],
    target_rewrite: str | None = None,
    config: RewardConfig | None = None,
) -> RewardBreakdown:
    """The reward and its parts (see the module docstring for the definition)."""
    cfg = config or RewardConfig()
    es, ns = _items(essential), _items(non_essential)
    ty = content_tokens(rewrite)
    excl = excluded_non_essential(es, ns, cfg.tau_lex)
    leaked = any(token_recall(n.text, ty) >= cfg.tau_lex for n, x in zip(ns, excl, strict=True) if not x)
    if leaked:
        return RewardBreakdown(cfg.leak_penalty, True, False, e_recall(rewrite, es), 0.0)
    if not ty:
        return RewardBreakdown(cfg.empty_penalty, False, True, 0.0, 0.0)
    rec = e_recall(rewrite, es)
    anchor = len(tokens(target_rewrite)) if target_rewrite else None
    b = brevity(len(tokens(rewrite)), anchor, cfg.beta)
    return RewardBreakdown(rec**cfg.alpha * b, False, False, rec, b)


def reward(
    rewrite: str,
    essential: Sequence[Item | str],
    non_essential: Sequence[Item | str],
    target_rewrite: str | None = None,
    config: RewardConfig | None = None,
) -> float:
    """DelegateCI reward of one rewrite (a float in ``[leak_penalty, 1]``)."""
    return reward_breakdown(rewrite, essential, non_essential, target_rewrite, config).reward
