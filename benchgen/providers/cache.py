"""Content-addressed response cache (SQLite, WAL mode).

The key is the sha256 of the provider, model, base URL and :meth:`Request.cache_payload` (messages,
system prompt, temperature, max_tokens, JSON mode) — retry, timeout and concurrency settings are
not part of it, so changing them never invalidates answers. Values are :class:`Completion` dicts.

Location: ``$BENCHGEN_CACHE`` if set, else ``.cache/benchgen`` under the current directory; the
database file is ``responses.sqlite3`` inside it. API keys are never part of a key or a value.
WAL mode lets several processes (e.g. a generate and a judge run) share one cache safely.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from pathlib import Path

from benchgen.providers.base import Completion, ProviderSpec, Request

DEFAULT_CACHE_DIR = Path(".cache") / "benchgen"
DB_NAME = "responses.sqlite3"


def default_cache_dir() -> Path:
    """``$BENCHGEN_CACHE`` or ``./.cache/benchgen``."""
    env = os.environ.get("BENCHGEN_CACHE")
    return Path(env) if env else DEFAULT_CACHE_DIR


def cache_key(spec: ProviderSpec, request: Request) -> str:
    """sha256 hex of everything that determines the answer (and nothing else)."""
    payload = {
        "provider": spec.provider,
        "model": spec.model,
        "base_url": (spec.base_url or "").rstrip("/"),
        "request": request.cache_payload(),
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """A key -> Completion store. Synchronous and fast (sub-millisecond); used from the event loop."""

    def __init__(self, directory: str | Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / DB_NAME
        self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL)"
        )
        self.hits = 0
        self.misses = 0
        self._pending: dict[str, str] = {}
        self._last_flush = time.monotonic()

    def get(self, key: str) -> Completion | None:
        pending = self._pending.get(key)
        if pending is not None:
            self.hits += 1
            return Completion.from_dict(json.loads(pending))
        row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return Completion.from_dict(json.loads(row[0]))

    def put(self, key: str, completion: Completion) -> None:
        """Store an answer. Writes are batched (one transaction per ``FLUSH_EVERY`` entries or
        ``FLUSH_SECONDS``); a crash can lose the last batch, which only costs a re-request — the
        run's JSONL output, not the cache, is the record of what is done."""
        self._pending[key] = json.dumps(completion.to_dict(), sort_keys=True, ensure_ascii=False)
        if len(self._pending) >= self.FLUSH_EVERY or time.monotonic() - self._last_flush > self.FLUSH_SECONDS:
            self.flush()

    FLUSH_EVERY = 256
    FLUSH_SECONDS = 0.5

    def flush(self) -> None:
        """Commit pending writes in one transaction."""
        self._last_flush = time.monotonic()
        if not self._pending:
            return
        now = time.time()
        rows = [(k, v, now) for k, v in self._pending.items()]
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR REPLACE INTO responses (key, value, created) VALUES (?, ?, ?)", rows
            )
        self._pending.clear()

    def __len__(self) -> int:
        self.flush()
        return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        self.flush()
        self._db.close()
