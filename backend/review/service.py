"""The review queue, per-annotation judgments, the final selection and round transitions.

ViLPAct (section "Intent annotation"): an expert reviewed every crowd-written intent in three rounds and
kept the most reasonable ones; annotations that never met the criteria were discarded. Here:

* a sequence whose N live annotations of its current round are in becomes a *review task* (kind
  ``review``, item ``<sequence>@<round>``) in the shared assignment pool, so two reviewers never take the
  same item at once, and nobody reviews the same sequence round twice;
* the first review of a round is the *decision*. With at least one annotation judged reasonable, the
  reviewer picks the final concrete and high-level intent (an edit is stored as such, originals kept)
  and the sequence is accepted. With none, the intent task goes back to the pool as round r+1 (only
  annotators who have not seen it can take it) with the reviewer's comments as guidance; after
  ``review_max_rounds`` it is marked discarded (nothing is deleted);
* a share of sequence rounds (``review_check_share``) wants a second, independent *check* review. Check
  reviews change nothing; they feed the reviewer-agreement figures.

Every public function takes the caller's user name and checks the reviewer role.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlite_utils

from backend import assignment, webhooks
from backend.accounts import auth
from backend.errors import ValidationError
from backend.intents.rules import check_intent_pair
from backend.review.counts import queue_counts
from backend.settings import Settings
from backend.storage import Database, audit, utcnow
from backend.vilpact.sequences import get_sequence
from backend.vilpact.video import servable_video

KIND = "review"
INTENT_KIND = "intent"


def review_item_id(sequence_id: str, review_round: int) -> str:
    """The pool item of one sequence round.

    >>> review_item_id("2NZ5C", 2)
    '2NZ5C@2'
    >>> split_item_id('2NZ5C@2')
    ('2NZ5C', 2)
    """
    return f"{sequence_id}@{review_round}"


def split_item_id(item_id: str) -> tuple[str, int]:
    sequence_id, _, review_round = item_id.rpartition("@")
    return sequence_id, int(review_round)


def wants_check(item_id: str, share: float) -> bool:
    """Whether this sequence round gets a second, independent review (stable: a hash of the item)."""
    if share <= 0:
        return False
    bucket = int(hashlib.sha256(item_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return bucket < share


_UNSYNCED = """SELECT t.item_id, t.round FROM tasks t
           WHERE t.kind = ? AND t.status = 'complete'
             AND NOT EXISTS (SELECT 1 FROM tasks r WHERE r.kind = ? AND r.item_id = t.item_id || '@' || t.round)
           ORDER BY t.rowid"""


def sync_review_tasks(db: sqlite_utils.Database, settings: Settings) -> int:
    """Add a review task for every intent task whose round is complete. Inside ``write()``."""
    rows = db.conn.execute(_UNSYNCED, (INTENT_KIND, KIND)).fetchall()
    added = 0
    for row in rows:
        item = review_item_id(row["item_id"], row["round"])
        added += assignment.add_tasks(db, KIND, [item], 2 if wants_check(item, settings.review_check_share) else 1)
    return added


@dataclass(frozen=True)
class Judgment:
    annotation_id: int
    reasonable: bool
    comment: str = ""


@dataclass(frozen=True)
class FinalChoice:
    """Where the final concrete and high-level intents come from, and their (maybe edited) text."""

    concrete_from: int
    high_level_from: int
    concrete_intent: str | None = None
    high_level_intent: str | None = None


def round_annotations(database: Database, sequence_id: str, review_round: int) -> list[dict[str, Any]]:
    return database.query(
        """SELECT id, annotator, concrete_intent, high_level_intent, seconds_spent, submitted_at FROM annotations
           WHERE sequence_id = ? AND round = ? AND source = 'live' ORDER BY submitted_at, id""",
        (sequence_id, review_round),
    )


def _history(database: Database, sequence_id: str) -> list[dict[str, Any]]:
    return database.query(
        """SELECT r.round, r.outcome, r.note, j.reasonable, j.comment FROM reviews r
           LEFT JOIN review_judgments j ON j.review_id = r.id
           WHERE r.sequence_id = ? AND r.role = 'decision' ORDER BY r.round, j.annotation_id""",
        (sequence_id,),
    )


def item_view(
    database: Database, settings: Settings, sequence_id: str, review_round: int, show_names: bool = False
) -> dict[str, Any]:
    """What a reviewer sees: video, timeline and the round's intents side by side (names hidden by default)."""
    sequence = get_sequence(database, sequence_id)
    video = servable_video(settings, sequence.video_id, sequence.video_path)
    task = database.query_one("SELECT guidance FROM tasks WHERE kind = ? AND item_id = ?", (INTENT_KIND, sequence_id))
    annotations = []
    for index, row in enumerate(round_annotations(database, sequence_id, review_round)):
        annotations.append(
            {
                "annotation_id": row["id"],
                "label": row["annotator"] if show_names else f"Annotator {chr(ord('A') + index)}",
                "concrete_intent": row["concrete_intent"],
                "high_level_intent": row["high_level_intent"],
            }
        )
    return {
        "sequence_id": sequence.id,
        "round": review_round,
        "max_rounds": settings.review_max_rounds,
        "scene": sequence.scene,
        "timeline": sequence.timeline(),
        "actions": [{"name": a.name, "start": a.start, "end": a.end} for a in sequence.actions],
        "video": str(video) if video else None,
        "video_missing": video is None,
        "guidance": task["guidance"] if task and review_round > 1 else None,
        "annotations": annotations,
        "history": _history(database, sequence_id),
    }


