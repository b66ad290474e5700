"""``croissant.json``: Croissant 1.0 JSON-LD (+ RAI extension) describing every config of a release.

One ``cr:FileSet`` per config (its Parquet shards, relative to the release root) and one
``cr:RecordSet`` per config whose fields mirror :data:`benchgen.release.schema.ROW_SCHEMA`: lists of
structs become ``repeated`` fields with ``subField``s, structs become ``subField``s read through
``jsonPath``, and a ``split`` field is parsed from the shard file name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from benchgen.release.card import limitations_md
from benchgen.release.citations import release_bibtex
from benchgen.release.context import ReleaseContext
from benchgen.release.manifest import dumps
from benchgen.release.options import KNOWN_CONFIGS
from benchgen.release.schema import DESCRIPTIONS, ROW_SCHEMA

CROISSANT = "croissant.json"

CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "equivalentProperty": "cr:equivalentProperty",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}

_LICENSE_URLS = {
    "cc-by-4.0": "https://creativecommons.org/licenses/by/4.0/",
    "cc-by-sa-4.0": "https://creativecommons.org/licenses/by-sa/4.0/",
    "cc-by-nc-4.0": "https://creativecommons.org/licenses/by-nc/4.0/",
    "cc0-1.0": "https://creativecommons.org/publicdomain/zero/1.0/",
    "apache-2.0": "https://www.apache.org/licenses/LICENSE-2.0",
    "mit": "https://opensource.org/licenses/MIT",
}


def _data_type(t: pa.DataType) -> str:
    if pa.types.is_integer(t):
        return "sc:Integer"
    if pa.types.is_floating(t):
        return "sc:Float"
    if pa.types.is_boolean(t):
        return "sc:Boolean"
    return "sc:Text"


def _field(
    rs: str, fileset: str, name: str, t: pa.DataType, *, column: str, path: list[str], description: str = ""
) -> dict[str, Any]:
    """A Croissant field for a column (``path`` empty) or a member of a struct column."""
    fid = "/".join([rs, column, *path])
    src: dict[str, Any] = {"fileSet": {"@id": fileset}, "extract": {"column": column}}
    if path:
        src["transform"] = {"jsonPath": path[-1]}
    f: dict[str, Any] = {"@type": "cr:Field", "@id": fid, "name": fid}
    if description:
        f["description"] = description
    if pa.types.is_list(t) and pa.types.is_struct(t.value_type):
        f["repeated"] = True
        f["subField"] = [_sub(rs, fileset, fid, sf, column, path) for sf in t.value_type]
    elif pa.types.is_struct(t):
        f["subField"] = [
            _field(rs, fileset, sf.name, sf.type, column=column, path=[*path, sf.name]) for sf in t
        ]
    else:
        if pa.types.is_list(t):
            f["repeated"] = True
            t = t.value_type
        f["dataType"] = _data_type(t)
        f["source"] = src
    return f


def _sub(rs: str, fileset: str, parent: str, sf: pa.Field, column: str, path: list[str]) -> dict[str, Any]:
    """A member of a list-of-struct column: read as the list of that member's values."""
    fid = f"{parent}/{sf.name}"
    return {
        "@type": "cr:Field",
        "@id": fid,
        "name": fid,
        "dataType": _data_type(sf.type),
        "source": {
            "fileSet": {"@id": fileset},
            "extract": {"column": column},
            "transform": {"jsonPath": sf.name},
        },
    }


def record_set(cfg: str) -> dict[str, Any]:
    fileset = f"parquet-{cfg}"
    fields: list[dict[str, Any]] = [
        {
            "@type": "cr:Field",
            "@id": f"{cfg}/split",
            "name": f"{cfg}/split",
            "dataType": "sc:Text",
            "description": "Split of the row (train, validation or test), from the shard file name.",
            "source": {
                "fileSet": {"@id": fileset},
                "extract": {"fileProperty": "filename"},
                "transform": {"regex": r"^(train|validation|test)-\d{5}-of-\d{5}\.parquet$"},
            },
        }
    ]
    for col in ROW_SCHEMA:
        fields.append(
            _field(
                cfg,
                fileset,
                col.name,
                col.type,
                column=col.name,
                path=[],
                description=DESCRIPTIONS.get(col.name, ""),
            )
        )
    return {
        "@type": "cr:RecordSet",
        "@id": cfg,
        "name": cfg,
        "description": KNOWN_CONFIGS.get(cfg, ""),
        "key": {"@id": f"{cfg}/id"},
        "field": fields,
    }


