"""The registry of example selectors: CoFe's six presets and the comparison baselines.

Every selector takes a prepared bank index and returns, for one test case, :class:`Chosen` examples in the
order it picked them; the combination held-out principle (section 2.1) holds for all of them: an example
with the test case's aiming combination is never chosen. For baselines, ``primitive_coverage``/``structural_similarity`` are the
static equation-1 counts |P(T) ∩ P(T_c)| and |S(T) ∩ S(T_c)|, shown for comparison and used by the orders.

- ``random``: n examples drawn uniformly (seeded per test input);
- ``bm25``: Okapi BM25 over the bank inputs (``bm25s``: sparse precomputed scores, one query scores the
  whole bank in a few milliseconds, where rank-bm25 loops over every document in Python);
- ``embedding``: nearest neighbours by cosine similarity of sentence embeddings (backend.inference.embeddings);
- ``mmr``: maximal marginal relevance (Carbonell & Goldstein 1998) over the same embeddings,
  argmax λ·sim(q, d) − (1−λ)·max_{c∈C} sim(d, c), among the ``pool`` most similar examples.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from backend.errors import ValidationError
from backend.icl.data import IclExample
from backend.icl.index import BankIndex, side_keys
from backend.icl.selection import PRESETS, Chosen, CoFeWeights, cofe_select, excluded_mask
from backend.inference.embeddings import EmbeddingModels, resolve_model

BASELINES = ("random", "bm25", "embedding", "mmr")
SETTINGS_HELP = {
    "random": "random examples (seeded)",
    "bm25": "BM25 nearest neighbours over the inputs",
    "embedding": "sentence-embedding nearest neighbours (cosine)",
    "mmr": "maximal marginal relevance over sentence embeddings (λ, pool)",
}


def setting_names() -> list[str]:
    return [*PRESETS, *BASELINES]


@dataclass
class SelectorSpec:
    """What to run: a preset or baseline name, CoFe weights (for presets; edited copies allowed) and options."""

    name: str = "full_similarity"
    weights: CoFeWeights | None = None
    seed: int = 0
    mmr_lambda: float = 0.5
    mmr_pool: int = 100
    embedding_model: str | None = None


def describe(index: BankIndex, test: IclExample, ids: list[int], deep: bool = True) -> list[Chosen]:
    """Chosen records for examples picked by a baseline: static scores and what each newly covered."""
    p_test = side_keys(test.source, test.target, "P")
    s_test = side_keys(test.source, test.target, "S", deep)
    seen_p: set[str] = set()
    seen_s: set[str] = set()
    result = []
    for example_id in ids:
        example = index.examples[example_id]
        shared_p = side_keys(example.source, example.target, "P") & p_test
        shared_s = side_keys(example.source, example.target, "S", deep) & s_test
        result.append(
            Chosen(
                example_id,
                len(shared_p),
                len(shared_s),
                0.0,
                tuple(sorted(shared_p - seen_p)),
                tuple(sorted(shared_s - seen_s)),
            )
        )
        seen_p |= shared_p
        seen_s |= shared_s
    return result


def _top(scores: np.ndarray, blocked: np.ndarray, n: int) -> list[int]:
    """Indices of the n highest scores outside ``blocked``; ties go to the earlier line."""
    masked = np.where(blocked, -np.inf, scores.astype(np.float64))
    allowed = int((~blocked).sum())
    k = min(n, allowed)
    if k <= 0:
        return []
    order = np.lexsort((np.arange(len(masked)), -masked))
    return [int(i) for i in order[:k]]


class Selector:
    """One prepared selector over one bank. ``embeddings`` holds the sentence encoders (the app's
    ``AppContext.embeddings``; without one, the selector loads its own for the ``embedding_model`` setting)."""

    def __init__(
        self,
        index: BankIndex,
        spec: SelectorSpec,
        cache_dir: Path | None = None,
        embeddings: EmbeddingModels | None = None,
    ):
        self.index, self.spec, self.cache_dir = index, spec, cache_dir
        self.embeddings = embeddings or _own_embeddings()
        self._bm25: Any = None
        self._vectors: np.ndarray | None = None
        self._queries: dict[str, np.ndarray] = {}

    def select(self, test: IclExample, n: int = 10) -> list[Chosen]:
        name = self.spec.name
        if name in PRESETS:
            return cofe_select(self.index, test, self.spec.weights or PRESETS[name], n)
        blocked = excluded_mask(self.index, test)
        if name == "random":
            rng = random.Random(f"{self.spec.seed}:{test.input}")
            allowed = np.flatnonzero(~blocked).tolist()
            ids = rng.sample(allowed, min(n, len(allowed)))
        elif name == "bm25":
            ids = _top(self._bm25_scores(test.input), blocked, n)
        elif name == "embedding":
            ids = _top(self.bank_vectors() @ self.query_vector(test.input), blocked, n)
        elif name == "mmr":
            ids = self._mmr(test.input, blocked, n)
        else:
            raise ValidationError(f"unknown selector {name!r}; choose one of {', '.join(setting_names())}")
        return describe(self.index, test, ids)

    # -- BM25
    def _bm25_scores(self, query: str) -> np.ndarray:
        import bm25s

        if self._bm25 is None:
            corpus = bm25s.tokenize([e.input for e in self.index.examples], stopwords=None, show_progress=False)
            retriever = bm25s.BM25()
            retriever.index(corpus, show_progress=False)
            self._bm25 = retriever
        tokens = bm25s.tokenize([query], stopwords=None, show_progress=False, return_ids=False)[0]
        return np.asarray(self._bm25.get_scores(tokens), dtype=np.float64)

    # -- embeddings
    def bank_vectors(self) -> np.ndarray:
        if self._vectors is None:
            self._vectors = cached_bank_vectors(self.index, self.spec.embedding_model, self.cache_dir, self.embeddings)
        return self._vectors

    def query_vector(self, text: str) -> np.ndarray:
        if text in self._queries:
            return self._queries[text]
        return self.embeddings.embed([text], model=self.spec.embedding_model)[0]

    def prepare_queries(self, texts: list[str]) -> None:
        """Embed many test inputs in batches up front (a batch build), for the embedding selectors."""
        if self.spec.name not in {"embedding", "mmr"} or not texts:
            return
        self.bank_vectors()
        unique = sorted(set(texts))
        vectors = self.embeddings.embed(unique, model=self.spec.embedding_model)
        self._queries.update(zip(unique, vectors, strict=True))

    def _mmr(self, query: str, blocked: np.ndarray, n: int) -> list[int]:
        vectors = self.bank_vectors()
        relevance = vectors @ self.query_vector(query)
        pool = _top(relevance, blocked, max(n, self.spec.mmr_pool))
        return mmr_order(relevance[pool], vectors[pool] @ vectors[pool].T, n, self.spec.mmr_lambda, pool)


def mmr_order(relevance: np.ndarray, similarity: np.ndarray, n: int, lam: float, labels: list[int]) -> list[int]:
    """Greedy maximal marginal relevance over a candidate pool; ties go to the earlier pool entry.

    >>> rel = np.array([0.9, 0.85, 0.5])
    >>> sim = np.array([[1.0, 0.95, 0.1], [0.95, 1.0, 0.2], [0.1, 0.2, 1.0]])
    >>> mmr_order(rel, sim, 2, 0.5, [10, 11, 12])
    [10, 12]
    """
    chosen: list[int] = []
    redundancy = np.full(len(relevance), -np.inf)
    available = np.ones(len(relevance), dtype=bool)
    for _ in range(min(n, len(relevance))):
        penalty = np.where(np.isinf(redundancy), 0.0, redundancy)
        score = np.where(available, lam * relevance - (1 - lam) * penalty, -np.inf)
        best = int(np.argmax(score))
        chosen.append(best)
        available[best] = False
        redundancy = np.maximum(redundancy, similarity[best])
    return [labels[i] for i in chosen]


def _own_embeddings() -> EmbeddingModels:
    from backend.settings import load_settings

    return EmbeddingModels(load_settings().embedding_model)


def cached_bank_vectors(
    index: BankIndex, model: str | None, cache_dir: Path | None, embeddings: EmbeddingModels
) -> np.ndarray:
    """Embeddings of the bank inputs, stored as .npy under ``cache_dir`` keyed by bank and model."""
    model_name = model or embeddings.default
    key = hashlib.sha256(f"{index.fingerprint}|{resolve_model(model_name)}".encode()).hexdigest()[:16]
    path = cache_dir / f"bank-{key}.npy" if cache_dir is not None else None
    if path is not None and path.is_file():
        return np.load(path)
    vectors = embeddings.embed([e.input for e in index.examples], model=model_name)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npy")
        np.save(tmp, vectors)
        tmp.replace(path)
    return vectors


SELECTOR_FACTORIES: Mapping[str, Callable[..., Selector]] = MappingProxyType(
    {name: Selector for name in setting_names()}
)


def make_selector(
    index: BankIndex, spec: SelectorSpec, cache_dir: Path | None = None, embeddings: EmbeddingModels | None = None
) -> Selector:
    """Look a setting up in the registry; an unknown name fails loudly with the valid ones. ``embeddings``:
    the app's encoders (``AppContext.embeddings``); without it the selector loads its own."""
    if spec.name not in SELECTOR_FACTORIES:
        raise ValidationError(f"unknown setting {spec.name!r}; choose one of {', '.join(setting_names())}")
    return SELECTOR_FACTORIES[spec.name](index, spec, cache_dir, embeddings)
