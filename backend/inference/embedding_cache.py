"""Sentence embeddings kept on disk, so a restarted app does not embed the same texts again.

``nsplan-lite`` embeds every knowledge-base intent (2,400 on the released data) when it is built: 10-25 s on a
2-core machine, most of it the encoder. :class:`EmbeddingCache` is an ``embed`` function for it that stores each
text's vector under ``<data>/cache/embeddings/`` (one ``.npz`` per model, keyed by a hash of the text) and asks the
encoder only for texts it has not seen. A stored vector is the one the encoder returned then, so answers do not
change across restarts. A cache file that cannot be read logs one line and is rebuilt.

The very first start has no cache yet, so the vectors of the bundled demo content (the released ViLPAct
knowledge-base and question intents, ``assets/vilpact``) ship in ``assets/embeddings/`` under the same file name
(one ``.npz`` per model, the same text hashes): they seed every cache, so a fresh app answers its first
nsplan-lite question without loading the encoder. ``scripts/bundle_embeddings.py`` writes that file with the
encoder; a test checks it covers the demo content and matches the encoder.
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

#: Vectors shipped with the repository for the demo content (see the module docstring).
BUNDLED = Path(__file__).resolve().parents[2] / "assets" / "embeddings"


def text_key(text: str) -> str:
    """The key of a text in a cache file (SHA-256 of its UTF-8 bytes)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_file_name(model: str | None) -> str:
    """One file per model name (``None``: the default model)."""
    return f"{text_key(model or 'default')[:16]}.npz"


def read_vectors(path: Path) -> dict[str, np.ndarray]:
    """Vectors by text hash from ``path``; an unreadable file logs one line and gives none (it is rebuilt)."""
    try:
        with np.load(path) as data:
            return dict(zip(data["keys"].tolist(), data["vectors"], strict=True))
    except (OSError, ValueError, KeyError) as exc:
        log.warning("embedding cache %s unreadable (%s); rebuilding it", path, exc)
        return {}


def write_vectors(path: Path, vectors: dict[str, np.ndarray], compressed: bool = False) -> None:
    """Write ``vectors`` (by text hash) to ``path`` atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    save = np.savez_compressed if compressed else np.savez
    with open(tmp, "wb") as handle:
        save(handle, keys=np.array(list(vectors)), vectors=np.stack(list(vectors.values())))
    tmp.replace(path)


class EmbeddingCache:
    """``cache(texts) -> n x d`` L2-normalised rows, as ``embeddings.embed(texts, model)``, remembered on disk."""

    def __init__(
        self, folder: Path, model: str | None, embeddings: EmbeddingModels, bundled: Path | None = BUNDLED
    ) -> None:
        self.model = model
        self.embeddings = embeddings
        self.path = Path(folder) / cache_file_name(model)
        self.bundled = bundled / self.path.name if bundled is not None else None
        self._vectors: dict[str, np.ndarray] | None = None
        self._lock = threading.Lock()

    def _load(self) -> dict[str, np.ndarray]:
        if self._vectors is None:
            self._vectors = {}
            for path in (self.bundled, self.path):  # the app's own vectors win over the bundled ones
                if path is not None and path.exists():
                    self._vectors.update(read_vectors(path))
        return self._vectors

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return self.embeddings.embed([], model=self.model)
        with self._lock:
            vectors = self._load()
            missing = sorted({t for t in texts if text_key(t) not in vectors})
            if missing:
                for text, vector in zip(missing, self.embeddings.embed(missing, model=self.model), strict=True):
                    vectors[text_key(text)] = vector
                write_vectors(self.path, vectors)
            return np.stack([vectors[text_key(t)] for t in texts])
