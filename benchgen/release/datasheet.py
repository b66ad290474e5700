"""``DATASHEET.md`` after Gebru et al., "Datasheets for Datasets" (CACM 2021), filled from the run.

Every question is answered from run metadata where the run knows the answer; the others are
marked ``> **[HUMAN INPUT NEEDED]** <question>`` and returned so the release command can list them.
"""

from __future__ import annotations

import json
from typing import Any

from benchgen.release.context import ReleaseContext
from benchgen.release.options import KNOWN_CONFIGS, SPLITS
from benchgen.release.schema import DESCRIPTIONS

HUMAN = "> **[HUMAN INPUT NEEDED]**"


# Questions a person answers in the recipe: `card: {datasheet: {<key>: "answer"}}`.
HUMAN_KEYS = (
    "creators",
    "funding",
    "offensive_content",
    "collectors",
    "timeframe",
    "ethical_review",
    "prior_uses",
    "uses_repository",
    "distribution_date",
    "ip_restrictions",
    "export_controls",
    "maintainers",
    "contact",
)


class _Sheet:
    def __init__(self, answers: dict[str, str]) -> None:
        self.lines: list[str] = []
        self.human: list[str] = []
        self.section = ""
        self.answers = answers

    def h2(self, title: str) -> None:
        self.section = title
        self.lines += [f"## {title}", ""]

    def qa(self, question: str, answer: str | None, *, key: str | None = None) -> None:
        """A question answered by the recipe (``key``) or the run, else marked for a human."""
        self.lines += [f"**{question}**", ""]
        if key is not None and self.answers.get(key):
            answer = self.answers[key]
        if answer is None:
            self.lines += [f"{HUMAN} {question}", ""]
            self.human.append(f"{self.section}: {question} (card.datasheet.{key})")
        else:
            self.lines += [answer.strip(), ""]


