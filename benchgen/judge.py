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

The **LLM judge** gets the same question through ``prompts/<cfg.prompt>/{system,user}.j2``
(:func:`build_judge_request`, JSON mode, temperature 0 by default) and answers
``{"essential_attributes": [...], "nonessential_attributes": [...]}`` — the shape
:func:`offline_answer` returns too. ``benchgen.pipeline.judge`` runs the requests through
:mod:`benchgen.runner`; an answer that is still not a JSON object of that shape after one repair
re-ask becomes a ``unparsed`` verdict (reason ``unparsed``), not a rejection.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from benchgen.assets import asset_dir
from benchgen.errors import ConfigError
from benchgen.matching import AcceptanceThresholds, Matcher, decide
from benchgen.providers.base import Completion, Message, Request
from benchgen.records import Draft, Verdict
from benchgen.taxonomy import Taxonomy
from benchgen.templates import render, template_hash

ESSENTIAL_KEY = "essential_attributes"
NONESSENTIAL_KEY = "nonessential_attributes"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MatchingConfig(_Strict):
    tau: float = Field(0.5, gt=0.0, le=1.0)
    embedding: bool = False  # also match on sentence-embedding cosine >= theta
    theta: float = Field(0.75, gt=0.0, le=1.0)
    embedding_model: str | None = None  # a SentenceTransformer path; None = packaged MiniLM


class AcceptanceConfig(_Strict):
    combine: Literal["min", "mean"] = "min"
    pass_threshold: float = Field(0.8, ge=0.0, le=1.0)
    soft_threshold: float = Field(0.5, ge=0.0, le=1.0)


class OfflineJudgeConfig(_Strict):
    aside_cues: list[str]
    essential_cues: list[str]
    default_side: Literal["essential", "non_essential"] = "non_essential"


class AuditConfig(_Strict):
    """When the acceptance-bias audit flags a stratum (see :mod:`benchgen.audit`)."""

    flag_sd: float = Field(2.0, ge=0.0)
    flag_ratio: float = Field(0.5, ge=0.0, le=1.0)
    min_n: int = Field(10, ge=1)


class JudgeConfig(_Strict):
    name: str
    description: str = ""
    # provider spec of the judge model (``judge:`` is accepted as the older spelling)
    model: str = Field("offline", validation_alias=AliasChoices("model", "judge"))
    prompt: str = "judge"  # prompts/<prompt>/system.j2 and user.j2
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(1024, gt=0)
    matching: MatchingConfig = Field(default_factory=lambda: MatchingConfig.model_validate({}))
    acceptance: AcceptanceConfig = Field(default_factory=lambda: AcceptanceConfig.model_validate({}))
    audit: AuditConfig = Field(default_factory=lambda: AuditConfig.model_validate({}))
    offline: OfflineJudgeConfig
    source: str = ""

    def thresholds(self, embedding: bool | None = None) -> AcceptanceThresholds:
        """The rule's thresholds; ``embedding`` overrides ``matching.embedding`` (None: as configured)."""
        use_emb = self.matching.embedding if embedding is None else embedding
        return AcceptanceThresholds(
            tau=self.matching.tau,
            pass_threshold=self.acceptance.pass_threshold,
            soft_threshold=self.acceptance.soft_threshold,
            combine=self.acceptance.combine,
            theta=self.matching.theta if use_emb else None,
        )


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def load_judge_config(name_or_path: str | Path = "default") -> JudgeConfig:
    p = Path(name_or_path)
    if not p.is_file():
        p = asset_dir("judges") / f"{p.stem if p.suffix else p.name}.yaml"
    if not p.is_file():
        known = ", ".join(sorted(x.stem for x in asset_dir("judges").glob("*.yaml")))
        raise ConfigError(f"judge config {str(name_or_path)!r} not found", hint=f"known: {known}")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "judge" in data and "model" not in data:  # older spelling
            data["model"] = data.pop("judge")
        if isinstance(data, dict) and data.get("extends"):  # e.g. `extends: default`
            parent = str(data.pop("extends"))
            base = (
                yaml.safe_load((p.parent / f"{parent}.yaml").read_text(encoding="utf-8"))
                if (p.parent / f"{parent}.yaml").is_file()
                else None
            )
            if not isinstance(base, dict):
                raise ConfigError(f"{p}: extends {parent!r}, which is not a judge config beside it")
            data = _merge(base, data)
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
    re.compile(
        r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4}\b"
    ),
    re.compile(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b"),
]
_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+")


class OfflineExtractor:
    """Gazetteer + regex span detector and cue-based side classifier (see module docstring)."""

    def __init__(self, tax: Taxonomy, cfg: OfflineJudgeConfig) -> None:
        # lower-cased gazetteer, longest first so "type 2 diabetes" wins over "diabetes"
        self._values = sorted(
            {v.lower() for a in tax.attributes for v in a.values}, key=lambda v: (-len(v), v)
        )
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


