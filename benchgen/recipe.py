"""Release recipes (``releases/*.yaml``): what `benchgen run` builds and how it is released."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from benchgen.assets import asset_dir
from benchgen.errors import ConfigError

_SEMVER = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$")


class Recipe(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    version: str
    description: str = ""
    seed: int = 13
    n: int = Field(gt=0, description="skeletons to sample (confusion twins come on top)")
    generator: str = "offline"
    judge: str = "offline"
    judge_config: str = "default"  # judges/<name>.yaml
    reformulator: str = "offline"
    splits: dict[str, float] = {"train": 0.8, "validation": 0.1, "test": 0.1}
    configs: list[str] = ["general", "hard_mining"]
    sampler: dict[str, Any] = {}  # overrides for samplers/sampler.yaml settings
    card: dict[str, Any] = {}  # dataset-card metadata, validated by benchgen.release
    release: dict[str, Any] = {}  # release options, validated by benchgen.release
    source: str = ""  # path the recipe was loaded from (filled in by load_recipe)

    @field_validator("version")
    @classmethod
    def _semver(cls, v: str) -> str:
        if not _SEMVER.match(v):
            raise ValueError(f"version {v!r} is not semantic (MAJOR.MINOR.PATCH)")
        return v

    @model_validator(mode="after")
    def _splits(self) -> Recipe:
        if set(self.splits) != {"train", "validation", "test"}:
            raise ValueError("splits must name exactly train, validation and test")
        if abs(sum(self.splits.values()) - 1.0) > 1e-6 or min(self.splits.values()) < 0:
            raise ValueError("split ratios must be non-negative and sum to 1")
        return self


def load_recipe(path_or_name: str | Path) -> Recipe:
    """Load a recipe from a path, or by name from the packaged ``releases/`` folder."""
    p = Path(path_or_name)
    if not p.is_file():
        cand = asset_dir("releases") / (p.name if p.suffix else f"{p.name}.yaml")
        if not cand.is_file():
            raise ConfigError(
                f"release recipe {str(path_or_name)!r} not found",
                hint=f"pass a YAML path or one of: {', '.join(sorted(x.stem for x in asset_dir('releases').glob('*.yaml')))}",
            )
        p = cand
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise ConfigError(f"{p}: not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: expected a mapping at the top level")
    try:
        return Recipe(**data, source=str(p))
    except ValidationError as e:
        msgs = [
            f"{p}: {'.'.join(str(x) for x in err['loc']) or '(top level)'}: {err['msg']}"
            for err in e.errors()
        ]
        raise ConfigError("invalid release recipe:\n  " + "\n  ".join(msgs)) from None
