"""Authoring, verification and human answering of VQA items: the functions the UI and API call.

Every function takes the caller's user name and checks their rights itself:

* authoring and verifying need the author permission (or the reviewer role); admins may edit any item,
  authors only their own drafts; nobody else can edit a verified item;
* disputes (verifiers disagree) are resolved by reviewers;
* answering needs the annotator role and never shows the key: :func:`next_answer_task` returns
  :meth:`VqaItem.question_view`, and the key comes back only from :func:`submit_answer`, after the answer is
  stored. Items whose key the caller has seen (they wrote or verified them) are never handed to them to answer.

Verification and answering hand out items through :mod:`backend.assignment` (kinds ``vqa_verify`` and
``vqa_answer``): exact-N distinct people per item, claimed in the same transaction that chooses the item.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import sqlite_utils

from backend import assignment, webhooks
from backend.accounts import auth
from backend.accounts.auth import User
from backend.campaigns import gold, quality
from backend.campaigns.workers import may_hand_out, study_view
from backend.errors import PermissionDenied, ValidationError
from backend.settings import Settings
from backend.storage import Database, audit, utcnow
from backend.vqa.images import build_composite, store_image
from backend.vqa.io import ANSWER_KIND, VERIFY_KIND
from backend.vqa.items import (
    VqaItem,
    fetch_item,
    get_item,
    insert_item,
    list_items,
    make_item,
    parse_letters,
    replace_content,
)
from backend.vqa.permissions import is_author, require_author
from backend.vqa.probing import ProbingDraft, build_probing
from backend.vqa.scoring import partial_credit

DECISIONS = ("accept", "edit", "reject")


# -- who has seen a key --------------------------------------------------------------------------------
def _has_seen_key(db: sqlite_utils.Database, item: VqaItem, username: str) -> bool:
    """Wrote it, was handed it to verify, or already answered it."""
    if item.author == username:
        return True
    return bool(
        db.conn.execute(
            """SELECT 1 FROM assignments WHERE kind = ? AND item_id = ? AND annotator = ? AND status != 'skipped'
           UNION SELECT 1 FROM vqa_answers WHERE item_id = ? AND annotator = ?""",
            (VERIFY_KIND, item.id, username, item.id, username),
        ).fetchone()
    )


def may_see_key(database: Database, user: User, item: VqaItem) -> bool:
    """Reviewers and admins always; others only for items they wrote, verified or already answered."""
    return user.has_role("reviewer") or _has_seen_key(database.db, item, user.username)


def item_view(database: Database, username: str | None, item_id: str) -> dict[str, Any]:
    """An item as the caller may see it: with key and verification state only when :func:`may_see_key`."""
    user = auth.require_role(database, username, "annotator")
    item = get_item(database, item_id)
    if may_see_key(database, user, item):
        view = item.as_dict()
        view["verifications"] = database.query(
            "SELECT verifier, decision, compositional, key_correct, note, submitted_at FROM vqa_verifications "
            "WHERE item_id = ? ORDER BY id",
            (item_id,),
        )
        return view
    return item.question_view()


def browse_items(
    database: Database, username: str | None, *, status: str | None = None, category: str | None = None
) -> list[dict[str, Any]]:
    """Item summaries for the authoring table (no keys: open one with :func:`item_view`)."""
    auth.require_role(database, username, "annotator")
    return [
        {
            "id": i.id,
            "category": i.category,
            "question": i.question,
            "options": len(i.options),
            "choice_type": i.choice_type,
            "images": len(i.images),
            "provenance": i.provenance,
            "status": i.status,
            "disputed": i.disputed,
            "difficulty_level": i.difficulty_level,
            "author": i.author,
        }
        for i in list_items(database, status=status, category=category)
    ]


# -- authoring -----------------------------------------------------------------------------------------
def upload_images(
    database: Database, settings: Settings, username: str | None, paths: Iterable[Path | str]
) -> list[str]:
    """Store uploaded images under the media folder; returns their media-relative paths."""
    require_author(database, username)
    return [store_image(settings, path) for path in paths]


def preview_composite(
    database: Database, settings: Settings, username: str | None, images: Sequence[str]
) -> str | None:
    """The labelled composite of stored images (Left/Right for two, Image 1..n for more), or None for one."""
    require_author(database, username)
    return build_composite(settings, list(images))


def probing_draft(
    database: Database,
    username: str | None,
    true_captions: Sequence[str],
    conflict_captions: Sequence[str],
    true_count: int | None = None,
    seed: int | None = None,
) -> ProbingDraft:
    require_author(database, username)
    return build_probing(true_captions, conflict_captions, true_count, seed)


def create_item(
    database: Database,
    settings: Settings,
    username: str | None,
    *,
    category: str,
    question: str,
    options: Sequence[str],
    answer: str | Iterable[str],
    choice_type: str,
    images: Sequence[str],
    provenance: str = "written",
    item_id: str | None = None,
) -> VqaItem:
    """Store a new draft item (composite built for two or more images) and queue it for verification."""
    user = require_author(database, username)
    options = [o for o in options if (o or "").strip()]
    item = make_item(
        category=category,
        question=question,
        options=options,
        answer=answer,
        choice_type=choice_type,
        images=images,
        provenance=provenance,
        author=user.username,
        item_id=item_id,
    )
    item = replace(item, composite=build_composite(settings, list(item.images)))
    with database.write() as db:
        insert_item(db, item)
        assignment.add_tasks(db, VERIFY_KIND, [item.id], settings.vqa_verifiers)
        audit(db, user.username, "vqa.create", item.id, {"category": item.category, "provenance": provenance})
    return item


def edit_item(database: Database, settings: Settings, username: str | None, item_id: str, **changes: Any) -> VqaItem:
    """Change an item's content. Admins: any item. Authors: their own drafts. Verified items: admins only."""
    user = require_author(database, username)
    with database.write() as db:
        item = fetch_item(db, item_id)
        if not user.has_role("admin"):
            if item.status != "draft":
                raise PermissionDenied(f"item {item_id!r} is {item.status}; only an admin can edit it now")
            if item.author != user.username:
                raise PermissionDenied(f"item {item_id!r} was written by {item.author}; you can edit only your own")
        updated = _apply_changes(settings, item, changes)
        replace_content(db, updated)
        audit(db, user.username, "vqa.edit", item_id, {k: v for k, v in changes.items() if k != "images"})
    return get_item(database, item_id)


