"""Statistics for review: Wilcoxon signed-rank, reviewer agreement, semantic similarity of intents.

Thin wrappers over the reference libraries (``scipy.stats.wilcoxon``, ``krippendorff.alpha``,
``sklearn.metrics.cohen_kappa_score``), each with a worked example computed by hand in its docstring.
Heavy imports happen inside the functions.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from backend.errors import ValidationError


def _has_ties(values: np.ndarray) -> bool:
    return len(np.unique(values)) < len(values)


def wilcoxon_signed_rank(x: Sequence[float], y: Sequence[float], alpha: float = 0.05) -> dict[str, Any]:
    """Two-sided Wilcoxon signed-rank test of paired scores (ViLPAct appendix: t = 55.5, p = 0.7979).

    Zero differences are dropped before ranking (Wilcoxon's original rule, scipy's ``zero_method="wilcox"``);
    ``n`` is the number of non-zero pairs, ``n_zero`` the number dropped. The exact null distribution is
    used for n <= 50 without tied |differences|; otherwise the normal approximation with tie correction.

    By hand: differences 1, -2, 3, 0, 4, -2, 5. Drop the zero (n = 6). |d| = 1, 2, 3, 4, 2, 5 get ranks
    1, 2.5, 4, 5, 2.5, 6. W+ = 1 + 4 + 5 + 6 = 16, W- = 2.5 + 2.5 = 5, statistic = min = 5. Ties, so normal:
    mean 6*7/4 = 10.5, variance 6*7*13/24 - (2**3 - 2)/48 = 22.625, z = (5 - 10.5)/sqrt(22.625) = -1.156,
    p = 2 * Phi(-1.156) = 0.248.

    >>> r = wilcoxon_signed_rank([1, 0, 3, 5, 4, 0, 5], [0, 2, 0, 5, 0, 2, 0])
    >>> r["statistic"], r["n"], r["n_zero"], r["method"], round(r["p_value"], 3)
    (5.0, 6, 1, 'approx', 0.248)
    >>> wilcoxon_signed_rank([2, 3, 4, 5, 6], [1, 1, 1, 1, 1])["p_value"]  # all 5 positive, exact: 2/32
    0.0625
    """
    from scipy.stats import wilcoxon

    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValidationError(f"the two columns must be paired: {a.size} and {b.size} values")
    if np.isnan(a).any() or np.isnan(b).any():
        raise ValidationError("the scores contain empty or non-numeric values; remove those pairs first")
    diffs = a - b
    nonzero = diffs[diffs != 0]
    n, n_zero = int(nonzero.size), int(a.size - nonzero.size)
    if n == 0:
        raise ValidationError(f"all {a.size} paired differences are zero; there is nothing to test")
    method = "exact" if n <= 50 and not _has_ties(np.abs(nonzero)) else "approx"
    result = wilcoxon(a, b, zero_method="wilcox", method=method)
    p_value = float(result.pvalue)
    return {
        "statistic": float(result.statistic),
        "p_value": p_value,
        "n_pairs": int(a.size),
        "n": n,
        "n_zero": n_zero,
        "method": method,
        "median_difference": float(np.median(diffs)),
        "reading": _reading(p_value, n, n_zero, float(np.median(diffs)), alpha),
    }


def _reading(p_value: float, n: int, n_zero: int, median_diff: float, alpha: float) -> str:
    zeros = f" ({n_zero} pairs with equal scores were left out)" if n_zero else ""
    if p_value < alpha:
        direction = "higher" if median_diff > 0 else "lower" if median_diff < 0 else "different"
        return (
            f"On {n} pairs{zeros}, the first group's scores are significantly {direction} than the second's "
            f"(p = {p_value:.4g} < {alpha})."
        )
    return (
        f"On {n} pairs{zeros}, there is no significant difference between the two groups "
        f"(p = {p_value:.4g} >= {alpha}); this does not prove they are equal."
    )


def krippendorff_alpha_nominal(matrix: Sequence[Sequence[float]]) -> float | None:
    """Krippendorff's alpha for nominal data; rows are coders, columns items, NaN where a coder did not judge.

    By hand: A = 1 1 0 0, B = 1 0 0 0. Coincidences: o00 = 4, o01 = o10 = 1, o11 = 2; n = 8, n0 = 5, n1 = 3.
    D_o = 2/8 = 0.25, D_e = 2*5*3/(8*7) = 0.5357, alpha = 1 - 0.25/0.5357 = 0.5333.

    >>> round(krippendorff_alpha_nominal([[1, 1, 0, 0], [1, 0, 0, 0]]), 4)
    0.5333
    """
    import krippendorff

    data = np.asarray(matrix, dtype=float)
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    if pairable.sum() == 0 or len(np.unique(data[:, pairable][~np.isnan(data[:, pairable])])) < 2:
        return None  # no item judged twice, or a single value everywhere: alpha is undefined
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


def cohen_kappa(a: Sequence[int], b: Sequence[int]) -> float | None:
    """Cohen's kappa of two raters on the same items.

    By hand: A = 1 1 0 0, B = 1 0 0 0. p_o = 3/4; p_e = 0.5*0.25 + 0.5*0.75 = 0.5; kappa = 0.25/0.5 = 0.5.

    >>> cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0])
    0.5
    """
    from sklearn.metrics import cohen_kappa_score

    if len(a) == 0 or len(set(a) | set(b)) < 2:
        return None
    value = float(cohen_kappa_score(list(a), list(b)))
    return None if math.isnan(value) else value


def mean_pairwise_cosine(vectors: np.ndarray) -> float | None:
    """Mean cosine similarity over all pairs of L2-normalised rows (None for fewer than two rows).

    >>> mean_pairwise_cosine(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]))  # pairs: 0, 1, 0
    0.3333
    """
    if len(vectors) < 2:
        return None
    sims = [float(np.dot(vectors[i], vectors[j])) for i, j in itertools.combinations(range(len(vectors)), 2)]
    return round(sum(sims) / len(sims), 4)
