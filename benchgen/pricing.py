"""Token prices and cost accounting.

The default table is ``benchgen/pricing.yaml`` (USD per million tokens, matched by the longest
model-name prefix). ``BENCHGEN_PRICING=path`` or an explicit path/dict overrides entries per prefix.
A model served from a custom base URL (a local OpenAI-compatible server) costs 0 unless the table
lists it under ``base_url_models``. An unknown hosted model has no price: :meth:`PriceTable.price`
returns None and :func:`benchgen.runner.run_requests` refuses ``max_cost`` for it (it could not be
enforced).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from benchgen.errors import ConfigError
from benchgen.providers.base import ProviderSpec

DEFAULT_PRICING_PATH = Path(__file__).with_name("pricing.yaml")


@dataclass(frozen=True)
class Price:
    input: float  # USD per million input tokens
    output: float  # USD per million output tokens

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


def _read(source: str | Path | dict[str, Any]) -> dict[str, Any]:
    if isinstance(source, dict):
        return source
    path = Path(source)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read pricing file {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping with 'models:'")
    return data


def _prices(data: dict[str, Any], section: str, origin: str) -> dict[str, Price]:
    out: dict[str, Price] = {}
    for name, entry in (data.get(section) or {}).items():
        try:
            out[str(name)] = Price(float(entry["input"]), float(entry["output"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(
                f"{origin}: {section}.{name}: needs numeric 'input' and 'output' (USD/Mtok)"
            ) from exc
    return out


@dataclass
class PriceTable:
    models: dict[str, Price] = field(default_factory=dict)
    base_url_models: dict[str, Price] = field(default_factory=dict)

    @classmethod
    def load(cls, override: str | Path | dict[str, Any] | None = None) -> PriceTable:
        """Defaults, then ``$BENCHGEN_PRICING``, then ``override`` (later entries win per prefix)."""
        table = cls()
        sources: list[str | Path | dict[str, Any]] = [DEFAULT_PRICING_PATH]
        if os.environ.get("BENCHGEN_PRICING"):
            sources.append(os.environ["BENCHGEN_PRICING"])
        if override is not None:
            sources.append(override)
        for src in sources:
            data = _read(src)
            origin = "pricing override" if isinstance(src, dict) else str(src)
            table.models.update(_prices(data, "models", origin))
            table.base_url_models.update(_prices(data, "base_url_models", origin))
        return table

    @staticmethod
    def _match(table: dict[str, Price], model: str) -> Price | None:
        name = model.lower()
        best = max((p for p in table if name.startswith(p.lower())), key=len, default=None)
        return table[best] if best is not None else None

    def price(self, spec: ProviderSpec) -> Price | None:
        """Price of a spec's model; 0 for offline and (unlisted) custom-base-URL models."""
        if spec.provider == "offline":
            return Price(0.0, 0.0)
        if spec.base_url:
            return self._match(self.base_url_models, spec.model) or Price(0.0, 0.0)
        return self._match(self.models, spec.model)

    def cost(self, spec: ProviderSpec, input_tokens: int, output_tokens: int) -> float:
        p = self.price(spec)
        return p.cost(input_tokens, output_tokens) if p else 0.0
