"""Load and validate the declarative taxonomy in ``samplers/*.yaml``.

Every file is validated with pydantic (``extra="forbid"``); a problem raises :class:`ConfigError`
naming the file and the field, e.g. ``samplers/attributes.yaml: attributes.3.values: needs at least
20 values``. Cross-file references (domain pools naming attributes, tasks naming policies) are
checked too.
"""

from __future__ import annotations

import hashlib
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from benchgen.assets import asset_dir
from benchgen.errors import ConfigError

STYLE_IDS = ("direct", "narrative", "implicit", "multi_sentence")
PHRASING_STYLES = ("direct", "narrative", "implicit")  # multi_sentence reuses these, dispersed
MIN_VALUES = 20


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Family(_Strict):
    id: str
    name: str
    generalisation: str  # family-level phrase, e.g. "a health condition"


class Attribute(_Strict):
    id: str
    family: str
    description: str
    generalisation: str  # e.g. "a medication"
    values: list[str] = Field(min_length=MIN_VALUES)
    phrasings: dict[Literal["direct", "narrative", "implicit"], list[str]]

    @field_validator("values")
    @classmethod
    def _unique_values(cls, v: list[str]) -> list[str]:
        seen = {x.strip().lower() for x in v}
        if len(seen) != len(v):
            raise ValueError("values must be unique (case-insensitive)")
        if any(not x.strip() for x in v):
            raise ValueError("values must be non-empty strings")
        return v

    @field_validator("phrasings")
    @classmethod
    def _phrasings(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        for style in PHRASING_STYLES:
            if len(v.get(style, [])) < 2:
                raise ValueError(f"needs at least 2 phrasings for style {style!r}")
            for p in v[style]:
                if p.count("{{ value }}") != 1:
                    raise ValueError(f"phrasing {p!r} must contain '{{{{ value }}}}' exactly once")
        return v


class Domain(_Strict):
    id: str
    name: str
    description: str
    essential_pool: list[str] = Field(min_length=2)
    topics: list[str] = Field(min_length=5)


class Subject(_Strict):
    id: str
    name: str
    description: str
    relations: list[str] = Field(min_length=1)


class Policy(_Strict):
    id: str
    description: str
    draw_from: Literal["none", "domain_pool"]
    forced: list[str] = []  # attributes always essential (e.g. name for addressed-person)
    max_drawn: int | None = None  # cap on attributes drawn from the pool (None: sampler default)


class Task(_Strict):
    id: str
    name: str
    policy: str
    rationale: str
    requests: list[str] = Field(min_length=2)  # offline request phrasings (Jinja)


class Style(_Strict):
    id: str
    name: str
    description: str


class Tone(_Strict):
    id: str
    name: str
    description: str
    openers: list[str] = Field(min_length=2)
    closers: list[str] = Field(min_length=2)


class SizeRange(_Strict):
    mean: float
    min: int
    max: int

    @model_validator(mode="after")
    def _order(self) -> SizeRange:
        if not (0 <= self.min <= self.mean <= self.max):
            raise ValueError("need 0 <= min <= mean <= max")
        return self


class ConfusionSettings(_Strict):
    probability: float = Field(ge=0.0, le=1.0)
    types: dict[Literal["shared-attribute", "over-removal-trap"], float]
    sensitive_families: list[str]  # families that look sensitive, used by the over-removal trap


class SamplerSettings(_Strict):
    n_essential: SizeRange
    n_non_essential: SizeRange
    confusion: ConfusionSettings


class Taxonomy(_Strict):
    families: list[Family]
    attributes: list[Attribute]
    domains: list[Domain]
    subjects: list[Subject]
    policies: list[Policy]
    tasks: list[Task]
    styles: list[Style]
    tones: list[Tone]
    settings: SamplerSettings
    source_hash: str = ""

    @model_validator(mode="after")
    def _references(self) -> Taxonomy:
        fams = {f.id for f in self.families}
        attrs = {a.id for a in self.attributes}
        pols = {p.id for p in self.policies}
        for a in self.attributes:
            if a.family not in fams:
                raise ValueError(f"attribute {a.id!r} names unknown family {a.family!r}")
        for d in self.domains:
            bad = [x for x in d.essential_pool if x not in attrs]
            if bad:
                raise ValueError(f"domain {d.id!r} essential_pool names unknown attributes {bad}")
        for p in self.policies:
            bad = [x for x in p.forced if x not in attrs]
            if bad:
                raise ValueError(f"policy {p.id!r} forces unknown attributes {bad}")
        for t in self.tasks:
            if t.policy not in pols:
                raise ValueError(f"task {t.id!r} names unknown policy {t.policy!r} (known: {sorted(pols)})")
        if sorted(s.id for s in self.styles) != sorted(STYLE_IDS):
            raise ValueError(f"styles must be exactly {list(STYLE_IDS)}")
        for fam in self.settings.confusion.sensitive_families:
            if fam not in fams:
                raise ValueError(f"settings.confusion.sensitive_families names unknown family {fam!r}")
        for kind in ("families", "attributes", "domains", "subjects", "policies", "tasks", "styles", "tones"):
            ids = [x.id for x in getattr(self, kind)]
            if len(ids) != len(set(ids)):
                raise ValueError(f"duplicate ids in {kind}")
        return self

    # lookups ------------------------------------------------------------------------------
    @cached_property
    def attribute(self) -> dict[str, Attribute]:
        return {a.id: a for a in self.attributes}

    @cached_property
    def domain(self) -> dict[str, Domain]:
        return {d.id: d for d in self.domains}

    @cached_property
    def task(self) -> dict[str, Task]:
        return {t.id: t for t in self.tasks}

    @cached_property
    def policy(self) -> dict[str, Policy]:
        return {p.id: p for p in self.policies}

    @cached_property
    def subject(self) -> dict[str, Subject]:
        return {s.id: s for s in self.subjects}

    @cached_property
    def tone(self) -> dict[str, Tone]:
        return {t.id: t for t in self.tones}

    @cached_property
    def family(self) -> dict[str, Family]:
        return {f.id: f for f in self.families}

    def task_policy(self, task_id: str) -> Policy:
        return self.policy[self.task[task_id].policy]


# file -> top-level keys it provides
_FILES: dict[str, tuple[str, ...]] = {
    "attributes.yaml": ("families", "attributes"),
    "domains.yaml": ("domains",),
    "subjects.yaml": ("subjects",),
    "tasks.yaml": ("policies", "tasks"),
    "styles.yaml": ("styles", "tones"),
    "sampler.yaml": ("settings",),
}


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"taxonomy file {path} is missing", hint="restore it from the repository") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level, got {type(data).__name__}")
    return data


