"""Partial-credit scoring of paper section 3.2, aggregation per category, dimension and overall, and the
exact expected score of a uniformly random answer.

Per question q with correct set A and selected set P::

    s_q = 1            if P = A
        = |P| / |A|    if P is a non-empty strict subset of A (under-selection)
        = 0            otherwise (a wrong option selected, over-selection, or nothing selected)

The paper's overall ACC = sum_m sum_t s_q * |T_t| / |D_d| weights each category by its number of questions,
which is the mean of s_q over all questions; per-category and per-dimension scores are means over their
questions. A question with no prediction scores 0 (an empty selection).

Random choice: a single-choice question is answered by one letter drawn uniformly, so its expected score is
1/n for n options. An indefinite-choice question is answered by a subset drawn uniformly from the 2^n - 1
NON-EMPTY subsets of its n options (a random answerer always selects something). Summing s over the
non-empty subsets of A gives sum_k C(a, k) * k / a = 2^(a-1), so its expected score is 2^(a-1) / (2^n - 1)
for a correct options.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from backend.vqa.categories import CATEGORIES, DIMENSIONS
from backend.vqa.items import VqaItem


def partial_credit(predicted: Iterable[str], correct: Iterable[str]) -> Fraction:
    """s_q of paper section 3.2.

    >>> [str(partial_credit(p, "AC")) for p in ("AC", "A", "ABC", "B", "")]
    ['1', '1/2', '0', '0', '0']
    """
    selected, key = set(predicted), set(correct)
    if not key:
        raise ValueError("an item without correct options cannot be scored")
    if selected == key:
        return Fraction(1)
    if selected and selected < key:
        return Fraction(len(selected), len(key))
    return Fraction(0)


def random_expected_score(n_options: int, n_correct: int, choice_type: str) -> Fraction:
    """The exact expected s_q of a uniformly random answer (see the module docstring for the draw).

    >>> [str(random_expected_score(4, 1, "single")), str(random_expected_score(4, 2, "indefinite")),
    ...  str(random_expected_score(2, 1, "indefinite"))]
    ['1/4', '2/15', '1/3']
    """
    if choice_type == "single":
        return Fraction(1, n_options)
    return Fraction(2 ** (n_correct - 1), 2**n_options - 1)


def item_random_score(item: VqaItem) -> Fraction:
    return random_expected_score(len(item.options), len(item.answer), item.choice_type)


@dataclass(frozen=True)
class ScoreTable:
    """Scores in [0, 1]; a category or dimension without items is None."""

    overall: float | None
    dimensions: dict[str, float | None]
    categories: dict[str, float | None]
    questions: int
    answered: int

    def as_dict(self) -> dict:
        return {
            "overall": self.overall,
            "dimensions": self.dimensions,
            "categories": self.categories,
            "questions": self.questions,
            "answered": self.answered,
        }


def _mean(values: list[Fraction]) -> float | None:
    return float(sum(values) / len(values)) if values else None


def aggregate(
    items: Iterable[VqaItem], item_scores: Mapping[str, Fraction | float], answered: int | None = None
) -> ScoreTable:
    """Question-weighted means of per-item scores (an item missing from ``item_scores`` scores 0)."""
    items = list(items)
    by_category: dict[str, list[Fraction]] = {c: [] for c in CATEGORIES}
    for item in items:
        by_category[item.category].append(Fraction(item_scores.get(item.id, 0)))
    dimensions = {dim: _mean([s for c in cats for s in by_category[c]]) for dim, cats in DIMENSIONS.items()}
    every = [s for scores in by_category.values() for s in scores]
    answered = sum(1 for i in items if i.id in item_scores) if answered is None else answered
    return ScoreTable(_mean(every), dimensions, {c: _mean(v) for c, v in by_category.items()}, len(items), answered)


def score_predictions(items: Iterable[VqaItem], predictions: Mapping[str, Iterable[str]]) -> ScoreTable:
    """Score a model's (or a person's) selected letters per item id.

    >>> from backend.vqa.items import make_item
    >>> a = make_item(category="Obj-P", question="q", options=["x", "y"], answer="A", choice_type="single",
    ...               images=["i.png"], item_id="a")
    >>> b = make_item(category="Prob", question="q", options=["w", "x", "y", "z"], answer="AB",
    ...               choice_type="indefinite", images=["i.png"], item_id="b")
    >>> table = score_predictions([a, b], {"a": ["A"], "b": ["B"]})
    >>> table.overall, table.dimensions["Perception"], table.dimensions["Probing"], table.dimensions["Reasoning"]
    (0.75, 1.0, 0.5, None)
    """
    items = list(items)
    scores = {i.id: partial_credit(predictions[i.id], i.answer) for i in items if i.id in predictions}
    return aggregate(items, scores)


def random_table(items: Iterable[VqaItem]) -> ScoreTable:
    """The random-choice row: exact expected scores, aggregated like any run."""
    items = list(items)
    return aggregate(items, {i.id: item_random_score(i) for i in items})
