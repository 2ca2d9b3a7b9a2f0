"""The ``random`` model draws indefinite answers exactly as the VQA leaderboard's analytic random row assumes."""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction

from scipy.stats import chisquare

from backend.inference.backends.random_baseline import RandomBackend, uniform_nonempty_subset
from backend.inference.benchmarks import EvalItem
from backend.inference.registry import ModelSpec
from backend.inference.request import GenerationParams, text
from backend.vqa.scoring import partial_credit, random_expected_score


def test_every_nonempty_subset_is_equally_likely():
    rng = random.Random(1)
    draws = Counter(tuple(uniform_nonempty_subset("ABCD", rng)) for _ in range(15_000))
    assert len(draws) == 15 and () not in draws
    assert chisquare(list(draws.values())).pvalue > 0.001  # uniform over the 15 subsets


def test_sampled_scores_agree_with_the_analytic_random_row_within_sampling_error():
    backend = RandomBackend(ModelSpec("rand", "random", options={"seed": 5}))
    items = [
        EvalItem(f"q{i}", [text("Which?")], ("w", "x", "y", "z"), frozenset("AC"), multi=True) for i in range(6000)
    ]
    answers = backend.answer_items(items, GenerationParams())
    scores = [float(partial_credit([a.strip() for a in answer.split(",")], "AC")) for answer in answers]
    mean = sum(scores) / len(scores)
    expected = float(random_expected_score(4, 2, "indefinite"))
    assert expected == float(Fraction(2, 15))
    spread = (sum((s - mean) ** 2 for s in scores) / (len(scores) - 1)) ** 0.5 / len(scores) ** 0.5
    assert abs(mean - expected) < 4 * spread, (mean, expected, spread)
