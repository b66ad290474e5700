"""Stage functions and the end-to-end `run`: sample -> generate -> judge -> report -> release.

Each stage reads the previous stage's records and appends its own to the run directory, skipping
ids already present, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from tqdm import tqdm

from benchgen import __version__
from benchgen.errors import BenchgenError
from benchgen.judge import JudgeConfig, judge_offline, load_judge_config
from benchgen.offline import generate_one
from benchgen.providers.base import parse_spec
from benchgen.recipe import Recipe
from benchgen.records import Draft, Skeleton, Verdict, sample_row
from benchgen.runs import RunDir, append_jsonl, config_hash, read_jsonl
from benchgen.sampling import Sampler, balance_report, settings_with_overrides
from benchgen.taxonomy import Taxonomy, load_taxonomy
from benchgen.templates import prompt_hashes

T = TypeVar("T")


def _bar(it: Iterable[T], total: int, desc: str, quiet: bool) -> Iterator[T]:
    return iter(tqdm(it, total=total, desc=desc, unit="item", disable=quiet, dynamic_ncols=True, leave=False))


# -- stages -----------------------------------------------------------------------------------
def sample(
    tax: Taxonomy, n: int, seed: int, overrides: dict[str, Any] | None = None, start: int = 0
) -> list[Skeleton]:
    return list(Sampler(tax, seed, settings_with_overrides(tax, overrides)).skeletons(n, start=start))


@dataclass
class LLMOptions:
    """How LLM-backed stages call their provider (ignored by the offline stages)."""

    concurrency: int = 16
    rpm: float | None = None
    tpm: float | None = None
    max_cost: float | None = None  # USD, across the stages of one run
    refresh: bool = False  # bypass cache reads
    cache: bool | str | Path = True
    api_key_env: str | None = None
    allow_same_family: bool = False
    pricing: str | Path | None = None
    summaries: list[dict[str, Any]] = field(default_factory=list)  # filled by each LLM stage

    def spent(self) -> float:
        return sum(float(x.get("cost_usd") or 0.0) for x in self.summaries)

    def remaining_budget(self) -> float | None:
        return None if self.max_cost is None else max(0.0, self.max_cost - self.spent())

    def run(
        self, spec: str, items: list[tuple[str, Any]], out_path: Path, *, stage: str, parse: Any, quiet: bool
    ) -> dict[str, Any]:
        """Run requests through :mod:`benchgen.runner`; record the summary even when it stops early."""
        from benchgen.runner import run_requests_sync

        try:
            summary = run_requests_sync(
                spec,
                items,
                out_path,
                concurrency=self.concurrency,
                parse=parse,
                stage=stage,
                cache=self.cache,
                refresh=self.refresh,
                rpm=self.rpm,
                tpm=self.tpm,
                max_cost=self.remaining_budget(),
                pricing=self.pricing,
                quiet=quiet,
                api_key_env=self.api_key_env,
            ).to_dict()
        except BenchgenError as exc:
            partial = getattr(exc, "summary", None)
            if partial is not None:
                self.summaries.append(partial.to_dict())
            raise
        self.summaries.append(summary)
        return summary


def generate(
    skeletons: Sequence[Skeleton],
    spec: str,
    tax: Taxonomy,
    *,
    quiet: bool = False,
    llm: LLMOptions | None = None,
    calls_path: Path | None = None,
) -> Iterator[Draft]:
    """Offline: render templates. LLM: one JSON-mode request per skeleton through the runner.

    ``calls_path`` is the runner's append-only journal of answered requests (resume point); it
    defaults to a file beside the working directory's ``runs/``.
    """
    ps = parse_spec(spec)
    if ps.provider == "offline":
        for sk in _bar(skeletons, len(skeletons), "generate (offline)", quiet):
            yield generate_one(tax, sk)
        return
    from benchgen.providers.generation import (
        build_generation_request,
        generation_parser,
        generation_template_hash,
    )
    from benchgen.providers.journal import load_records

    llm = llm or LLMOptions()
    calls = calls_path or Path("runs") / "generate_calls.jsonl"
    sk_dicts = {sk.id: sk.to_dict() for sk in skeletons}
    items = [(sk.id, build_generation_request(sk_dicts[sk.id], tax)) for sk in skeletons]
    llm.run(str(ps), items, calls, stage="generate", parse=generation_parser(sk_dicts), quiet=quiet)
    records = load_records(calls)
    th = generation_template_hash()
    for sk in skeletons:
        rec = records.get(sk.id)
        if rec is None:
            continue  # not answered (run stopped): stays to-do for the next run
        usage = {k: int(v) for k, v in (rec.get("usage") or {}).items() if isinstance(v, int | float)}
        if rec.get("status") != "ok":
            yield Draft(
                skeleton=sk,
                query="",
                essential=sk.essential,
                non_essential=sk.non_essential,
                generator=str(ps),
                template="generator/user.j2",
                template_hash=th,
                status="failed",
                failure_reason=str(rec.get("failure_reason") or "error"),
                usage=usage,
            )
            continue
        out = rec["output"]
        spans = out["spans"]

        def fill(ds: tuple[Any, ...], spans: dict[str, str] = spans) -> tuple[Any, ...]:
            return tuple(type(d)(**{**d.to_dict(), "span": spans.get(d.value, "")}) for d in ds)

        yield Draft(
            skeleton=sk,
            query=out["query"],
            essential=fill(sk.essential),
            non_essential=fill(sk.non_essential),
            generator=str(ps),
            template="generator/user.j2",
            template_hash=th,
            usage=usage,
        )


def judge(
    drafts: Sequence[Draft],
    spec: str,
    tax: Taxonomy,
    cfg: JudgeConfig,
    *,
    quiet: bool = False,
    llm: LLMOptions | None = None,
    calls_path: Path | None = None,
    embedding: bool | None = None,
    allow_same_family: bool | None = None,
) -> Iterator[Verdict]:
    """Re-extract E/N from each query alone, then apply the acceptance rule (``benchgen.matching``).

    Offline: the local extractor. LLM: one JSON-mode request per draft through the runner (cache,
    resume, one repair re-ask); an answer that is still not a JSON object of the right shape yields
    a ``unparsed`` verdict. Drafts whose request was not answered (run stopped, transport error)
    get no verdict and stay to-do. ``embedding`` overrides ``cfg.matching.embedding``. The judge
    must come from another model family than each draft's generator unless same-family is allowed.
    """
    from benchgen.judge import (
        ESSENTIAL_KEY,
        NONESSENTIAL_KEY,
        draft_values,
        make_matcher,
        verdict_from_record,
    )

    ps = parse_spec(spec)
    llm = llm or LLMOptions()
    same = llm.allow_same_family if allow_same_family is None else allow_same_family
    if ps.provider != "offline":
        from benchgen.providers.base import check_heterogeneous

        for gen in sorted({d.generator for d in drafts if d.generator}):
            check_heterogeneous(gen, ps, allow_same_family=same)
    if ps.provider == "offline":
        yield from judge_offline(_bar(drafts, len(drafts), "judge (offline)", quiet), tax, cfg, embedding)
        return
    from benchgen.judge import build_judge_request, judge_parser
    from benchgen.providers.journal import load_records

    calls = calls_path or Path("runs") / "judge_calls.jsonl"
    items = [(d.id, build_judge_request(d.query, cfg, d.id)) for d in drafts if d.status == "ok"]
    if items:
        llm.run(str(ps), items, calls, stage="judge", parse=judge_parser(), quiet=quiet)
    records = load_records(calls) if items else {}
    texts: list[str] = []
    for d in drafts:
        out = (records.get(d.id) or {}).get("output") or {}
        texts += [*draft_values(d), *out.get(ESSENTIAL_KEY, ()), *out.get(NONESSENTIAL_KEY, ())]
    th, matcher = make_matcher(cfg, embedding, texts)
    for d in drafts:
        v = verdict_from_record(d, records.get(d.id), str(ps), cfg, matcher, th)
        if v is not None:
            yield v


# -- report -----------------------------------------------------------------------------------
def run_report(
    skeletons: Sequence[Skeleton],
    verdicts: Sequence[Verdict],
    tax: Taxonomy,
    *,
    drafts: Sequence[Draft] | None = None,
    cfg: JudgeConfig | None = None,
    run_dir: Path | None = None,
    agreement: bool | None = None,
    rewrites: Sequence[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Outcome figures, acceptance-bias audit, token-vs-embedding agreement, reformulation check.

    With ``run_dir`` the audit is also written there (``audit.json``, ``audit.md``). Agreement is
    computed when ``agreement`` is true, or (None) when ``cfg`` has embeddings on; it needs
    ``drafts`` and ``cfg``.
    """
    from benchgen.audit import acceptance_audit, verdict_summary, write_audit

    summary = verdict_summary(verdicts)
    audit_cfg = cfg.audit if cfg is not None else None
    audit = acceptance_audit(skeletons, verdicts, **(audit_cfg.model_dump() if audit_cfg else {}))
    report: dict[str, Any] = {
        "n_skeletons": len(skeletons),
        "counts": summary["counts"],
        "rates": summary["rates"],
        "reject_reasons": summary["reasons"],
        "balance": {
            ax: {"max_min_ratio": r["max_min_ratio"], "min": r["min"], "max": r["max"]}
            for ax, r in balance_report(skeletons, tax).items()
        },
        "acceptance_by": audit["acceptance_by"],
        "judge": {k: summary[k] for k in ("e_recall", "n_recall", "swapped", "residual")},
        "audit": {
            "acceptance_rate": audit["acceptance_rate"],
            "tv_distance": audit["tv_distance"],
            "flagged": audit["flagged"],
            "flag_rule": audit["flag_rule"],
        },
    }
    want_agreement = agreement if agreement is not None else bool(cfg and cfg.matching.embedding)
    if want_agreement and drafts is not None and cfg is not None:
        from benchgen.judge import verdict_agreement

        report["agreement"] = verdict_agreement(drafts, verdicts, cfg)
    if rewrites is not None:
        from benchgen.reformulate import reformulation_summary

        report["reformulation"] = reformulation_summary(rewrites)
    if run_dir is not None:
        write_audit(run_dir, {**audit, "summary": summary, "agreement": report.get("agreement")})
    return report