def view_item(
    database: Database,
    settings: Settings,
    username: str | None,
    sequence_id: str,
    review_round: int,
    show_names: bool = False,
) -> dict[str, Any]:
    """A review item for a reviewer (e.g. redrawn with the annotator names shown)."""
    auth.require_role(database, username, "reviewer")
    return item_view(database, settings, sequence_id, review_round, show_names=show_names)


def _annotated_by(db: sqlite_utils.Database, item_id: str, username: str) -> bool:
    sequence_id, review_round = split_item_id(item_id)
    return (
        db.conn.execute(
            "SELECT 1 FROM annotations WHERE sequence_id = ? AND round = ? AND annotator = ? AND source = 'live'",
            (sequence_id, review_round, username),
        ).fetchone()
        is not None
    )


def next_review(
    database: Database, settings: Settings, username: str | None, show_names: bool = False
) -> dict[str, Any]:
    """The caller's current review item, or a newly leased one; ``item`` is None when the queue is empty.

    Nobody reviews a round they annotated: such an item is passed over (skipped for them, for good).
    """
    username = auth.require_role(database, username, "reviewer").username
    with database.write() as db:
        sync_review_tasks(db, settings)
        lease = assignment.next_task(db, KIND, username, settings.lease_minutes)
        while lease is not None and _annotated_by(db, lease.item_id, username):
            assignment.skip(db, KIND, lease.item_id, username, "the reviewer annotated this round")
            lease = assignment.next_task(db, KIND, username, settings.lease_minutes)
        counts = queue_counts(db, username)
    item = None
    if lease is not None:
        item = item_view(database, settings, *split_item_id(lease.item_id), show_names=show_names)
    return {"item": item, "queue": counts["waiting"], "for_you": counts["for_you"]}


def queue_size(database: Database) -> int:
    """Sequence rounds waiting for a review (including second, check reviews)."""
    return int(database.scalar("SELECT count(*) FROM tasks WHERE kind = ? AND status = 'open'", (KIND,)) or 0)


def review_counts(database: Database, settings: Settings, username: str | None) -> dict[str, int]:
    """``waiting`` and ``for_you`` (backend/review/counts.py) as of now: complete rounds become review
    tasks first, so the count is right before anybody asked for an item. Leases nothing; opens a write
    transaction only when a complete round has no review task yet (opening the tab is a read)."""
    reviewer = auth.require_role(database, username, "reviewer").username
    if database.query_one(_UNSYNCED + " LIMIT 1", (INTENT_KIND, KIND)) is not None:  # a write only when needed
        with database.write() as db:
            sync_review_tasks(db, settings)
    return queue_counts(database.db, reviewer)


def _check_judgments(annotations: list[dict], judgments: list[Judgment]) -> dict[int, Judgment]:
    expected = {row["id"] for row in annotations}
    by_id = {j.annotation_id: j for j in judgments}
    problems = []
    if len(by_id) != len(judgments):
        problems.append("each annotation may be judged once")
    if set(by_id) != expected:
        problems.append(f"judge every annotation of this round (expected {len(expected)}, got {len(by_id)})")
    if problems:
        raise ValidationError(problems)
    return by_id


