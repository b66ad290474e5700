"""Click commands ``release``, ``push`` and ``verify`` (registered by :mod:`benchgen.cli`).

Errors are :class:`~benchgen.errors.BenchgenError`s; the main group prints message + hint and exits
with the error's code. Run standalone (``python -m benchgen.release.cli``) the same handling applies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import click

from benchgen.errors import BenchgenError
from benchgen.release.build import ReleaseResult, build_release
from benchgen.release.options import SPLITS


def echo_release_summary(result: ReleaseResult) -> None:
    """What `release` (and `run`) print after building: sizes, location, human-only questions."""
    state = (
        "unchanged (identical release already present)"
        if result.unchanged
        else "replaced (--force)"
        if result.replaced
        else "written"
    )
    click.echo(f"release {result.name} {result.version}: {state} at {result.path}")
    for cfg, parts in result.counts.items():
        click.echo(
            f"  {cfg:<12} "
            + "  ".join(f"{s} {parts.get(s, 0)}" for s in SPLITS)
            + ("  (empty: not declared as data)" if not sum(parts.values()) else "")
        )
    click.echo(f"  near-duplicates removed across splits: {result.near_duplicates_removed}")
    click.echo(f"  verify: benchgen verify {result.path}")
    if result.human_questions:
        click.echo(
            f"\nDATASHEET.md has {len(result.human_questions)} question(s) only a human can answer "
            "(marked [HUMAN INPUT NEEDED]); answer them under `card: datasheet:` in the recipe (keys in "
            "parentheses) before publishing:"
        )
        for q in result.human_questions:
            click.echo(f"  - {q}")


def rows_from_run(run_dir: Path, recipe: Any) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    """Rebuild the released rows and run metadata from a finished run directory (no model calls)."""
    from benchgen.pipeline import release_inputs

    return release_inputs(run_dir, recipe)


def _fail(e: BenchgenError) -> NoReturn:
    click.secho(f"error: {e.message}", err=True, fg="red")
    if e.hint:
        click.echo(f"  hint: {e.hint}", err=True)
    raise SystemExit(e.exit_code)


@click.command()
@click.argument("recipe", default="default")
@click.option(
    "--run-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Finished run directory (default: the one `benchgen run RECIPE` uses).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("releases/build"),
    show_default=True,
    help="Release output root.",
)
@click.option("--force", is_flag=True, help="Replace an existing release version whose content differs.")
@click.option("--quiet", is_flag=True, help="No progress or status lines.")
def release(recipe: str, run_dir: Path | None, out: Path, force: bool, quiet: bool) -> None:
    """Build the release of RECIPE from its finished run directory (no model calls).

    Writes releases/build/<name>/<version>/: Parquet splits, README.md card, DATASHEET.md,
    croissant.json, figures and MANIFEST.json. Rebuilding identical content is a no-op; different
    content for an existing version is refused unless --force.
    """
    from benchgen.recipe import load_recipe

    try:
        rec = load_recipe(recipe)
        from benchgen.pipeline import default_run_dir

        rows, meta = rows_from_run(run_dir or default_run_dir(rec), rec)
        result = build_release(rows, rec, meta, out_root=out, force=force, quiet=quiet)
    except BenchgenError as e:
        _fail(e)
    echo_release_summary(result)


@click.command()
@click.argument("release_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option("--repo", "repo_id", required=True, help="Target dataset repo, ORG/NAME.")
@click.option("--private", is_flag=True, help="Create the repo as private (if it does not exist).")
@click.option("--dry-run", is_flag=True, help="Print the operations without contacting the Hub.")
@click.option("--endpoint", default=None, help="Hub endpoint URL (default: $HF_ENDPOINT or huggingface.co).")
def push(release_dir: Path, repo_id: str, private: bool, dry_run: bool, endpoint: str | None) -> None:
    """Push RELEASE_DIR to the Hub as one commit tagged v<version> (needs HF_TOKEN)."""
    from benchgen.release.hub import push_release

    try:
        plan = push_release(release_dir, repo_id, private=private, dry_run=dry_run, endpoint=endpoint)
    except BenchgenError as e:
        _fail(e)
    if plan.dry_run:
        click.echo(f"dry run: would push {release_dir} ({len(plan.files)} files) to {repo_id}:")
        for op in plan.operations:
            click.echo(f"  {op}")
    else:
        click.echo(
            f"pushed {len(plan.files)} files to {repo_id} in commit {plan.commit_oid}, tagged {plan.tag}"
        )
    click.echo("\nload it with:")
    click.echo(f"  {plan.load_line}")


@click.command()
@click.argument("release_dir", type=click.Path(path_type=Path, file_okay=False))
def verify(release_dir: Path) -> None:
    """Check RELEASE_DIR against its MANIFEST.json (sizes and sha256; missing or extra files)."""
    from benchgen.release.verify import verify_release

    try:
        n = verify_release(release_dir)
    except BenchgenError as e:
        _fail(e)
    click.echo(f"OK: {n} files match {release_dir / 'MANIFEST.json'}")


__all__ = ["echo_release_summary", "push", "release", "rows_from_run", "verify"]
