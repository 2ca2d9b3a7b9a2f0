"""Annotator validation of planning questions, human accuracy, the disagreement queue and authoring."""

from __future__ import annotations

import pytest

from backend.accounts import auth
from backend.errors import PermissionDenied, ValidationError
from backend.planning.authoring import author_question
from backend.planning.catalog import load_catalog
from backend.planning.questions import get_question
from backend.planning.validation import (
    disagreement_queue,
    human_accuracy,
    human_answers,
    next_question,
    submit_check,
)
from tests.conftest import VILPACT_DATA
from tests.planning_helpers import planning_context


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    ctx = planning_context(tmp_path_factory.mktemp("validation"), VILPACT_DATA, planning_annotators_per_question=2)
    for name in ("ann1", "ann2", "ann3"):
        auth.add_user(ctx.database, name, "annotator", "password-123")
    auth.add_user(ctx.database, "rev", "reviewer", "password-123")
    return ctx


def test_two_annotators_check_a_question_and_a_repeat_is_a_no_op(ctx):
    task1 = next_question(ctx.database, "ann1", 20)
    task2 = next_question(ctx.database, "ann2", 20)
    assert task1.question.id == task2.question.id  # the pool finishes questions before starting new ones
    qid, key = task1.question.id, task1.question.answer_index
    assert submit_check(ctx.database, "ann1", qid, key)["repeated"] is False
    assert submit_check(ctx.database, "ann1", qid, key)["repeated"] is True
    submit_check(ctx.database, "ann2", qid, (key + 1) % 6, seconds_spent=12.5)
    assert ctx.database.scalar("SELECT count(*) FROM planning_checks WHERE question_id = ?", (qid,)) == 2
    # the task is complete: a third annotator gets another question
    assert next_question(ctx.database, "ann3", 20).question.id != qid


def test_none_plausible_rejections_reach_the_disagreement_queue(ctx):
    # ann3 already holds a question (previous test); ann1 joins it, the one closest to completion
    task1, task2 = next_question(ctx.database, "ann3", 20), next_question(ctx.database, "ann1", 20)
    assert task1.question.id == task2.question.id
    submit_check(ctx.database, "ann3", task1.question.id, -1)
    submit_check(ctx.database, "ann1", task1.question.id, -1)
    queue = disagreement_queue(ctx.database, "rev")
    assert [q["question_id"] for q in queue] == [task1.question.id]
    assert queue[0]["votes"] == {"none": 2}
    with pytest.raises(PermissionDenied):
        disagreement_queue(ctx.database, "ann1")


def test_human_accuracy_counts_checks_and_majorities(ctx):
    result = human_accuracy(ctx.database, samples=200)
    # checks so far: key, wrong, none, none -> 1 of 4; majority per question: a tie and "none" -> 0 of 2
    assert result["per_check"]["correct"] == 1 and result["per_check"]["n"] == 4
    assert result["per_question_majority"]["n"] == 2 and result["none_plausible_share"] == 0.5
    assert all(v is None for v in human_answers(ctx.database).values())


def test_invalid_checks_are_rejected(ctx):
    task = next_question(ctx.database, "ann1", 20)
    with pytest.raises(ValidationError):
        submit_check(ctx.database, "ann1", task.question.id, 6)


def test_authored_question_is_validated_by_a_majority(ctx):
    with pytest.raises(PermissionDenied):
        author_question(ctx.database, "ann1", "2NZ5C")
    question = author_question(ctx.database, "rev", "2NZ5C", annotators_per_question=2)
    catalog = load_catalog(ctx.database)
    assert question.status == "pending" and catalog.names(question.observed) == ["Someone is undressing"]
    answer = question.choices[question.answer_index]
    assert catalog.names(answer) == [
        "Putting clothes somewhere",
        "Someone is dressing",
        "Holding some clothes",
        "Taking some clothes from somewhere",
    ]
    for index, choice in enumerate(question.choices):
        if index != question.answer_index:
            assert sum(a != b for a, b in zip(choice, answer, strict=False)) == 1
    assert len(set(question.choices)) == 6
    for name in ("ann2", "ann3"):
        # each annotator finishes whatever they hold, then reaches the authored question
        while (task := next_question(ctx.database, name, 20)).question.id != question.id:
            submit_check(ctx.database, name, task.question.id, task.question.answer_index)
        submit_check(ctx.database, name, question.id, question.answer_index)
    assert get_question(ctx.database, question.id).status == "validated"
