"""Every VQA verification transition (backend.vqa.service.submit_verification / resolve_dispute): a draft's
rounds, disputes, and re-check rounds of items already verified or rejected (issue 24: accepting a verified item
keeps it verified and in the answer pool)."""

from __future__ import annotations

import pytest

from backend import assignment
from backend.accounts import auth
from backend.vqa import service
from backend.vqa.demo import ensure_vqa_demo
from backend.vqa.io import ANSWER_KIND, VERIFY_KIND
from backend.vqa.items import get_item
from backend.vqa.permissions import set_permission
from tests.test_vqa_flow import PEOPLE, _two_image_item


@pytest.fixture
def team(ctx):
    for name, role in PEOPLE.items():
        auth.add_user(ctx.database, name, role, "password123")
    for name in ("ver3", "ver4", "ver5"):  # verifiers of re-check rounds (each decides an item once)
        auth.add_user(ctx.database, name, "annotator", "password123")
    for name in ("writer", "ver1", "ver2", "ver3", "ver4", "ver5"):
        set_permission(ctx.database, "boss", name, "author")
    return ctx


def _decide(ctx, who, item_id, decision, **kw):
    task = service.next_verification(ctx.database, ctx.settings, who)["task"]
    assert task is not None and task["id"] == item_id
    if decision == "edit":
        kw.setdefault("changes", {"question": "In which image is the flag on the left side?"})
    return service.submit_verification(ctx.database, ctx.settings, who, item_id, decision, **kw)["item"]


def _state(ctx, item_id) -> tuple[str, bool]:
    item = get_item(ctx.database, item_id)
    return item.status, item.disputed


def _in_answer_pool(ctx, item_id) -> bool:
    return bool(ctx.database.scalar("SELECT 1 FROM tasks WHERE kind = ? AND item_id = ?", (ANSWER_KIND, item_id)))


@pytest.mark.parametrize(
    ("first", "second", "state"),
    [
        ("accept", "accept", ("verified", False)),
        ("accept", "edit", ("verified", False)),
        ("edit", "edit", ("verified", False)),
        ("reject", "reject", ("rejected", False)),
        ("accept", "reject", ("draft", True)),
        ("reject", "edit", ("draft", True)),
    ],
)
def test_a_drafts_round_of_two_verifiers(team, first, second, state):
    item = _two_image_item(team)
    after_one = _decide(team, "ver1", item.id, first)
    assert (after_one["status"], after_one["disputed"]) == ("draft", False)  # one of two: still waiting
    _decide(team, "ver2", item.id, second)
    assert _state(team, item.id) == state
    assert _in_answer_pool(team, item.id) == (state[0] == "verified")


@pytest.mark.parametrize(("decision", "state"), [("accept", "verified"), ("reject", "rejected")])
def test_a_reviewer_resolves_a_dispute(team, decision, state):
    item = _two_image_item(team)
    _decide(team, "ver1", item.id, "accept")
    _decide(team, "ver2", item.id, "reject")
    done = service.resolve_dispute(team.database, team.settings, "rev", item.id, decision)["item"]
    assert (done["status"], done["disputed"]) == (state, False) and _state(team, item.id) == (state, False)


def _recheck(ctx, item_id: str) -> None:
    with ctx.database.write() as db:  # a re-check round: the item is handed to one more verifier
        db.conn.execute("DELETE FROM tasks WHERE kind = ? AND item_id = ?", (VERIFY_KIND, item_id))
        assignment.add_tasks(db, VERIFY_KIND, [item_id], 1)


def test_accepting_an_already_verified_demo_item_keeps_it_verified(team):
    ensure_vqa_demo(team)
    item_id = "demo-obj-p"
    assert _state(team, item_id) == ("verified", False) and _in_answer_pool(team, item_id)
    with team.database.write() as db:  # the demo's two drafts wait in the verify pool: not this test's items
        db.conn.execute("DELETE FROM tasks WHERE kind = ?", (VERIFY_KIND,))
    _recheck(team, item_id)
    done = _decide(team, "ver1", item_id, "accept")
    assert done["status"] == "verified" and _state(team, item_id) == ("verified", False)
    assert _in_answer_pool(team, item_id)
    edited = _decide_again(team, "ver2", item_id, "edit", {"question": "Which object is on the table?"})
    assert edited["status"] == "verified" and edited["question"] == "Which object is on the table?"


def _decide_again(ctx, who, item_id, decision, changes=None):
    _recheck(ctx, item_id)
    return _decide(ctx, who, item_id, decision, **({"changes": changes} if changes else {}))


def test_rechecks_that_disagree_dispute_and_those_that_agree_keep_the_state(team):
    item = _two_image_item(team)
    _decide(team, "ver1", item.id, "reject")
    _decide(team, "ver2", item.id, "reject")
    assert _state(team, item.id) == ("rejected", False)
    _decide_again(team, "ver3", item.id, "reject")
    assert _state(team, item.id) == ("rejected", False)  # agrees: stays rejected
    _decide_again(team, "ver4", item.id, "accept")
    assert _state(team, item.id) == ("draft", True)  # disagrees: a reviewer decides
    service.resolve_dispute(team.database, team.settings, "rev", item.id, "accept")
    assert _state(team, item.id) == ("verified", False)
    _decide_again(team, "ver5", item.id, "reject")
    assert _state(team, item.id) == ("draft", True)
