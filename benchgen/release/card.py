"""The dataset card (``README.md``): Hub YAML metadata + a body generated from the run."""

from __future__ import annotations

import json
from typing import Any

import yaml

from benchgen.errors import ReleaseError
from benchgen.release.citations import RELATED, release_bibtex
from benchgen.release.context import ReleaseContext
from benchgen.release.options import KNOWN_CONFIGS, SPLITS
from benchgen.release.schema import hf_features, schema_table_md

# Size buckets the Hub accepts for `size_categories`.
SIZE_CATEGORIES = [
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
    (1_000_000_000, "100M<n<1B"),
]
# Licence ids from https://huggingface.co/docs/hub/repositories-licenses most likely for a dataset.
KNOWN_LICENSES = {
    "apache-2.0",
    "mit",
    "cc-by-4.0",
    "cc-by-sa-4.0",
    "cc-by-nc-4.0",
    "cc-by-nc-sa-4.0",
    "cc-by-nd-4.0",
    "cc-by-nc-nd-4.0",
    "cc-by-3.0",
    "cc-by-sa-3.0",
    "cc0-1.0",
    "odc-by",
    "odbl",
    "pddl",
    "cdla-permissive-2.0",
    "cdla-sharing-1.0",
    "bsd-3-clause",
    "gpl-3.0",
    "openrail",
    "other",
    "unknown",
}
REQUIRED_KEYS = (
    "license",
    "language",
    "task_categories",
    "size_categories",
    "pretty_name",
    "configs",
    "dataset_info",
)


def size_category(n: int) -> str:
    for bound, label in SIZE_CATEGORIES:
        if n < bound:
            return label
    return "n>1T"


def card_metadata(ctx: ReleaseContext) -> dict[str, Any]:
    """The YAML header as a plain dict (key order is the order written)."""
    from datasets import DatasetInfo, SplitInfo
    from datasets.info import DatasetInfosDict
    from datasets.splits import SplitDict

    configs = []
    infos = {}
    for i, cfg in enumerate(ctx.configs):
        entry: dict[str, Any] = {"config_name": cfg}
        if i == 0:
            entry["default"] = True
        entry["data_files"] = [{"split": s, "path": f"data/{cfg}/{s}-*"} for s in ctx.splits(cfg)]
        configs.append(entry)
        sd = SplitDict()
        for s in ctx.splits(cfg):
            sf = ctx.files[cfg][s]
            sd.add(SplitInfo(name=s, num_bytes=sf.num_bytes, num_examples=sf.num_examples))
        size = sum(sf.num_bytes for sf in ctx.files[cfg].values())
        infos[cfg] = DatasetInfo(features=hf_features(), splits=sd, dataset_size=size)
    data: dict[str, Any] = {}
    DatasetInfosDict(infos).to_dataset_card_data(data)
    info_yaml = data["dataset_info"]
    if isinstance(info_yaml, dict):
        info_yaml = [info_yaml]
    for item in info_yaml:  # download_size would need the compressed size of the files: leave it out
        item.pop("download_size", None)
    return {
        "pretty_name": ctx.pretty_name,
        "license": ctx.card.license,
        "language": list(ctx.card.language),
        "task_categories": list(ctx.card.task_categories),
        "size_categories": [size_category(ctx.total)],
        "tags": list(ctx.card.tags),
        "configs": configs,
        "dataset_info": info_yaml,
    }