def _apply_changes(settings: Settings, item: VqaItem, changes: dict[str, Any]) -> VqaItem:
    allowed = {"category", "question", "options", "answer", "choice_type", "images"}
    unknown = sorted(set(changes) - allowed)
    if unknown:
        raise ValidationError(f"these fields cannot be edited: {', '.join(unknown)}")
    fields = {
        "category": item.category,
        "question": item.question,
        "options": list(item.options),
        "answer": item.answer,
        "choice_type": item.choice_type,
        "images": list(item.images),
    } | {k: v for k, v in changes.items() if v is not None}
    fields["options"] = [o for o in fields["options"] if (o or "").strip()]
    checked = make_item(**fields, provenance=item.provenance, author=item.author, item_id=item.id, status=item.status)
    composite = (
        item.composite if list(checked.images) == list(item.images) else build_composite(settings, list(checked.images))
    )
    return replace(checked, composite=composite)


# -- what is left for a person ------------------------------------------------------------------------
_NOT_SEEN_KEY = f""" AND NOT EXISTS (SELECT 1 FROM vqa_items i WHERE i.id = t.item_id AND i.author = :annotator)
    AND NOT EXISTS (SELECT 1 FROM assignments v WHERE v.kind = '{VERIFY_KIND}' AND v.item_id = t.item_id
                    AND v.annotator = :annotator AND v.status != 'skipped')"""
_NOT_OWN = " AND NOT EXISTS (SELECT 1 FROM vqa_items i WHERE i.id = t.item_id AND i.author = :annotator)"