def croissant_document(ctx: ReleaseContext) -> dict[str, Any]:
    gen, judge = ctx.model("generator"), ctx.model("judge")
    c = ctx.card
    url = c.homepage or f"https://huggingface.co/datasets/{ctx.repo_id}"
    doc: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "name": ctx.name,
        "alternateName": ctx.pretty_name,
        "description": (ctx.recipe.description or "").strip()
        or "A contextual-integrity privacy benchmark built with benchgen.",
        "version": ctx.version,
        "license": _LICENSE_URLS.get(c.license, c.license),
        "url": url,
        "citeAs": release_bibtex(ctx),
        "keywords": list(c.tags),
        "inLanguage": list(c.language),
        "isLiveDataset": False,
        "distribution": [
            {
                "@type": "cr:FileSet",
                "@id": f"parquet-{cfg}",
                "name": f"parquet-{cfg}",
                "description": f"Parquet shards of the `{cfg}` config.",
                "encodingFormat": "application/x-parquet",
                "includes": f"data/{cfg}/*.parquet",
            }
            for cfg in ctx.configs
        ],
        "recordSet": [record_set(cfg) for cfg in ctx.configs],
        # Responsible-AI extension (http://mlcommons.org/croissant/RAI/)
        "rai:hasSyntheticData": True,
        "rai:dataCollection": (
            f"Reverse synthesis: contextual-integrity skeletons sampled by benchgen (seed {ctx.seed}) with a "
            f"fixed partition into task-essential (E) and non-essential sensitive (N) details, rendered into "
            f"queries by the generator {gen} and validated by a different judge model, {judge}."
        ),
        "rai:dataCollectionType": ["Synthetic data generation"],
        "rai:machineAnnotationTools": [
            f"generator: {gen}",
            f"judge: {judge}",
            f"benchgen {ctx.benchgen_version}",
        ],
        "rai:dataAnnotationProtocol": [
            "E/N labels are fixed by the skeleton before generation; the judge re-extracts them from the "
            "query alone and an acceptance rule keeps passes (general) and soft-fails (hard_mining)."
        ],
        "rai:personalSensitiveInformation": [
            "Synthetic only: queries contain made-up sensitive attributes (health, beliefs, sexuality, "
            "ethnicity, finances, location, ...) about fictional people; no real person's data is included."
        ],
        "rai:dataBiases": [
            "Values come from curated value banks and the taxonomy's domains and tasks; names, places and "
            "conditions reflect those banks. Surface style reflects the generator model or templates.",
        ],
        "rai:dataLimitations": [x.removeprefix("- ") for x in limitations_md(ctx).splitlines()],
        "rai:dataUseCases": [
            "Training and evaluating local query rewriters that keep task-essential details and drop "
            "non-essential sensitive ones before delegation to a remote model.",
            "Span-level detection of task-irrelevant sensitive details. Not for re-identification or "
            "profiling, nor for estimating real users' disclosure rates.",
        ],
        "rai:dataReleaseMaintenancePlan": "Immutable, semantically versioned releases documented in a CHANGELOG.",
    }
    date = ctx.release_date
    if date:
        doc["datePublished"] = date
    return doc


def write_croissant(root: Path, ctx: ReleaseContext) -> None:
    (root / CROISSANT).write_text(dumps(croissant_document(ctx)), encoding="utf-8")


def load_records(path: Path, config: str, limit: int | None = None) -> list[dict[str, Any]]:
    """Read records of one config through ``mlcroissant`` (validates the JSON-LD first)."""
    import mlcroissant as mlc

    ds = mlc.Dataset(jsonld=str(path))
    out = []
    for i, rec in enumerate(ds.records(record_set=config)):
        if limit is not None and i >= limit:
            break
        out.append(rec)
    return out