def _fmt_loc(loc: tuple[Any, ...]) -> str:
    return ".".join(str(x) for x in loc)


def load_taxonomy(folder: str | Path | None = None) -> Taxonomy:
    """Load ``samplers/*.yaml`` (default: the packaged/repository folder) and validate it."""
    root = Path(folder) if folder else asset_dir("samplers")
    merged: dict[str, Any] = {}
    origin: dict[str, Path] = {}
    digest = hashlib.sha256()
    for fname, keys in _FILES.items():
        path = root / fname
        data = _read_yaml(path)
        digest.update(fname.encode() + b"\0" + path.read_bytes())
        unknown = sorted(set(data) - set(keys))
        if unknown:
            raise ConfigError(f"{path}: unknown top-level field(s) {unknown}; expected {list(keys)}")
        for k in keys:
            if k not in data:
                raise ConfigError(f"{path}: missing top-level field {k!r}")
            merged[k] = data[k]
            origin[k] = path
    try:
        tax = Taxonomy(**merged, source_hash=digest.hexdigest()[:16])
    except ValidationError as e:
        msgs = []
        for err in e.errors()[:10]:
            loc = err["loc"]
            where = origin.get(str(loc[0])) if loc else None
            msgs.append(f"{where or root}: {_fmt_loc(loc) or '(top level)'}: {err['msg']}")
        raise ConfigError("invalid taxonomy:\n  " + "\n  ".join(msgs)) from None
    return tax
