"""Planning baselines: ``nsplan-lite`` (retrieval, after NSPlan), ``bigram-prior`` (blind) and random.

**nsplan-lite** follows NSPlan's first stage and answer reasoner (paper §4 "Neurosymbolic planning" and the
released ``knowledge_retrieval.py`` / ``answer_reasoner.py``), without video:

1. Retrieval. Each knowledge-base sequence gets ``w * bm25 + (1 - w) * cos``: ``bm25`` is the BM25 score
   (library ``bm25s``) of the question's observed action ids against the sequence's action ids, divided by
   the best score for this query (so it lies in [0, 1]); ``cos`` is the highest cosine between the question's
   intent and the sequence's intents (sentence embeddings, :class:`backend.inference.embeddings.EmbeddingModels`). The
   released code mixed 0.5/0.5 when observed actions are given; ``w`` and the number kept (top 10) are settings.
   With no observed action only the intent counts.
2. Reasoning. The kept scores are min-max scaled and soft-maxed into ``p(path)``. For each path,
   ``p(choice | path)`` is the softmax over the six choices of their match with the path's future
   (:func:`future_match`); a choice's score is ``sum_path p(path) p(choice | path)``.

3. Transition knowledge (optional, setting ``nsplan_prior_weight``, default 0.5). The knowledge base's
   action-transition statistics (the ``bigram-prior`` model of the same sequences) are added as
   ``log p(choice) + weight * log p_prior(choice)``, as NSPlan's knowledge base keeps symbolic knowledge of
   which actions follow which (``pre_acts``/``nxt_acts``). The weight was chosen on questions generated
   from the validation split (knowledge base: train only), never on the 510 test questions: pure retrieval
   (weight 0) reached 61% there with the top 10 (85% with the top 100), the blind prior 88%, the mix 89%.

Departures from NSPlan: no I3D video features and no Act-UniVL action detector (the observed actions are
given, as in the text-only setting), no OTAM re-ranking and no rule-based preference for longer sequences,
and the choice-path match is an order-aware overlap of action ids instead of TWED over prototype features.
Exact ties are broken by a seeded random draw (the released code took the first; it counted ties apart).

**bigram-prior** sees neither video nor intent: an interpolated bigram model of action transitions trained
on the same knowledge base (``P(b|a) = l * c(a,b)/c(a) + (1 - l) * P1(b)``, ``P1`` add-one unigram, with
sequence start and end symbols) scores the last observed action followed by each choice and the end.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from backend.planning.knowledge import KBEntry

START, END = "<s>", "</s>"
Embed = Callable[[list[str]], np.ndarray]


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Longest common subsequence.

    >>> lcs_length(["a", "b", "c"], ["a", "c", "b", "c"])
    3
    """
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def future_match(choice: Sequence[str], future: Sequence[str]) -> float:
    """Match of a candidate future with a retrieved future, in [0, 1]: the mean of the share of the choice's
    actions found in the retrieved future (order-free) and the in-order share (LCS / choice length).

    >>> future_match(["a", "b"], ["b", "a", "c"])    # both found; in order only one: (1 + 1/2) / 2
    0.75
    >>> future_match(["a", "x"], ["a", "b"]), future_match([], ["a"])
    (0.5, 0.0)
    """
    if not choice:
        return 0.0
    found = sum(1 for a in choice if a in set(future)) / len(choice)
    return (found + lcs_length(choice, future) / len(choice)) / 2


def _softmax(values: np.ndarray) -> np.ndarray:
    shifted = np.exp(values - values.max())
    return shifted / shifted.sum()


def pick(scores: Sequence[float], seed_key: str) -> int:
    """The best choice; exact ties broken by a random draw seeded with ``seed_key`` (reproducible).

    >>> pick([0.1, 0.7, 0.2], "q1")
    1
    """
    best = max(scores)
    tied = [i for i, s in enumerate(scores) if math.isclose(s, best, rel_tol=0, abs_tol=1e-12)]
    return tied[0] if len(tied) == 1 else random.Random(seed_key).choice(tied)


