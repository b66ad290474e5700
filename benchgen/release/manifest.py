"""``MANIFEST.json``: every file of a release with its size and sha256, plus what produced it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

MANIFEST = "MANIFEST.json"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def list_files(root: Path) -> list[str]:
    """Every regular file under ``root`` except the manifest, as sorted posix paths."""
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.relative_to(root).as_posix() != MANIFEST
    )


def file_entries(root: Path) -> dict[str, dict[str, Any]]:
    return {
        rel: {"bytes": (root / rel).stat().st_size, "sha256": sha256_file(root / rel)}
        for rel in list_files(root)
    }


def dumps(obj: Any) -> str:
    """Canonical JSON text used for every JSON file of a release (sorted keys, newline at the end)."""
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False, default=str) + "\n"


def config_hash(recipe: Any) -> str:
    payload = recipe.model_dump(exclude={"source"}) if hasattr(recipe, "model_dump") else dict(recipe)
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_manifest(root: Path, ctx: Any) -> dict[str, Any]:
    m = ctx.meta
    return {
        "name": ctx.name,
        "version": ctx.version,
        "benchgen_version": ctx.benchgen_version,
        "config_hash": config_hash(ctx.recipe),
        "seed": ctx.seed,
        "models": {role: ctx.model(role) for role in ("generator", "judge", "reformulator")},
        "prompt_hashes": dict(m.get("prompt_hashes") or {}),
        "taxonomy_hash": m.get("taxonomy_hash"),
        "counts": ctx.counts(),
        "run_counts": dict(m.get("counts") or {}),
        "reject_reasons": dict(m.get("reject_reasons") or {}),
        "near_duplicates_removed": ctx.dedup.total,
        "usage": dict(m.get("usage") or {}),
        "cost": m.get("cost") if m.get("cost") is not None else {},
        "files": file_entries(root),
    }


def write_manifest(root: Path, ctx: Any) -> dict[str, Any]:
    manifest = build_manifest(root, ctx)
    (root / MANIFEST).write_text(dumps(manifest), encoding="utf-8")
    return manifest