CALL_JOURNALS = {
    "generate": "generate_calls.jsonl",
    "judge": "judge_calls.jsonl",
    "reformulate": "reformulate_calls.jsonl",
}


def usage_from_journals(run_dir: Path, pricing: str | Path | None = None) -> dict[str, Any]:
    """Tokens, calls and cost per stage and model, summed over the run's saved call journals.

    Computed from what is on disk (not from this process's calls), so a resumed or repeated run
    reports the same totals: the calls this run directory actually paid for. Answers served from
    the response cache count as ``cached`` and cost nothing.
    """
    from benchgen.pricing import PriceTable
    from benchgen.providers.journal import load_records

    prices = PriceTable.load(pricing)
    per: dict[str, dict[str, Any]] = {}
    for stage, name in CALL_JOURNALS.items():
        path = run_dir / name
        if not path.exists():
            continue
        for rec in load_records(path).values():
            model = str(rec.get("model") or "")
            acc = per.setdefault(
                f"{stage}:{model}",
                {
                    "stage": stage,
                    "model": model,
                    "calls": 0,
                    "cached": 0,
                    "input_tokens": 0,
                    "output_tokens": 0,
                    "cost_usd": 0.0,
                },
            )
            if rec.get("cached"):
                acc["cached"] += 1
                continue
            u = rec.get("usage") or {}
            acc["calls"] += int(rec.get("attempts") or 1)
            acc["input_tokens"] += int(u.get("input_tokens") or 0)
            acc["output_tokens"] += int(u.get("output_tokens") or 0)
        for acc in per.values():
            if acc["stage"] == stage and acc["model"]:
                acc["cost_usd"] = round(
                    prices.cost(parse_spec(acc["model"]), acc["input_tokens"], acc["output_tokens"]), 6
                )
    return {
        "by_stage_model": dict(sorted(per.items())),
        "input_tokens": sum(v["input_tokens"] for v in per.values()),
        "output_tokens": sum(v["output_tokens"] for v in per.values()),
        "cost_usd": round(sum(v["cost_usd"] for v in per.values()), 6),
    }


