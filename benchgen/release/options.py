"""Validation of a recipe's ``card:`` and ``release:`` sections (owned by :mod:`benchgen.release`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from benchgen.errors import ConfigError

# Configs the release knows how to describe; "medical" and "wild" are reserved for later releases.
KNOWN_CONFIGS: dict[str, str] = {
    "general": "Samples the judge accepted (verdict `pass`).",
    "hard_mining": "Soft-fails: samples the judge did not fully confirm; useful as hard negatives "
    "and for mining difficult cases, not as gold labels.",
    "medical": "Medical-domain samples (reserved).",
    "wild": "Queries collected in the wild (reserved).",
}
SPLITS: tuple[str, ...] = ("train", "validation", "test")

_LANG = re.compile(r"^[a-z]{2,3}(?:-[A-Za-z0-9]+)?$")


class NearDupOptions(BaseModel):
    """Near-duplicate removal across splits (MinHash over word shingles, exact Jaccard check)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    method: Literal["minhash"] = "minhash"
    threshold: float = Field(default=0.8, gt=0.0, le=1.0, description="Jaccard similarity of word shingles")
    num_perm: int = Field(default=128, ge=16, le=1024)
    shingle: int = Field(default=3, ge=1, le=10, description="words per shingle")


class ReleaseOptions(BaseModel):
    """The recipe's ``release:`` section."""

    model_config = ConfigDict(extra="forbid")

    max_shard_bytes: int = Field(default=256 * 1024 * 1024, gt=0, description="Arrow bytes per Parquet shard")
    compression: Literal["zstd", "snappy", "gzip", "none"] = "zstd"
    near_dup: NearDupOptions = NearDupOptions()
    split_salt: str = ""  # mixed into the group hash; change it only to reshuffle on purpose
    changelog: str | None = None  # path; default: CHANGELOG.md next to the recipe
    figures: bool = True
    figure_dpi: int = Field(default=100, ge=50, le=300)


class CardOptions(BaseModel):
    """The recipe's ``card:`` section: metadata a human decides (everything else comes from the run)."""

    model_config = ConfigDict(extra="forbid")

    pretty_name: str | None = None
    license: str = "cc-by-4.0"
    language: list[str] = ["en"]
    task_categories: list[str] = ["text-generation", "token-classification"]
    tags: list[str] = ["privacy", "contextual-integrity", "synthetic", "pii", "query-rewriting"]
    repo_id: str | None = None  # ORG/NAME on the Hub, used in the load snippet
    authors: list[str] = []
    homepage: str | None = None
    contact: str | None = None
    funding: str | None = None
    citation_key: str | None = None
    limitations: list[str] = []  # extra limitations appended to the generated ones
    datasheet: dict[str, str] = {}  # answers to the datasheet's human-only questions (see HUMAN_KEYS)

    @field_validator("datasheet")
    @classmethod
    def _datasheet_keys(cls, v: dict[str, str]) -> dict[str, str]:
        from benchgen.release.datasheet import HUMAN_KEYS

        unknown = sorted(set(v) - set(HUMAN_KEYS))
        if unknown:
            raise ValueError(f"unknown datasheet answer(s) {unknown}; known: {', '.join(HUMAN_KEYS)}")
        return v

    @field_validator("language")
    @classmethod
    def _langs(cls, v: list[str]) -> list[str]:
        bad = [x for x in v if not _LANG.match(x)]
        if bad:
            raise ValueError(f"not ISO 639 language codes: {bad}")
        return v

    @field_validator("repo_id")
    @classmethod
    def _repo(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"^[\w.-]+/[\w.-]+$", v):
            raise ValueError(f"repo_id {v!r} must look like ORG/NAME")
        return v


def _parse(model: type[BaseModel], data: dict[str, Any], where: str) -> Any:
    try:
        return model(**(data or {}))
    except ValidationError as e:
        msgs = [f"{where}.{'.'.join(str(x) for x in err['loc'])}: {err['msg']}" for err in e.errors()]
        raise ConfigError("invalid release recipe:\n  " + "\n  ".join(msgs)) from None


def release_options(recipe: Any) -> ReleaseOptions:
    return _parse(ReleaseOptions, recipe.release, "release")


def card_options(recipe: Any) -> CardOptions:
    return _parse(CardOptions, recipe.card, "card")


def changelog_path(recipe: Any, opts: ReleaseOptions) -> Path:
    if opts.changelog:
        p = Path(opts.changelog)
        if not p.is_absolute() and recipe.source:
            p = Path(recipe.source).parent / p
        return p
    if recipe.source:
        return Path(recipe.source).parent / "CHANGELOG.md"
    from benchgen.assets import asset_dir

    return asset_dir("releases") / "CHANGELOG.md"


def validate_configs(configs: list[str]) -> None:
    unknown = [c for c in configs if c not in KNOWN_CONFIGS]
    if unknown:
        raise ConfigError(
            f"unknown release config(s) {unknown}",
            hint=f"use some of: {', '.join(KNOWN_CONFIGS)}",
        )
