"""Authoring, verification by two verifiers with disputes to a reviewer, answering without keys, the
author permission, and the leaderboard."""

from __future__ import annotations

import json

import pytest

from backend.accounts import auth
from backend.errors import NotFound, PermissionDenied, ValidationError
from backend.vqa import service
from backend.vqa.demo import DEMO_FILE
from backend.vqa.permissions import set_permission
from backend.vqa.runs import leaderboard, leaderboard_csv, low_cpv_analysis, save_predictions

IMAGES = DEMO_FILE.parent / "images"
PEOPLE = {
    "boss": "admin",
    "rev": "reviewer",
    "ann": "annotator",
    "ver1": "annotator",
    "ver2": "annotator",
    "writer": "annotator",
}


@pytest.fixture
def team(ctx):
    for name, role in PEOPLE.items():
        auth.add_user(ctx.database, name, role, "password123")
    for name in ("writer", "ver1", "ver2"):
        set_permission(ctx.database, "boss", name, "author")
    return ctx


def _two_image_item(ctx, author="writer"):
    images = service.upload_images(
        ctx.database, ctx.settings, author, [IMAGES / "astronaut.jpg", IMAGES / "astronaut_mirrored.jpg"]
    )
    return service.create_item(
        ctx.database,
        ctx.settings,
        author,
        category="Difference Spotting",
        question="In which image is the flag on the left?",
        options=["Left", "Right"],
        answer="A",
        choice_type="single",
        images=images,
    )


def _verify(ctx, who, decision="accept", **kw):
    task = service.next_verification(ctx.database, ctx.settings, who)["task"]
    return service.submit_verification(ctx.database, ctx.settings, who, task["id"], decision, **kw)


def test_author_permission_is_needed_and_only_admins_grant_it(team):
    with pytest.raises(PermissionDenied, match="author permission"):
        service.upload_images(team.database, team.settings, "ann", [IMAGES / "coffee.jpg"])
    with pytest.raises(PermissionDenied):
        set_permission(team.database, "rev", "ann", "author")
    set_permission(team.database, "boss", "ann", "author")
    assert service.author_status(team.database, "ann")["author"] is True


def test_two_verifiers_accept_then_an_annotator_answers_without_seeing_the_key(team):
    item = _two_image_item(team)
    assert item.composite and item.status == "draft"
    # The author is never handed their own item to verify.
    assert service.next_verification(team.database, team.settings, "writer")["task"] is None
    _verify(team, "ver1")
    result = _verify(team, "ver2")
    assert result["item"]["status"] == "verified"
    # Verifiers saw the key, so they never get the item to answer; the annotator gets the question only.
    assert service.next_answer_task(team.database, team.settings, "ver1")["task"] is None
    task = service.next_answer_task(team.database, team.settings, "ann")["task"]
    assert task["id"] == item.id and "answer" not in task and "key" not in task
    assert "answer" not in service.item_view(team.database, "ann", item.id)
    assert all("answer" not in row for row in service.browse_items(team.database, "ann"))
    with pytest.raises(ValidationError, match="single-choice"):
        service.submit_answer(team.database, team.settings, "ann", item.id, "AB")
    done = service.submit_answer(team.database, team.settings, "ann", item.id, "A")
    assert done["key"] == ["A"] and done["score"] == 1.0
    assert service.submit_answer(team.database, team.settings, "ann", item.id, "B")["answer"] == ["A"]  # retry
    assert team.database.scalar("SELECT count(*) FROM vqa_answers") == 1
    assert service.item_view(team.database, "ann", item.id)["answer"] == ["A"]  # after answering


def test_disagreement_goes_to_a_reviewer(team):
    item = _two_image_item(team)
    _verify(team, "ver1")
    _verify(team, "ver2", "reject", compositional=False, note="not compositional")
    assert [d["id"] for d in service.disputes(team.database, "rev")] == [item.id]
    with pytest.raises(PermissionDenied):
        service.disputes(team.database, "ver1")
    resolved = service.resolve_dispute(team.database, team.settings, "rev", item.id, "reject", "agree with ver2")
    assert resolved["item"]["status"] == "rejected"


def test_an_edit_counts_as_acceptance_and_changes_the_item(team):
    item = _two_image_item(team)
    _verify(team, "ver1", "edit", changes={"question": "Which image has the flag on its left side?"})
    _verify(team, "ver2")
    stored = service.item_view(team.database, "boss", item.id)
    assert stored["status"] == "verified" and stored["question"].startswith("Which image")
    with pytest.raises(ValidationError, match="not compositional"):
        service.submit_verification(team.database, team.settings, "ver1", item.id, "accept", compositional=False)