def release_inputs(run_dir: Path, recipe: Recipe) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    """The released rows per config and the run metadata, read from a finished run directory.

    The single source for both `benchgen run` and `benchgen release`, so the two cannot drift.
    Nothing time-dependent goes in: a rebuild from the same run directory is byte-identical.
    """
    import json

    from benchgen.errors import ReleaseError

    need = [run_dir / n for n in ("run.json", "drafts.jsonl", "verdicts.jsonl", "report.json")]
    missing = [p.name for p in need if not p.is_file()]
    if missing:
        raise ReleaseError(
            f"run directory {run_dir} is incomplete (missing {', '.join(missing)})",
            hint=f"run `benchgen run {recipe.source or recipe.name}` first (it also releases)",
        )
    fingerprint = json.loads((run_dir / "run.json").read_text(encoding="utf-8")).get("config", {})
    report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    version = fingerprint.get("benchgen") or __version__
    verdicts = {r["id"]: Verdict.from_dict(r) for r in read_jsonl(run_dir / "verdicts.jsonl")}
    rewrites = {r["id"]: r for r in read_jsonl(run_dir / "rewrites.jsonl")}
    rows: dict[str, list[dict[str, Any]]] = {c: [] for c in recipe.configs}
    config_of = {"pass": "general", "soft_fail": "hard_mining"}
    for rec in read_jsonl(run_dir / "drafts.jsonl"):
        v = verdicts.get(rec["id"])
        cfg_name = config_of.get(v.verdict) if v else None
        if v is not None and cfg_name in rows:
            rows[cfg_name].append(
                sample_row(
                    Draft.from_dict(rec),
                    v,
                    seed=recipe.seed,
                    benchgen_version=version,
                    target_rewrite=(rewrites.get(rec["id"]) or {}).get("target_rewrite"),
                )
            )
    judge_cfg = {
        k: v for k, v in (fingerprint.get("judge_config") or {}).items() if k not in ("source", "offline")
    }
    usage = report.get("usage") or usage_from_journals(run_dir)
    run_meta = {
        "generator": recipe.generator,
        "judge": recipe.judge,
        "reformulator": recipe.reformulator,
        "judge_config": judge_cfg,
        "prompt_hashes": fingerprint.get("prompts") or {},
        "taxonomy_hash": fingerprint.get("taxonomy"),
        "seed": recipe.seed,
        "n_sampled": report.get("n_skeletons"),
        "counts": report.get("counts") or {},
        "reject_reasons": report.get("reject_reasons") or {},
        "audit": {
            "acceptance_by": report.get("acceptance_by", {}),
            "balance": report.get("balance", {}),
            **(report.get("audit") or {}),
            **{k: report[k] for k in ("judge", "agreement", "reformulation") if k in report},
        },
        "usage": usage,
        "cost": {"total_usd": usage.get("cost_usd", 0.0)},
        "benchgen_version": version,
    }
    return rows, run_meta