def _progress(db: sqlite_utils.Database, kind: str, username: str) -> dict[str, int]:
    """Pool progress plus ``left_for_you``: the items this person may still answer (not those whose key they
    have seen) or verify (not their own), their current one included."""
    extra = _NOT_SEEN_KEY if kind == ANSWER_KIND else _NOT_OWN
    return {
        **assignment.pool_progress(db, kind, username),
        "left_for_you": assignment.left_for(db, kind, username, extra),
    }


def left_counts(database: Database, username: str | None) -> dict[str, dict[str, Any] | None]:
    """The caller's answer and (authors) verification counts, without handing anything out; ``study``: a crowd-study
    worker's place in their study (None for anyone else: :func:`_with_study`)."""
    user = auth.require_role(database, username, "annotator")
    db = database.db
    verify = _progress(db, VERIFY_KIND, user.username) if is_author(database, user) else None
    return {
        "answer": _progress(db, ANSWER_KIND, user.username),
        "verify": verify,
        "study": study_view(database, user.username),
    }


# -- verification --------------------------------------------------------------------------------------
def next_verification(database: Database, settings: Settings, username: str | None) -> dict[str, Any]:
    """The caller's current verification task (with the key: verifiers judge it) or a new one.

    Authors never verify their own items: such a task is skipped for them and the next one taken.
    """
    user = require_author(database, username)
    with database.write() as db:
        while True:
            lease = assignment.next_task(db, VERIFY_KIND, user.username, settings.lease_minutes)
            if lease is None:
                break
            if fetch_item(db, lease.item_id).author != user.username:
                break
            assignment.skip(db, VERIFY_KIND, lease.item_id, user.username, "authors do not verify their own items")
        progress = _progress(db, VERIFY_KIND, user.username)
    task = get_item(database, lease.item_id).as_dict() if lease else None
    return {"task": task, "progress": progress}


def submit_verification(
    database: Database,
    settings: Settings,
    username: str | None,
    item_id: str,
    decision: str,
    *,
    compositional: bool = True,
    key_correct: bool = True,
    note: str = "",
    changes: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Accept, edit (accept with corrections, applied now) or reject an item handed to the caller.

    The item's states (every transition tested in tests/test_vqa_states.py): a **draft** waits for
    ``vqa_verifiers`` decisions; when the last has come: all accept (an edit accepts with corrections) ->
    **verified** (and queued for answering); all reject -> **rejected**; otherwise **disputed** (still a draft)
    until a reviewer resolves it (:func:`resolve_dispute`). An item already verified or rejected that is handed
    out again (a re-check round) keeps its state when the decision agrees with it (accepting a verified item keeps
    it verified and in the answer pool); a decision against it disputes it, and a reviewer decides.
    A repeated submit returns the stored outcome. ``status_before``: the item's state before this decision (None
    for a repeated submit), so that a view can say "still a draft" rather than "now draft".
    """
    user = require_author(database, username)
    if decision not in DECISIONS:
        raise ValidationError(f"decision must be one of {', '.join(DECISIONS)}, not {decision!r}")
    if decision == "edit" and not changes:
        raise ValidationError("an edit needs the corrected fields")
    if decision == "accept" and not (compositional and key_correct):
        raise ValidationError("you cannot accept an item that is not compositional or has a wrong key: edit or reject")
    status_before = None
    with database.write() as db:
        row, repeated = assignment.claim_for_submit(db, VERIFY_KIND, item_id, user.username)
        if not repeated:
            item = fetch_item(db, item_id)
            status_before = "disputed" if item.disputed else item.status
            if decision == "edit":
                replace_content(db, _apply_changes(settings, item, dict(changes or {})))
            db.conn.execute(
                """INSERT INTO vqa_verifications (item_id, verifier, decision, compositional, key_correct, note,
                       changes, submitted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    item_id,
                    user.username,
                    decision,
                    int(compositional),
                    int(key_correct),
                    (note or "")[:2000],
                    json.dumps(changes, ensure_ascii=False) if changes else None,
                    utcnow(),
                ),
            )
            completion = assignment.finish(db, row["id"], "submitted")
            if completion is not None:
                webhooks.emit(db, "item.completed", webhooks.item_completed(db, completion))
            audit(db, user.username, f"vqa.verify.{decision}", item_id, {"note": (note or "")[:200]})
            if item.status == "draft":
                _settle(db, settings, item_id)
            elif (decision == "reject") != (item.status == "rejected"):  # a re-check that disagrees
                db.conn.execute(
                    "UPDATE vqa_items SET status = 'draft', disputed = 1, updated_at = ? WHERE id = ?",
                    (utcnow(), item_id),
                )
    return {"item": get_item(database, item_id).as_dict(), "status_before": status_before}


