"""``benchgen verify``: check a release directory against its ``MANIFEST.json``."""

from __future__ import annotations

import json
from pathlib import Path

from benchgen.errors import ReleaseError
from benchgen.release.manifest import MANIFEST, list_files, sha256_file


def check_release(root: Path) -> list[str]:
    """Return one message per problem (empty when the release matches its manifest)."""
    root = Path(root)
    if not root.is_dir():
        return [f"{root}: not a directory"]
    mpath = root / MANIFEST
    if not mpath.is_file():
        return [f"{MANIFEST}: missing"]
    try:
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
        listed = manifest["files"]
    except (ValueError, KeyError, TypeError) as e:
        return [f"{MANIFEST}: unreadable ({e})"]
    problems = []
    present = set(list_files(root))
    for rel in sorted(listed):
        entry = listed[rel]
        p = root / rel
        if rel not in present:
            problems.append(f"{rel}: missing (listed in {MANIFEST})")
            continue
        size = p.stat().st_size
        if size != entry.get("bytes"):
            problems.append(f"{rel}: size {size} != {entry.get('bytes')} in {MANIFEST}")
        digest = sha256_file(p)
        if digest != entry.get("sha256"):
            problems.append(f"{rel}: sha256 {digest} != {entry.get('sha256')} in {MANIFEST}")
    for rel in sorted(present - set(listed)):
        problems.append(f"{rel}: extra file not listed in {MANIFEST}")
    return problems


def verify_release(root: Path) -> int:
    """Raise :class:`ReleaseError` naming every bad file; return the number of files checked."""
    problems = check_release(root)
    if problems:
        raise ReleaseError(
            f"release {root} fails verification ({len(problems)} problem(s)):\n  " + "\n  ".join(problems),
            hint="rebuild the release (benchgen run / release) or restore the files; never edit a release by hand",
        )
    return len(json.loads((Path(root) / MANIFEST).read_text(encoding="utf-8"))["files"])
