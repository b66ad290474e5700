"""Stage functions and the end-to-end `run`: sample -> generate -> judge -> report -> release.

Each stage reads the previous stage's records and appends its own to the run directory, skipping
ids already present, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from tqdm import tqdm

from benchgen import __version__
from benchgen.errors import NotAvailableError
from benchgen.judge import JudgeConfig, judge_offline, load_judge_config
from benchgen.offline import generate_one
from benchgen.providers.base import parse_spec
from benchgen.records import Draft, Skeleton, Verdict, sample_row
from benchgen.recipe import Recipe
from benchgen.runs import RunDir, append_jsonl, read_jsonl
from benchgen.sampling import AXES, Sampler, balance_report, settings_with_overrides
from benchgen.taxonomy import Taxonomy, load_taxonomy
from benchgen.templates import prompt_hashes

T = TypeVar("T")


def _bar(it: Iterable[T], total: int, desc: str, quiet: bool) -> Iterator[T]:
    return iter(tqdm(it, total=total, desc=desc, unit="item", disable=quiet, dynamic_ncols=True, leave=False))


# -- stages -----------------------------------------------------------------------------------
def sample(tax: Taxonomy, n: int, seed: int, overrides: dict[str, Any] | None = None,
           start: int = 0) -> list[Skeleton]:
    return list(Sampler(tax, seed, settings_with_overrides(tax, overrides)).skeletons(n, start=start))


def generate(skeletons: Sequence[Skeleton], spec: str, tax: Taxonomy, *, quiet: bool = False,
             **llm_options: Any) -> Iterator[Draft]:
    ps = parse_spec(spec)
    if ps.provider == "offline":
        for sk in _bar(skeletons, len(skeletons), "generate (offline)", quiet):
            yield generate_one(tax, sk)
        return
    raise NotAvailableError(
        f"generator {spec!r}: LLM generation is not available in this build yet",
        hint="use --generator offline",
    )


def judge(drafts: Sequence[Draft], spec: str, tax: Taxonomy, cfg: JudgeConfig, *, quiet: bool = False,
          **llm_options: Any) -> Iterator[Verdict]:
    ps = parse_spec(spec)
    if ps.provider == "offline":
        yield from judge_offline(_bar(drafts, len(drafts), "judge (offline)", quiet), tax, cfg)
        return
    raise NotAvailableError(
        f"judge {spec!r}: LLM judging is not available in this build yet", hint="use --judge offline"
    )


# -- report -----------------------------------------------------------------------------------
def run_report(skeletons: Sequence[Skeleton], verdicts: Sequence[Verdict], tax: Taxonomy) -> dict[str, Any]:
    by_id = {s.id: s for s in skeletons}
    counts = Counter(v.verdict for v in verdicts)
    reasons = Counter(v.reason for v in verdicts if v.reason)
    n = max(1, len(verdicts))
    acceptance: dict[str, dict[str, dict[str, float]]] = {}
    for ax in AXES:
        tot: Counter[str] = Counter()
        ok: Counter[str] = Counter()
        for v in verdicts:
            key = getattr(by_id[v.id], ax)
            tot[key] += 1
            ok[key] += v.verdict == "pass"
        acceptance[ax] = {k: {"n": tot[k], "accepted": ok[k], "rate": ok[k] / tot[k]} for k in sorted(tot)}
    return {
        "n_skeletons": len(skeletons),
        "counts": {k: counts.get(k, 0) for k in ("pass", "soft_fail", "hard_fail", "unparsed")},
        "rates": {k: counts.get(k, 0) / n for k in ("pass", "soft_fail", "hard_fail", "unparsed")},
        "reject_reasons": dict(sorted(reasons.items())),
        "balance": {ax: {"max_min_ratio": r["max_min_ratio"], "min": r["min"], "max": r["max"]}
                    for ax, r in balance_report(skeletons, tax).items()},
        "acceptance_by": acceptance,
    }


# -- end to end -------------------------------------------------------------------------------
@dataclass
class RunResult:
    run_dir: Path
    report: dict[str, Any]
    release_dir: Path | None = None
    release: Any = None
    notes: list[str] = field(default_factory=list)


def run_recipe(recipe: Recipe, *, run_dir: Path | None = None, out_root: Path | None = None,
               fresh: bool = False, force: bool = False, quiet: bool = False,
               do_release: bool = True) -> RunResult:
    for spec in (recipe.generator, recipe.judge):  # fail on a bad spec before any work
        parse_spec(spec)
    tax = load_taxonomy()
    jcfg = load_judge_config(recipe.judge_config)
    rd = RunDir(run_dir or Path("runs") / recipe.name / recipe.version)
    fingerprint = {
        "recipe": recipe.model_dump(exclude={"source", "card", "release", "description"}),
        "taxonomy": tax.source_hash, "judge_config": jcfg.model_dump(exclude={"source"}),
        "prompts": prompt_hashes(), "benchgen": __version__,
    }
    rd.open(fingerprint, fresh=fresh)
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")

    # sample (cheap and deterministic: always recomputed, written once)
    skeletons = sample(tax, recipe.n, recipe.seed, recipe.sampler)
    if not rd.file("skeletons.jsonl").exists():
        append_jsonl(rd.file("skeletons.jsonl"), skeletons)

    # generate (resume: only skeletons without a draft)
    done = rd.done_ids("drafts.jsonl")
    todo = [s for s in skeletons if s.id not in done]
    if todo:
        append_jsonl(rd.file("drafts.jsonl"), generate(todo, recipe.generator, tax, quiet=quiet))
    drafts_by_id = {r["id"]: Draft.from_dict(r) for r in read_jsonl(rd.file("drafts.jsonl"))}
    drafts = [drafts_by_id[s.id] for s in skeletons if s.id in drafts_by_id]

    # judge (resume likewise)
    done = rd.done_ids("verdicts.jsonl")
    todo_d = [d for d in drafts if d.id not in done]
    if todo_d:
        append_jsonl(rd.file("verdicts.jsonl"), judge(todo_d, recipe.judge, tax, jcfg, quiet=quiet))
    verdicts_by_id = {r["id"]: Verdict.from_dict(r) for r in read_jsonl(rd.file("verdicts.jsonl"))}
    verdicts = [verdicts_by_id[d.id] for d in drafts if d.id in verdicts_by_id]

    report = run_report(skeletons, verdicts, tax)
    rd.write_json("report.json", report)
    result = RunResult(run_dir=rd.path, report=report)
    if not do_release:
        return result

    from benchgen.release import build_release

    rows: dict[str, list[dict[str, Any]]] = {c: [] for c in recipe.configs}
    config_of = {"pass": "general", "soft_fail": "hard_mining"}
    for d in drafts:
        v = verdicts_by_id.get(d.id)
        cfg_name = config_of.get(v.verdict) if v else None
        if cfg_name in rows:
            rows[cfg_name].append(sample_row(d, v, seed=recipe.seed, benchgen_version=__version__))
    run_meta = {
        "generator": recipe.generator, "judge": recipe.judge, "reformulator": recipe.reformulator,
        "judge_config": jcfg.model_dump(exclude={"source", "offline"}), "prompt_hashes": fingerprint["prompts"],
        "taxonomy_hash": tax.source_hash, "seed": recipe.seed, "n_sampled": len(skeletons),
        "counts": report["counts"], "reject_reasons": report["reject_reasons"],
        "audit": {"acceptance_by": report["acceptance_by"], "balance": report["balance"]},
        "usage": {}, "cost": {}, "started_at": started,
        "finished_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "benchgen_version": __version__,
    }
    kwargs: dict[str, Any] = {"force": force, "quiet": quiet}
    if out_root is not None:
        kwargs["out_root"] = out_root
    rel = build_release(rows, recipe, run_meta, **kwargs)
    result.release = rel
    result.release_dir = getattr(rel, "release_dir", None) or getattr(rel, "path", None)
    return result
