"""Annotator validation of planning questions (the paper's human check, as in the released crowd
template ``action_sequence_evaluation_planning.html``): for each question an annotator marks at most one
choice as plausible, or "none is plausible". Several annotators per question (setting
``planning_annotators_per_question``), handed out through the shared pool (``backend/assignment.py``,
kind ``planning``).

Human accuracy is measured against the key; a question where most of its annotators reject the key goes to
the disagreement queue (a possible key error) for reviewers. An authored question becomes ``validated``
when, once all its checks are in, a strict majority chose its key, and ``rejected`` otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlite_utils

from backend import assignment, webhooks
from backend.accounts.auth import require_role
from backend.campaigns import gold, quality
from backend.campaigns.workers import may_hand_out, study_view
from backend.errors import NotFound, ValidationError
from backend.planning.questions import PlanningQuestion, get_question
from backend.planning.results import bootstrap_accuracy
from backend.settings import Settings
from backend.storage import Database, audit, utcnow

KIND = "planning"
NONE_PLAUSIBLE = -1


@dataclass(frozen=True)
class PlanningTask:
    question: PlanningQuestion
    expires_at: str


def next_question(
    database: Database, username: str | None, lease_minutes: float, settings: Settings | None = None
) -> PlanningTask | None:
    """The caller's current or next question to check (None when the pool has nothing left for them).
    With ``settings`` gold questions are mixed in and quality checked (backend/campaigns/gold.py)."""
    username = require_role(database, username, "annotator").username
    if settings is not None:
        quality.ensure_active(database, username)
    with database.write() as db:  # a crowd-study worker: only while their quota is open (backend/campaigns)
        if not may_hand_out(db, username, KIND):
            lease = None
        elif settings is not None:
            lease = gold.next_task(db, settings.replace(lease_minutes=lease_minutes), KIND, username)
        else:
            lease = assignment.next_task(db, KIND, username, lease_minutes)
    if lease is None:
        return None
    return PlanningTask(get_question(database, lease.item_id), lease.expires_at)


def study_of(database: Database, username: str | None) -> dict[str, Any] | None:
    """Where the caller stands in their crowd study (tasks done of the quota and, once their part ended, the code
    they earned: backend/campaigns/workers.py:study_view), or None for anyone who is no study worker."""
    name = require_role(database, username, "annotator").username
    return study_view(database, name)


def check_counts(database: Database, username: str | None) -> dict[str, int]:
    """The caller's checks so far and the questions left for them (their current one included); hands
    nothing out, so the tab can show it on opening."""
    name = require_role(database, username, "annotator").username
    db = database.db
    return {**assignment.pool_progress(db, KIND, name), "left_for_you": assignment.left_for(db, KIND, name)}


def submit_check(
    database: Database,
    username: str | None,
    question_id: str,
    plausible_choice: int,
    seconds_spent: float | None = None,
    settings: Settings | None = None,
) -> dict:
    """Store the caller's check. ``plausible_choice``: 0-5, or -1 for "none is plausible". A repeated
    submit (a client retry) returns the stored check and writes nothing. A gold question is scored now; with
    ``settings`` the worker's quality is checked at once too (backend/campaigns/quality.py)."""
    username = require_role(database, username, "annotator").username
    if not isinstance(plausible_choice, int) or not NONE_PLAUSIBLE <= plausible_choice <= 5:
        raise ValidationError("mark one choice (A-F) as plausible, or choose 'none is plausible'")
    with database.write() as db:
        row, already = assignment.claim_for_submit(db, KIND, question_id, username)
        if already:
            stored = db.conn.execute(
                "SELECT plausible_choice FROM planning_checks WHERE question_id = ? AND annotator = ?",
                (question_id, username),
            ).fetchone()
            return {"question_id": question_id, "plausible_choice": stored[0] if stored else None, "repeated": True}
        db.conn.execute(
            """INSERT INTO planning_checks (question_id, annotator, plausible_choice, round, seconds_spent,
                   submitted_at) VALUES (?, ?, ?, ?, ?, ?)""",
            (question_id, username, plausible_choice, row["round"], seconds_spent, utcnow()),
        )
        completion = assignment.finish(db, row["id"], "submitted")
        if completion is not None:
            webhooks.emit(db, "item.completed", webhooks.item_completed(db, completion))
        quality.after_submit(db, settings, row["id"], username)
        answer = {"plausible_choice": plausible_choice}
        webhooks.emit(db, "annotation.created", webhooks.annotation_created(db, row["id"], answer))
        audit(db, username, "planning.check", question_id, {"plausible_choice": plausible_choice})
        _settle_authored(db, question_id)
    return {"question_id": question_id, "plausible_choice": plausible_choice, "repeated": False}


def skip_question(database: Database, username: str, question_id: str, reason: str) -> None:
    require_role(database, username, "annotator")
    with database.write() as db:
        assignment.skip(db, KIND, question_id, username, reason)


