"""LLM generation of a surface query for a skeleton (prompts in ``prompts/generator/``).

* :func:`build_generation_request` renders ``system.j2`` / ``user.j2`` (Jinja, StrictUndefined)
  for a skeleton dict (``Skeleton.to_dict()``) and an optional taxonomy (dict or the pydantic
  ``Taxonomy``; it only adds names and descriptions) into a JSON-mode :class:`Request`.
* :func:`parse_generation` checks the answer: a JSON object with a non-empty ``query`` and a
  ``spans`` entry for every essential and non-essential value, each span occurring verbatim in
  the query. It returns ``(query, spans)`` or a :class:`GenerationFailure` (a ``str`` reason:
  ``unparsed`` | ``missing_query`` | ``missing_spans`` | ``span_missing`` | ``span_not_in_query``,
  with a ``.detail``).
* :func:`generation_parser` adapts it to :func:`benchgen.runner.run_requests`' ``parse``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import jinja2

from benchgen.assets import asset_dir
from benchgen.errors import ConfigError
from benchgen.providers.base import Completion, Message, Request, extract_json_object

TEMPLATE_DIR = "generator"
TEMPLATE_NAME = "generator/user.j2"
GENERATION_MAX_TOKENS = 1024
GENERATION_TEMPERATURE = 0.8


class GenerationFailure(str):
    """A failure reason (compares equal to the bare reason) carrying a human-readable ``detail``."""

    detail: str

    def __new__(cls, reason: str, detail: str = "") -> GenerationFailure:
        obj = super().__new__(cls, reason)
        obj.detail = detail
        return obj


@lru_cache(maxsize=2)
def _env(folder: str | None = None) -> jinja2.Environment:
    root = folder or str(asset_dir("prompts"))
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(root),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        keep_trailing_newline=False,
    )


def _render(name: str, folder: str | None, **ctx: Any) -> str:
    try:
        return _env(folder).get_template(name).render(**ctx).strip()
    except jinja2.TemplateNotFound:
        raise ConfigError(f"generator prompt {name!r} not found under prompts/") from None
    except jinja2.TemplateError as exc:
        raise ConfigError(f"generator prompt {name!r} failed to render: {exc}") from None


def generation_template_hash(folder: str | None = None) -> str:
    """sha256 of the generator prompt sources (system + user), for provenance."""
    root = _env(folder).loader
    assert isinstance(root, jinja2.FileSystemLoader)
    h = hashlib.sha256()
    for name in (f"{TEMPLATE_DIR}/system.j2", f"{TEMPLATE_DIR}/user.j2"):
        source, _, _ = root.get_source(_env(folder), name)
        h.update(source.encode("utf-8"))
    return h.hexdigest()


def _lookup(taxonomy: Any, kind: str, item_id: str) -> dict[str, str]:
    """``{"name", "description"}`` of a taxonomy entry, falling back to the id."""
    name = str(item_id).replace("_", " ")
    entry: Any = None
    if taxonomy is not None:
        data = taxonomy.model_dump() if hasattr(taxonomy, "model_dump") else taxonomy
        entries = data.get(kind) or [] if isinstance(data, Mapping) else []
        entry = next((e for e in entries if isinstance(e, Mapping) and e.get("id") == item_id), None)
    if entry is None:
        return {"name": name, "description": ""}
    desc = entry.get("description") or entry.get("rationale") or ""
    return {"name": str(entry.get("name") or name), "description": str(desc)}


def skeleton_values(skeleton: Mapping[str, Any]) -> list[str]:
    """Every detail value of a skeleton, essential first, without duplicates."""
    out: list[str] = []
    for d in [*(skeleton.get("essential") or []), *(skeleton.get("non_essential") or [])]:
        v = str(d["value"])
        if v not in out:
            out.append(v)
    return out


def build_generation_request(
    skeleton: Mapping[str, Any], taxonomy: Any = None, *, prompts_dir: str | None = None
) -> Request:
    """The JSON-mode Request asking an LLM to write the query for ``skeleton``."""
    values = skeleton_values(skeleton)
    task = _lookup(taxonomy, "tasks", skeleton["task_type"])
    if taxonomy is not None and not task["description"]:
        task["description"] = ""
    ctx = {
        "domain": _lookup(taxonomy, "domains", skeleton["domain"]),
        "task": task,
        "subject": {
            **_lookup(taxonomy, "subjects", skeleton["subject"]),
            "relation": skeleton.get("relation") or skeleton["subject"],
        },
        "style": _lookup(taxonomy, "styles", skeleton["style"]),
        "tone": _lookup(taxonomy, "tones", skeleton["tone"]),
        "essential": list(skeleton.get("essential") or []),
        "non_essential": list(skeleton.get("non_essential") or []),
        "values": values,
        "values_json": json.dumps(values, ensure_ascii=False),
        "skeleton": skeleton,
    }
    return Request(
        messages=(Message("user", _render(f"{TEMPLATE_DIR}/user.j2", prompts_dir, **ctx)),),
        system=_render(f"{TEMPLATE_DIR}/system.j2", prompts_dir, **ctx),
        temperature=GENERATION_TEMPERATURE,
        max_tokens=GENERATION_MAX_TOKENS,
        json_mode=True,
        item_id=str(skeleton.get("id", "")),
    )


def parse_generation(
    completion_text: str, skeleton: Mapping[str, Any]
) -> tuple[str, dict[str, str]] | GenerationFailure:
    """``(query, spans)`` with one span per skeleton value, or a :class:`GenerationFailure`."""
    data = extract_json_object(completion_text)
    if data is None:
        return GenerationFailure("unparsed", "the answer is not a JSON object")
    query = data.get("query")
    if not isinstance(query, str) or not query.strip():
        return GenerationFailure("missing_query", "no non-empty string 'query'")
    raw_spans = data.get("spans")
    if not isinstance(raw_spans, Mapping):
        return GenerationFailure("missing_spans", "no 'spans' object")
    folded = {str(k).strip().lower(): v for k, v in raw_spans.items()}
    spans: dict[str, str] = {}
    for value in skeleton_values(skeleton):
        span = raw_spans.get(value, folded.get(value.strip().lower()))
        if not isinstance(span, str) or not span.strip():
            return GenerationFailure("span_missing", f"no span for value {value!r}")
        if span not in query:
            return GenerationFailure(
                "span_not_in_query", f"span {span!r} for value {value!r} is not in the query"
            )
        spans[value] = span
    return query, spans


def generation_parser(skeletons: Mapping[str, Mapping[str, Any]]) -> Any:
    """A ``parse(id, completion)`` for the runner: output ``{"query", "spans"}``, else ItemFailure."""
    from benchgen.runner import ItemFailure

    def parse(item_id: str, completion: Completion) -> dict[str, Any]:
        result = parse_generation(completion.text, skeletons[item_id])
        if isinstance(result, GenerationFailure):
            raise ItemFailure(str(result), result.detail)
        query, spans = result
        return {"query": query, "spans": spans}

    return parse