def test_only_admins_edit_verified_items(team):
    item = _two_image_item(team)
    service.edit_item(team.database, team.settings, "writer", item.id, question="Where is the flag on the left?")
    with pytest.raises(PermissionDenied, match="your own"):
        service.edit_item(team.database, team.settings, "ver1", item.id, question="x?")
    _verify(team, "ver1")
    _verify(team, "ver2")
    with pytest.raises(PermissionDenied, match="only an admin"):
        service.edit_item(team.database, team.settings, "writer", item.id, question="changed?")
    edited = service.edit_item(team.database, team.settings, "boss", item.id, options=["Left", "Right", "Neither"])
    assert edited.options == ("Left", "Right", "Neither")


def test_probing_item_from_the_builder(team):
    draft = service.probing_draft(
        team.database, "writer", ["a cat", "green eyes"], ["a dog", "blue eyes", "a hat"], true_count=2, seed=3
    )
    images = service.upload_images(team.database, team.settings, "writer", [IMAGES / "chelsea.jpg"])
    item = service.create_item(
        team.database,
        team.settings,
        "writer",
        category=draft.category,
        question=draft.question,
        options=draft.options,
        answer=draft.answer,
        choice_type=draft.choice_type,
        images=images,
    )
    assert item.choice_type == "indefinite" and len(item.answer) == 2 and item.composite is None


def test_leaderboard_rows_and_the_below_chance_analysis(team):
    item = _two_image_item(team)
    _verify(team, "ver1")
    _verify(team, "ver2")
    service.next_answer_task(team.database, team.settings, "ann")
    service.submit_answer(team.database, team.settings, "ann", item.id, "A")
    save_predictions(team.database, "m-wrong", "model", {item.id: (("B",), "B")}, actor="boss", model="m")
    save_predictions(team.database, "m-blind", "blind", {item.id: (("A",), "A")}, actor="boss", model="m")
    rows = leaderboard(team, "ann")
    people = ["Humans (majority of 1)", "Humans (one annotator, mean)"]  # one answer: no "Best annotator" (20+)
    assert [r["name"] for r in rows] == ["Random choice", *people, "m-blind", "m-wrong"]
    assert [r["kind"] for r in rows] == ["random", "people", "people", "blind", "model"]
    assert rows[0]["overall"] == 50.0 and rows[1]["overall"] == rows[2]["overall"] == 100.0
    assert rows[4]["Diff-S"] == 0.0 and rows[1]["questions"] == 1
    assert leaderboard_csv(rows).splitlines()[0].startswith("name,kind,overall,Perception")
    analysis = low_cpv_analysis(team, "rev")
    assert [r["id"] for r in analysis["below_chance"]] == [item.id]
    assert analysis["option_counts"] == {2: 1}
    with pytest.raises(PermissionDenied):
        low_cpv_analysis(team, "ann")


def test_nobody_signed_in_is_refused(team):
    with pytest.raises(PermissionDenied):
        service.next_answer_task(team.database, team.settings, None)
    with pytest.raises(NotFound):
        service.item_view(team.database, "ann", "nope")
    assert json.dumps(service.author_status(team.database, "boss"))


def test_counts_left_for_a_person_leave_out_items_whose_key_they_have_seen(team):
    db, settings = team.database, team.settings
    item = _two_image_item(team)
    counts = service.left_counts(db, "writer")
    assert counts["verify"]["left_for_you"] == 0 and counts["verify"]["left_in_pool"] == 1  # not their own item
    assert service.left_counts(db, "ann")["verify"] is None  # no author permission: no verification count
    assert service.left_counts(db, "ver1")["verify"]["left_for_you"] == 1
    _verify(team, "ver1")
    _verify(team, "ver2")
    assert service.left_counts(db, "ver1")["answer"]["left_for_you"] == 0  # verified it: saw the key
    assert service.left_counts(db, "writer")["answer"]["left_for_you"] == 0  # wrote it
    assert service.left_counts(db, "ann")["answer"]["left_for_you"] == 1
    service.next_answer_task(db, settings, "ann")
    done = service.submit_answer(db, settings, "ann", item.id, "A")
    assert done["progress"]["left_for_you"] == 0 and done["progress"]["mine_total"] == 1