# -- end to end -------------------------------------------------------------------------------
def run_fingerprint(
    recipe: Recipe, tax: Taxonomy | None = None, jcfg: JudgeConfig | None = None
) -> dict[str, Any]:
    """Everything that changes a run's outputs (the run directory refuses to mix two of them)."""
    tax = tax or load_taxonomy()
    jcfg = jcfg or load_judge_config(recipe.judge_config)
    return {
        "recipe": recipe.model_dump(exclude={"source", "card", "release", "description"}),
        "taxonomy": tax.source_hash,
        "judge_config": jcfg.model_dump(exclude={"source"}),
        "prompts": prompt_hashes(),
        "benchgen": __version__,
    }


def default_run_dir(recipe: Recipe, fingerprint: dict[str, Any] | None = None) -> Path:
    """``runs/<name>/<version>-<config hash>``: one directory per configuration, so changing a
    prompt, a threshold or the taxonomy starts a new run instead of refusing to resume."""
    fp = fingerprint if fingerprint is not None else run_fingerprint(recipe)
    return Path("runs") / recipe.name / f"{recipe.version}-{config_hash(fp)[:8]}"


@dataclass
class RunResult:
    run_dir: Path
    report: dict[str, Any]
    release_dir: Path | None = None
    release: Any = None
    notes: list[str] = field(default_factory=list)


