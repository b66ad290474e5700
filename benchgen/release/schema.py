"""The explicit Arrow schema of a released row (see :func:`benchgen.records.sample_row`)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

DETAIL = pa.struct(
    [
        pa.field("attribute", pa.string()),
        pa.field("family", pa.string()),
        pa.field("subject", pa.string()),
        pa.field("relation", pa.string()),
        pa.field("value", pa.string()),
        pa.field("span", pa.string()),
    ]
)

JUDGE = pa.struct(
    [
        pa.field("verdict", pa.string()),
        pa.field("reason", pa.string()),
        pa.field("score", pa.float64()),
        pa.field("e_recall", pa.float64()),
        pa.field("n_recall", pa.float64()),
        pa.field("essential", pa.list_(pa.string())),
        pa.field("non_essential", pa.list_(pa.string())),
        pa.field("residual", pa.list_(pa.string())),
    ]
)

PROVENANCE = pa.struct(
    [
        pa.field("generator", pa.string()),
        pa.field("judge", pa.string()),
        pa.field("template", pa.string()),
        pa.field("template_hash", pa.string()),
        pa.field("seed", pa.int64()),
        pa.field("benchgen_version", pa.string()),
    ]
)

ROW_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string()),
        pa.field("group", pa.string()),
        pa.field("query", pa.string()),
        pa.field("target_rewrite", pa.string()),
        pa.field("domain", pa.string()),
        pa.field("task_type", pa.string()),
        pa.field("subject", pa.string()),
        pa.field("style", pa.string()),
        pa.field("tone", pa.string()),
        pa.field("policy", pa.string()),
        pa.field("confusion", pa.string()),
        pa.field("essential", pa.list_(DETAIL)),
        pa.field("non_essential", pa.list_(DETAIL)),
        pa.field("judge", JUDGE),
        pa.field("provenance", PROVENANCE),
    ]
)

# One line per column for the card, the datasheet and the Croissant descriptions.
DESCRIPTIONS: dict[str, str] = {
    "id": "Stable sample id (the skeleton id).",
    "group": "Split-hygiene key: a skeleton and its confusion twin share it and always share a split.",
    "query": "The user query to rewrite: mixes task-essential (E) and non-essential sensitive (N) details.",
    "target_rewrite": "Reference rewrite keeping E and dropping N (null when none was produced).",
    "domain": "Domain axis of the skeleton (e.g. health, finance).",
    "task_type": "Task-type axis of the skeleton.",
    "subject": "Whose details the query discloses (self, family, friend, coworker, third_party).",
    "style": "Surface style the generator was asked for.",
    "tone": "Tone the generator was asked for.",
    "policy": "Essential-detail policy that fixed the E/N partition.",
    "confusion": "Confusion injection applied to this twin (null when none).",
    "essential": "E details: list of {attribute, family, subject, relation, value, span}; `span` is an "
    "exact substring of `query`.",
    "non_essential": "N details, same shape; attribute `model_leaked` marks sensitive spans the generator "
    "added beyond the skeleton (found by the judge).",
    "judge": "Consistency judge's re-extraction and decision: verdict, reason, score, E/N recall, the "
    "spans it called essential / non-essential, and residual (leaked) spans.",
    "provenance": "Generator and judge provider specs, template name and sha256, seed, benchgen version.",
}

_DETAIL_KEYS = [f.name for f in DETAIL]


def _detail(d: Any) -> dict[str, str]:
    d = dict(d or {})
    return {k: ("" if d.get(k) is None else str(d.get(k))) for k in _DETAIL_KEYS}


def normalise_row(row: dict[str, Any]) -> dict[str, Any]:
    """Coerce a ``sample_row`` dict onto :data:`ROW_SCHEMA` (missing optional keys become null/empty)."""
    judge = dict(row.get("judge") or {})
    prov = dict(row.get("provenance") or {})

    def s(v: Any) -> str | None:
        return None if v is None else str(v)

    def f(v: Any) -> float | None:
        return None if v is None else float(v)

    out: dict[str, Any] = {
        name: s(row.get(name))
        for name in ROW_SCHEMA.names
        if name not in ("essential", "non_essential", "judge", "provenance")
    }
    out["essential"] = [_detail(x) for x in row.get("essential") or ()]
    out["non_essential"] = [_detail(x) for x in row.get("non_essential") or ()]
    out["judge"] = {
        "verdict": s(judge.get("verdict")),
        "reason": s(judge.get("reason")),
        "score": f(judge.get("score")),
        "e_recall": f(judge.get("e_recall")),
        "n_recall": f(judge.get("n_recall")),
        "essential": [str(x) for x in judge.get("essential") or ()],
        "non_essential": [str(x) for x in judge.get("non_essential") or ()],
        "residual": [str(x) for x in judge.get("residual") or ()],
    }
    seed = prov.get("seed")
    out["provenance"] = {
        "generator": s(prov.get("generator")),
        "judge": s(prov.get("judge")),
        "template": s(prov.get("template")),
        "template_hash": s(prov.get("template_hash")),
        "seed": None if seed is None else int(seed),
        "benchgen_version": s(prov.get("benchgen_version")),
    }
    return out


def to_table(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist([normalise_row(r) for r in rows], schema=ROW_SCHEMA)


def hf_features() -> Any:
    """The ``datasets.Features`` matching :data:`ROW_SCHEMA` (what ``load_dataset`` returns)."""
    from datasets import Features

    return Features.from_arrow_schema(ROW_SCHEMA)


def _type_str(t: pa.DataType) -> str:
    if pa.types.is_list(t):
        return f"list<{_type_str(t.value_type)}>"
    if pa.types.is_struct(t):
        return "struct{" + ", ".join(f"{f.name}: {_type_str(f.type)}" for f in t) + "}"
    return {"string": "string", "double": "float64", "int64": "int64"}.get(str(t), str(t))


def schema_table_md() -> str:
    """A Markdown table of the columns, their Arrow types and meaning."""
    lines = ["| column | type | description |", "|---|---|---|"]
    for f in ROW_SCHEMA:
        t = _type_str(f.type)
        if pa.types.is_list(f.type) and pa.types.is_struct(f.type.value_type):
            t = "list<struct>"
        elif pa.types.is_struct(f.type):
            t = "struct"
        lines.append(f"| `{f.name}` | {t} | {DESCRIPTIONS.get(f.name, '')} |")
    return "\n".join(lines)
