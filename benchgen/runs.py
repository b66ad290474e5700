"""Run directories: append-only JSONL stage outputs, resume, and the run manifest.

A run directory holds ``skeletons.jsonl``, ``drafts.jsonl``, ``verdicts.jsonl``, ``report.json``
and ``run.json`` (the configuration fingerprint). Records are appended one whole line at a time
and flushed + fsync'd per batch, so a killed run loses at most the batch in flight; a torn last
line (from a crash mid-write) is detected and truncated on the next open. Reruns skip ids that
are already present, so a finished run costs nothing to rerun.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from benchgen.errors import ConfigError, DataError
from benchgen.records import dumps


def config_hash(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


def repair_tail(path: Path) -> int:
    """Drop a torn (non-newline-terminated or unparsable) last line; returns bytes removed."""
    if not path.exists() or path.stat().st_size == 0:
        return 0
    data = path.read_bytes()
    cut = len(data)
    if not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
    else:
        last_start = data.rfind(b"\n", 0, len(data) - 1) + 1
        try:
            json.loads(data[last_start:])
        except ValueError:
            cut = last_start
    if cut != len(data):
        with open(path, "r+b") as f:
            f.truncate(cut)
    return len(data) - cut


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    if not path.exists():
        return
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except ValueError as e:
                raise DataError(
                    f"{path}:{lineno}: not valid JSON ({e})",
                    hint="the file is corrupt; delete it to regenerate that stage",
                ) from None


def append_jsonl(path: Path, records: Iterable[Any], batch: int = 256) -> int:
    """Append records as canonical JSON lines; flush + fsync every ``batch`` lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(path, "a", encoding="utf-8") as f:
        for rec in records:
            f.write(dumps(rec) + "\n")
            n += 1
            if n % batch == 0:
                f.flush()
                os.fsync(f.fileno())
        f.flush()
        os.fsync(f.fileno())
    return n


class RunDir:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def file(self, name: str) -> Path:
        return self.path / name

    def open(self, fingerprint: dict[str, Any], fresh: bool = False) -> None:
        """Create or reopen; refuse to mix outputs of a different configuration."""
        self.path.mkdir(parents=True, exist_ok=True)
        meta = self.file("run.json")
        h = config_hash(fingerprint)
        if fresh:
            for p in self.path.glob("*.jsonl"):
                p.unlink()
        elif meta.exists():
            old = json.loads(meta.read_text()).get("config_hash")
            if old != h:
                raise ConfigError(
                    f"run directory {self.path} holds a run with a different configuration ({old} != {h})",
                    hint="pass --fresh to discard it, or choose another --run-dir",
                )
        meta.write_text(
            json.dumps({"config_hash": h, "config": fingerprint}, indent=2, sort_keys=True, default=str)
            + "\n"
        )
        for p in self.path.glob("*.jsonl"):
            repair_tail(p)

    def resume(
        self, name: str, items: Sequence[Any], produce: Callable[[list[Any]], Iterable[Any]]
    ) -> dict[str, dict[str, Any]]:
        """The records of stage file ``name`` by id, after appending ``produce(todo)`` for the
        ``items`` (anything with an ``id``) not in it yet. A finished stage costs one read."""
        records = {r["id"]: r for r in read_jsonl(self.file(name))}
        todo = [x for x in items if x.id not in records]
        if todo:
            append_jsonl(self.file(name), produce(todo))
            records = {r["id"]: r for r in read_jsonl(self.file(name))}
        return records

    def write_json(self, name: str, payload: Any) -> Path:
        p = self.file(name)
        tmp = p.with_suffix(p.suffix + ".tmp")
        tmp.write_text(json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
        os.replace(tmp, p)
        return p
