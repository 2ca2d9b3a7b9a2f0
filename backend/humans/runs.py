"""People's answers as runs, scored like a model's (issue 41, Must 1).

MMComposition prints **Human 90.31%** beside the models (paper §4, Table 2); ViLPAct has people validate its
planning questions (its §3 and appendix). Here every person's answer to an item (a VQA item, or a planning
question's check) is one :class:`HumanAnswer`; the answers of one **group** (``crowd``: annotators and study
workers; ``expert``: reviewers answering themselves, kept apart) become three named runs, each a mapping
item id -> answer that the benchmark's own scorer scores:

* ``Humans (majority of N)``: per item, the answer most of its people gave (a tie is no answer, scored 0 as a
  model's unread answer is: "a tie is wrong", as the planning check has always counted it); ``N`` is the most
  answers any item has;
* ``Humans (one annotator, mean)``: per item, the mean of each person's score (the expected score of one
  annotator drawn at random: the reading of "Human" in MMComposition's table);
* ``Best annotator``: the one person with the highest mean score among those who answered at least
  ``min_items`` items (the setting ``human_best_min_items``), on the items they answered.

Each run's manifest counts people (never names them), says when the answers were given, how many answers each
item has, which studies they came from, and Krippendorff's α (nominal) over the group's answers. Every run says
which items it covers (``items``): its row is over those only.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from statistics import median
from typing import Any, Generic, TypeVar

A = TypeVar("A")  # one answer: a tuple of letters (VQA) or a choice index (planning)

GROUPS = ("crowd", "expert")
GROUP_LABELS = {"crowd": "Humans", "expert": "Experts"}
MAJORITY, MEAN, BEST = "majority", "mean", "best"


@dataclass(frozen=True)
class HumanAnswer(Generic[A]):
    """One person's answer to one item."""

    item_id: str
    person: str  # never shown on public pages: runs count people
    answer: A
    group: str = "crowd"  # crowd | expert
    study: int | None = None  # the crowd study it was given in, if any
    submitted_at: str = ""


@dataclass(frozen=True)
class HumanRun(Generic[A]):
    """A run of people: an answer per item (``majority``, ``best``) or a score per item (``mean``)."""

    name: str
    method: str  # majority | mean | best
    group: str
    answers: dict[str, A | None] = field(default_factory=dict)  # None: a tie (no majority)
    item_scores: dict[str, Fraction] = field(default_factory=dict)  # mean runs
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def items(self) -> list[str]:
        """The items the run covers, sorted."""
        return sorted(self.item_scores if self.method == MEAN else self.answers)


def majority(answers: Sequence[A]) -> A | None:
    """The answer most people gave; None on a tie for the most.

    >>> majority([("A",), ("A",), ("B",)]), majority([("A",), ("B",)]), majority([2])
    (('A',), None, 2)
    """
    counts = Counter(answers).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def by_item(answers: Iterable[HumanAnswer[A]]) -> dict[str, list[HumanAnswer[A]]]:
    out: dict[str, list[HumanAnswer[A]]] = defaultdict(list)
    for answer in answers:
        out[answer.item_id].append(answer)
    return dict(out)


def alpha_nominal(answers: Iterable[HumanAnswer[Any]]) -> float | None:
    """Krippendorff's α (nominal; each distinct answer a category) over people × items, via the ``krippendorff``
    package (:func:`backend.review.stats.krippendorff_alpha_nominal`). None when no item has two answers or
    everyone gave one same answer.

    By hand: items 1-4, person P answers A A B B, person Q answers A B B B. Coincidences: o_AA = 2,
    o_BB = 4, o_AB = o_BA = 1; n = 8, n_A = 3, n_B = 5. D_o = 2/8, D_e = 2·3·5/(8·7) = 30/56;
    α = 1 - (2/8)/(30/56) = 1 - 14/30 = 0.5333.

    >>> rows = [HumanAnswer(i, p, a) for p, row in (("P", "AABB"), ("Q", "ABBB")) for i, a in zip("1234", row)]
    >>> round(alpha_nominal(rows), 4)
    0.5333
    """
    from backend.review.stats import krippendorff_alpha_nominal

    answers = list(answers)
    people = sorted({a.person for a in answers})
    items = sorted({a.item_id for a in answers})
    codes: dict[Any, int] = {}
    matrix = [[float("nan")] * len(items) for _ in people]
    row, column = {p: i for i, p in enumerate(people)}, {q: i for i, q in enumerate(items)}
    for a in answers:
        matrix[row[a.person]][column[a.item_id]] = float(codes.setdefault(a.answer, len(codes)))
    if not people or not items:
        return None
    alpha = krippendorff_alpha_nominal(matrix)
    return None if alpha is None else round(alpha, 4)


