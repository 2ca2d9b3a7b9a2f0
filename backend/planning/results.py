"""Planning results: accuracy with a 95% bootstrap interval, by future length and by scene, and an exact
McNemar test of a model against a baseline (issue 5, "Results").

Inputs are plain mappings ``question_id -> chosen index`` (None: no answer read, counted wrong; a question
absent from the mapping was not asked: a partial run is scored on the questions it has), so the same
functions serve the CLI baselines, the prediction store and human annotators.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from backend.planning.questions import PlanningQuestion


@dataclass(frozen=True)
class Accuracy:
    correct: int
    total: int
    low: float
    high: float

    @property
    def value(self) -> float:
        return self.correct / self.total if self.total else 0.0

    def as_dict(self) -> dict:
        return {
            "accuracy": round(self.value, 4),
            "correct": self.correct,
            "n": self.total,
            "ci95": [round(self.low, 4), round(self.high, 4)],
        }

    def display(self) -> str:
        return f"{100 * self.value:.1f}% [{100 * self.low:.1f}, {100 * self.high:.1f}] (n={self.total})"


def bootstrap_accuracy(outcomes: Sequence[bool], samples: int = 2000, seed: int = 0) -> Accuracy:
    """Accuracy and the percentile 95% interval of ``samples`` bootstrap resamples of the questions.

    >>> acc = bootstrap_accuracy([True] * 30 + [False] * 70)
    >>> acc.value, acc.low < 0.3 < acc.high
    (0.3, True)
    >>> bootstrap_accuracy([]).as_dict()["n"]
    0
    """
    values = np.asarray(outcomes, dtype=np.float64)
    if not len(values):
        return Accuracy(0, 0, 0.0, 0.0)
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(samples, len(values)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return Accuracy(int(values.sum()), len(values), float(low), float(high))


def mcnemar_exact(model: Sequence[bool], baseline: Sequence[bool]) -> dict:
    """Exact (binomial) McNemar test on paired outcomes: b = model right & baseline wrong, c = the reverse,
    p = two-sided ``scipy.stats.binomtest(b, b + c, 0.5)``; p = 1 when there is no discordant pair.

    >>> mcnemar_exact([True] * 10 + [False] * 2, [False] * 10 + [True] * 2)["p_value"] < 0.05
    True
    >>> mcnemar_exact([True, False], [True, False])
    {'model_only': 0, 'baseline_only': 0, 'p_value': 1.0}
    """
    from scipy.stats import binomtest

    b = sum(1 for m, r in zip(model, baseline, strict=True) if m and not r)
    c = sum(1 for m, r in zip(model, baseline, strict=True) if r and not m)
    p = binomtest(b, b + c, 0.5).pvalue if b + c else 1.0
    return {"model_only": b, "baseline_only": c, "p_value": float(p)}


def outcomes(questions: Sequence[PlanningQuestion], answers: Mapping[str, int | None]) -> list[bool]:
    return [answers.get(q.id) == q.answer_index for q in questions]


def length_bucket(question: PlanningQuestion) -> str:
    n = question.future_length
    return str(n) if n <= 3 else "4+"


def breakdown(
    questions: Sequence[PlanningQuestion],
    answers: Mapping[str, int | None],
    key: Callable[[PlanningQuestion], str | None],
    samples: int = 2000,
) -> dict[str, dict]:
    groups: dict[str, list[bool]] = {}
    for q, ok in zip(questions, outcomes(questions, answers), strict=False):
        groups.setdefault(key(q) or "(none)", []).append(ok)
    return {name: bootstrap_accuracy(vals, samples).as_dict() for name, vals in sorted(groups.items())}


def _outcomes(counts: Mapping[str, int | float] | None, answered: int, total: int) -> dict:
    if counts is not None:
        return dict(counts)
    rate = round(answered / total, 4) if total else 0.0
    unknown = {"refusals": None, "parse_failures": None, "refusal_rate": None, "parse_failure_rate": None}
    return {"answered": answered, "answered_rate": rate, **unknown}


def run_outcomes(questions: Sequence[PlanningQuestion], answers: Mapping[str, int | None]) -> dict[str, bool]:
    """Question id -> right, for the questions the run has a result for (a missing answer counts wrong;
    a question it was not run on is absent), the input of :func:`backend.inference.comparison.compare_models`."""
    return {q.id: answers[q.id] == q.answer_index for q in questions if q.id in answers}


def _versus(
    questions: Sequence[PlanningQuestion], answers: Mapping[str, int | None], baseline_answers: Mapping[str, int | None]
) -> dict:
    """Exact McNemar on the questions both runs have a result for (never on a partial run's missing ones)."""
    common = [q for q in questions if q.id in answers and q.id in baseline_answers]
    return {**mcnemar_exact(outcomes(common, answers), outcomes(common, baseline_answers)), "n": len(common)}


def report(
    questions: Sequence[PlanningQuestion],
    runs: Mapping[str, Mapping[str, int | None]],
    baseline: str | None = None,
    samples: int = 2000,
    answer_outcomes: Mapping[str, Mapping[str, int | float]] | None = None,
    compared: Sequence[str] | None = None,
) -> dict:
    """Per run: accuracy with CI, by length and by scene, and McNemar against ``baseline`` (a run name).

    Each run is scored on the questions it has a result for (a key in its mapping; None there is an answer
    that was not read and counts wrong): a partial run — a 10-question batch, a human sample — reads
    ``run: "10 of 510"`` with ``partial: true`` and its accuracy over those 10, never over all 510.
    McNemar against the baseline, and the paired ``comparison`` of the runs in ``compared`` (default: all;
    :func:`backend.inference.comparison.compare_models`, Holm across all pairs), use only the questions
    every run involved has a result for.

    A run in ``answer_outcomes`` (model runs: :func:`backend.inference.outcomes.outcome_counts` of its
    predictions) shows its answers read (``answered``), refused (``refusals``) and unparsed
    (``parse_failures``) apart, with their rates; a run without (humans, plain answer mappings) shows
    ``answered`` (a non-missing answer) and its rate, and None for refusals and parse failures.
    """
    from backend.inference.comparison import compare_models

    out: dict = {"questions": len(questions), "chance": round(1 / 6, 4), "runs": {}}
    for name, answers in runs.items():
        subset = [q for q in questions if q.id in answers]
        answered = sum(1 for q in subset if answers.get(q.id) is not None)
        entry = {
            **bootstrap_accuracy(outcomes(subset, answers), samples).as_dict(),
            "run": f"{len(subset)} of {len(questions)}",
            "partial": len(subset) < len(questions),
            **_outcomes((answer_outcomes or {}).get(name), answered, len(subset)),
            "by_length": breakdown(subset, answers, length_bucket, samples),
            "by_scene": breakdown(subset, answers, lambda q: q.scene, samples),
        }
        if baseline is not None and name != baseline:
            entry[f"mcnemar_vs_{baseline}"] = _versus(questions, answers, runs[baseline])
        out["runs"][name] = entry
    names = [n for n in (compared if compared is not None else runs) if n in runs]
    out["comparison"] = compare_models({n: run_outcomes(questions, runs[n]) for n in names}, samples)
    return out