def extract(
    query: str, tax: Taxonomy | None = None, cfg: JudgeConfig | None = None
) -> tuple[list[str], list[str]]:
    """Offline judge's extractor with the default taxonomy and judge config (used by baselines)."""
    from benchgen.taxonomy import load_taxonomy

    return offline_extractor(tax or load_taxonomy(), cfg or load_judge_config()).extract(query)


def offline_answer(query: str, tax: Taxonomy, cfg: JudgeConfig) -> dict[str, list[str]]:
    """The offline judge's answer in the LLM judge's JSON shape."""
    e, n = offline_extractor(tax, cfg).extract(query)
    return {ESSENTIAL_KEY: e, NONESSENTIAL_KEY: n}


# -- LLM judge: request and answer --------------------------------------------------------------
def build_judge_request(query: str, cfg: JudgeConfig, item_id: str = "") -> Request:
    """The JSON-mode request asking a judge model to re-extract E/N from ``query`` alone."""
    return Request(
        messages=(Message("user", render(f"{cfg.prompt}/user.j2", query=query).strip()),),
        system=render(f"{cfg.prompt}/system.j2", query=query).strip(),
        temperature=cfg.temperature,
        max_tokens=cfg.max_tokens,
        json_mode=True,
        item_id=item_id,
    )


def judge_prompt_hashes(cfg: JudgeConfig) -> dict[str, str]:
    return {f"{cfg.prompt}/{n}": template_hash(f"{cfg.prompt}/{n}") for n in ("system.j2", "user.j2")}


def _strings(items: Any) -> list[str]:
    if not isinstance(items, list):
        raise ValueError("not a list")
    out: list[str] = []
    for x in items:
        if isinstance(x, Mapping):  # tolerate [{"span": ...}] / [{"value": ...}]
            x = next((x[k] for k in ("span", "value", "text") if isinstance(x.get(k), str)), None)
        if isinstance(x, str) and x.strip() and x.strip() not in out:
            out.append(x.strip())
    return out


def parse_judge_output(data: Any) -> tuple[list[str], list[str]]:
    """(essential, non-essential) strings from a judge answer; ValueError when the shape is wrong."""
    if not isinstance(data, Mapping):
        raise ValueError("the answer is not a JSON object")
    keys = {str(k).lower().replace("-", "_"): v for k, v in data.items()}
    e = keys.get(ESSENTIAL_KEY)
    n = keys.get(NONESSENTIAL_KEY, keys.get("non_essential_attributes"))
    if e is None or n is None:
        raise ValueError(f"expected keys {ESSENTIAL_KEY!r} and {NONESSENTIAL_KEY!r}, got {sorted(keys)}")
    try:
        return _strings(e), _strings(n)
    except ValueError:
        raise ValueError("the attribute lists are not lists of strings") from None


def judge_parser() -> Any:
    """``parse(id, completion)`` for :func:`benchgen.runner.run_requests` (wrong shape -> unparsed)."""
    from benchgen.runner import ItemFailure

    def parse(item_id: str, completion: Completion) -> dict[str, Any]:
        try:
            e, n = parse_judge_output(completion.extra.get("json"))
        except ValueError as exc:
            raise ItemFailure("unparsed", f"{exc}: {completion.text[:500]}") from None
        return {ESSENTIAL_KEY: e, NONESSENTIAL_KEY: n}

    return parse


# -- stage ------------------------------------------------------------------------------------
def verdict_for(
    draft: Draft,
    judge_spec: str,
    judge_e: Sequence[str],
    judge_n: Sequence[str],
    cfg: JudgeConfig,
    matcher: Matcher | None = None,
    thresholds: AcceptanceThresholds | None = None,
    usage: dict[str, int] | None = None,
) -> Verdict:
    d = decide(
        [x.value for x in draft.essential],
        [x.value for x in draft.non_essential],
        judge_e,
        judge_n,
        thresholds or cfg.thresholds(embedding=False),
        matcher,
    )
    return Verdict(
        id=draft.id,
        judge=judge_spec,
        judge_essential=tuple(judge_e),
        judge_non_essential=tuple(judge_n),
        e_recall=d.e_recall,
        n_recall=d.n_recall,
        score=d.score,
        verdict=d.verdict,
        reason=d.reason,
        swapped=d.swapped,
        residual=d.residual,
        usage=dict(usage or {}),
    )


def _empty_verdict(
    draft: Draft, judge_spec: str, verdict: str, reason: str, usage: dict[str, int] | None = None
) -> Verdict:
    return Verdict(
        id=draft.id,
        judge=judge_spec,
        judge_essential=(),
        judge_non_essential=(),
        e_recall=0.0,
        n_recall=0.0,
        score=0.0,
        verdict=verdict,
        reason=reason,
        usage=dict(usage or {}),
    )