def _json(d: Any) -> str:
    return "```json\n" + json.dumps(d, indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n```"


def _counts_table(ctx: ReleaseContext) -> str:
    lines = ["| config | " + " | ".join(SPLITS) + " | total |", "|---|" + "---|" * (len(SPLITS) + 1)]
    for c in [*ctx.configs, *ctx.empty_configs]:
        lines.append(
            f"| `{c}` | " + " | ".join(str(ctx.count(c, s)) for s in SPLITS) + f" | {ctx.count(c)} |"
        )
    return "\n".join(lines)


def _audit_md(ctx: ReleaseContext) -> str:
    audit = ctx.meta.get("audit") or {}
    parts = []
    by = audit.get("acceptance_by") or {}
    for axis in sorted(by) if isinstance(by, dict) else ():
        vals = by[axis]
        if not isinstance(vals, dict):
            continue
        rows = []
        for k in sorted(vals):
            v = vals[k]
            if isinstance(v, dict):
                rate = v.get("rate")
                rows.append(
                    f"| {k} | {v.get('n', '')} | {v.get('accepted', '')} | "
                    f"{'' if rate is None else format(float(rate), '.3f')} |"
                )
        if rows:
            parts += [
                f"Acceptance by `{axis}`:",
                "",
                "| value | judged | accepted | rate |",
                "|---|---|---|---|",
                *rows,
                "",
            ]
    bal = audit.get("balance") or {}
    if isinstance(bal, dict) and bal:
        parts += [
            "Sampling balance per axis (max/min count ratio; 1.0 = perfectly balanced):",
            "",
            "| axis | max/min | min | max |",
            "|---|---|---|---|",
        ]
        for axis in sorted(bal):
            b = bal[axis] if isinstance(bal[axis], dict) else {}
            parts.append(
                f"| {axis} | {b.get('max_min_ratio', '')} | {b.get('min', '')} | {b.get('max', '')} |"
            )
        parts.append("")
    other = {k: v for k, v in audit.items() if k not in ("acceptance_by", "balance")}
    if other:
        parts += ["Other audit figures:", "", _json(other), ""]
    return "\n".join(parts) if parts else "No audit figures were recorded for this run."


def render_datasheet(ctx: ReleaseContext) -> tuple[str, list[str]]:
    """Return the datasheet text and the list of questions left for a human."""
    m = ctx.meta
    c = ctx.card
    s = _Sheet(dict(c.datasheet))
    gen, judge, ref = ctx.model("generator"), ctx.model("judge"), ctx.model("reformulator")
    date = ctx.release_date
    s.lines += [
        f"# Datasheet: {ctx.pretty_name} {ctx.version}",
        "",
        "Following Gebru et al., *Datasheets for Datasets* (CACM 64(12), 2021). Answers are generated from "
        f"the run that built this release (benchgen {ctx.benchgen_version}); questions only a person can "
        f"answer are marked `[HUMAN INPUT NEEDED]`.",
        "",
    ]

    s.h2("1. Motivation")
    s.qa(
        "For what purpose was the dataset created?",
        "To train and evaluate local *rewriter* models for privacy-conscious delegation: given a user query "
        "mixing task-essential details (E) with sensitive, task-non-essential details (N), forward E and drop "
        "N before the query reaches a remote model (contextual integrity, Nissenbaum 2004). "
        + (ctx.recipe.description or "").strip(),
    )
    s.qa(
        "Who created the dataset and on behalf of which entity?",
        ", ".join(c.authors) if c.authors else None,
        key="creators",
    )
    s.qa("Who funded the creation of the dataset?", c.funding, key="funding")

    s.h2("2. Composition")
    s.qa(
        "What do the instances represent?",
        "Each instance is one synthetic user query written in the first person or about a related person, "
        "with its E and N details labelled as exact spans, the judge's re-extraction and provenance.",
    )
    s.qa("How many instances are there in total?", f"{ctx.total} rows.\n\n" + _counts_table(ctx))
    s.qa(
        "Does the dataset contain all possible instances or is it a sample?",
        f"A seeded sample (seed `{ctx.seed}`) of {m.get('n_sampled', ctx.recipe.n)} skeletons from the "
        "taxonomy's combinatorial space, balanced by quotas over domain, task type, subject, style and tone; "
        "only drafts the judge passed (`general`) or soft-failed (`hard_mining`) are released.",
    )
    s.qa(
        "What data does each instance consist of?",
        "\n".join(f"- `{k}`: {v}" for k, v in DESCRIPTIONS.items()),
    )
    s.qa(
        "Is there a label or target associated with each instance?",
        "Yes: the E/N partition (`essential`, `non_essential`) fixed by the skeleton before generation, and "
        "`target_rewrite` when a reference rewrite was produced.",
    )
    s.qa(
        "Is any information missing from individual instances?",
        "`target_rewrite` is null when no reference rewrite was produced; `confusion` is null for rows "
        "without confusion injection; `judge.reason` is null for passing rows.",
    )
    s.qa(
        "Are relationships between individual instances made explicit?",
        "Yes: rows sharing a `group` come from the same skeleton or confusion pair and always share a split.",
    )
    s.qa(
        "Are there recommended data splits?",
        "train / validation / test at "
        + " / ".join(str(ctx.recipe.splits[x]) for x in SPLITS)
        + ", assigned per `group` and stratified by domain × task type from a hash of the group key; "
        f"{ctx.dedup.total} cross-split near-duplicate queries were removed (Jaccard ≥ {ctx.dedup.threshold}).",
    )
    s.qa(
        "Are there any errors, sources of noise, or redundancies in the dataset?",
        f"Labels are confirmed by one judge model (`{judge}`); `hard_mining` rows were only partly confirmed. "
        "Sensitive spans the generator added beyond the skeleton are labelled N with attribute "
        "`model_leaked` (listed in `judge.residual`).",
    )
    s.qa("Is the dataset self-contained?", "Yes. It does not link to external resources.")
    s.qa(
        "Does the dataset contain data that might be considered confidential?",
        "No real confidential data: all people and values are synthetic, drawn from curated value banks.",
    )
    s.qa(
        "Does the dataset contain data that, if viewed directly, might be offensive, insulting, "
        "threatening, or might otherwise cause anxiety?",
        None,
        key="offensive_content",
    )
    s.qa(
        "Does the dataset identify any subpopulations or contain sensitive data?",
        "By design the queries contain *synthetic* sensitive attributes (health, beliefs, sexuality, "
        "ethnicity, finances, location, ...). Attribute frequencies are plotted in the card. "
        "No real individual can be identified.",
    )

    s.h2("3. Collection process")
    s.qa(
        "How was the data associated with each instance acquired?",
        f"Generated: skeletons sampled by benchgen, rendered by the generator `{gen}`, validated by a "
        f"different judge `{judge}`; reference rewrites by `{ref}`.",
    )
    hashes = m.get("prompt_hashes") or {}
    s.qa(
        "What mechanisms or procedures were used to collect the data?",
        "Prompt templates (sha256):\n\n"
        + ("\n".join(f"- `{k}`: `{v}`" for k, v in sorted(hashes.items())) or "- (not recorded)")
        + (f"\n\nTaxonomy sha256: `{m['taxonomy_hash']}`." if m.get("taxonomy_hash") else ""),
    )
    s.qa(
        "What was the sampling strategy?",
        f"Deterministic per-item seeding (seed `{ctx.seed}`); quotas balance the taxonomy axes.",
    )
    s.qa(
        "Who was involved in the data collection process and how were they compensated?",
        None
        if not c.authors
        else "No crowdworkers: data is machine-generated; the maintainers ("
        + ", ".join(c.authors)
        + ") configured the taxonomy and reviewed samples.",
        key="collectors",
    )
    s.qa(
        "Over what timeframe was the data collected?",
        f"Released {date} (CHANGELOG). Run timestamps are kept out of the release so that it rebuilds "
        "byte-identically."
        if date
        else None,
        key="timeframe",
    )
    s.qa("Were any ethical review processes conducted?", None, key="ethical_review")
    usage, cost = m.get("usage") or {}, m.get("cost")
    s.qa(
        "What did the collection cost?",
        ("Usage:\n\n" + _json(usage) if usage else "No provider usage was recorded")
        + ("\n\nCost:\n\n" + _json(cost) if cost else " (offline providers or no cost reported)."),
    )

    s.h2("4. Preprocessing / cleaning / labelling")
    s.qa(
        "Was any preprocessing/cleaning/labelling of the data done?",
        "Labelling is by construction (reverse synthesis). The judge re-extracts E and N from the query alone; "
        "the acceptance rule compares that with the skeleton. Thresholds:\n\n"
        + (_json(m["judge_config"]) if m.get("judge_config") else "(not recorded)"),
    )
    verdicts = m.get("counts") or {}
    reasons = m.get("reject_reasons") or {}
    s.qa(
        "What were the acceptance figures?",
        (
            "Judge verdicts over all drafts:\n\n" + _json(verdicts)
            if verdicts
            else "Verdict counts not recorded."
        )
        + ("\n\nReasons:\n\n" + _json(reasons) if reasons else "")
        + "\n\n"
        + _audit_md(ctx),
    )
    s.qa(
        "Was the raw data saved in addition to the cleaned data?",
        "Yes, in the benchgen run directory (skeletons, drafts and verdicts as JSON lines); it is not part "
        "of this release.",
    )
    s.qa(
        "Is the software used to preprocess/clean/label the data available?",
        f"benchgen {ctx.benchgen_version}; the release MANIFEST.json records the recipe hash and prompt hashes.",
    )

    s.h2("5. Uses")
    s.qa("Has the dataset been used for any tasks already?", None, key="prior_uses")
    s.qa(
        "Is there a repository that links to any or all papers or systems that use the dataset?",
        c.homepage,
        key="uses_repository",
    )
    s.qa(
        "What (other) tasks could the dataset be used for?",
        "Training and evaluating query rewriters / sanitizers; span-level detection of task-irrelevant "
        "sensitive details (CAPID-style); measuring leakage of delegated queries (PAPILLON, PEEP).",
    )
    s.qa(
        "Is there anything about the composition or collection that might impact future uses?",
        "The data is synthetic and template- or model-shaped; E/N norms follow the taxonomy's task framing.",
    )
    s.qa(
        "Are there tasks for which the dataset should not be used?",
        "Re-identification or profiling of people; estimating how often real users disclose sensitive "
        "details; treating `hard_mining` rows as gold labels.",
    )

    s.h2("6. Distribution")
    s.qa(
        "How will the dataset be distributed?",
        f"Parquet files with this datasheet, a dataset card, Croissant metadata and a checksum manifest; on "
        f"the Hugging Face Hub as `{ctx.repo_id}` at tag `v{ctx.version}`.",
    )
    s.qa("When will the dataset be distributed?", date, key="distribution_date")
    s.qa("Under what license is the dataset distributed?", f"`{c.license}`.")
    s.qa(
        "Have any third parties imposed IP-based or other restrictions on the data?",
        None,
        key="ip_restrictions",
    )
    s.qa("Do any export controls or other regulatory restrictions apply?", None, key="export_controls")

    s.h2("7. Maintenance")
    s.qa(
        "Who will be supporting/hosting/maintaining the dataset?",
        ", ".join(c.authors) or None,
        key="maintainers",
    )
    s.qa("How can the owner/curator/manager of the dataset be contacted?", c.contact, key="contact")
    s.qa(
        "Will the dataset be updated?",
        "Releases are immutable and semantically versioned; changes ship as new versions documented in the "
        "release CHANGELOG. This version's entry:\n\n"
        + "\n".join("> " + x for x in ctx.changelog_entry.strip().splitlines()),
    )
    s.qa(
        "Will older versions continue to be supported?",
        "Every version stays loadable at its `v<version>` tag.",
    )
    s.qa(
        "If others want to contribute, is there a mechanism?",
        "Yes: new releases are built from versioned recipes (taxonomy, prompts and thresholds in YAML/Jinja).",
    )
    s.lines += ["## Configs", ""] + [
        f"- `{k}`: {KNOWN_CONFIGS[k]}" for k in [*ctx.configs, *ctx.empty_configs]
    ]
    s.lines.append("")
    return "\n".join(s.lines), s.human
