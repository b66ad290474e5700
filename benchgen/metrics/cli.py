"""Click commands: ``benchgen score {capid,rewrites,peep}`` and ``benchgen evaluate``.

The main CLI imports ``score`` and ``evaluate`` from here and adds them to its group. Failures raise
:class:`benchgen.errors.BenchgenError` subclasses, which the main CLI prints without a traceback.
"""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import click

from benchgen.errors import NotAvailableError
from benchgen.metrics import capid as capid_mod
from benchgen.metrics import delegateci, peep


def _fmt(x: float) -> str:
    return "—" if isinstance(x, float) and math.isnan(x) else f"{x:.4f}"


def _json_safe(obj: Any) -> Any:
    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_json_safe(v) for v in obj]
    return obj


def _matcher(tau_lex: float, semantic: bool, tau_sem: float) -> delegateci.Matcher:
    sem = delegateci.SemanticMatcher() if semantic else None
    return delegateci.Matcher(tau_lex=tau_lex, tau_sem=tau_sem, semantic=sem)


def _console() -> Any:
    from rich.console import Console

    return Console()


@click.group("score")
def score() -> None:
    """Score predictions or rewrites against gold labels (CAPID, DelegateCI, PEEP metrics)."""


@score.command("capid")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--gold-field", default="groundtruth", show_default=True, help="Field with gold span dicts.")
@click.option("--pred-field", default="parsed", show_default=True, help="Field with predicted span dicts.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
def capid_cmd(file: Path, gold_field: str, pred_field: str, as_json: bool) -> None:
    """CAPID span precision/recall/F1, coverage, type and relevance accuracy of FILE (JSONL)."""
    res = capid_mod.score_file(file, gold_field, pred_field).to_dict()
    if as_json:
        click.echo(json.dumps(res))
        return
    from rich.table import Table

    t = Table(title=f"CAPID span metrics — {file.name} ({res['n_samples']} samples)")
    t.add_column("metric")
    t.add_column("value", justify="right")
    for k, v in res.items():
        if k != "n_samples":
            t.add_row(k, _fmt(v))
    _console().print(t)


def _leak_table(rep: delegateci.LeakReport, title: str) -> Any:
    from rich.table import Table

    t = Table(title=title)
    for col in ("group", "value", "samples", "SLR ↓", "NE ↓", "EA ↑", "N items", "E items"):
        t.add_column(col, justify="right" if col not in ("group", "value") else "left")

    def row(g: str, v: str, r: delegateci.LeakReport) -> None:
        t.add_row(g, v, str(r.n_samples), _fmt(r.slr), _fmt(r.ne), _fmt(r.ea), str(r.n_items), str(r.e_items))

    row("overall", "", rep)
    for g, sub in rep.by.items():
        for v, r in sub.items():
            row(g, v, r)
    return t


@score.command("rewrites")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["benchgen", "capid"]),
    default="benchgen",
    show_default=True,
    help="benchgen: essential/non_essential lists; capid: span dict with relevance.",
)
@click.option(
    "--rewrite-field",
    default=None,
    help="Field with the rewrite [benchgen: rewrite; capid: reformulated_text].",
)
@click.option(
    "--gold-field", default="groundtruth", show_default=True, help="CAPID format: gold span dict field."
)
@click.option(
    "--item-text",
    type=click.Choice(["value", "span"]),
    default="value",
    show_default=True,
    help="benchgen format: match an item by its value or by its query span.",
)
@click.option("--tau-lex", type=float, default=delegateci.TAU_LEX, show_default=True)
@click.option(
    "--semantic/--no-semantic",
    default=False,
    show_default=True,
    help="Also flag items by embedding similarity (all-MiniLM-L6-v2).",
)
@click.option("--tau-sem", type=float, default=delegateci.TAU_SEM, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the report (with breakdowns) as JSON.")
def rewrites_cmd(
    file: Path,
    fmt: str,
    rewrite_field: str | None,
    gold_field: str,
    item_text: str,
    tau_lex: float,
    semantic: bool,
    tau_sem: float,
    as_json: bool,
) -> None:
    """DelegateCI SLR / NE / EA of the rewrites in FILE (JSONL), overall and per group."""
    rows = capid_mod.read_jsonl(file)
    if fmt == "capid":
        samples = [
            delegateci.from_capid(r, i, rewrite_field or "reformulated_text", gold_field, str(file))
            for i, r in enumerate(rows, 1)
        ]
    else:
        samples = [
            delegateci.from_benchgen(r, i, rewrite_field or "rewrite", item_text, str(file))
            for i, r in enumerate(rows, 1)
        ]
    rep = delegateci.score_rewrites(samples, _matcher(tau_lex, semantic, tau_sem))
    if as_json:
        click.echo(json.dumps(_json_safe(rep.to_dict())))
    else:
        _console().print(_leak_table(rep, f"DelegateCI leak / retention — {file.name}"))


@score.command("peep")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--rewrite-field", default="rewrite", show_default=True)
@click.option(
    "--evaluator",
    default="lexical",
    show_default=True,
    help="'lexical' (DelegateCI matcher) or a provider spec for the LLM 'present or deducible?' check.",
)
@click.option("--tau-lex", type=float, default=delegateci.TAU_LEX, show_default=True)
@click.option("--semantic/--no-semantic", default=False, show_default=True)
@click.option("--tau-sem", type=float, default=delegateci.TAU_SEM, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def peep_cmd(
    file: Path,
    rewrite_field: str,
    evaluator: str,
    tau_lex: float,
    semantic: bool,
    tau_sem: float,
    as_json: bool,
) -> None:
    """PEEP Leak_PRO / Leak_AUT of the rewrites in FILE (JSONL with share / do-not-share decisions)."""
    rows = capid_mod.read_jsonl(file)
    samples = [peep.from_record(r, i, rewrite_field, str(file)) for i, r in enumerate(rows, 1)]
    ev = None
    if evaluator != "lexical":
        ev = peep.LLMEvaluator(_provider(evaluator))
    try:
        rep = peep.score_peep(samples, _matcher(tau_lex, semantic, tau_sem), ev).to_dict()
    finally:
        if ev is not None:
            asyncio.run(ev.provider.aclose())
    if as_json:
        click.echo(json.dumps(_json_safe(rep)))
        return
    click.echo(
        f"Leak_PRO {_fmt(rep['leak_pro'])} ({rep['n_protected_present']}/{rep['n_protected']})  "
        f"Leak_AUT {_fmt(rep['leak_aut'])} ({rep['n_authorised_present']}/{rep['n_authorised']})  "
        f"evaluator {rep['evaluator']}"
    )


def _provider(spec: str) -> Any:
    """Build a provider from a spec via the provider registry (:mod:`benchgen.providers.registry`)."""
    try:
        from benchgen.providers.registry import make_provider
    except ImportError as exc:
        raise NotAvailableError(
            f"cannot build provider {spec!r}: this build has no provider registry",
            hint="use --evaluator lexical, or call benchgen.metrics.peep.LLMEvaluator(provider) from Python",
        ) from exc
    return make_provider(spec)


@click.command("evaluate")
@click.argument("release", type=click.Path(path_type=Path))
@click.option("--config", default="general", show_default=True)
@click.option("--split", default="test", show_default=True)
@click.option(
    "--rewriter",
    "rewriters",
    multiple=True,
    default=("all",),
    show_default=True,
    help="Baseline name (repeatable; 'all' = every baseline) or a rewrites JSONL {id, rewrite}.",
)
@click.option(
    "--mode",
    type=click.Choice(["oracle", "detected"]),
    default="oracle",
    show_default=True,
    help="Where span-based baselines get their spans.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Write results.json and results.csv here.",
)
@click.option("--tau-lex", type=float, default=delegateci.TAU_LEX, show_default=True)
@click.option("--semantic/--no-semantic", default=False, show_default=True)
@click.option("--tau-sem", type=float, default=delegateci.TAU_SEM, show_default=True)
def evaluate(
    release: Path,
    config: str,
    split: str,
    rewriters: tuple[str, ...],
    mode: str,
    out_dir: Path | None,
    tau_lex: float,
    semantic: bool,
    tau_sem: float,
) -> None:
    """Score baselines or external rewrites on a release split (DelegateCI SLR / NE / EA)."""
    from benchgen import evaluate as ev

    results = ev.run(
        release,
        config=config,
        split=split,
        rewriters=list(rewriters),
        mode=mode,
        matcher=_matcher(tau_lex, semantic, tau_sem),
    )
    _console().print(ev.results_table(results, title=f"{release} [{config}/{split}, {mode} spans]"))
    if out_dir is not None:
        paths = ev.write_results(results, out_dir)
        click.echo("wrote " + ", ".join(str(p) for p in paths))
