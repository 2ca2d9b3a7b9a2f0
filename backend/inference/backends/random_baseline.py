"""``random``: a seeded random baseline. The same seed and item always give the same answer.

Single choice: one uniformly random letter. Indefinite choice: a uniformly random non-empty subset, drawn
exactly as the leaderboard's analytic random row assumes (backend/vqa/scoring.py): each of the 2^n - 1
non-empty subsets of the n options with the same probability.
Free text: a random word of the question. Scores of options are random too (seeded by the request).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from backend.inference.base import OptionScore
from backend.inference.benchmarks import EvalItem
from backend.inference.request import GenerationParams, Request, request_hash, request_text

if TYPE_CHECKING:
    from backend.inference.registry import ModelSpec


def uniform_nonempty_subset(letters: Sequence[str], rng: random.Random) -> list[str]:
    """One of the ``2**n - 1`` non-empty subsets of ``letters``, each equally likely (a number in
    ``1 .. 2**n - 1`` read as a bit mask).

    >>> uniform_nonempty_subset("ABC", random.Random(0))
    ['A', 'B', 'C']
    """
    mask = rng.randrange(1, 2 ** len(letters))
    return [letter for bit, letter in enumerate(letters) if mask >> bit & 1]


class RandomBackend:
    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec
        self.seed = int(spec.options.get("seed", 0))

    def _rng(self, key: str) -> random.Random:
        return random.Random(f"{self.seed}:{key}")

    def answer_items(self, items: Sequence[EvalItem], params: GenerationParams) -> list[str]:
        answers = []
        for item in items:
            rng = self._rng(item.item_id)
            if item.options and item.multi:
                answers.append(", ".join(uniform_nonempty_subset(item.letters, rng)))
            elif item.options:
                answers.append(rng.choice(item.letters))
            else:
                words = request_text(item.request).split() or ["?"]
                answers.append(rng.choice(words))
        return answers

    def generate(self, requests: Sequence[Request], params: GenerationParams) -> list[str]:
        return [self._rng(request_hash(r)).choice("ABCD") for r in requests]

    def score_options(self, request: Request, options: Sequence[str]) -> list[OptionScore]:
        rng = self._rng(request_hash(request))
        scores = []
        for _ in options:
            value = -rng.uniform(0.1, 5.0)
            scores.append(OptionScore(value, value, 1))
        return scores

    def unload(self) -> None:
        return None
