"""Deterministic Parquet shards: ``data/<config>/<split>-0000i-of-0000N.parquet``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from benchgen.release.schema import ROW_SCHEMA, to_table


@dataclass(frozen=True)
class SplitFiles:
    config: str
    split: str
    files: tuple[str, ...]  # paths relative to the release root, posix
    num_examples: int
    num_bytes: int  # Arrow in-memory size (what `datasets` reports as num_bytes)


def shard_name(split: str, i: int, n: int) -> str:
    return f"{split}-{i:05d}-of-{n:05d}.parquet"


def write_split(
    root: Path,
    config: str,
    split: str,
    rows: list[dict[str, Any]],
    *,
    max_shard_bytes: int,
    compression: str = "zstd",
) -> SplitFiles:
    """Write one split as one or more shards of at most ~``max_shard_bytes`` Arrow bytes each.

    An empty split still gets one (empty) shard with the full schema, so every config always has
    every split and loaders see the same features everywhere.
    """
    table = to_table(rows)
    n = max(1, math.ceil(table.nbytes / max_shard_bytes)) if table.num_rows else 1
    n = min(n, max(1, table.num_rows))
    per = math.ceil(table.num_rows / n) if table.num_rows else 0
    folder = root / "data" / config
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for i in range(n):
        part = table.slice(i * per, per) if table.num_rows else table
        rel = f"data/{config}/{shard_name(split, i, n)}"
        write_table(part, root / rel, compression=compression)
        files.append(rel)
    return SplitFiles(config, split, tuple(files), table.num_rows, table.nbytes)


def write_table(table: pa.Table, path: Path, *, compression: str = "zstd") -> None:
    """Byte-reproducible Parquet: fixed schema, no pandas metadata, fixed writer options."""
    table = table.replace_schema_metadata(None).cast(ROW_SCHEMA)
    # An empty split is a file with the schema and *no* row group: a 0-row row group makes
    # `datasets`' Parquet reader ask for batches of size 0 and fail.
    with pq.ParquetWriter(
        path,
        ROW_SCHEMA,
        compression=None if compression == "none" else compression,
        version="2.6",
        data_page_version="1.0",
        use_dictionary=True,
        write_statistics=True,
    ) as writer:
        if table.num_rows:
            writer.write_table(table, row_group_size=table.num_rows)