def manifest(answers: Sequence[HumanAnswer[Any]], group: str) -> dict[str, Any]:
    """Who (counted), when, how many answers per item, from which studies, and α.

    >>> rows = [HumanAnswer("q1", "p1", 1, study=7, submitted_at="2026-01-02"),
    ...         HumanAnswer("q1", "p2", 1, submitted_at="2026-01-01"), HumanAnswer("q2", "p1", 0)]
    >>> m = manifest(rows, "crowd")
    >>> m["people"], m["answers"], m["answers_per_item"], m["studies"], m["first_answer"], m["last_answer"]
    (2, 3, {'min': 1, 'median': 1.5, 'max': 2}, [7], '2026-01-01', '2026-01-02')
    """
    per_item = [len(v) for v in by_item(answers).values()]
    times = sorted(a.submitted_at for a in answers if a.submitted_at)
    return {
        "kind": "people",
        "group": group,
        "people": len({a.person for a in answers}),
        "answers": len(answers),
        "items": len(per_item),
        "answers_per_item": {"min": min(per_item), "median": median(per_item), "max": max(per_item)}
        if per_item
        else {},
        "studies": sorted({a.study for a in answers if a.study is not None}),
        "first_answer": times[0] if times else None,
        "last_answer": times[-1] if times else None,
        "krippendorff_alpha": alpha_nominal(answers),
    }


def human_runs(
    answers: Iterable[HumanAnswer[A]],
    score: Callable[[str, A], Fraction],
    *,
    min_items: int,
    groups: Sequence[str] = GROUPS,
) -> list[HumanRun[A]]:
    """The runs of each group that has answers: majority, one annotator's mean and, where someone answered
    ``min_items`` items or more, the best annotator. ``score(item_id, answer)`` is the benchmark's scorer (the
    same code that scores a model); ``best`` is ranked by mean score, ties broken by more items answered.

    Worked example (a key "A" for items 1-3): p1 answers A A A, p2 answers A B B, p3 answers B B; majority
    A B B (item 1: p1 A, p2 A; items 2 and 3: p1 A, p2 B, p3 B), one annotator's mean 1, 1/3, 1/3, best
    annotator p1 (3 of 3 right).

    >>> rows = [HumanAnswer(i, p, a) for p, row in (("p1", "AAA"), ("p2", "ABB"), ("p3", "-BB"))
    ...         for i, a in zip("123", row) if a != "-"]
    >>> runs = human_runs(rows, lambda item, a: Fraction(a == "A"), min_items=3)
    >>> [r.name for r in runs]
    ['Humans (majority of 3)', 'Humans (one annotator, mean)', 'Best annotator']
    >>> runs[0].answers, [str(s) for s in runs[1].item_scores.values()], runs[2].answers
    ({'1': 'A', '2': 'B', '3': 'B'}, ['1', '1/3', '1/3'], {'1': 'A', '2': 'A', '3': 'A'})
    >>> runs[2].manifest["people"], runs[2].manifest["mean_score_of_best"]
    (1, 1.0)
    """
    every = list(answers)
    out: list[HumanRun[A]] = []
    for group in groups:
        mine = [a for a in every if a.group == group]
        if not mine:
            continue
        label = GROUP_LABELS[group]
        items = by_item(mine)
        most = max(len(v) for v in items.values())
        info = manifest(mine, group)
        out.append(
            HumanRun(
                f"{label} (majority of {most})",
                MAJORITY,
                group,
                answers={q: majority([a.answer for a in v]) for q, v in items.items()},
                manifest=info | {"method": "majority answer per item (a tie is no answer)"},
            )
        )
        means = {q: sum((score(q, a.answer) for a in v), Fraction(0)) / len(v) for q, v in items.items()}
        out.append(
            HumanRun(
                f"{label} (one annotator, mean)",
                MEAN,
                group,
                item_scores=means,
                manifest=info | {"method": "mean of each person's score per item"},
            )
        )
        best = best_person(mine, score, min_items)
        if best is not None:
            theirs = [a for a in mine if a.person == best[0]]
            name = "Best annotator" if group == "crowd" else "Best expert"
            out.append(
                HumanRun(
                    name,
                    BEST,
                    group,
                    answers={a.item_id: a.answer for a in theirs},
                    manifest=manifest(theirs, group)
                    | {
                        "method": f"the person with the highest mean score among those with {min_items}+ answers",
                        "ranked_people": best[2],
                        "mean_score_of_best": round(float(best[1]), 4),
                    },
                )
            )
    return out


def best_person(
    answers: Sequence[HumanAnswer[A]], score: Callable[[str, A], Fraction], min_items: int
) -> tuple[str, Fraction, int] | None:
    """(person, mean score, how many people were ranked) of the best person with ``min_items`` answers or more.

    >>> rows = [HumanAnswer("1", "p1", 1), HumanAnswer("2", "p1", 0), HumanAnswer("1", "p2", 1)]
    >>> best_person(rows, lambda q, a: Fraction(a), 2), best_person(rows, lambda q, a: Fraction(a), 3)
    (('p1', Fraction(1, 2), 1), None)
    """
    scores: dict[str, list[Fraction]] = defaultdict(list)
    for a in answers:
        scores[a.person].append(score(a.item_id, a.answer))
    ranked = {p: sum(s, Fraction(0)) / len(s) for p, s in scores.items() if len(s) >= max(1, min_items)}
    if not ranked:
        return None
    person = max(sorted(ranked), key=lambda p: (ranked[p], len(scores[p])))
    return person, ranked[person], len(ranked)


def public_manifest(manifest_: Mapping[str, Any]) -> dict[str, Any]:
    """A manifest as public pages show it: people counted, never named (nothing here names them; this drops any
    key a caller may have added that does).

    >>> public_manifest({"people": 3, "persons": ["ann"]})
    {'people': 3}
    """
    return {k: v for k, v in manifest_.items() if k not in ("persons", "person", "annotators")}
