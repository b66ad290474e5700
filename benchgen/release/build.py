"""``build_release``: rows + recipe + run metadata -> an immutable, versioned release directory."""

from __future__ import annotations

import filecmp
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchgen.errors import ReleaseError
from benchgen.release import splits as splitting
from benchgen.release.context import ReleaseContext, clean_meta
from benchgen.release.manifest import MANIFEST, list_files, write_manifest
from benchgen.release.options import (
    SPLITS,
    card_options,
    changelog_path,
    release_options,
    validate_configs,
)
from benchgen.release.parquet import write_split
from benchgen.release.progress import Reporter

_HEADING = re.compile(r"^##\s+\[?v?(?P<version>\d+\.\d+\.\d+[0-9A-Za-z.+-]*)\]?(?P<rest>.*)$")


@dataclass
class ReleaseResult:
    path: Path
    name: str
    version: str
    counts: dict[str, dict[str, int]]  # config -> split -> rows
    human_questions: list[str]  # datasheet questions only a human can answer
    near_duplicates_removed: int = 0
    unchanged: bool = False  # True when an identical release already existed (no-op)
    replaced: bool = False  # True when --force replaced different content
    files: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(sum(v.values()) for v in self.counts.values())


def changelog_entry(path: Path, version: str) -> str:
    """The text of the ``## <version>`` section of a CHANGELOG (heading line included)."""
    template = f"## {version}\n\n- <what changed in this release and why>\n"
    if not path.is_file():
        raise ReleaseError(
            f"no changelog at {path}: every release version needs a `## {version}` entry",
            hint=f"create {path} with:\n\n{template}",
        )
    lines = path.read_text(encoding="utf-8").splitlines()
    start = None
    for i, line in enumerate(lines):
        m = _HEADING.match(line.strip())
        if start is None and m and m.group("version") == version:
            start = i
        elif start is not None and line.startswith("## "):
            return "\n".join(lines[start:i]).strip() + "\n"
    if start is None:
        raise ReleaseError(
            f"{path} has no entry for version {version}: releases are immutable and each one is documented",
            hint=f"add this section to {path} (newest first):\n\n{template}",
        )
    return "\n".join(lines[start:]).strip() + "\n"


def _same_tree(a: Path, b: Path) -> list[str]:
    """Relative paths that differ between two directories (added, removed or changed)."""
    fa = set(list_files(a)) | ({MANIFEST} if (a / MANIFEST).exists() else set())
    fb = set(list_files(b)) | ({MANIFEST} if (b / MANIFEST).exists() else set())
    diff = sorted(fa ^ fb)
    diff += [f for f in sorted(fa & fb) if not filecmp.cmp(a / f, b / f, shallow=False)]
    return sorted(diff)


def _write_docs(root: Path, ctx: ReleaseContext, rep: Reporter) -> list[str]:
    """Figures, datasheet, Croissant and card; returns the human-only datasheet questions."""
    from benchgen.release import croissant, datasheet, figures
    from benchgen.release.card import render_card, validate_card

    if ctx.options.figures:
        rep.status("drawing figures")
        ctx.figures = figures.write_figures(root, ctx)
    rep.status("writing DATASHEET.md")
    text, human = datasheet.render_datasheet(ctx)
    (root / "DATASHEET.md").write_text(text, encoding="utf-8")
    rep.status("writing croissant.json")
    croissant.write_croissant(root, ctx)
    rep.status("writing README.md (dataset card)")
    card = render_card(ctx)
    validate_card(card)
    (root / "README.md").write_text(card, encoding="utf-8")
    return human