@dataclass
class NSPlanLite:
    """Retrieval planner over a knowledge base. ``embed`` maps texts to L2-normalised rows."""

    kb: list[KBEntry]
    embed: Embed
    intent_weight: float = 0.5
    top_k: int = 10
    prior: BigramPrior | None = None
    prior_weight: float = 0.0
    _bm25: Any = field(init=False, repr=False)
    _intent_matrix: np.ndarray = field(init=False, repr=False)
    _intent_owner: np.ndarray = field(init=False, repr=False)
    _queries: dict[str, np.ndarray] = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        import bm25s

        self._bm25 = bm25s.BM25()
        self._bm25.index([list(e.actions) for e in self.kb], show_progress=False)
        texts = sorted({t for e in self.kb for t in e.intents})
        index = {t: i for i, t in enumerate(texts)}
        vectors = self.embed(texts) if texts else np.zeros((0, 1), dtype=np.float32)
        rows, owners = [], []
        for position, entry in enumerate(self.kb):
            for t in entry.intents:
                rows.append(index[t])
                owners.append(position)
        self._intent_matrix = vectors[rows] if rows else np.zeros((0, 1), dtype=np.float32)
        self._intent_owner = np.array(owners, dtype=np.int64)

    def prepare(self, intents: Sequence[str]) -> None:
        """Embed the query intents of a batch at once (later look-ups hit the cache)."""
        missing = sorted({t for t in intents if t.strip() and t not in self._queries})
        if missing:
            for text, vector in zip(missing, self.embed(missing), strict=False):
                self._queries[text] = vector

    def intent_similarity(self, intent: str) -> np.ndarray:
        """Per KB entry, the highest cosine between ``intent`` and the entry's intents (0 without intents)."""
        best = np.zeros(len(self.kb), dtype=np.float64)
        if not len(self._intent_owner) or not intent.strip():
            return best
        self.prepare([intent])
        query = self._queries[intent]
        cos = self._intent_matrix @ query
        best[:] = -1.0
        np.maximum.at(best, self._intent_owner, cos)
        best[best == -1.0] = 0.0
        return best

    def retrieve(self, observed: Sequence[str], intent: str) -> list[tuple[KBEntry, float]]:
        """The ``top_k`` entries by mixed score, best first."""
        cos = self.intent_similarity(intent)
        if observed:
            bm25 = np.asarray(self._bm25.get_scores(list(observed)), dtype=np.float64)
            top = bm25.max()
            bm25 = bm25 / top if top > 0 else bm25
            mixed = self.intent_weight * bm25 + (1 - self.intent_weight) * cos
        else:
            mixed = cos
        order = np.argsort(-mixed, kind="stable")[: self.top_k]
        return [(self.kb[i], float(mixed[i])) for i in order]

    def score_choices(self, observed: Sequence[str], intent: str, choices: Sequence[Sequence[str]]) -> list[float]:
        """``sum_path p(path) * p(choice | path)`` for each choice (the released answer reasoner); with a
        ``prior`` and ``prior_weight > 0``, ``log`` of that plus ``prior_weight * log p_prior(choice)``."""
        retrieved = self.retrieve(observed, intent)
        if not retrieved:
            return [1.0 / len(choices)] * len(choices)
        scores = np.array([s for _, s in retrieved])
        if len(scores) > 1 and scores.max() > scores.min():
            scores = (scores - scores.min()) / (scores.max() - scores.min())
        path_p = _softmax(scores)
        total = np.zeros(len(choices))
        for (entry, _), weight in zip(retrieved, path_p, strict=True):
            match = np.array([future_match(c, entry.future) for c in choices])
            total += weight * _softmax(match)
        if self.prior is None or self.prior_weight <= 0:
            return [float(v) for v in total]
        transitions = np.array([self.prior.score(observed, c) for c in choices])
        shifted = transitions - transitions.max()
        log_prior = shifted - np.log(np.exp(shifted).sum())
        return [float(v) for v in np.log(total) + self.prior_weight * log_prior]


class BigramPrior:
    """Interpolated bigram model of action transitions (blind: no video, no intent).

    Worked example: KB [a b], [a b], [a c]. c(a) = 3, c(a,b) = 2; unigram counts over actions and ends
    a:3 b:2 c:1 </s>:3 (9 tokens), vocabulary a b c </s> (4), so P1(b) = (2+1)/(9+4) = 3/13 and
    P(b|a) = 0.8 * 2/3 + 0.2 * 3/13.

    >>> model = BigramPrior([["a", "b"], ["a", "b"], ["a", "c"]], weight=0.8)
    >>> round(model.prob("a", "b"), 6) == round(0.8 * 2 / 3 + 0.2 * 3 / 13, 6)
    True
    >>> model.score(["a"], ["b"]) > model.score(["a"], ["c"])
    True
    """

    def __init__(self, sequences: Sequence[Sequence[str]], weight: float = 0.8):
        self.weight = weight
        self.bigrams: Counter = Counter()
        self.contexts: Counter = Counter()
        self.unigrams: Counter = Counter()
        for seq in sequences:
            tokens = [START, *seq, END]
            for a, b in zip(tokens, tokens[1:], strict=False):
                self.bigrams[(a, b)] += 1
                self.contexts[a] += 1
                self.unigrams[b] += 1
        self.total = sum(self.unigrams.values())
        self.vocabulary = len(self.unigrams)

    def prob(self, a: str, b: str) -> float:
        unigram = (self.unigrams[b] + 1) / (self.total + self.vocabulary)
        if not self.contexts[a]:
            return unigram
        return self.weight * self.bigrams[(a, b)] / self.contexts[a] + (1 - self.weight) * unigram

    def score(self, observed: Sequence[str], choice: Sequence[str]) -> float:
        """log P(choice, end | last observed action)."""
        tokens = [observed[-1] if observed else START, *choice, END]
        return sum(math.log(self.prob(a, b)) for a, b in zip(tokens, tokens[1:], strict=False))


def random_choice(question_id: str, n_choices: int = 6, seed: int = 0) -> int:
    """A uniformly random choice, reproducible per question and seed."""
    return random.Random(f"{seed}:{question_id}").randrange(n_choices)
