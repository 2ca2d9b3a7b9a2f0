"""Circular evaluation of single-choice VQA items (issue 14, part 2): a rotation case checked by hand, then
a circular run through the shared runner that a re-run answers entirely from the store."""

from __future__ import annotations

import pytest

from backend.accounts import auth
from backend.errors import ValidationError
from backend.inference.registry import ModelSpec, write_models
from backend.settings import Settings
from backend.vqa.circular import circular_report
from backend.vqa.demo import ensure_vqa_demo
from backend.vqa.items import list_items, make_item
from backend.vqa.models import eval_item, rotations, run_model

ITEM = make_item(
    category="Counting Perception", question="How many cups?", options=["one", "two", "three"], answer="B",
    choice_type="single", images=["a.png"], item_id="cups",
)  # fmt: skip


def _rotated():
    return [eval_item(Settings(), ITEM, rotation=r) for r in rotations(ITEM, circular=True)]


def test_rotations_move_the_key_letter_and_not_the_key():
    items = _rotated()
    # rotation r shows option (i + r) mod 3 at position i: r1 = (two, three, one), r2 = (three, one, two)
    assert [i.options for i in items] == [("one", "two", "three"), ("two", "three", "one"), ("three", "one", "two")]
    assert [i.answer for i in items] == [frozenset("B"), frozenset("A"), frozenset("C")]
    assert [i.item_id for i in items] == ["cups", "cups#r1", "cups#r2"]
    with pytest.raises(ValidationError):
        eval_item(Settings(), make_item(category="Counting Perception", question="Which?", options=["a", "b"],
                  answer="AB", choice_type="indefinite", images=["a.png"]), rotation=1)  # fmt: skip


@pytest.mark.parametrize(
    ("letters", "plain", "right", "consistent"),
    [
        (("B", "A", "C"), 1.0, 1, 1),  # always "two": right under every rotation
        (("A", "A", "A"), 0.0, 0, 0),  # always the first letter: one, two, three -> neither
        (("C", "B", "A"), 0.0, 0, 1),  # always "three": wrong, but the same option each time
        (("B", "B", "C"), 1.0, 0, 0),  # right as authored, "three" under rotation 1: plain right only
        (("B", (), "C"), 1.0, 0, 0),  # an unread answer under rotation 1 breaks consistency
    ],
)
def test_a_hand_checked_rotation_case(letters, plain, right, consistent):
    answers = {item.item_id: tuple(given) for item, given in zip(_rotated(), letters, strict=True)}
    report = circular_report(_rotated(), answers)
    assert (report["plain_accuracy"], report["circular_correct"], report["consistent"]) == (plain, right, consistent)
    assert report["complete"] == 1 and report["circular_accuracy"] == right and report["consistency_rate"] == consistent


def test_an_item_with_a_rotation_missing_is_incomplete():
    report = circular_report(_rotated(), {"cups": ("B",), "cups#r1": ("A",)})
    assert (report["complete"], report["incomplete"], report["consistency_rate"]) == (0, 1, 0.0)


def test_a_circular_run_stores_each_rotation_and_resumes_from_the_store(ctx):
    ensure_vqa_demo(ctx)
    write_models(ctx.settings, [ModelSpec("rand-0", "random", options={"seed": 0})])
    auth.add_user(ctx.database, "rev", "reviewer", "password123")
    items = list_items(ctx.database, status="verified")
    single = [i for i in items if i.choice_type == "single"]
    assert single and len(single) < len(items)  # the demo has both kinds
    expected = sum(len(i.options) for i in single) + len(items) - len(single)
    first = run_model(ctx, "rev", "rand-0", circular=True)
    assert first["items"] == expected and first["newly_computed"] == expected
    circ = first["circular"]
    assert circ["complete"] == len(single) and circ["incomplete"] == 0
    assert (
        0 <= circ["circular_accuracy"] <= circ["plain_accuracy"]
        and circ["circular_accuracy"] <= circ["consistency_rate"]
    )
    again = run_model(ctx, "rev", "rand-0", circular=True)
    assert again["newly_computed"] == 0 and again["circular"] == circ
    # the leaderboard run keeps one answer per item, the options as authored
    from backend.vqa.runs import list_runs

    run = next(r for r in list_runs(ctx, items) if r.id == "rand-0")
    assert sorted(run.answers) == sorted(i.id for i in items)
