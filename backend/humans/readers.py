"""Where people's answers are read from, per benchmark, and who counts as crowd or expert.

* VQA (MMComposition): ``vqa_answers``, one row per person and item (the Answer panel and VQA studies);
* planning (ViLPAct): ``planning_checks``, the choice each person finds plausible (``-1``: none is plausible,
  an answer that is never the key).

A person is **crowd** when they answered as a study worker (``study_workers``; the study is recorded) or as an
annotator, and **expert** when a reviewer or admin answered outside any study: the two never share a run. Only
the items given (the verified VQA items, the planning questions shown) are read.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from fractions import Fraction
from typing import TYPE_CHECKING

from backend.humans.runs import HumanAnswer, HumanRun, human_runs
from backend.storage import Database

if TYPE_CHECKING:
    from backend.settings import Settings
    from backend.vqa.items import VqaItem

_PEOPLE = """LEFT JOIN users u ON u.username = {who}
    LEFT JOIN study_workers w ON w.username = {who}"""


def group_of(role: str | None, study: int | None) -> str:
    """``expert`` for a reviewer or admin answering outside a study, else ``crowd``.

    >>> group_of("reviewer", None), group_of("reviewer", 3), group_of("annotator", None), group_of(None, None)
    ('expert', 'crowd', 'crowd', 'crowd')
    """
    return "expert" if study is None and role in ("reviewer", "admin") else "crowd"


def vqa_answers(database: Database, item_ids: Collection[str]) -> list[HumanAnswer[tuple[str, ...]]]:
    """People's answers to the VQA items ``item_ids`` (letters sorted, as a model's are read)."""
    rows = database.query(
        f"""SELECT a.item_id, a.annotator, a.answer, a.submitted_at, u.role, w.study_id FROM vqa_answers a
            {_PEOPLE.format(who="a.annotator")} ORDER BY a.id"""
    )
    wanted = set(item_ids)
    return [
        HumanAnswer(
            r["item_id"],
            r["annotator"],
            tuple(sorted(json.loads(r["answer"]))),
            group_of(r["role"], r["study_id"]),
            r["study_id"],
            r["submitted_at"],
        )
        for r in rows
        if r["item_id"] in wanted
    ]


def vqa_human_runs(database: Database, settings: Settings, items: list[VqaItem]) -> list[HumanRun]:
    """The human runs on ``items``, scored with the models' partial credit (:mod:`backend.vqa.scoring`)."""
    from backend.vqa.scoring import partial_credit

    keys = {i.id: i.answer for i in items}

    def score(item_id: str, letters: tuple[str, ...]) -> Fraction:
        return partial_credit(letters, keys[item_id])

    return human_runs(vqa_answers(database, keys), score, min_items=settings.human_best_min_items)


def planning_answers(database: Database, question_ids: Collection[str] | None = None) -> list[HumanAnswer[int]]:
    """People's checks of planning questions: the choice index they find plausible (-1: none)."""
    rows = database.query(
        f"""SELECT c.question_id, c.annotator, c.plausible_choice, c.submitted_at, u.role, w.study_id
            FROM planning_checks c {_PEOPLE.format(who="c.annotator")} ORDER BY c.id"""
    )
    wanted = None if question_ids is None else set(question_ids)
    return [
        HumanAnswer(
            r["question_id"],
            r["annotator"],
            int(r["plausible_choice"]),
            group_of(r["role"], r["study_id"]),
            r["study_id"],
            r["submitted_at"],
        )
        for r in rows
        if wanted is None or r["question_id"] in wanted
    ]


def planning_human_runs(database: Database, settings: Settings, keys: dict[str, int]) -> list[HumanRun]:
    """The human runs on the planning questions ``keys`` (question id -> key index), scored right or wrong."""

    def score(question_id: str, choice: int) -> Fraction:
        return Fraction(int(choice == keys[question_id]))

    return human_runs(planning_answers(database, keys), score, min_items=settings.human_best_min_items)