def _settle_authored(db: sqlite_utils.Database, question_id: str) -> None:
    """Validate or reject a pending authored question once its task is complete."""
    q = db.conn.execute(
        "SELECT answer_index, status, source FROM planning_questions WHERE id = ?", (question_id,)
    ).fetchone()
    task = db.conn.execute("SELECT status FROM tasks WHERE kind = ? AND item_id = ?", (KIND, question_id)).fetchone()
    if q is None or q["source"] != "authored" or q["status"] != "pending" or task is None or task[0] != "complete":
        return
    votes = [
        r[0]
        for r in db.conn.execute("SELECT plausible_choice FROM planning_checks WHERE question_id = ?", (question_id,))
    ]
    status = "validated" if 2 * sum(1 for v in votes if v == q["answer_index"]) > len(votes) else "rejected"
    db.conn.execute("UPDATE planning_questions SET status = ? WHERE id = ?", (status, question_id))
    audit(db, "planning.validation", "planning.settle", question_id, {"status": status, "votes": votes})


def set_status(database: Database, username: str, question_id: str, status: str) -> None:
    """A reviewer's decision on a question (e.g. after looking at the disagreement queue)."""
    require_role(database, username, "reviewer")
    if status not in ("released", "pending", "validated", "rejected"):
        raise ValidationError(f"unknown status {status!r}")
    with database.write() as db:
        cur = db.conn.execute("UPDATE planning_questions SET status = ? WHERE id = ?", (status, question_id))
        if cur.rowcount == 0:
            raise NotFound(f"there is no planning question {question_id!r}")
        audit(db, username, "planning.set_status", question_id, {"status": status})


def _checks(database: Database) -> list[dict]:
    return database.query(
        """SELECT c.question_id, c.annotator, c.plausible_choice, q.answer_index
           FROM planning_checks c JOIN planning_questions q ON q.id = c.question_id ORDER BY c.question_id, c.id"""
    )


def human_accuracy(database: Database, samples: int = 2000) -> dict:
    """Per check (each annotator's check counts once) and per question (majority choice; a tie is wrong).

    Returns the two accuracies with bootstrap intervals, and the share of "none is plausible".
    """
    rows = _checks(database)
    per_check = bootstrap_accuracy([r["plausible_choice"] == r["answer_index"] for r in rows], samples)
    by_question: dict[str, list[dict]] = {}
    for r in rows:
        by_question.setdefault(r["question_id"], []).append(r)
    majority = []
    for checks in by_question.values():
        counts: dict[int, int] = {}
        for c in checks:
            counts[c["plausible_choice"]] = counts.get(c["plausible_choice"], 0) + 1
        top = max(counts.values())
        winners = [k for k, v in counts.items() if v == top]
        majority.append(len(winners) == 1 and winners[0] == checks[0]["answer_index"])
    return {
        "checks": len(rows),
        "per_check": per_check.as_dict(),
        "per_question_majority": bootstrap_accuracy(majority, samples).as_dict(),
        "none_plausible_share": round(sum(1 for r in rows if r["plausible_choice"] == NONE_PLAUSIBLE) / len(rows), 4)
        if rows
        else 0.0,
    }


def human_answers(database: Database) -> dict[str, int | None]:
    """One answer per checked question, for the leaderboard: the majority choice (None on a tie)."""
    by_question: dict[str, dict[int, int]] = {}
    for r in _checks(database):
        counts = by_question.setdefault(r["question_id"], {})
        counts[r["plausible_choice"]] = counts.get(r["plausible_choice"], 0) + 1
    answers: dict[str, int | None] = {}
    for qid, counts in by_question.items():
        top = max(counts.values())
        winners = [k for k, v in counts.items() if v == top]
        answers[qid] = winners[0] if len(winners) == 1 and winners[0] >= 0 else None
    return answers


def disagreement_queue(database: Database, username: str | None) -> list[dict]:
    """Questions where most of their annotators reject the key (possible key errors), for reviewers."""
    require_role(database, username, "reviewer")
    out = []
    by_question: dict[str, list[dict]] = {}
    for r in _checks(database):
        by_question.setdefault(r["question_id"], []).append(r)
    for qid, checks in sorted(by_question.items()):
        key = checks[0]["answer_index"]
        rejecting = sum(1 for c in checks if c["plausible_choice"] != key)
        if 2 * rejecting > len(checks):
            votes: dict[str, int] = {}
            for c in checks:
                label = "none" if c["plausible_choice"] < 0 else "ABCDEF"[c["plausible_choice"]]
                votes[label] = votes.get(label, 0) + 1
            out.append(
                {
                    "question_id": qid,
                    "key": "ABCDEF"[key],
                    "checks": len(checks),
                    "rejecting": rejecting,
                    "votes": votes,
                }
            )
    return out
