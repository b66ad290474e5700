"""Append-only JSONL outputs that survive SIGKILL.

* Each record is one line written with a single ``os.write`` on an ``O_APPEND`` descriptor, so a
  line is either wholly in the file or (if the process dies inside the syscall) a torn tail.
  Data handed to ``write`` is in the kernel's page cache at once: SIGKILL cannot lose it.
* ``fsync`` (for power loss) runs in a worker thread at most every ``fsync_interval`` seconds
  and at close, so durability costs no event-loop time per line.
* :func:`load_records` reads an existing output on resume: a torn last line is detected and
  cut off (the file is truncated to the last complete line), duplicate ids keep the first record,
  and records whose ``failure_reason`` is in ``drop_reasons`` (transient ``error`` by default)
  are removed by an atomic rewrite so those ids are requested again without leaving duplicates.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchgen.errors import DataError


def _dumps(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def load_records(path: str | Path, *, drop_reasons: Iterable[str] = ("error",)) -> dict[str, dict[str, Any]]:
    """Records already in ``path`` keyed by id (empty when the file does not exist).

    Repairs the file in place: truncates a torn last line; rewrites it atomically without
    duplicate ids and without records failed for a reason in ``drop_reasons``.
    """
    path = Path(path)
    if not path.exists():
        return {}
    raw = path.read_bytes()
    drop = set(drop_reasons)
    records: dict[str, dict[str, Any]] = {}
    good_end = 0
    rewrite = False
    pos = 0
    while pos < len(raw):
        nl = raw.find(b"\n", pos)
        if nl < 0:  # no newline: a torn tail (the writer always ends a line with \n)
            break
        line = raw[pos:nl]
        pos = nl + 1
        if not line.strip():
            good_end = pos
            continue
        try:
            rec = json.loads(line)
            rid = str(rec["id"])
        except (ValueError, KeyError, TypeError):
            if pos >= len(raw):  # a corrupt *last* line is a torn write: cut it
                break
            raise DataError(
                f"{path}: a line in the middle is not a JSON record: {line[:120]!r}",
                hint="the file was edited or corrupted; fix or delete that line and rerun",
            ) from None
        good_end = pos
        if rid in records or rec.get("failure_reason") in drop:
            rewrite = True
            continue
        records[rid] = rec
    if rewrite:
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as fh:
            fh.write(b"".join(_dumps(r) for r in records.values()))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    elif good_end < len(raw):
        with open(path, "r+b") as fh:
            fh.truncate(good_end)
            fh.flush()
            os.fsync(fh.fileno())
    return records


class JsonlAppender:
    """Append whole JSON lines to a file; fsync in the background (see module docstring)."""

    def __init__(self, path: str | Path, *, fsync_interval: float = 0.5) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.fsync_interval = fsync_interval
        self._dirty = False
        self._last_sync = time.monotonic()
        self._sync_task: asyncio.Task[None] | None = None
        self.lines = 0

    def write(self, record: dict[str, Any]) -> None:
        """Write one record as one line (one syscall); schedule an fsync if one is due."""
        data = _dumps(record)
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
        self.lines += 1
        self._dirty = True
        if time.monotonic() - self._last_sync >= self.fsync_interval:
            self._schedule_sync()

    def _schedule_sync(self) -> None:
        if self._sync_task is not None and not self._sync_task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.sync()
            return
        self._dirty = False
        self._last_sync = time.monotonic()
        self._sync_task = loop.create_task(asyncio.to_thread(os.fsync, self._fd))

    def sync(self) -> None:
        """fsync now (blocking)."""
        os.fsync(self._fd)
        self._dirty = False
        self._last_sync = time.monotonic()

    async def aclose(self) -> None:
        if self._sync_task is not None:
            await self._sync_task
        self.sync()
        os.close(self._fd)