def unparsed_verdict(
    draft: Draft, judge_spec: str, reason: str = "unparsed", usage: dict[str, int] | None = None
) -> Verdict:
    """No usable judgement (not a rejection): counted as ``unparsed``, never released."""
    return _empty_verdict(draft, judge_spec, "unparsed", reason, usage)


def verdict_from_record(
    draft: Draft,
    rec: Mapping[str, Any] | None,
    judge_spec: str,
    cfg: JudgeConfig,
    matcher: Matcher | None = None,
    thresholds: AcceptanceThresholds | None = None,
) -> Verdict | None:
    """The verdict for one runner record; None when the item is still to do (no answer / transport error)."""
    if draft.status != "ok":
        return failed_generation_verdict(draft, judge_spec)
    if rec is None or rec.get("failure_reason") == "error":
        return None
    usage = {k: int(v) for k, v in (rec.get("usage") or {}).items() if isinstance(v, int | float)}
    if rec.get("status") != "ok":
        reason = str(rec.get("failure_reason") or "unparsed")
        return unparsed_verdict(
            draft,
            judge_spec,
            "unparsed" if reason in ("unparsed", "parse_error") else f"judge_{reason}",
            usage,
        )
    out = rec["output"]
    return verdict_for(
        draft, judge_spec, out[ESSENTIAL_KEY], out[NONESSENTIAL_KEY], cfg, matcher, thresholds, usage
    )


def failed_generation_verdict(draft: Draft, judge_spec: str) -> Verdict:
    """A draft the generator could not produce is dropped (hard fail) with the generator's reason."""
    reason = f"generation_failed:{(draft.failure_reason or 'unknown').split(':')[0]}"
    return _empty_verdict(draft, judge_spec, "hard_fail", reason)


def make_matcher(
    cfg: JudgeConfig, embedding: bool | None = None, texts: Iterable[str] = ()
) -> tuple[AcceptanceThresholds, Matcher | None]:
    """Thresholds and value matcher (token-only, or token OR embedding cosine) for ``cfg``.

    With embeddings on, ``texts`` (all sampled values and judge strings of the run) are encoded
    up front in one batched call.
    """
    th = cfg.thresholds(embedding)
    if th.theta is None:
        return th, None
    from benchgen.embeddings import Embedder

    emb = Embedder(cfg.matching.embedding_model)
    emb.encode(texts)
    return th, emb.matcher(th.tau, th.theta)


def draft_values(d: Draft) -> list[str]:
    return [x.value for x in (*d.essential, *d.non_essential)]


def judge_offline(
    drafts: Iterable[Draft], tax: Taxonomy, cfg: JudgeConfig, embedding: bool | None = None
) -> Iterable[Verdict]:
    ex = offline_extractor(tax, cfg)
    if not cfg.thresholds(embedding).theta:  # token-only: stream
        th, matcher = make_matcher(cfg, False)
        for d in drafts:
            if d.status != "ok":
                yield failed_generation_verdict(d, "offline")
                continue
            e, n = ex.extract(d.query)
            yield verdict_for(d, "offline", e, n, cfg, matcher, th)
        return
    items = [(d, ex.extract(d.query) if d.status == "ok" else ([], [])) for d in drafts]
    th, matcher = make_matcher(cfg, embedding, [t for d, (e, n) in items for t in (*draft_values(d), *e, *n)])
    for d, (e, n) in items:
        yield (
            verdict_for(d, "offline", e, n, cfg, matcher, th)
            if d.status == "ok"
            else failed_generation_verdict(d, "offline")
        )


def verdict_agreement(
    drafts: Sequence[Draft], verdicts: Sequence[Verdict], cfg: JudgeConfig
) -> dict[str, Any]:
    """Token-only vs embedding-augmented rule on the same judge answers: agreement + confusion.

    Only drafts with a judgement count (unparsed answers and generation failures have none).
    """
    from benchgen.matching import agreement

    by_id = {d.id: d for d in drafts}
    pairs = [
        (by_id[v.id], v)
        for v in verdicts
        if v.id in by_id and v.verdict != "unparsed" and by_id[v.id].status == "ok"
    ]
    texts = [t for d, v in pairs for t in (*draft_values(d), *v.judge_essential, *v.judge_non_essential)]
    out = []
    for emb in (False, True):
        th, matcher = make_matcher(cfg, emb, texts)
        out.append(
            [
                verdict_for(d, v.judge, v.judge_essential, v.judge_non_essential, cfg, matcher, th).verdict
                for d, v in pairs
            ]
        )
    res = agreement(out[0], out[1])
    res["theta"] = cfg.matching.theta
    return res
