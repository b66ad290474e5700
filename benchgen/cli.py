"""benchgen's command line: one subcommand per stage, plus `run` (all stages) and scoring/release tools.

Every command has ``--help``. Expected failures (bad config, missing key, ...) print a message and
a hint, without a traceback, and exit non-zero.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from benchgen import __version__
from benchgen.errors import BenchgenError, DataError


class BenchgenGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BenchgenError as e:
            click.secho(f"error: {e.message}", err=True, fg="red")
            if e.hint:
                click.echo(f"  hint: {e.hint}", err=True)
            ctx.exit(e.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted: completed work is saved; rerun the same command to resume.", err=True)
            ctx.exit(130)


@click.group(cls=BenchgenGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="benchgen")
def main() -> None:
    """Build, release and score contextual-integrity privacy benchmarks.

    Typical use: `benchgen run releases/default.yaml` (offline, no API keys needed).
    """


def llm_options(f: Any) -> Any:
    """Options shared by the commands that may call an LLM provider."""
    opts = [
        click.option(
            "--concurrency",
            type=click.IntRange(min=1),
            default=16,
            show_default=True,
            help="Requests in flight per provider.",
        ),
        click.option("--rpm", type=float, default=None, help="Rate limit: requests per minute."),
        click.option("--tpm", type=float, default=None, help="Rate limit: tokens per minute."),
        click.option(
            "--max-cost",
            type=float,
            default=None,
            help="Stop cleanly once this many USD are spent (completed work is kept).",
        ),
        click.option("--refresh", is_flag=True, help="Bypass the response cache (answers are re-requested)."),
        click.option(
            "--api-key-env",
            default=None,
            help="Read the API key from this environment variable instead of the provider default.",
        ),
        click.option(
            "--allow-same-family",
            is_flag=True,
            help="Allow a judge from the generator's model family (self-preference bias).",
        ),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _llm(kw: dict[str, Any]) -> Any:
    from benchgen.pipeline import LLMOptions

    return LLMOptions(
        concurrency=kw.pop("concurrency"),
        rpm=kw.pop("rpm"),
        tpm=kw.pop("tpm"),
        max_cost=kw.pop("max_cost"),
        refresh=kw.pop("refresh"),
        api_key_env=kw.pop("api_key_env"),
        allow_same_family=kw.pop("allow_same_family"),
    )


# -- helpers ----------------------------------------------------------------------------------
def _write_records(path: Path, records: Iterable[Any]) -> int:
    from benchgen.records import dumps

    rows = [r.to_dict() if hasattr(r, "to_dict") else r for r in records]
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), path)
    elif path.suffix in (".jsonl", ".json"):
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text("".join(dumps(r) + "\n" for r in rows), encoding="utf-8")
        tmp.replace(path)
    else:
        raise DataError(f"cannot write {path}: unknown extension", hint="use .jsonl or .parquet")
    return len(rows)


def _read_records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        raise DataError(f"input file {path} does not exist", hint="run the previous stage first")
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    from benchgen.runs import read_jsonl

    return list(read_jsonl(path))


# -- stage commands ---------------------------------------------------------------------------
@main.command()
@click.option("--n", "n", type=click.IntRange(min=1), required=True, help="Number of base skeletons.")
@click.option("--seed", type=int, default=13, show_default=True)
@click.option(
    "--start",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="First skeleton index (chunked sampling gives identical skeletons).",
)
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Output .jsonl or .parquet.")
@click.option(
    "--taxonomy",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Folder with the taxonomy YAML (default: the shipped samplers/).",
)
def sample(n: int, seed: int, start: int, out: Path, taxonomy: Path | None) -> None:
    """Sample contextual-integrity skeletons (E/N partition fixed before any text)."""
    from benchgen.pipeline import sample as do_sample
    from benchgen.sampling import balance_report
    from benchgen.taxonomy import load_taxonomy

    tax = load_taxonomy(taxonomy)
    sks = do_sample(tax, n, seed, start=start)
    _write_records(out, sks)
    rep = balance_report(sks, tax)
    click.echo(f"wrote {len(sks)} skeletons ({sum(1 for s in sks if s.confusion)} confusion twins) to {out}")
    for ax in ("domain", "task_type", "subject", "style", "tone", "attribute"):
        click.echo(f"  {ax:<10} max/min count ratio {rep[ax]['max_min_ratio']:.2f}")


@main.command()
@click.option(
    "--in", "inp", type=click.Path(path_type=Path), required=True, help="Skeletons (.jsonl/.parquet)."
)
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Drafts (.jsonl).")
@click.option("--generator", default="offline", show_default=True, help="Provider spec PROVIDER:MODEL[@URL].")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@llm_options
def generate(inp: Path, out: Path, generator: str, quiet: bool, **kw: Any) -> None:
    """Render surface queries for skeletons (offline templates or an LLM)."""
    from benchgen.pipeline import generate as do_generate
    from benchgen.records import Skeleton
    from benchgen.taxonomy import load_taxonomy

    sks = [Skeleton.from_dict(r) for r in _read_records(inp)]
    llm = _llm(kw)
    calls = out.with_name(out.stem + ".calls.jsonl")
    drafts = list(do_generate(sks, generator, load_taxonomy(), quiet=quiet, llm=llm, calls_path=calls))
    _write_records(out, drafts)
    failed = sum(d.status != "ok" for d in drafts)
    click.echo(f"wrote {len(drafts)} drafts to {out} ({failed} generation failures)")


@main.command("judge")
@click.option("--in", "inp", type=click.Path(path_type=Path), required=True, help="Drafts (.jsonl).")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Verdicts (.jsonl).")
@click.option(
    "--judge", "judge_spec", default="offline", show_default=True, help="Provider spec of the judge."
)
@click.option(
    "--config", "config", default="default", show_default=True, help="judges/<name>.yaml or a path."
)
@click.option(
    "--embedding/--no-embedding",
    "embedding",
    default=None,
    help="Also match values by sentence-embedding cosine >= theta (default: as in the judge config).",
)
@click.option(
    "--agreement",
    is_flag=True,
    help="Also report token-only vs embedding-augmented verdict agreement (loads the embedding model).",
)
@click.option(
    "--report-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Where report.json, audit.json and audit.md go (default: <out stem>_report/ beside --out).",
)
@click.option("--quiet", is_flag=True, help="No progress bars.")
@llm_options
def judge_cmd(
    inp: Path,
    out: Path,
    judge_spec: str,
    config: str,
    embedding: bool | None,
    agreement: bool,
    report_dir: Path | None,
    quiet: bool,
    **kw: Any,
) -> None:
    """Re-extract E/N from each query alone and apply the acceptance rule."""
    from benchgen.judge import load_judge_config
    from benchgen.pipeline import judge as do_judge
    from benchgen.pipeline import run_report
    from benchgen.records import Draft
    from benchgen.taxonomy import load_taxonomy

    drafts = [Draft.from_dict(r) for r in _read_records(inp)]
    llm = _llm(kw)
    calls = out.with_name(out.stem + ".calls.jsonl")
    tax, cfg = load_taxonomy(), load_judge_config(config)
    if embedding is not None:
        cfg = cfg.model_copy(update={"matching": cfg.matching.model_copy(update={"embedding": embedding})})
    verdicts = list(do_judge(drafts, judge_spec, tax, cfg, quiet=quiet, llm=llm, calls_path=calls))
    _write_records(out, verdicts)
    rdir = report_dir or out.with_name(out.stem + "_report")
    rep = run_report(
        [d.skeleton for d in drafts],
        verdicts,
        tax,
        drafts=drafts,
        cfg=cfg,
        run_dir=rdir,
        agreement=True if agreement else None,
    )
    (rdir / "report.json").write_text(json.dumps(rep, indent=2, sort_keys=True, default=str) + "\n")
    _echo_judge_summary(rep)
    click.echo(f"wrote {len(verdicts)} verdicts to {out}; report and audit in {rdir}")


def _echo_judge_summary(rep: dict[str, Any], counts: bool = True) -> None:
    c, r = rep["counts"], rep["rates"]
    if counts:
        click.echo("verdicts: " + ", ".join(f"{k} {c[k]} ({100 * r[k]:.1f}%)" for k in c))
    if counts and rep["reject_reasons"]:
        click.echo("reasons: " + ", ".join(f"{k} {v}" for k, v in rep["reject_reasons"].items()))
    j = rep["judge"]
    click.echo(
        f"E-recall mean {j['e_recall']['mean']}, N-recall mean {j['n_recall']['mean']}; swapped "
        f"{j['swapped']['values']} values in {j['swapped']['samples']} samples; residual (model-leaked) "
        f"{j['residual']['spans']} spans in {j['residual']['samples']} samples"
    )
    a = rep["audit"]
    click.echo(
        f"audit: max TV distance sampled->accepted {max(a['tv_distance'].values(), default=0):.3f}; "
        f"{len(a['flagged'])} flagged strata"
        + (
            "".join(
                f"\n  flagged {f['axis']}={f['value']}: rate {f['rate']:.2f} (axis mean {f['axis_mean']:.2f})"
                for f in a["flagged"]
            )
        )
    )
    if rep.get("agreement"):
        g = rep["agreement"]
        click.echo(
            f"token vs embedding agreement: {g['agreement']:.3f} of {g['n']} ({g['changed'] or 'no change'})"
        )
    if rep.get("reformulation"):
        click.echo(f"reformulation: {rep['reformulation']}")


@main.group()
def calibrate() -> None:
    """Calibrate the acceptance rule on real data (gold partition vs a real model's predictions)."""


@calibrate.command("capid")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--config", "config", default="default", show_default=True, help="judges/<name>.yaml or a path."
)
@click.option(
    "--embedding/--no-embedding",
    default=True,
    show_default=True,
    help="Also run the embedding-augmented rule and report agreement with token-only.",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def calibrate_capid_cmd(path: Path, config: str, embedding: bool, as_json: bool) -> None:
    """CAPID: `groundtruth` relevance as the sampled E/N partition, `parsed` as the judge output."""
    from benchgen.calibrate import calibrate_capid, format_table
    from benchgen.judge import load_judge_config

    rep = calibrate_capid(path, load_judge_config(config), embedding=embedding)
    click.echo(json.dumps(rep, indent=2, sort_keys=True) if as_json else format_table(rep))


@main.command()
@click.argument("recipe", default="default")
@click.option(
    "--n", "n", type=click.IntRange(min=1), default=None, help="Override the recipe's skeleton count."
)
@click.option("--seed", type=int, default=None, help="Override the recipe's seed.")
@click.option("--generator", default=None, help="Override the generator spec.")
@click.option("--judge", "judge_spec", default=None, help="Override the judge spec.")
@click.option("--version", "version", default=None, help="Override the release version.")
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Release output root (default: releases/build).",
)
@click.option(
    "--run-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Intermediate run directory (default: runs/<name>/<version>-<config hash>).",
)
@click.option("--fresh", is_flag=True, help="Discard an existing run directory instead of resuming.")
@click.option("--force", is_flag=True, help="Overwrite an existing release version whose content differs.")
@click.option("--no-release", is_flag=True, help="Stop after judging (write the run report only).")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@llm_options
def run(
    recipe: str,
    n: int | None,
    seed: int | None,
    generator: str | None,
    judge_spec: str | None,
    version: str | None,
    out: Path | None,
    run_dir: Path | None,
    fresh: bool,
    force: bool,
    no_release: bool,
    quiet: bool,
    **kw: Any,
) -> None:
    """Run every stage for RECIPE (a path, or a name in releases/) and build the release."""
    from benchgen.pipeline import run_recipe
    from benchgen.recipe import Recipe, load_recipe

    rec = load_recipe(recipe)
    overrides = {
        k: v
        for k, v in {
            "n": n,
            "seed": seed,
            "generator": generator,
            "judge": judge_spec,
            "version": version,
        }.items()
        if v is not None
    }
    if overrides:
        rec = Recipe(**{**rec.model_dump(), **overrides})
    res = run_recipe(
        rec,
        run_dir=run_dir,
        out_root=out,
        fresh=fresh,
        force=force,
        quiet=quiet,
        do_release=not no_release,
        llm=_llm(kw),
    )
    rep = res.report
    c = rep["counts"]
    click.echo(f"run directory: {res.run_dir}")
    click.echo(
        f"sampled {rep['n_skeletons']} skeletons: pass {c['pass']}, soft_fail {c['soft_fail']}, "
        f"hard_fail {c['hard_fail']}, unparsed {c['unparsed']}"
    )
    usage = rep.get("usage") or {}
    if usage.get("by_stage_model"):
        click.echo(
            f"usage: {usage['input_tokens']} input + {usage['output_tokens']} output tokens, "
            f"cost ${usage['cost_usd']:.4f}"
        )
    if rep["reject_reasons"]:
        click.echo("reasons: " + ", ".join(f"{k} {v}" for k, v in rep["reject_reasons"].items()))
    if "judge" in rep:
        _echo_judge_summary(rep, counts=False)
        click.echo(f"judge report: {res.run_dir / 'report.json'}, audit: {res.run_dir / 'audit.md'}")
    if res.release is not None:
        from benchgen.release.cli import echo_release_summary

        echo_release_summary(res.release)
    if res.release_dir is not None:
        click.echo(f"release: {res.release_dir}")
        click.echo(
            f'load it: python -c "from datasets import load_dataset; '
            f"print(load_dataset('{res.release_dir}', 'general'))\""
        )


@main.command()
@click.option("--taxonomy", type=click.Path(path_type=Path, file_okay=False), default=None)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable summary.")
def taxonomy(taxonomy: Path | None, as_json: bool) -> None:
    """Validate the taxonomy and print its size."""
    from benchgen.taxonomy import load_taxonomy

    tax = load_taxonomy(taxonomy)
    summary = {
        k: len(getattr(tax, k))
        for k in ("domains", "tasks", "attributes", "families", "subjects", "styles", "tones", "policies")
    }
    if as_json:
        click.echo(json.dumps(summary))
    else:
        click.echo("taxonomy OK: " + ", ".join(f"{v} {k}" for k, v in summary.items()))


def _register_optional() -> None:
    """Commands owned by other modules (scoring, release tools)."""
    try:
        from benchgen.metrics.cli import evaluate, score

        main.add_command(score)
        main.add_command(evaluate)
    except ImportError:  # pragma: no cover - during development only
        pass
    try:
        from benchgen.release.cli import push, release, verify

        main.add_command(release)
        main.add_command(push)
        main.add_command(verify)
    except ImportError:  # pragma: no cover
        pass


_register_optional()
