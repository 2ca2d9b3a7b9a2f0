"""Comparing models honestly: paired differences on the items every model answered, paired bootstrap
intervals, exact McNemar tests and Holm's correction across all pairs, with effect sizes (issue 14, part 3).

Inputs are plain mappings ``model -> {item_id: correct}`` where ``correct`` is True/False for an item the
model answered and None (or absent) for one it did not answer (refused, unparsed, not run). Every pairwise
statistic is computed on the **common items**: those every compared model answered, so a partial run never
looks better or worse than a full one through its missing items.

Statistics, each a pure function with a worked example:

* :func:`paired_bootstrap`: difference of accuracies ``acc(a) - acc(b)`` with the percentile 95% interval of
  bootstrap resamples of the *items* (both models' outcomes resampled together, so the pairing is kept;
  Efron & Tibshirani 1993, ch. 13; as in Koehn 2004 for MT).
* :func:`mcnemar_exact`: the exact (binomial) McNemar test on the discordant pairs (McNemar 1947; the exact
  form of Edwards 1948 recommended by Fagerland et al. 2013 for small counts).
* :func:`holm`: Holm's step-down adjustment of the pairwise p-values (Holm 1979), controlling the
  family-wise error rate across all pairs.
* Effect sizes: the accuracy difference itself (a risk difference), Cohen's *h* for two proportions
  (``2·asin(√p1) − 2·asin(√p2)``; Cohen 1988, §6.2) and the discordant odds ratio ``b / c``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

Outcomes = Mapping[str, bool | None]


def common_items(runs: Mapping[str, Outcomes]) -> list[str]:
    """Item ids every model answered (an outcome that is not None), sorted.

    >>> common_items({"a": {"q1": True, "q2": None, "q3": False}, "b": {"q1": False, "q3": True}})
    ['q1', 'q3']
    """
    answered = [{item for item, ok in outcomes.items() if ok is not None} for outcomes in runs.values()]
    return sorted(set.intersection(*answered)) if answered else []


def paired_bootstrap(
    a: Sequence[bool], b: Sequence[bool], samples: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """``acc(a) - acc(b)`` and the percentile 95% interval from resampling the paired items.

    Worked example: a is right on 8 of 10 items, b on 5 of the same 10; the difference is 0.3, and the
    interval, from resampling the 10 pairs, contains it.

    >>> diff, low, high = paired_bootstrap([1] * 8 + [0] * 2, [1] * 5 + [0] * 5)
    >>> round(diff, 4), low <= 0.3 <= high, -1 <= low <= high <= 1
    (0.3, True, True)
    >>> paired_bootstrap([], [])
    (0.0, 0.0, 0.0)
    """
    first, second = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if first.shape != second.shape:
        raise ValueError("paired outcomes must have the same length")
    if not len(first):
        return 0.0, 0.0, 0.0
    differences = first - second
    rng = np.random.default_rng(seed)
    means = differences[rng.integers(0, len(differences), size=(samples, len(differences)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(differences.mean()), float(low), float(high)


def bootstrap_interval(values: Sequence[float], samples: int = 2000, seed: int = 0) -> tuple[float, float]:
    """The percentile 95% interval of the mean of ``values`` (per-item scores) from resampling the items: the
    interval every leaderboard row gets, people's and models' alike.

    >>> low, high = bootstrap_interval([1.0] * 8 + [0.0] * 2)
    >>> low < 0.8 < high, 0 <= low <= high <= 1
    (True, True)
    >>> bootstrap_interval([]), bootstrap_interval([0.5, 0.5])
    ((0.0, 0.0), (0.5, 0.5))
    """
    data = np.asarray(values, dtype=np.float64)
    if not len(data):
        return 0.0, 0.0
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(samples, len(data)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> tuple[int, int, float]:
    """Discordant counts ``(a only right, b only right)`` and the exact two-sided McNemar p-value.

    p = min(1, 2 · P[X ≤ min(n01, n10)]) with X ~ Binomial(n01 + n10, 1/2); 1 when no pair is discordant.
    Worked example by hand: 7 pairs where only a is right, 1 where only b is: n = 8,
    P[X ≤ 1] = (1 + 8) / 256 = 9/256, p = 18/256 = 0.0703125.

    >>> mcnemar_exact([1] * 7 + [0] + [1, 0], [0] * 7 + [1] + [1, 0])
    (7, 1, 0.0703125)
    >>> mcnemar_exact([1, 0], [1, 0])
    (0, 0, 1.0)
    """
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    n = only_a + only_b
    if not n:
        return only_a, only_b, 1.0
    tail = sum(math.comb(n, k) for k in range(min(only_a, only_b) + 1)) / 2**n
    return only_a, only_b, min(1.0, 2 * tail)


def holm(p_values: Mapping[str, float]) -> dict[str, float]:
    """Holm-adjusted p-values: sort ascending, multiply the i-th smallest (0-based) by ``m - i``, carry the
    running maximum forward, cap at 1.

    Worked example: p = 0.01, 0.04, 0.03 for three pairs → sorted 0.01, 0.03, 0.04 → 0.03, 0.06, 0.04 →
    running maximum 0.03, 0.06, 0.06.

    >>> holm({"a-b": 0.01, "a-c": 0.04, "b-c": 0.03})
    {'a-b': 0.03, 'a-c': 0.06, 'b-c': 0.06}
    """
    ordered = sorted(p_values.items(), key=lambda item: item[1])
    m, running, adjusted = len(ordered), 0.0, {}
    for index, (key, p) in enumerate(ordered):
        running = max(running, min(1.0, (m - index) * p))
        adjusted[key] = round(running, 12)
    return {key: adjusted[key] for key in p_values}


def cohens_h(p1: float, p2: float) -> float:
    """Cohen's h for two proportions: 2·asin(√p1) − 2·asin(√p2); |h| ≈ 0.2 small, 0.5 medium, 0.8 large.

    >>> round(cohens_h(0.8, 0.5), 4)
    0.6435
    """
    return 2 * math.asin(math.sqrt(p1)) - 2 * math.asin(math.sqrt(p2))


@dataclass(frozen=True)
class PairedComparison:
    model_a: str
    model_b: str
    n: int  # common items, answered by every compared model
    accuracy_a: float
    accuracy_b: float
    difference: float
    ci95: tuple[float, float]
    a_only_right: int
    b_only_right: int
    p_value: float
    p_holm: float
    cohens_h: float
    discordant_odds_ratio: float | None  # b / c; None when c = 0

    def as_dict(self) -> dict:
        out = asdict(self)
        out["ci95"] = list(self.ci95)
        return out


def compare_models(runs: Mapping[str, Outcomes], samples: int = 2000, seed: int = 0, pairwise: bool = False) -> dict:
    """Every pair of models on the items all of them answered, with Holm's correction across the pairs; with
    ``pairwise``, each pair on the items **both** of them answered (its ``n``), so a third run's gaps never
    shrink a pair (``common_items`` still counts the items every run answered).

    >>> runs = {"m1": {"q1": True, "q2": True, "q3": True, "q4": None},
    ...         "m2": {"q1": False, "q2": True, "q3": False, "q4": True},
    ...         "m3": {"q1": True, "q2": False, "q3": True, "q4": True}}
    >>> table = compare_models(runs, samples=200)
    >>> table["common_items"], [(p["model_a"], p["model_b"], p["difference"]) for p in table["pairs"]]
    (3, [('m1', 'm2', 0.6667), ('m1', 'm3', 0.3333), ('m2', 'm3', -0.3333)])
    >>> [(p["model_a"], p["model_b"], p["n"]) for p in compare_models(runs, 200, pairwise=True)["pairs"]]
    [('m1', 'm2', 3), ('m1', 'm3', 3), ('m2', 'm3', 4)]
    """
    items = common_items(runs)
    names = list(runs)
    raw = []
    for first, second in itertools.combinations(names, 2):
        shared = common_items({first: runs[first], second: runs[second]}) if pairwise else items
        a, b = [bool(runs[first][i]) for i in shared], [bool(runs[second][i]) for i in shared]
        diff, low, high = paired_bootstrap(a, b, samples, seed)
        only_a, only_b, p = mcnemar_exact(a, b)
        acc_a = sum(a) / len(a) if a else 0.0
        acc_b = sum(b) / len(b) if b else 0.0
        raw.append((first, second, len(shared), acc_a, acc_b, diff, low, high, only_a, only_b, p))
    adjusted = holm({f"{r[0]}|{r[1]}": r[-1] for r in raw})
    pairs = [
        PairedComparison(
            model_a=first, model_b=second, n=n, accuracy_a=round(acc_a, 4), accuracy_b=round(acc_b, 4),
            difference=round(diff, 4), ci95=(round(low, 4), round(high, 4)), a_only_right=only_a,
            b_only_right=only_b, p_value=round(p, 6), p_holm=round(adjusted[f"{first}|{second}"], 6),
            cohens_h=round(cohens_h(acc_a, acc_b), 4),
            discordant_odds_ratio=round(only_a / only_b, 4) if only_b else None,
        ).as_dict()
        for first, second, n, acc_a, acc_b, diff, low, high, only_a, only_b, p in raw
    ]  # fmt: skip
    answered = {name: sum(1 for ok in runs[name].values() if ok is not None) for name in names}
    return {
        "models": names,
        "common_items": len(items),
        "answered": answered,
        "pairs": pairs,
        "method": "paired bootstrap (items resampled), exact McNemar, Holm across all pairs"
        + ("; each pair on the items both answered" if pairwise else ""),
    }


COMPARISON_COLUMNS = (
    "model A", "model B", "common items", "accuracy A", "accuracy B", "difference", "ci95 low", "ci95 high",
    "A only right", "B only right", "McNemar p", "Holm p", "Cohen's h",
)  # fmt: skip


def comparison_rows(table: Mapping) -> list[dict]:
    """One flat row per pair of :func:`compare_models`' result, for a results table.

    >>> rows = comparison_rows(compare_models({"a": {"q": True}, "b": {"q": False}}, samples=10))
    >>> rows[0]["model A"], rows[0]["model B"], rows[0]["common items"], rows[0]["difference"]
    ('a', 'b', 1, 1.0)
    """
    return [
        {
            "model A": p["model_a"], "model B": p["model_b"], "common items": p["n"],
            "accuracy A": p["accuracy_a"], "accuracy B": p["accuracy_b"], "difference": p["difference"],
            "ci95 low": p["ci95"][0], "ci95 high": p["ci95"][1], "A only right": p["a_only_right"],
            "B only right": p["b_only_right"], "McNemar p": p["p_value"], "Holm p": p["p_holm"],
            "Cohen's h": p["cohens_h"],
        }
        for p in table["pairs"]
    ]  # fmt: skip