def build_release(
    rows: dict[str, list[dict[str, Any]]],
    recipe: Any,
    run_meta: dict[str, Any],
    *,
    out_root: Path = Path("releases/build"),
    force: bool = False,
    quiet: bool = False,
) -> ReleaseResult:
    """Build ``out_root/<recipe.name>/<recipe.version>/`` from released rows.

    ``rows`` maps a config ("general", "hard_mining", ...) to ``sample_row`` dicts. Configs listed in
    the recipe but absent from ``rows`` are released empty; configs in ``rows`` but not in the recipe
    are refused. The build happens in a temporary folder next to the target; an existing identical
    release is left untouched (no-op), a different one is refused unless ``force``.
    """
    rep = Reporter(quiet=quiet)
    opts = release_options(recipe)
    card = card_options(recipe)
    configs = list(recipe.configs)
    validate_configs(configs)
    extra = sorted(set(rows) - set(configs))
    if extra:
        raise ReleaseError(
            f"rows given for config(s) {extra} that recipe {recipe.name!r} does not list",
            hint=f"add them to `configs:` in {recipe.source or 'the recipe'}",
        )
    entry = changelog_entry(changelog_path(recipe, opts), recipe.version)
    ids = [str(r.get("id")) for c in configs for r in rows.get(c, ())]
    if len(ids) != len(set(ids)):
        dup = sorted({i for i in ids if ids.count(i) > 1})[:5]
        raise ReleaseError(f"duplicate row ids across the release: {dup}")

    target = Path(out_root) / recipe.name / recipe.version
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{recipe.version}.building-", dir=target.parent))
    os.chmod(tmp, 0o755)  # mkdtemp makes it 0700; the release is a normal, world-readable folder
    try:
        all_rows = {c: list(rows.get(c, ())) for c in configs}
        rep.status(f"assigning splits for {sum(map(len, all_rows.values()))} rows")
        assignment = splitting.assign_splits(
            all_rows, recipe.splits, config_order=configs, salt=opts.split_salt
        )
        parts = splitting.split_rows(all_rows, assignment)
        with rep.progress("near-duplicate check") as tick:
            parts, dedup = splitting.remove_near_duplicates(parts, opts.near_dup, progress=tick)
        rep.status("writing Parquet shards")
        # `datasets` cannot load a split with no rows, so empty splits get no files and no card entry,
        # and a config with no rows at all is listed as empty in the docs but not declared as data.
        files = {
            c: {
                s: write_split(
                    tmp, c, s, parts[c][s], max_shard_bytes=opts.max_shard_bytes, compression=opts.compression
                )
                for s in SPLITS
                if parts[c][s]
            }
            for c in configs
        }
        files = {c: v for c, v in files.items() if v}
        if not files:
            raise ReleaseError(
                f"nothing to release: no rows in any config of {recipe.name} {recipe.version}",
                hint="check the run's judge verdicts and reject reasons",
            )
        ctx = ReleaseContext(
            recipe=recipe,
            card=card,
            options=opts,
            meta=clean_meta(run_meta),
            files=files,
            rows=parts,
            dedup=dedup,
            changelog_entry=entry,
            empty_configs=[c for c in configs if c not in files],
        )
        human = _write_docs(tmp, ctx, rep)
        write_manifest(tmp, ctx)
        result = ReleaseResult(
            path=target,
            name=recipe.name,
            version=recipe.version,
            counts={c: {s: ctx.count(c, s) for s in SPLITS} for c in configs},
            human_questions=human,
            near_duplicates_removed=dedup.total,
            files=[*list_files(tmp), MANIFEST],
        )
        if target.exists():
            diff = _same_tree(target, tmp)
            if not diff:
                rep.status(f"release {target} already exists with identical content: nothing to do")
                result.unchanged = True
                return result
            if not force:
                shown = ", ".join(diff[:8]) + (f" (+{len(diff) - 8} more)" if len(diff) > 8 else "")
                raise ReleaseError(
                    f"release {recipe.name} {recipe.version} already exists at {target} with different "
                    f"content ({len(diff)} file(s) differ: {shown}); releases are immutable",
                    hint="bump `version:` in the recipe and add a CHANGELOG entry, or pass --force to "
                    "replace it (only for a version that was never published)",
                )
            old = Path(tempfile.mkdtemp(prefix=f".{recipe.version}.old-", dir=target.parent))
            os.replace(target, old / "release")
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
            result.replaced = True
        else:
            os.replace(tmp, target)
        rep.status(f"release written to {target}")
        return result
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
