"""Quality checks while working (issue 16 §3): gold accuracy, a speed floor, flags with reasons, automatic
pause past a limit, blocking, and returning a blocked worker's unreviewed answers to the pool.

Invariants:
* :func:`check_worker` runs inside the hand-out transaction (backend/campaigns/gold.py ``next_task``), so a
  worker is flagged and paused before their next task, never after it;
* flags say why: ``too_fast`` (an answer in less time than its floor: ``speed_floor_share`` of the video's
  length for intents, ``speed_floor_seconds`` for planning checks and VQA answers), ``gold_accuracy`` (one per
  gold answer judged while the worker's accuracy is below ``gold_accuracy_threshold``);
* past ``quality_pause_after`` open flags the worker is paused and their leases are freed at once; a
  reviewer resumes them (the flags are resolved), an admin may block them instead;
* blocking disables the account: its sessions end and its leases are freed in the same transaction;
* :func:`return_to_pool` takes a blocked worker's unreviewed answers out of the data (kept in
  ``returned_submissions``) and frees their slots: each task counts one submission fewer, so exact N is
  restored and the pool hands the item to somebody else. Gold answers never held a slot and stay. A study
  worker whose submission the platform rejected gets the same (:func:`move_answers_aside`, issue 26 §6);
* a gold answer is scored as it is submitted (:func:`after_submit`, in the submit's transaction), and the
  worker is checked again at once, so the flags, the pause rule and the report see every scored gold item,
  the worker's last one included.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from backend import assignment
from backend.accounts import auth
from backend.accounts.sessions import end_all_in
from backend.campaigns.gold_scoring import score_new_answers, score_submitted
from backend.errors import NotFound, PermissionDenied, ValidationError
from backend.settings import Settings
from backend.storage import Database, audit, utcnow

WORKER_KINDS = ("intent", "planning", "vqa_answer")


def _seconds(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def speed_floor(db: sqlite_utils.Database, settings: Settings, kind: str, item_id: str) -> float:
    """Seconds below which an answer is too fast (0: no floor).

    Intents: ``speed_floor_share`` x the length of the sequence's video (act_seq_end - act_seq_start):
    a worker cannot have watched it. Only where there is a video to watch (issue 40 §4): a sequence imported
    without one is read from its action list, and a quick answer is no sign of skipping anything. Planning checks
    and VQA answers: ``speed_floor_seconds``.
    """
    if kind == "intent":
        row = db.conn.execute(
            "SELECT act_seq_start, act_seq_end, video_path FROM sequences WHERE id = ?", (item_id,)
        ).fetchone()
        if row is None or row[0] is None or row[1] is None or not row[2] or not Path(row[2]).is_file():
            return 0.0
        return max(0.0, (row[1] - row[0]) * settings.speed_floor_share)
    return settings.speed_floor_seconds if kind in WORKER_KINDS else 0.0


def gold_accuracy(correct: int, judged: int) -> float | None:
    """Share of judged gold answers that were right (None before any is judged).

    >>> gold_accuracy(3, 4), gold_accuracy(0, 0)
    (0.75, None)
    """
    return round(correct / judged, 4) if judged else None


def _flag(db: sqlite_utils.Database, annotator: str, reason: str, kind: str, item_id: str, detail: str) -> None:
    db.conn.execute(
        """INSERT OR IGNORE INTO quality_flags (annotator, reason, kind, item_id, detail, flagged_at)
           VALUES (?, ?, ?, ?, ?, ?)""",
        (annotator, reason, kind, item_id, detail, utcnow()),
    )


def _state(db: sqlite_utils.Database, annotator: str) -> dict[str, Any]:
    row = db.conn.execute("SELECT * FROM worker_quality WHERE username = ?", (annotator,)).fetchone()
    return dict(row) if row else {"state": "active", "checked_until": ""}


def _set_state(db: sqlite_utils.Database, annotator: str, state: str, reason: str | None, by: str) -> None:
    db.conn.execute(
        """INSERT INTO worker_quality (username, state, reason, changed_by, changed_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (username) DO UPDATE SET state = excluded.state, reason = excluded.reason,
               changed_by = excluded.changed_by, changed_at = excluded.changed_at""",
        (annotator, state, reason, by, utcnow()),
    )


def _check_speed(db: sqlite_utils.Database, settings: Settings, annotator: str, since: str) -> None:
    rows = db.conn.execute(
        """SELECT kind, item_id, leased_at, finished_at FROM assignments
           WHERE annotator = ? AND status = 'submitted' AND finished_at > ? ORDER BY finished_at""",
        (annotator, since),
    ).fetchall()
    for row in rows:
        floor = speed_floor(db, settings, row["kind"], row["item_id"])
        spent = _seconds(row["leased_at"], row["finished_at"])
        if floor > 0 and spent < floor:
            detail = f"answered in {spent:.1f} s; the floor is {floor:.1f} s"
            _flag(db, annotator, "too_fast", row["kind"], row["item_id"], detail)
    if rows:
        db.conn.execute(
            """INSERT INTO worker_quality (username, checked_until) VALUES (?, ?)
               ON CONFLICT (username) DO UPDATE SET checked_until = excluded.checked_until""",
            (annotator, rows[-1]["finished_at"]),
        )


def _check_gold(db: sqlite_utils.Database, settings: Settings, annotator: str) -> None:
    correct, judged = db.conn.execute(
        """SELECT coalesce(sum(outcome = 'correct'), 0), count(*) FROM gold_answers
           WHERE annotator = ? AND outcome IN ('correct', 'wrong')""",
        (annotator,),
    ).fetchone()
    accuracy = gold_accuracy(correct, judged)
    if judged >= settings.gold_min_judged and accuracy is not None and accuracy < settings.gold_accuracy_threshold:
        detail = f"gold accuracy {correct}/{judged} = {accuracy:.0%}, below {settings.gold_accuracy_threshold:.0%}"
        _flag(db, annotator, "gold_accuracy", "gold", f"after {judged} judged", detail)


def check_worker(db: sqlite_utils.Database, settings: Settings, annotator: str) -> str:
    """Score new gold answers, flag what breaks a rule, pause past the limit; returns the worker's state
    (``active``, ``paused`` or ``blocked``). Inside ``write()``."""
    current = _state(db, annotator)
    if current["state"] != "active":
        return str(current["state"])
    score_new_answers(db, settings, annotator)
    _check_speed(db, settings, annotator, current["checked_until"])
    _check_gold(db, settings, annotator)
    limit = settings.quality_pause_after
    if limit:
        open_flags = db.conn.execute(
            "SELECT count(*) FROM quality_flags WHERE annotator = ? AND resolved_at IS NULL", (annotator,)
        ).fetchone()[0]
        if open_flags >= limit:
            reason = f"{open_flags} open quality flags (the limit is {limit})"
            _set_state(db, annotator, "paused", reason, "quality")
            released = assignment.release_leases(db, annotator)
            audit(db, "quality", "quality.pause", annotator, {"reason": reason, "leases_released": released})
            return "paused"
    return "active"


def after_submit(db: sqlite_utils.Database, settings: Settings | None, assignment_id: int, annotator: str) -> None:
    """What every worker answer's submit does last, inside its ``write()``: a gold answer is scored now and the
    worker checked again (flags, pause). Nothing for other answers but one read by primary key. Without
    ``settings`` (a caller that has none) the defaults score it and the check waits for the next hand-out."""
    outcome = score_submitted(db, settings or Settings(), assignment_id)
    if outcome is not None and settings is not None:
        check_worker(db, settings, annotator)


def paused_message(database: Database, username: str) -> str | None:
    """What a paused worker is told when they ask for work (None when they are not paused)."""
    row = database.query_one("SELECT state, reason FROM worker_quality WHERE username = ?", (username,))
    if row is None or row["state"] != "paused":
        return None
    return (
        f"Your work is paused for a quality check ({row['reason']}). A reviewer will look at it; "
        "you will get tasks again once they resume you."
    )


def ensure_active(database: Database, username: str) -> None:
    """Refuse a paused worker who asks for a task, saying why (a blocked one cannot sign in at all)."""
    message = paused_message(database, username)
    if message:
        raise PermissionDenied(message)


# -- what reviewers and admins see and do ------------------------------------------------------------
def flags(database: Database, username: str | None, include_resolved: bool = False) -> list[dict[str, Any]]:
    """Quality flags, newest first, with the reason in words and the worker's state (reviewers)."""
    auth.require_role(database, username, "reviewer")
    where = "" if include_resolved else "WHERE f.resolved_at IS NULL"
    return database.query(
        f"""SELECT f.id, f.annotator, coalesce(w.state, 'active') AS state, f.reason, f.kind, f.item_id, f.detail,
                   f.flagged_at, f.resolved_by
            FROM quality_flags f LEFT JOIN worker_quality w ON w.username = f.annotator {where}
            ORDER BY f.id DESC LIMIT 500"""
    )


def resume(database: Database, username: str | None, worker: str) -> dict[str, Any]:
    """A reviewer has looked at a paused worker: their open flags are resolved and they get tasks again."""
    user = auth.require_role(database, username, "reviewer")
    worker = (worker or "").strip()
    if not worker:
        raise ValidationError("name the worker to resume")
    with database.write() as db:
        if db.conn.execute("SELECT 1 FROM users WHERE username = ?", (worker,)).fetchone() is None:
            raise NotFound(f"no user named {worker!r}")
        if _state(db, worker)["state"] == "blocked":
            raise ValidationError(f"{worker!r} is blocked; an admin unblocks them")
        resolved = db.conn.execute(
            "UPDATE quality_flags SET resolved_by = ?, resolved_at = ? WHERE annotator = ? AND resolved_at IS NULL",
            (user.username, utcnow(), worker),
        ).rowcount
        _set_state(db, worker, "active", None, user.username)
        audit(db, user.username, "quality.resume", worker, {"flags_resolved": resolved})
    return {"worker": worker, "state": "active", "flags_resolved": resolved}


def block(database: Database, username: str | None, worker: str, reason: str) -> dict[str, Any]:
    """Block a worker (admins): the account is disabled, its sessions end and its leases are freed now."""
    admin = auth.require_role(database, username, "admin")
    reason = (reason or "").strip()[:500] or "blocked by an admin"
    if worker == admin.username:
        raise ValidationError("you cannot block your own account")
    with database.write() as db:
        cur = db.conn.execute("UPDATE users SET disabled = 1 WHERE username = ?", (worker,))
        if cur.rowcount == 0:
            raise NotFound(f"no user named {worker!r}")
        _set_state(db, worker, "blocked", reason, admin.username)
        detail = {"reason": reason, "sessions_ended": end_all_in(db, worker)}
        detail["leases_released"] = assignment.release_leases(db, worker)
        audit(db, admin.username, "quality.block", worker, detail)
    return {"worker": worker, "state": "blocked", **detail}


def unblock(database: Database, username: str | None, worker: str) -> dict[str, Any]:
    admin = auth.require_role(database, username, "admin")
    with database.write() as db:
        if _state(db, worker)["state"] != "blocked":
            raise ValidationError(f"{worker!r} is not blocked")
        db.conn.execute("UPDATE users SET disabled = 0 WHERE username = ?", (worker,))
        _set_state(db, worker, "active", None, admin.username)
        audit(db, admin.username, "quality.unblock", worker)
    return {"worker": worker, "state": "active"}


# -- returning a blocked worker's answers to the pool --------------------------------------------------
# kind -> (answer table, its item column, SQL true when the answer has been reviewed (:item, :who, :round))
_ANSWERS: dict[str, tuple[str, str, str]] = {
    "intent": (
        "annotations",
        "sequence_id",
        "EXISTS (SELECT 1 FROM reviews r WHERE r.sequence_id = :item AND r.round = :round)",
    ),
    "planning": (
        "planning_checks",
        "question_id",
        "EXISTS (SELECT 1 FROM planning_questions q WHERE q.id = :item AND q.source = 'authored' "
        "AND q.status IN ('validated', 'rejected'))",
    ),
    "vqa_answer": ("vqa_answers", "item_id", "0"),
}


def _return_one(db: sqlite_utils.Database, row: sqlite3.Row, actor: str, why: str) -> bool:
    """Take one submitted answer out and free its slot; False when it was reviewed (it stays)."""
    table, column, reviewed = _ANSWERS[row["kind"]]
    params = {"item": row["item_id"], "who": row["annotator"], "round": row["round"]}
    if db.conn.execute(f"SELECT {reviewed}", params).fetchone()[0]:
        return False
    extra = " AND source = 'live'" if table == "annotations" else ""
    answer = db.conn.execute(
        f"SELECT * FROM {table} WHERE {column} = :item AND annotator = :who{extra}", params
    ).fetchone()
    db.conn.execute(
        """INSERT INTO returned_submissions (kind, item_id, annotator, answer, returned_by, returned_at)
           VALUES (?, ?, ?, ?, ?, ?)""",
        (row["kind"], row["item_id"], row["annotator"], json.dumps(dict(answer) if answer else None), actor, utcnow()),
    )
    db.conn.execute(f"DELETE FROM {table} WHERE {column} = :item AND annotator = :who{extra}", params)
    db.conn.execute(
        "UPDATE assignments SET status = 'skipped', skip_reason = ? WHERE id = ?",
        (f"returned to the pool: {why}", row["id"]),
    )
    # the round is short of N again: reopen it, and withdraw a review task nobody has reviewed yet
    db.conn.execute(
        "UPDATE tasks SET status = 'open' WHERE kind = ? AND item_id = ? AND status = 'complete'",
        (row["kind"], row["item_id"]),
    )
    if row["kind"] == "intent":
        review_item = f"{row['item_id']}@{row['round']}"
        db.conn.execute("DELETE FROM assignments WHERE kind = 'review' AND item_id = ?", (review_item,))
        db.conn.execute("DELETE FROM tasks WHERE kind = 'review' AND item_id = ?", (review_item,))
    return True


def move_answers_aside(db: sqlite_utils.Database, worker: str, actor: str, why: str) -> dict[str, Any]:
    """Take ``worker``'s unreviewed answers out of the data and give their slots back (exact N restored); their
    reviewed answers and gold answers stay. Inside ``write()``; the caller audits."""
    rows = db.conn.execute(
        f"""SELECT a.* FROM assignments a WHERE a.annotator = ? AND a.status = 'submitted'
            AND a.kind IN ({", ".join("?" for _ in _ANSWERS)})
            AND NOT EXISTS (SELECT 1 FROM gold_answers g WHERE g.assignment_id = a.id)""",
        (worker, *_ANSWERS),
    ).fetchall()
    returned = [f"{r['kind']}:{r['item_id']}" for r in rows if _return_one(db, r, actor, why)]
    return {"worker": worker, "returned": returned, "kept_reviewed": len(rows) - len(returned)}


def return_to_pool(database: Database, username: str | None, worker: str) -> dict[str, Any]:
    """Return a blocked worker's unreviewed answers to the pool (admins), in one transaction."""
    admin = auth.require_role(database, username, "admin")
    with database.write() as db:
        if _state(db, worker)["state"] != "blocked":
            raise ValidationError(f"block {worker!r} first: only a blocked worker's answers go back to the pool")
        done = move_answers_aside(db, worker, admin.username, "worker blocked")
        audit(db, admin.username, "quality.return_to_pool", worker, {"returned": done["returned"]})
    return done
