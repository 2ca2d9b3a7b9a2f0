"""Paired model comparisons (backend/inference/comparison.py) checked against scipy and by hand."""

from __future__ import annotations

import itertools
import random

from scipy.stats import binomtest

from backend.inference import comparison


def test_exact_mcnemar_equals_scipys_two_sided_binomial_test():
    rng = random.Random(3)
    for _ in range(200):
        n = rng.randint(1, 60)
        a = [rng.random() < 0.6 for _ in range(n)]
        b = [rng.random() < 0.5 for _ in range(n)]
        only_a, only_b, p = comparison.mcnemar_exact(a, b)
        expected = binomtest(only_a, only_a + only_b, 0.5).pvalue if only_a + only_b else 1.0
        assert abs(p - expected) < 1e-12


def test_holm_matches_its_definition_on_every_ordering():
    p = {"x": 0.004, "y": 0.02, "z": 0.03, "w": 0.5}
    adjusted = comparison.holm(p)
    assert adjusted == {"x": 0.016, "y": 0.06, "z": 0.06, "w": 0.5}
    for order in itertools.permutations(p):  # the result does not depend on the order the pairs come in
        assert comparison.holm({k: p[k] for k in order}) == adjusted


def test_pairs_use_only_items_every_model_answered_and_keep_the_pairing():
    runs = {
        "full": {f"q{i}": i % 2 == 0 for i in range(10)},
        "partial": {f"q{i}": (True if i < 4 else None) for i in range(10)},  # answered 4 of 10
    }
    table = comparison.compare_models(runs, samples=500)
    assert table["common_items"] == 4 and table["answered"] == {"full": 10, "partial": 4}
    (pair,) = table["pairs"]
    # on q0..q3, "full" is right on q0 and q2 only: 0.5 against 1.0
    assert (pair["accuracy_a"], pair["accuracy_b"], pair["difference"]) == (0.5, 1.0, -0.5)
    assert (pair["a_only_right"], pair["b_only_right"]) == (0, 2)
    assert pair["ci95"][0] <= -0.5 <= pair["ci95"][1]
    assert pair["discordant_odds_ratio"] == 0.0 and pair["p_holm"] == pair["p_value"] == 0.5


def test_bootstrap_is_reproducible_and_identical_runs_differ_by_nothing():
    a = [True, False, True, True, False, True]
    assert comparison.paired_bootstrap(a, a) == (0.0, 0.0, 0.0)
    assert comparison.paired_bootstrap(a, a[::-1], seed=7) == comparison.paired_bootstrap(a, a[::-1], seed=7)
