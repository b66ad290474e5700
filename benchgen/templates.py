"""Jinja environment over ``prompts/`` (sandboxed, StrictUndefined) and template hashes.

Template hashes (sha256 of the template source) go into every row's provenance and the release
card, so a reader can tell exactly which prompt produced a sample.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from benchgen.assets import asset_dir
from benchgen.errors import ConfigError


def capitalize_first(text: str) -> str:
    """Upper-case the first character only (``str.capitalize`` would lower-case the rest)."""
    return text[:1].upper() + text[1:]


@lru_cache(maxsize=8)
def environment(folder: str | None = None) -> SandboxedEnvironment:
    root = Path(folder) if folder else asset_dir("prompts")
    env = SandboxedEnvironment(
        loader=jinja2.FileSystemLoader(str(root)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["capitalize_first"] = capitalize_first
    return env


def render(name: str, folder: str | None = None, **context: Any) -> str:
    try:
        return environment(folder).get_template(name).render(**context)
    except jinja2.TemplateNotFound:
        raise ConfigError(
            f"prompt template {name!r} not found under {folder or asset_dir('prompts')}"
        ) from None
    except jinja2.TemplateError as e:
        raise ConfigError(f"prompt template {name!r} failed to render: {e}") from None


@lru_cache(maxsize=4096)
def _compiled(source: str) -> jinja2.Template:
    return environment().from_string(source)


def render_string(source: str, **context: Any) -> str:
    """Render a small inline template (attribute phrasings, task requests) with caching."""
    try:
        return _compiled(source).render(**context)
    except jinja2.TemplateError as e:
        raise ConfigError(f"template {source!r} failed to render: {e}") from None


@lru_cache(maxsize=256)
def template_hash(name: str, folder: str | None = None) -> str:
    root = Path(folder) if folder else asset_dir("prompts")
    path = root / name
    if not path.is_file():
        raise ConfigError(f"prompt template {name!r} not found under {root}")
    return hashlib.sha256(path.read_bytes()).hexdigest()


def prompt_hashes(folder: str | None = None) -> dict[str, str]:
    """sha256 of every template under prompts/ (for the run manifest and the card)."""
    root = Path(folder) if folder else asset_dir("prompts")
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*.j2"))
    }
