"""Sentence embeddings kept on disk, so a restarted app does not embed the same texts again.

``nsplan-lite`` embeds every knowledge-base intent (2,400 on the released data) when it is built: 10-25 s on a
2-core machine, most of it the encoder. :class:`EmbeddingCache` is an ``embed`` function for it that stores each
text's vector under ``<data>/cache/embeddings/`` (one ``.npz`` per model, keyed by a hash of the text) and asks the
encoder only for texts it has not seen. A stored vector is the one the encoder returned then, so answers do not
change across restarts. A cache file that cannot be read logs one line and is rebuilt.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from backend.inference.embeddings import EmbeddingModels

log = logging.getLogger(__name__)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """``cache(texts) -> n x d`` L2-normalised rows, as ``embeddings.embed(texts, model)``, remembered on disk."""

    def __init__(self, folder: Path, model: str | None, embeddings: EmbeddingModels) -> None:
        self.model = model
        self.embeddings = embeddings
        self.path = Path(folder) / f"{_digest(model or 'default')[:16]}.npz"
        self._vectors: dict[str, np.ndarray] | None = None
        self._lock = threading.Lock()

    def _load(self) -> dict[str, np.ndarray]:
        if self._vectors is None:
            self._vectors = {}
            if self.path.exists():
                try:
                    with np.load(self.path) as data:
                        self._vectors = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))
                except (OSError, ValueError, KeyError) as exc:
                    log.warning("embedding cache %s unreadable (%s); rebuilding it", self.path, exc)
        return self._vectors

    def _save(self, vectors: dict[str, np.ndarray]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "wb") as handle:
            np.savez(handle, keys=np.array(list(vectors)), vectors=np.stack(list(vectors.values())))
        tmp.replace(self.path)

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return self.embeddings.embed([], model=self.model)
        with self._lock:
            vectors = self._load()
            missing = sorted({t for t in texts if _digest(t) not in vectors})
            if missing:
                for text, vector in zip(missing, self.embeddings.embed(missing, model=self.model), strict=True):
                    vectors[_digest(text)] = vector
                self._save(vectors)
            return np.stack([vectors[_digest(t)] for t in texts])
