"""The consistency judge stage: re-extract E/N from the surface query alone, then apply the rule.

The **offline judge** is a local, deterministic baseline. It sees only the query text (never the
skeleton). Method, stated plainly:

* *Detection* — a gazetteer of every value in the taxonomy's value banks (public, shipped with
  benchgen) plus regular expressions for identifiers (emails, phone numbers, SSNs, dates, licence
  numbers). On text written by the offline generator, whose values come from the same banks,
  detection is therefore near-perfect; on LLM-written or real text it misses paraphrases.
* *Side assignment* — the non-trivial part: a detected span is ``non_essential`` when its sentence
  contains an aside cue ("by the way", "unrelated", ...), else ``essential`` when it contains an
  essential cue ("for context", "because", "keep in mind", ...), else the configured default side.
  Cue lists live in ``judges/*.yaml``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from benchgen.assets import asset_dir
from benchgen.errors import ConfigError
from benchgen.matching import AcceptanceThresholds, decide
from benchgen.records import Draft, Verdict
from benchgen.taxonomy import Taxonomy


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MatchingConfig(_Strict):
    tau: float = Field(0.5, gt=0.0, le=1.0)


class AcceptanceConfig(_Strict):
    combine: Literal["min", "mean"] = "min"
    pass_threshold: float = Field(0.8, ge=0.0, le=1.0)
    soft_threshold: float = Field(0.5, ge=0.0, le=1.0)


class OfflineJudgeConfig(_Strict):
    aside_cues: list[str]
    essential_cues: list[str]
    default_side: Literal["essential", "non_essential"] = "non_essential"


class JudgeConfig(_Strict):
    name: str
    description: str = ""
    judge: str = "offline"
    matching: MatchingConfig = MatchingConfig()
    acceptance: AcceptanceConfig = AcceptanceConfig()
    offline: OfflineJudgeConfig
    source: str = ""

    def thresholds(self) -> AcceptanceThresholds:
        return AcceptanceThresholds(
            tau=self.matching.tau,
            pass_threshold=self.acceptance.pass_threshold,
            soft_threshold=self.acceptance.soft_threshold,
            combine=self.acceptance.combine,
        )


def load_judge_config(name_or_path: str | Path = "default") -> JudgeConfig:
    p = Path(name_or_path)
    if not p.is_file():
        p = asset_dir("judges") / f"{p.stem if p.suffix else p.name}.yaml"
    if not p.is_file():
        known = ", ".join(sorted(x.stem for x in asset_dir("judges").glob("*.yaml")))
        raise ConfigError(f"judge config {str(name_or_path)!r} not found", hint=f"known: {known}")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
        return JudgeConfig(**data, source=str(p))
    except yaml.YAMLError as e:
        raise ConfigError(f"{p}: not valid YAML: {e}") from None
    except (ValidationError, TypeError) as e:
        if isinstance(e, ValidationError):
            msgs = [f"{p}: {'.'.join(str(x) for x in err['loc'])}: {err['msg']}" for err in e.errors()]
        else:
            msgs = [f"{p}: {e}"]
        raise ConfigError("invalid judge config:\n  " + "\n  ".join(msgs)) from None


# -- offline extractor ------------------------------------------------------------------------
_PATTERNS = [
    re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),  # email
    re.compile(r"(?:\(\d{3}\)\s?|\b\d{3}[-.\s])?\b\d{3}-\d{4}\b"),  # phone
    re.compile(r"\b\d{3}-\d{2}-\d{4}\b"),  # SSN
    re.compile(r"https?://\S+"),  # URL
    re.compile(r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4}\b"),
    re.compile(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b"),
]
_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+")


class OfflineExtractor:
    """Gazetteer + regex span detector and cue-based side classifier (see module docstring)."""

    def __init__(self, tax: Taxonomy, cfg: OfflineJudgeConfig) -> None:
        # lower-cased gazetteer, longest first so "type 2 diabetes" wins over "diabetes"
        self._values = sorted({v.lower() for a in tax.attributes for v in a.values}, key=lambda v: (-len(v), v))
        self.aside = [c.lower() for c in cfg.aside_cues]
        self.essential = [c.lower() for c in cfg.essential_cues]
        self.default_side = cfg.default_side

    def _gazetteer(self, query: str) -> list[tuple[int, int]]:
        low = query.lower()
        found = []
        for v in self._values:  # plain substring search is ~50x faster than one huge regex
            i = low.find(v)
            while i >= 0:
                j = i + len(v)
                if (i == 0 or not low[i - 1].isalnum()) and (j == len(low) or not low[j].isalnum()):
                    found.append((i, j))
                i = low.find(v, i + 1)
        return found

    def spans(self, query: str) -> list[tuple[int, int]]:
        found = self._gazetteer(query)
        for pat in _PATTERNS:
            found += [(m.start(), m.end()) for m in pat.finditer(query)]
        found.sort(key=lambda x: (x[0], -(x[1] - x[0])))
        kept: list[tuple[int, int]] = []
        for s, e in found:  # drop spans overlapping an earlier (longer-at-same-start) one
            if kept and s < kept[-1][1]:
                if e > kept[-1][1] and (e - s) > (kept[-1][1] - kept[-1][0]):
                    kept[-1] = (s, e)
                continue
            kept.append((s, e))
        return kept

    def side(self, sentence: str) -> str:
        low = sentence.lower()
        if any(c in low for c in self.aside):
            return "non_essential"
        if any(c in low for c in self.essential):
            return "essential"
        return self.default_side

    def extract(self, query: str) -> tuple[list[str], list[str]]:
        """(essential spans, non-essential spans), each a list of substrings of ``query``."""
        bounds = []
        pos = 0
        for sent in _SENT_SPLIT.split(query):
            start = query.find(sent, pos)
            bounds.append((start, start + len(sent), sent))
            pos = start + len(sent)
        ess: list[str] = []
        non: list[str] = []
        for s, e in self.spans(query):
            sent = next((t for a, b, t in bounds if a <= s < b), query)
            (ess if self.side(sent) == "essential" else non).append(query[s:e])
        return ess, non


_EXTRACTORS: dict[tuple[str, str], OfflineExtractor] = {}


def offline_extractor(tax: Taxonomy, cfg: JudgeConfig) -> OfflineExtractor:
    """Cached per (taxonomy hash, cue config): compiling the gazetteer takes ~0.1 s."""
    key = (tax.source_hash, cfg.offline.model_dump_json())
    if key not in _EXTRACTORS:
        _EXTRACTORS[key] = OfflineExtractor(tax, cfg.offline)
    return _EXTRACTORS[key]


def extract(query: str, tax: Taxonomy | None = None, cfg: JudgeConfig | None = None) -> tuple[list[str], list[str]]:
    """Offline judge's extractor with the default taxonomy and judge config (used by baselines)."""
    from benchgen.taxonomy import load_taxonomy

    return offline_extractor(tax or load_taxonomy(), cfg or load_judge_config()).extract(query)