def _table(header: list[str], rows: list[list[Any]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    return "\n".join(out)


def _kv_json(d: Any) -> str:
    return "```json\n" + json.dumps(d, indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n```"


def construction_md(ctx: ReleaseContext) -> str:
    m = ctx.meta
    lines = [
        "Samples are built by **reverse synthesis**: the contextual-integrity skeleton (domain, task, "
        "subject, and the partition of details into task-essential **E** and non-essential sensitive "
        "**N**) is fixed first, and only then rendered into a surface query.",
        "",
        "1. **Sampler** — seeded skeleton sampler over the taxonomy "
        f"(seed `{ctx.seed}`, {m.get('n_sampled', ctx.recipe.n)} skeletons sampled"
        f"{', taxonomy sha256 `' + str(m['taxonomy_hash']) + '`' if m.get('taxonomy_hash') else ''}).",
        f"2. **Generator** — `{ctx.model('generator')}` renders each skeleton into a query; every E/N "
        "value must appear verbatim (its `span`).",
        f"3. **Judge** — a different model, `{ctx.model('judge')}`, re-extracts E and N from the query alone.",
        "4. **Acceptance** — the judge's extraction is matched to the skeleton; `pass` rows form "
        "`general`, `soft_fail` rows form `hard_mining`, `hard_fail` / `unparsed` rows are dropped.",
        f"5. **Reformulator** — `{ctx.model('reformulator')}` (reference rewrites, when produced).",
        "",
    ]
    if m.get("judge_config"):
        lines += ["Judge and acceptance thresholds:", "", _kv_json(m["judge_config"]), ""]
    if m.get("prompt_hashes"):
        lines += [
            "Prompt templates (sha256):",
            "",
            _table(
                ["template", "sha256"], [[f"`{k}`", f"`{v}`"] for k, v in sorted(m["prompt_hashes"].items())]
            ),
            "",
        ]
    return "\n".join(lines)


def statistics_md(ctx: ReleaseContext) -> str:
    m = ctx.meta
    rows = [[f"`{c}`", *[ctx.count(c, s) for s in SPLITS], ctx.count(c)] for c in ctx.configs]
    parts = ["### Split sizes", "", _table(["config", *SPLITS, "total"], rows), ""]
    if m.get("counts"):
        parts += [
            "### Judge verdicts over all generated drafts",
            "",
            _table(["verdict", "count"], [[f"`{k}`", v] for k, v in sorted(m["counts"].items())]),
            "",
        ]
    if m.get("reject_reasons"):
        parts += [
            "### Why drafts were dropped or soft-failed",
            "",
            _table(["reason", "count"], [[f"`{k}`", v] for k, v in sorted(m["reject_reasons"].items())]),
            "",
        ]
    d = ctx.dedup
    if d.method:
        parts += [
            "### Near-duplicate removal",
            "",
            f"Queries whose word-{ctx.options.near_dup.shingle}-gram Jaccard similarity with a query in "
            f"another split is at least {d.threshold} (MinHash LSH candidates, exact check) were removed "
            f"from the less protected split (train before validation before test): **{d.total}** removed"
            + (" (near-duplicate removal disabled)." if not ctx.options.near_dup.enabled else "."),
            "",
        ]
        if d.total:
            parts += [
                _table(
                    ["config", *SPLITS],
                    [[f"`{c}`", *[v.get(s, 0) for s in SPLITS]] for c, v in sorted(d.removed.items())],
                ),
                "",
            ]
    for path, caption in ctx.figures:
        parts += [f"![{caption}]({path})", "", f"*{caption}*", ""]
    return "\n".join(parts)


def limitations_md(ctx: ReleaseContext) -> str:
    items = [
        "All queries are **synthetic**: they are rendered from sampled skeletons, not written by people, "
        "and their style is narrower than real user traffic.",
        "E/N labels come from the skeleton and are confirmed by a single judge model; `hard_mining` rows "
        "were *not* fully confirmed and should not be used as gold labels.",
        "Values come from curated value banks; names, places and conditions reflect the banks' coverage "
        "and may under-represent many groups and locales.",
        "Whether a detail is essential depends on the task framing chosen by the taxonomy; other "
        "reasonable norms exist (contextual integrity is context-dependent).",
    ]
    if "offline" in (ctx.model("generator") + ctx.model("judge")):
        items.append(
            "This release uses benchgen's **offline** template generator and/or local judge: "
            "it is for pipeline testing and baselines, not a substitute for LLM-generated data."
        )
    items += list(ctx.card.limitations)
    return "\n".join(f"- {x}" for x in items)


def render_card(ctx: ReleaseContext) -> str:
    meta = card_metadata(ctx)
    header = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    first = ctx.configs[0] if ctx.configs else "general"
    config_rows = [[f"`{c}`", KNOWN_CONFIGS.get(c, ""), ctx.count(c)] for c in ctx.configs]
    config_rows += [
        [f"`{c}`", KNOWN_CONFIGS.get(c, "") + " **Empty in this release** (not declared as data).", 0]
        for c in ctx.empty_configs
    ]
    body = [
        f"# {ctx.pretty_name}",
        "",
        (ctx.recipe.description or "").strip()
        or "A contextual-integrity privacy benchmark built with benchgen.",
        "",
        f"Version **{ctx.version}** · built with benchgen {ctx.benchgen_version} from recipe `{ctx.name}` "
        f"(seed {ctx.seed}). Each query mixes task-essential details (E) with sensitive, task-non-essential "
        "details (N); a local rewriter should forward E and drop N before the query reaches a remote model.",
        "",
        "## Load",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'ds = load_dataset("{ctx.repo_id}", "{first}", revision="v{ctx.version}")',
        'print(ds["train"][0]["query"])',
        "```",
        "",
        "## Configs",
        "",
        _table(["config", "content", "rows"], config_rows),
        "",
        "Splits are assigned per `group` (a skeleton and its confusion twin never straddle splits), "
        "stratified by domain × task type, deterministically from a hash of the group key.",
        "",
        "Splits with no rows are not declared (the `datasets` library cannot load an empty split).",
        "",
        "## Files",
        "",
        "- `data/<config>/<split>-0000i-of-0000N.parquet`: the rows (schema below).",
        "- `DATASHEET.md`: datasheet (Gebru et al.) filled from the run.",
        "- `croissant.json`: Croissant 1.0 metadata with the Responsible-AI extension.",
        "- `MANIFEST.json`: size and sha256 of every file, recipe hash, seed, models, counts; check it with "
        "`benchgen verify <dir>`.",
        "",
        "## Schema",
        "",
        schema_table_md(),
        "",
        "## How the data was built",
        "",
        construction_md(ctx),
        "## Statistics",
        "",
        statistics_md(ctx),
        "## Changes in this version",
        "",
        "\n".join(ctx.changelog_entry.strip().splitlines()[1:]).strip() or "(no notes)",
        "",
        "## Limitations",
        "",
        limitations_md(ctx),
        "",
        "## Licence",
        "",
        f"Released under `{ctx.card.license}`. The data is synthetic; any resemblance of a rendered "
        "person to a real one is coincidental. See `DATASHEET.md` for intended and discouraged uses.",
        "",
        "## Citation",
        "",
        "```bibtex",
        release_bibtex(ctx),
        "```",
        "",
        "This dataset builds on:",
        "",
    ]
    for label, bib in RELATED:
        body += [f"- {label}", "", "```bibtex", bib, "```", ""]
    body += ["Fields marked `[TO VERIFY]` could not be checked when this card was generated.", ""]
    return f"---\n{header}---\n\n" + "\n".join(body)


def validate_card(content: str) -> dict[str, Any]:
    """Offline equivalent of ``DatasetCard.validate()`` (which POSTs to the Hub's /api/validate-yaml).

    Parses the card exactly like the Hub client does (``huggingface_hub.DatasetCard`` and its
    ``DatasetCardData``), round-trips the metadata, and checks what the Hub and ``datasets`` need:
    required keys, licence id, size bucket, and that ``datasets`` can read the configs and
    dataset_info. Returns the metadata dict; raises :class:`ReleaseError` listing every problem.
    """
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard, DatasetCardData

    problems: list[str] = []
    try:
        card = DatasetCard(content)
    except Exception as e:  # yaml errors, non-dict metadata
        raise ReleaseError(f"dataset card YAML does not parse: {e}") from None
    data = card.data.to_dict()
    again = DatasetCardData(**data).to_dict()
    if again != data:
        problems.append("metadata does not round-trip through DatasetCardData")
    for k in REQUIRED_KEYS:
        if not data.get(k):
            problems.append(f"missing or empty `{k}`")
    lic = data.get("license")
    if lic and lic not in KNOWN_LICENSES:
        problems.append(f"license {lic!r} is not a Hub licence id")
    sizes = {label for _, label in SIZE_CATEGORIES} | {"n>1T"}
    for s in data.get("size_categories") or ():
        if s not in sizes:
            problems.append(f"size_categories value {s!r} is not one of {sorted(sizes)}")
    try:
        configs = MetadataConfigs.from_dataset_card_data(card.data)
        infos = DatasetInfosDict.from_dataset_card_data(card.data)
    except Exception as e:
        problems.append(f"datasets cannot read configs/dataset_info: {e}")
    else:
        if set(configs) != set(infos):
            problems.append(f"configs {sorted(configs)} and dataset_info {sorted(infos)} disagree")
    if problems:
        raise ReleaseError("dataset card fails validation:\n  " + "\n  ".join(problems))
    return data
