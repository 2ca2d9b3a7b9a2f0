"""Difficulty levels decided by a voting panel of models (paper section 3.1), and composing a benchmark
from a target mix of levels and categories.

The paper's six-model panel: 0 fully correct answers -> super hard, 1-2 -> hard, 3-4 -> medium, "more than
five" -> easy. Read literally, five correct answers would have no level; we read it as "five or more"
(5-6 -> easy), the only reading that covers every count.

Other panel sizes m scale by the fraction f = c / m of models answering fully correctly (score 1):
f = 0 -> super hard, 0 < f <= 1/3 -> hard, 1/3 < f <= 2/3 -> medium, f > 2/3 -> easy. For m = 6 this gives
exactly the paper's bands; for m = 3: 1 hard, 2 medium, 3 easy.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from backend.errors import ValidationError
from backend.vqa.categories import CATEGORIES
from backend.vqa.items import VqaItem

LEVELS: tuple[str, ...] = ("super_hard", "hard", "medium", "easy")
LEVEL_LABELS = {"super_hard": "super hard", "hard": "hard", "medium": "medium", "easy": "easy"}


def difficulty_level(correct_votes: int, panel_size: int) -> str:
    """The level for ``correct_votes`` fully correct answers out of ``panel_size`` models.

    >>> [difficulty_level(c, 6) for c in range(7)]
    ['super_hard', 'hard', 'hard', 'medium', 'medium', 'easy', 'easy']
    >>> [difficulty_level(c, 3) for c in range(4)]
    ['super_hard', 'hard', 'medium', 'easy']
    """
    if panel_size < 1 or not 0 <= correct_votes <= panel_size:
        raise ValidationError(f"{correct_votes} correct votes out of a panel of {panel_size} is impossible")
    if correct_votes == 0:
        return "super_hard"
    if 3 * correct_votes <= panel_size:
        return "hard"
    if 3 * correct_votes <= 2 * panel_size:
        return "medium"
    return "easy"


def level_thresholds(panel_size: int) -> dict[str, list[int]]:
    """Which vote counts give which level, for display (e.g. the settings help or the chart legend)."""
    bands: dict[str, list[int]] = {level: [] for level in LEVELS}
    for votes in range(panel_size + 1):
        bands[difficulty_level(votes, panel_size)].append(votes)
    return bands


def level_distribution(items: Iterable[VqaItem]) -> dict[str, int]:
    """Items per level, plus ``unrated`` for items the panel has not voted on."""
    counts = Counter(item.difficulty_level or "unrated" for item in items)
    return {level: counts.get(level, 0) for level in (*LEVELS, "unrated")}


@dataclass(frozen=True)
class Composition:
    item_ids: list[str]
    targets: dict[str, dict[str, int]]  # level -> category -> wanted
    achieved: dict[str, dict[str, int]]
    shortfall: int


def _largest_remainder(total: int, weights: Mapping[str, float]) -> dict[str, int]:
    """Split ``total`` in proportion to ``weights`` into integers summing to ``total``.

    >>> _largest_remainder(10, {"a": 1, "b": 1, "c": 1})
    {'a': 4, 'b': 3, 'c': 3}
    """
    positive = {k: float(w) for k, w in weights.items() if w and w > 0}
    if not positive or total <= 0:
        return {k: 0 for k in weights}
    whole = sum(positive.values())
    exact = {k: total * w / whole for k, w in positive.items()}
    counts = {k: int(v) for k, v in exact.items()}
    for key in sorted(exact, key=lambda k: (counts[k] - exact[k], list(exact).index(k)))[
        : total - sum(counts.values())
    ]:
        counts[key] += 1
    return {k: counts.get(k, 0) for k in weights}


def compose_benchmark(
    items: Sequence[VqaItem],
    total: int,
    level_mix: Mapping[str, float],
    category_mix: Mapping[str, float] | None = None,
    seed: int = 0,
) -> Composition:
    """Pick ``total`` rated items so that levels follow ``level_mix`` and, within each level, categories
    follow ``category_mix`` (default: the categories' shares among the candidates). Weights need not sum
    to 1. A cell with too few items takes what there is; the level is then topped up from its other
    categories, and whatever is still missing is reported as ``shortfall``. Random within cells (``seed``).
    """
    unknown = [k for k in level_mix if k not in LEVELS] + [k for k in (category_mix or {}) if k not in CATEGORIES]
    if unknown:
        raise ValidationError(f"unknown level or category in the target mix: {', '.join(map(str, unknown))}")
    if total < 1:
        raise ValidationError("the benchmark needs at least one item")
    rng = random.Random(seed)
    pools: dict[str, dict[str, list[VqaItem]]] = {lv: {c: [] for c in CATEGORIES} for lv in LEVELS}
    for item in items:
        if item.difficulty_level in pools:
            pools[item.difficulty_level][item.category].append(item)
    for cells in pools.values():
        for pool in cells.values():
            rng.shuffle(pool)
    if category_mix is None:
        shares = Counter(i.category for i in items if i.difficulty_level)
        category_mix = {c: shares.get(c, 0) for c in CATEGORIES}
    level_counts = _largest_remainder(total, {lv: level_mix.get(lv, 0) for lv in LEVELS})
    chosen: list[str] = []
    targets: dict[str, dict[str, int]] = {}
    achieved: dict[str, dict[str, int]] = {}
    for level in LEVELS:
        targets[level] = _largest_remainder(level_counts[level], {c: category_mix.get(c, 0) for c in CATEGORIES})
        taken = {c: pools[level][c][: targets[level][c]] for c in CATEGORIES}
        missing = level_counts[level] - sum(len(v) for v in taken.values())
        spare = [i for c in CATEGORIES for i in pools[level][c][len(taken[c]) :]]
        for item in spare[: max(0, missing)]:
            taken[item.category].append(item)
        achieved[level] = {c: len(v) for c, v in taken.items()}
        chosen += [i.id for c in CATEGORIES for i in taken[c]]
    return Composition(chosen, targets, achieved, total - len(chosen))