def _final_rows(
    database: Database,
    settings: Settings,
    sequence_id: str,
    annotations: list[dict],
    judged: dict[int, Judgment],
    choice: FinalChoice | None,
) -> list[dict[str, Any]]:
    """The final intents of an accepted round: the selection first, then the other reasonable ones."""
    reasonable = [row for row in annotations if judged[row["id"]].reasonable]
    by_id = {row["id"]: row for row in reasonable}
    if choice is None:
        raise ValidationError("select the final concrete and high-level intent among the reasonable ones")
    if choice.concrete_from not in by_id or choice.high_level_from not in by_id:
        raise ValidationError("the final intents must come from annotations you judged reasonable")
    original_concrete = by_id[choice.concrete_from]["concrete_intent"]
    original_high = by_id[choice.high_level_from]["high_level_intent"]
    concrete = (choice.concrete_intent or original_concrete).strip()
    high_level = (choice.high_level_intent or original_high).strip()
    edited = concrete != original_concrete or high_level != original_high
    if edited:
        actions = get_sequence(database, sequence_id).action_names
        problems = check_intent_pair(concrete, high_level, actions, settings.max_action_similarity)
        if problems:
            raise ValidationError(problems)
    rows = [
        {
            "concrete_intent": concrete,
            "high_level_intent": high_level,
            "edited": int(edited),
            "original_concrete_intent": original_concrete,
            "original_high_level_intent": original_high,
            "concrete_from": choice.concrete_from,
            "high_level_from": choice.high_level_from,
        }
    ]
    used = {choice.concrete_from, choice.high_level_from}
    for row in reasonable:
        if row["id"] not in used:
            rows.append(
                {
                    "concrete_intent": row["concrete_intent"],
                    "high_level_intent": row["high_level_intent"],
                    "edited": 0,
                    "original_concrete_intent": row["concrete_intent"],
                    "original_high_level_intent": row["high_level_intent"],
                    "concrete_from": row["id"],
                    "high_level_from": row["id"],
                }
            )
    return rows


def _guidance(
    db: sqlite_utils.Database, sequence_id: str, review_round: int, judged: dict[int, Judgment], note: str
) -> str:
    previous = db.conn.execute(
        "SELECT guidance FROM tasks WHERE kind = ? AND item_id = ?", (INTENT_KIND, sequence_id)
    ).fetchone()
    lines = [f"Round {review_round} review: no intent was judged reasonable."]
    if note.strip():
        lines.append(f"- {note.strip()}")
    lines += [f"- {j.comment.strip()}" for j in judged.values() if j.comment.strip()]
    earlier = previous["guidance"] if previous and previous["guidance"] else ""
    return "\n".join(lines) + (f"\n\n{earlier}" if earlier else "")


def _apply_outcome(
    db: sqlite_utils.Database,
    settings: Settings,
    sequence_id: str,
    review_round: int,
    accepted: bool,
    judged: dict[int, Judgment],
    note: str,
) -> str:
    if accepted:
        db.conn.execute(
            "UPDATE tasks SET status = 'accepted' WHERE kind = ? AND item_id = ?", (INTENT_KIND, sequence_id)
        )
        return "accepted"
    if review_round >= settings.review_max_rounds:
        db.conn.execute(
            "UPDATE tasks SET status = 'discarded' WHERE kind = ? AND item_id = ?", (INTENT_KIND, sequence_id)
        )
        return "discarded"
    db.conn.execute(
        "UPDATE tasks SET round = ?, status = 'open', guidance = ? WHERE kind = ? AND item_id = ?",
        (review_round + 1, _guidance(db, sequence_id, review_round, judged, note), INTENT_KIND, sequence_id),
    )
    # Whoever held the task without submitting has seen it: close those leases so round r+1 goes to new people.
    db.conn.execute(
        """UPDATE assignments SET status = 'skipped', finished_at = ?, skip_reason = ?
           WHERE kind = ? AND item_id = ? AND status = 'leased'""",
        (utcnow(), f"round {review_round} closed by review", INTENT_KIND, sequence_id),
    )
    return "returned"


@dataclass(frozen=True)
class StoredReview:
    """One review as its row stores it."""

    sequence_id: str
    round: int
    reviewer: str
    role: str  # decision or check
    outcome: str | None
    note: str
    now: str
    seconds_spent: float