def _settle(db: sqlite_utils.Database, settings: Settings, item_id: str) -> None:
    decisions = [
        r[0]
        for r in db.conn.execute(
            "SELECT decision FROM vqa_verifications WHERE item_id = ? AND decision IN ('accept', 'edit', 'reject')",
            (item_id,),
        )
    ]
    if len(decisions) < settings.vqa_verifiers:
        return
    if all(d == "reject" for d in decisions):
        _set_status(db, item_id, "rejected", settings)
    elif all(d in ("accept", "edit") for d in decisions):
        _set_status(db, item_id, "verified", settings)
    else:
        db.conn.execute("UPDATE vqa_items SET disputed = 1, updated_at = ? WHERE id = ?", (utcnow(), item_id))


def _set_status(db: sqlite_utils.Database, item_id: str, status: str, settings: Settings) -> None:
    db.conn.execute(
        "UPDATE vqa_items SET status = ?, disputed = 0, updated_at = ? WHERE id = ?", (status, utcnow(), item_id)
    )
    if status == "verified":
        assignment.add_tasks(db, ANSWER_KIND, [item_id], settings.vqa_answers_per_item)


def disputes(database: Database, username: str | None) -> list[dict[str, Any]]:
    """Items whose verifiers disagree, with their decisions (reviewers)."""
    auth.require_role(database, username, "reviewer")
    out = []
    for item in (i for i in list_items(database, status="draft") if i.disputed):
        view = item.as_dict()
        view["verifications"] = database.query(
            "SELECT verifier, decision, compositional, key_correct, note FROM vqa_verifications WHERE item_id = ?",
            (item.id,),
        )
        out.append(view)
    return out


def resolve_dispute(
    database: Database, settings: Settings, username: str | None, item_id: str, decision: str, note: str = ""
) -> dict[str, Any]:
    """A reviewer's final accept or reject of a disputed item."""
    user = auth.require_role(database, username, "reviewer")
    if decision not in ("accept", "reject"):
        raise ValidationError("a reviewer accepts or rejects a disputed item")
    with database.write() as db:
        item = fetch_item(db, item_id)
        if not item.disputed:
            raise ValidationError(f"item {item_id!r} is not disputed")
        db.conn.execute(
            """INSERT INTO vqa_verifications (item_id, verifier, decision, note, submitted_at)
               VALUES (?, ?, ?, ?, ?)""",
            (item_id, user.username, f"resolve_{decision}", (note or "")[:2000], utcnow()),
        )
        _set_status(db, item_id, "verified" if decision == "accept" else "rejected", settings)
        audit(db, user.username, f"vqa.resolve.{decision}", item_id, {"note": (note or "")[:200]})
    return {"item": get_item(database, item_id).as_dict()}