def run_recipe(
    recipe: Recipe,
    *,
    run_dir: Path | None = None,
    out_root: Path | None = None,
    fresh: bool = False,
    force: bool = False,
    quiet: bool = False,
    do_release: bool = True,
    llm: LLMOptions | None = None,
) -> RunResult:
    from benchgen.providers.base import check_heterogeneous
    from benchgen.providers.registry import resolve_api_key

    llm = llm or LLMOptions()
    for spec in (recipe.generator, recipe.judge, recipe.reformulator):  # fail before any work
        if parse_spec(spec).provider != "offline":
            resolve_api_key(spec, llm.api_key_env)  # MissingKeyError names the variable
    check_heterogeneous(recipe.generator, recipe.judge, allow_same_family=llm.allow_same_family)
    tax = load_taxonomy()
    jcfg = load_judge_config(recipe.judge_config)
    fingerprint = run_fingerprint(recipe, tax, jcfg)
    rd = RunDir(run_dir or default_run_dir(recipe, fingerprint))
    rd.open(fingerprint, fresh=fresh)

    # sample (cheap and deterministic: always recomputed, written once)
    skeletons = sample(tax, recipe.n, recipe.seed, recipe.sampler)
    if not rd.file("skeletons.jsonl").exists():
        append_jsonl(rd.file("skeletons.jsonl"), skeletons)

    # generate, judge, reformulate: each appends only what its stage file lacks (resume)
    drafts_by_id = rd.resume(
        "drafts.jsonl",
        skeletons,
        lambda todo: generate(
            todo, recipe.generator, tax, quiet=quiet, llm=llm, calls_path=rd.file("generate_calls.jsonl")
        ),
    )
    drafts = [Draft.from_dict(drafts_by_id[s.id]) for s in skeletons if s.id in drafts_by_id]

    verdict_recs = rd.resume(
        "verdicts.jsonl",
        drafts,
        lambda todo: judge(
            todo, recipe.judge, tax, jcfg, quiet=quiet, llm=llm, calls_path=rd.file("judge_calls.jsonl")
        ),
    )
    verdicts_by_id = {k: Verdict.from_dict(r) for k, r in verdict_recs.items()}
    verdicts = [verdicts_by_id[d.id] for d in drafts if d.id in verdicts_by_id]

    # target rewrite y* of every draft that will be released
    from benchgen.reformulate import reformulate

    released = [
        d for d in drafts if d.id in verdicts_by_id and verdicts_by_id[d.id].verdict in ("pass", "soft_fail")
    ]
    rewrites = rd.resume(
        "rewrites.jsonl",
        released,
        lambda todo: reformulate(
            todo,
            recipe.reformulator,
            tax,
            {d.id: verdicts_by_id[d.id].residual for d in todo},
            llm=llm,
            calls_path=rd.file("reformulate_calls.jsonl"),
            quiet=quiet,
        ),
    )

    report = run_report(
        skeletons,
        verdicts,
        tax,
        drafts=drafts,
        cfg=jcfg,
        run_dir=rd.path,
        rewrites=[rewrites[d.id] for d in released if d.id in rewrites],
    )
    report["usage"] = usage_from_journals(rd.path, llm.pricing)
    rd.write_json("report.json", report)
    result = RunResult(run_dir=rd.path, report=report)
    if not do_release:
        return result

    from benchgen.release import build_release

    rows, run_meta = release_inputs(rd.path, recipe)
    kwargs: dict[str, Any] = {"force": force, "quiet": quiet}
    if out_root is not None:
        kwargs["out_root"] = out_root
    rel = build_release(rows, recipe, run_meta, **kwargs)
    result.release = rel
    result.release_dir = getattr(rel, "release_dir", None) or getattr(rel, "path", None)
    return result