# -- stage ------------------------------------------------------------------------------------
def verdict_for(draft: Draft, judge_spec: str, judge_e: Sequence[str], judge_n: Sequence[str],
                cfg: JudgeConfig) -> Verdict:
    d = decide([x.value for x in draft.essential], [x.value for x in draft.non_essential],
               judge_e, judge_n, cfg.thresholds())
    return Verdict(id=draft.id, judge=judge_spec, judge_essential=tuple(judge_e),
                   judge_non_essential=tuple(judge_n), e_recall=d.e_recall, n_recall=d.n_recall,
                   score=d.score, verdict=d.verdict, reason=d.reason, swapped=d.swapped, residual=d.residual)


def failed_generation_verdict(draft: Draft, judge_spec: str) -> Verdict:
    return Verdict(id=draft.id, judge=judge_spec, judge_essential=(), judge_non_essential=(), e_recall=0.0,
                   n_recall=0.0, score=0.0, verdict="hard_fail",
                   reason=f"generation_failed:{(draft.failure_reason or 'unknown').split(':')[0]}")


def judge_offline(drafts: Iterable[Draft], tax: Taxonomy, cfg: JudgeConfig) -> Iterable[Verdict]:
    ex = offline_extractor(tax, cfg)
    for d in drafts:
        if d.status != "ok":
            yield failed_generation_verdict(d, "offline")
            continue
        e, n = ex.extract(d.query)
        yield verdict_for(d, "offline", e, n, cfg)