# -- answering (the human baseline) --------------------------------------------------------------------
def next_answer_task(
    database: Database, settings: Settings, username: str | None, claim: bool = True
) -> dict[str, Any]:
    """The caller's current item to answer, or a new one: the question view only, never the key.
    With ``claim=False`` (a page only looked at) nothing new is leased: ``task`` is the held item or None.
    A crowd-study worker's reply has ``study`` too (their quota and, once done, their code: :func:`_with_study`)."""
    user = auth.require_role(database, username, "annotator")
    if not claim:
        lease = assignment.current_lease(database.db, ANSWER_KIND, user.username)
        task = get_item(database, lease.item_id).question_view() if lease else None
        reply = {
            "task": task,
            "progress": assignment.pool_progress(database.db, ANSWER_KIND, user.username),
            "claimed": False,
        }
        return _with_study(database, user.username, reply)
    quality.ensure_active(database, user.username)
    with database.write() as db:
        # a crowd-study worker gets items only while their quota is open (backend/campaigns/workers.py)
        lease = None
        while may_hand_out(db, user.username, ANSWER_KIND):
            lease = gold.next_task(db, settings, ANSWER_KIND, user.username)  # gold mixed in, quality checked
            if lease is None or not _has_seen_key(db, fetch_item(db, lease.item_id), user.username):
                break
            assignment.skip(db, ANSWER_KIND, lease.item_id, user.username, "has seen this item's key")
        progress = _progress(db, ANSWER_KIND, user.username)
    task = get_item(database, lease.item_id).question_view() if lease else None
    return _with_study(database, user.username, {"task": task, "progress": progress})


def _with_study(database: Database, username: str, reply: dict[str, Any]) -> dict[str, Any]:
    """A crowd-study worker's reply also says where they stand in their study (``study``: tasks done of the quota
    and, once their part ended, the code they earned: backend/campaigns/workers.py:study_view), as the intents
    hand-out does; nothing is added for anyone else."""
    study = study_view(database, username)
    if study is not None:
        reply["study"] = study
    return reply


def check_selection(item: VqaItem, letters: Sequence[str]) -> None:
    unknown = [a for a in letters if a not in item.letters]
    if unknown:
        raise ValidationError(f"{', '.join(unknown)} is not an option; choose among {', '.join(item.letters)}")
    if not letters:
        raise ValidationError("select an option")
    if item.choice_type == "single" and len(letters) != 1:
        raise ValidationError("this is a single-choice question: select exactly one option")


def submit_answer(
    database: Database, settings: Settings, username: str | None, item_id: str, answer: str | Iterable[str]
) -> dict[str, Any]:
    """Store the caller's answer to an item handed to them; only then return the key and the score.

    A repeated submit returns the stored answer (client retries never make a second row).
    """
    user = auth.require_role(database, username, "annotator")
    letters = parse_letters(answer)
    with database.write() as db:
        row, repeated = assignment.claim_for_submit(db, ANSWER_KIND, item_id, user.username)
        item = fetch_item(db, item_id)
        if not repeated:
            check_selection(item, letters)
            db.conn.execute(
                "INSERT INTO vqa_answers (item_id, annotator, answer, submitted_at) VALUES (?, ?, ?, ?)",
                (item_id, user.username, json.dumps(list(letters)), utcnow()),
            )
            completion = assignment.finish(db, row["id"], "submitted")
            if completion is not None:
                webhooks.emit(db, "item.completed", webhooks.item_completed(db, completion))
            quality.after_submit(db, settings, row["id"], user.username)  # a gold answer is scored now
            answer = {"answer": list(letters)}
            webhooks.emit(db, "annotation.created", webhooks.annotation_created(db, row["id"], answer))
            audit(db, user.username, "vqa.answer", item_id, {"answer": list(letters)})
        stored = json.loads(
            db.conn.execute(
                "SELECT answer FROM vqa_answers WHERE item_id = ? AND annotator = ?", (item_id, user.username)
            ).fetchone()[0]
        )
        progress = _progress(db, ANSWER_KIND, user.username)
    return {
        "item_id": item_id,
        "answer": stored,
        "key": list(item.answer),
        "score": float(partial_credit(stored, item.answer)),
        "progress": progress,
    }


def author_status(database: Database, username: str | None) -> dict[str, Any]:
    """What the caller may do in the VQA tab (the UI shows or hides panels accordingly)."""
    user = auth.require_role(database, username, "annotator")
    return {"author": is_author(database, user), "reviewer": user.has_role("reviewer"), "admin": user.has_role("admin")}
