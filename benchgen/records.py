"""Records that flow between stages: Skeleton -> Draft -> Verdict -> released Sample.

Stages exchange these as JSON lines (one record per line); ``to_dict``/``from_dict`` are the only
serialisation. Everything here is plain data: no stage reaches into another stage's internals.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

VERDICTS = ("pass", "soft_fail", "hard_fail", "unparsed")


@dataclass(frozen=True)
class Detail:
    """One sensitive attribute instance inside a query.

    ``span`` is empty in a skeleton and, after generation, is the exact substring of the query
    that expresses the value (so labels stay correct by construction).
    """

    attribute: str
    family: str
    subject: str  # subject id: self | family | friend | coworker | third_party
    relation: str  # how the query refers to the subject: "I", "my sister", "a neighbour of mine"
    value: str
    span: str = ""

    def to_dict(self) -> dict[str, str]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Detail:
        return cls(**{f.name: d.get(f.name, "") for f in dataclasses.fields(cls)})


def _details(items: Any) -> tuple[Detail, ...]:
    return tuple(d if isinstance(d, Detail) else Detail.from_dict(d) for d in (items or ()))


@dataclass(frozen=True)
class Skeleton:
    """A contextual-integrity skeleton: every axis and the E/N partition, fixed before any text."""

    id: str
    seed: int
    index: int
    group: str  # split-hygiene key: a skeleton and its confusion twin share it
    domain: str
    task_type: str
    subject: str
    relation: str
    style: str
    tone: str
    policy: str
    confusion: str | None
    essential: tuple[Detail, ...]
    non_essential: tuple[Detail, ...]

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["essential"] = [x.to_dict() for x in self.essential]
        d["non_essential"] = [x.to_dict() for x in self.non_essential]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Skeleton:
        kw: dict[str, Any] = {f.name: d.get(f.name) for f in dataclasses.fields(cls)}
        kw["essential"] = _details(d.get("essential"))
        kw["non_essential"] = _details(d.get("non_essential"))
        return cls(**kw)


@dataclass(frozen=True)
class Draft:
    """A generated surface query for one skeleton (or a recorded generation failure)."""

    skeleton: Skeleton
    query: str
    essential: tuple[Detail, ...]  # skeleton details with ``span`` filled in
    non_essential: tuple[Detail, ...]
    generator: str  # provider spec, e.g. "offline" or "anthropic:claude-sonnet-4-6"
    template: str  # template name used to render (offline) or to prompt (LLM)
    template_hash: str
    status: str = "ok"  # ok | failed
    failure_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.skeleton.id

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "skeleton": self.skeleton.to_dict(),
            "query": self.query,
            "essential": [x.to_dict() for x in self.essential],
            "non_essential": [x.to_dict() for x in self.non_essential],
            "generator": self.generator,
            "template": self.template,
            "template_hash": self.template_hash,
            "status": self.status,
            "failure_reason": self.failure_reason,
            "usage": dict(self.usage),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Draft:
        return cls(
            skeleton=Skeleton.from_dict(d["skeleton"]),
            query=d.get("query") or "",
            essential=_details(d.get("essential")),
            non_essential=_details(d.get("non_essential")),
            generator=d.get("generator", ""),
            template=d.get("template", ""),
            template_hash=d.get("template_hash", ""),
            status=d.get("status", "ok"),
            failure_reason=d.get("failure_reason"),
            usage=dict(d.get("usage") or {}),
        )


@dataclass(frozen=True)
class Verdict:
    """The consistency judge's re-extraction and the acceptance rule's decision for one draft."""

    id: str
    judge: str  # provider spec of the judge
    judge_essential: tuple[str, ...]
    judge_non_essential: tuple[str, ...]
    e_recall: float
    n_recall: float
    score: float
    verdict: str  # one of VERDICTS
    reason: str | None  # why it is not "pass" (None when it passes)
    swapped: tuple[dict[str, str], ...] = ()  # sampled value the judge put on the other side
    residual: tuple[str, ...] = ()  # judge-flagged spans matching no sampled value (model-leaked)
    usage: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["judge_essential"] = list(self.judge_essential)
        d["judge_non_essential"] = list(self.judge_non_essential)
        d["swapped"] = [dict(x) for x in self.swapped]
        d["residual"] = list(self.residual)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Verdict:
        return cls(
            id=d["id"],
            judge=d.get("judge", ""),
            judge_essential=tuple(d.get("judge_essential") or ()),
            judge_non_essential=tuple(d.get("judge_non_essential") or ()),
            e_recall=float(d.get("e_recall", 0.0)),
            n_recall=float(d.get("n_recall", 0.0)),
            score=float(d.get("score", 0.0)),
            verdict=d.get("verdict", "hard_fail"),
            reason=d.get("reason"),
            swapped=tuple(d.get("swapped") or ()),
            residual=tuple(d.get("residual") or ()),
            usage=dict(d.get("usage") or {}),
        )


def dumps(record: Any) -> str:
    """One canonical JSON line (sorted keys, no NaN) so identical records are byte-identical."""
    payload = record.to_dict() if hasattr(record, "to_dict") else record
    return json.dumps(payload, sort_keys=True, ensure_ascii=False, allow_nan=False)


def sample_row(
    draft: Draft, verdict: Verdict, *, seed: int, benchgen_version: str, target_rewrite: str | None = None
) -> dict[str, Any]:
    """The released row for one judged draft (the columns documented in the dataset card).

    Residual judge-flagged spans (sensitive details the generator leaked beyond the skeleton) are
    folded into ``non_essential`` with attribute ``model_leaked`` so a rewriter is asked to drop
    them too; they stay listed in ``judge.residual`` for audit.
    """
    sk = draft.skeleton
    n_items = [x.to_dict() for x in draft.non_essential]
    for span in verdict.residual:
        n_items.append(
            {
                "attribute": "model_leaked",
                "family": "model_leaked",
                "subject": "unknown",
                "relation": "",
                "value": span,
                "span": span,
            }
        )
    return {
        "id": draft.id,
        "group": sk.group,
        "query": draft.query,
        "target_rewrite": target_rewrite,
        "domain": sk.domain,
        "task_type": sk.task_type,
        "subject": sk.subject,
        "style": sk.style,
        "tone": sk.tone,
        "policy": sk.policy,
        "confusion": sk.confusion,
        "essential": [x.to_dict() for x in draft.essential],
        "non_essential": n_items,
        "judge": {
            "verdict": verdict.verdict,
            "reason": verdict.reason,
            "score": verdict.score,
            "e_recall": verdict.e_recall,
            "n_recall": verdict.n_recall,
            "essential": list(verdict.judge_essential),
            "non_essential": list(verdict.judge_non_essential),
            "residual": list(verdict.residual),
        },
        "provenance": {
            "generator": draft.generator,
            "judge": verdict.judge,
            "template": draft.template,
            "template_hash": draft.template_hash,
            "seed": seed,
            "benchgen_version": benchgen_version,
        },
    }
