"""Versioned, immutable dataset releases: Parquet splits, card, datasheet, Croissant, manifest, Hub push.

Entry point for the pipeline: :func:`build_release`. The CLI commands live in
:mod:`benchgen.release.cli` (``release``, ``push``, ``verify``).
"""

from benchgen.release.build import ReleaseResult, build_release, changelog_entry
from benchgen.release.verify import check_release, verify_release

__all__ = ["ReleaseResult", "build_release", "changelog_entry", "check_release", "verify_release"]