def _store_review(db: Any, r: StoredReview, judged: dict[int, Judgment], finals: list[dict[str, Any]]) -> int:
    """Insert the review, its judgments and (a decision that accepts) the final intents; returns the review's id."""
    review_id = db.conn.execute(
        """INSERT INTO reviews (sequence_id, round, reviewer, role, outcome, note, submitted_at, seconds_spent)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
        (r.sequence_id, r.round, r.reviewer, r.role, r.outcome, r.note.strip()[:2000] or None, r.now, r.seconds_spent),
    ).lastrowid
    db.conn.executemany(
        "INSERT INTO review_judgments (review_id, annotation_id, reasonable, comment) VALUES (?, ?, ?, ?)",
        [(review_id, j.annotation_id, int(j.reasonable), j.comment.strip()[:2000] or None) for j in judged.values()],
    )
    for position, final_row in enumerate(finals, start=1):
        db.conn.execute(
            """INSERT INTO final_intents (sequence_id, position, concrete_intent, high_level_intent, edited,
                   original_concrete_intent, original_high_level_intent, concrete_from, high_level_from, origin,
                   review_round, review_id, decided_at)
               VALUES (:sequence_id, :position, :concrete_intent, :high_level_intent, :edited,
                   :original_concrete_intent, :original_high_level_intent, :concrete_from, :high_level_from,
                   'review', :round, :review_id, :now)""",
            {
                **final_row,
                "sequence_id": r.sequence_id,
                "position": position,
                "round": r.round,
                "review_id": review_id,
                "now": r.now,
            },
        )
    return review_id


def submit_review(
    database: Database,
    settings: Settings,
    username: str | None,
    sequence_id: str,
    review_round: int,
    judgments: list[Judgment],
    final: FinalChoice | None = None,
    note: str = "",
) -> dict[str, Any]:
    """Store one review in one transaction and apply the round's outcome if it is the decision.

    A repeated submit (a client retry) returns the stored review with ``"duplicate": true``.
    """
    username = auth.require_role(database, username, "reviewer").username
    annotations = round_annotations(database, sequence_id, review_round)
    judged = _check_judgments(annotations, judgments)
    item = review_item_id(sequence_id, review_round)
    with database.write() as db:
        row, already = assignment.claim_for_submit(db, KIND, item, username)
        if already:
            stored = db.conn.execute(
                "SELECT * FROM reviews WHERE sequence_id = ? AND round = ? AND reviewer = ?",
                (sequence_id, review_round, username),
            ).fetchone()
            return {"review": dict(stored), "duplicate": True}
        decided = db.conn.execute(
            "SELECT 1 FROM reviews WHERE sequence_id = ? AND round = ? AND role = 'decision'",
            (sequence_id, review_round),
        ).fetchone()
        role = "check" if decided else "decision"
        accepted = any(j.reasonable for j in judged.values())
        finals = (
            _final_rows(database, settings, sequence_id, annotations, judged, final)
            if (role == "decision" and accepted)
            else []
        )
        now = utcnow()
        spent = (datetime.fromisoformat(now) - datetime.fromisoformat(row["leased_at"])).total_seconds()
        outcome = (
            _apply_outcome(db, settings, sequence_id, review_round, accepted, judged, note)
            if role == "decision"
            else None
        )
        stored_review = StoredReview(sequence_id, review_round, username, role, outcome, note, now, spent)
        review_id = _store_review(db, stored_review, judged, finals)
        assignment.finish(db, row["id"], "submitted")
        if outcome in ("accepted", "discarded"):  # the sequence's review is over (another round is not)
            webhooks.emit(
                db, "review.finished", lambda: _finished_data(db, sequence_id, review_round, outcome, username)
            )
        audit(
            db,
            username,
            f"review.{role}",
            item,
            {
                "outcome": outcome,
                "judgments": [j.__dict__ for j in judged.values()],
                "note": note,
                "final": finals[0] if finals else None,
            },
        )
        stored = dict(db.conn.execute("SELECT * FROM reviews WHERE id = ?", (review_id,)).fetchone())
    return {"review": stored, "duplicate": False}


def _finished_data(db: sqlite_utils.Database, sequence_id: str, review_round: int, outcome: str, reviewer: str) -> dict:
    finals = db.conn.execute(
        "SELECT position, concrete_intent, high_level_intent, edited FROM final_intents WHERE sequence_id = ? "
        "ORDER BY position",
        (sequence_id,),
    ).fetchall()
    return {
        "sequence_id": sequence_id,
        "round": review_round,
        "outcome": outcome,
        "reviewer": reviewer,
        "final_intents": [dict(r) for r in finals],
    }


def skip_review(
    database: Database, settings: Settings, username: str | None, sequence_id: str, review_round: int, reason: str
) -> dict[str, Any]:
    """Give a review item back with a reason (for example, a conflict of interest)."""
    username = auth.require_role(database, username, "reviewer").username
    with database.write() as db:
        assignment.skip(db, KIND, review_item_id(sequence_id, review_round), username, reason)
    return next_review(database, settings, username)


def final_intents(database: Database, username: str, sequence_id: str) -> list[dict[str, Any]]:
    auth.require_role(database, username, "reviewer")
    get_sequence(database, sequence_id)  # NotFound for an unknown id
    return database.query("SELECT * FROM final_intents WHERE sequence_id = ? ORDER BY position", (sequence_id,))
