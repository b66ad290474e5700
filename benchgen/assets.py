"""Locate the asset folders (prompts/, samplers/, judges/, releases/).

In a source checkout or editable install they are the repository's top-level folders; in a wheel
they ship as ``benchgen/assets/<name>``. ``BENCHGEN_HOME`` overrides both (a folder holding them).
"""

from __future__ import annotations

import os
from pathlib import Path

ASSET_DIRS = ("prompts", "samplers", "judges", "releases")
_PKG = Path(__file__).resolve().parent


def asset_dir(name: str) -> Path:
    if name not in ASSET_DIRS:
        raise ValueError(f"unknown asset folder {name!r}")
    home = os.environ.get("BENCHGEN_HOME")
    candidates = [Path(home) / name] if home else []
    candidates += [_PKG / "assets" / name, _PKG.parent / name]
    for c in candidates:
        if c.is_dir():
            return c
    raise FileNotFoundError(
        f"benchgen asset folder {name!r} not found (looked in: {', '.join(str(c) for c in candidates)})"
    )


def repo_root() -> Path | None:
    """The source checkout root when running from one (it has pyproject.toml), else None."""
    root = _PKG.parent
    return root if (root / "pyproject.toml").is_file() else None
