"""Gold items: tasks whose answer is known, mixed into a worker's stream to check them (issue 16 §3).

* Which items may be gold (:data:`GOLD_KINDS`): planning questions with a validated key (``validated``, or
  ``released`` with the paper); VQA items with a verified answer (``verified``); intent sequences with a
  reference: the reviewed final intents, or released intents a reviewer judged reasonable.
* A gold item never counts toward N. Its pool task, if nobody had started it, is set to status ``gold``;
  the exact-N hand-out (backend/assignment) takes only ``open`` tasks, so it never hands a gold item out as
  a real one. An item somebody has started (an ``open`` task with leases) cannot become gold.
* Mixing (:func:`gold_due`): the worker's ``position``-th task of a kind is gold when the running count
  ``floor(position * rate + phase)`` steps up: exactly one gold item in every ``1 / rate`` tasks, at a
  place that differs per worker (``phase``, from a hash of the name), so nobody can count their way to it.
* A gold task is handed out like any other (an ``assignments`` row: leases, drafts, submit and retries
  work unchanged) and recorded in ``gold_answers``; the worker's answer is stored where every answer of
  that kind goes, and scored against the key when it is submitted, in the submit's own transaction
  (``gold_scoring.score_submitted``, issue 26 §1): the last task of a worker and a task submitted after the study closed
  are scored like any other. Planning and VQA exactly; intents by agreement with the reference
  (``gold_scoring.intent_agreement``) at or above ``gold_agreement_threshold``, else a reviewer judges them (:func:`judge`).
  ``gold_scoring.score_new_answers`` scores what is left unscored (answers submitted before scoring at submit existed).
"""

from __future__ import annotations

import hashlib
import math
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlite_utils

from backend import assignment
from backend.accounts import auth
from backend.campaigns import quality
from backend.campaigns.gold_scoring import references
from backend.errors import NotFound, ValidationError
from backend.settings import Settings
from backend.storage import Database, audit, utcnow

GOLD_KINDS: dict[str, str] = {
    # kind -> SQL selecting item ids that have a known answer
    "planning": "SELECT id AS item_id FROM planning_questions WHERE status IN ('validated', 'released')",
    "vqa_answer": "SELECT id AS item_id FROM vqa_items WHERE status = 'verified'",
    "intent": """SELECT sequence_id AS item_id FROM final_intents
                 UNION SELECT a.sequence_id FROM annotations a JOIN review_judgments j ON j.annotation_id = a.id
                 WHERE a.source = 'imported' AND j.reasonable = 1""",
}


def gold_due(position: int, rate: float, phase: float) -> bool:
    """Whether a worker's ``position``-th task (1-based) is a gold item, at ``rate`` with offset ``phase``.

    By hand, rate 0.25 and phase 0: floor(p/4) steps up at p = 4, 8, 12; with phase 0.5 at p = 2, 6, 10.

    >>> [p for p in range(1, 13) if gold_due(p, 0.25, 0.0)]
    [4, 8, 12]
    >>> [p for p in range(1, 13) if gold_due(p, 0.25, 0.5)]
    [2, 6, 10]
    >>> any(gold_due(p, 0.0, 0.3) for p in range(1, 100))
    False
    """
    if rate <= 0 or position < 1:
        return False
    return math.floor(position * rate + phase) > math.floor((position - 1) * rate + phase)


def phase_of(annotator: str) -> float:
    """A stable offset in [0, 1) per worker."""
    return int(hashlib.sha256(annotator.encode()).hexdigest()[:8], 16) / 2**32


def _check_kind(kind: str) -> None:
    if kind not in GOLD_KINDS:
        raise ValidationError(f"unknown gold kind {kind!r}; use one of {', '.join(GOLD_KINDS)}")


def refusal(db: sqlite_utils.Database, kind: str, item_id: str) -> str | None:
    """Why ``item_id`` cannot be a gold item of ``kind`` now, or None when it can."""
    if not db.conn.execute(f"SELECT ? IN ({GOLD_KINDS[kind]})", (item_id,)).fetchone()[0]:
        return f"{kind} item {item_id!r} has no validated answer or reference to check workers against"
    task = db.conn.execute(
        "SELECT status, touched FROM tasks WHERE kind = ? AND item_id = ?", (kind, item_id)
    ).fetchone()
    if task is not None and task["status"] == "open" and task["touched"]:
        return f"{kind} item {item_id!r} is being worked on in the pool; choose another, or wait until it is complete"
    return None


def add_gold(database: Database, username: str | None, kind: str, item_ids: list[str]) -> dict[str, Any]:
    """Make items gold (reviewers and admins). All or nothing: one item that cannot be gold refuses all."""
    user = auth.require_role(database, username, "reviewer")
    _check_kind(kind)
    now = utcnow()
    with database.write() as db:
        problems = [p for p in (refusal(db, kind, i) for i in item_ids) if p]
        if problems:
            raise ValidationError(problems)
        for item_id in item_ids:
            db.conn.execute(
                """INSERT INTO gold_items (kind, item_id, added_by, added_at) VALUES (?, ?, ?, ?)
                   ON CONFLICT (kind, item_id) DO UPDATE SET retired = 0""",
                (kind, item_id, user.username, now),
            )
            # out of the exact-N pool: an untouched open task becomes 'gold'; none at all gets a 'gold' row
            # (a lease is read joined with its task)
            db.conn.execute(
                "UPDATE tasks SET status = 'gold' WHERE kind = ? AND item_id = ? AND status = 'open'", (kind, item_id)
            )
            db.conn.execute(
                """INSERT OR IGNORE INTO tasks (kind, item_id, round, status, needed, created_at, touched)
                   VALUES (?, ?, 1, 'gold', 0, ?, 1)""",
                (kind, item_id, now),
            )
        audit(db, user.username, "gold.add", kind, {"items": item_ids})
    return {"kind": kind, "added": len(item_ids), "gold_items": count_gold(database, kind)}


def retire_gold(database: Database, username: str | None, kind: str, item_id: str) -> None:
    """Stop handing an item out as gold. Its task stays out of the pool (its gold answers are not N's)."""
    user = auth.require_role(database, username, "reviewer")
    with database.write() as db:
        cur = db.conn.execute("UPDATE gold_items SET retired = 1 WHERE kind = ? AND item_id = ?", (kind, item_id))
        if cur.rowcount == 0:
            raise NotFound(f"{kind} item {item_id!r} is not a gold item")
        audit(db, user.username, "gold.retire", f"{kind}:{item_id}")


def candidates(database: Database, username: str | None, kind: str, limit: int = 50) -> list[str]:
    """Items that could become gold now (known answer, not started in the pool, not gold yet)."""
    auth.require_role(database, username, "reviewer")
    _check_kind(kind)
    rows = database.query(
        f"""SELECT k.item_id FROM ({GOLD_KINDS[kind]}) k
            LEFT JOIN tasks t ON t.kind = ? AND t.item_id = k.item_id
            WHERE NOT EXISTS (SELECT 1 FROM gold_items g WHERE g.kind = ? AND g.item_id = k.item_id)
              AND NOT (coalesce(t.status, '') = 'open' AND coalesce(t.touched, 0) = 1)
            ORDER BY k.item_id LIMIT ?""",
        (kind, kind, int(limit)),
    )
    return [r["item_id"] for r in rows]


def count_gold(database: Database, kind: str) -> int:
    return int(database.scalar("SELECT count(*) FROM gold_items WHERE kind = ? AND retired = 0", (kind,)))


def _expires(lease_minutes: float) -> str:
    return (datetime.now(UTC) + timedelta(minutes=lease_minutes)).isoformat(timespec="microseconds")


def _own_gold_lease(
    db: sqlite_utils.Database, kind: str, annotator: str, lease_minutes: float
) -> assignment.Lease | None:
    """The gold item handed to the annotator and not yet submitted, leased again (its lease ran out, or was freed
    when they signed out): a gold item holds no slot of N, so it always waits for them. Inside ``write()``."""
    mine = db.conn.execute(
        """SELECT a.id, a.item_id, a.round, a.viewed_at FROM assignments a JOIN gold_answers g ON g.assignment_id = a.id
           WHERE a.kind = ? AND a.annotator = ? AND a.status = 'leased' LIMIT 1""",
        (kind, annotator),
    ).fetchone()
    if mine is None:
        return None
    now, expires = utcnow(), _expires(lease_minutes)
    db.conn.execute("UPDATE assignments SET leased_at = ?, expires_at = ? WHERE id = ?", (now, expires, mine["id"]))
    return assignment.Lease(kind, mine["item_id"], mine["round"], annotator, now, expires, mine["viewed_at"], None)


def _gold_lease(db: sqlite_utils.Database, kind: str, annotator: str, lease_minutes: float) -> assignment.Lease | None:
    """Lease the annotator a gold item: their own unsubmitted one first (their draft), else the least used one
    they never had. Inside ``write()``."""
    mine = _own_gold_lease(db, kind, annotator, lease_minutes)
    if mine is not None:
        return mine
    now, expires = utcnow(), _expires(lease_minutes)
    row = db.conn.execute(
        """SELECT g.item_id, coalesce(t.round, 1) AS round FROM gold_items g
           LEFT JOIN tasks t ON t.kind = g.kind AND t.item_id = g.item_id
           WHERE g.kind = :kind AND g.retired = 0
             AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.kind = :kind AND a.item_id = g.item_id
                             AND a.annotator = :annotator)
           ORDER BY (SELECT count(*) FROM gold_answers x WHERE x.kind = :kind AND x.item_id = g.item_id), g.item_id
           LIMIT 1""",
        {"kind": kind, "annotator": annotator},
    ).fetchone()
    if row is None:
        return None
    cur = db.conn.execute(
        """INSERT INTO assignments (kind, item_id, round, annotator, status, leased_at, expires_at)
           VALUES (?, ?, ?, ?, 'leased', ?, ?)""",
        (kind, row["item_id"], row["round"], annotator, now, expires),
    )
    db.conn.execute(
        "INSERT INTO gold_answers (assignment_id, kind, item_id, annotator, handed_at) VALUES (?, ?, ?, ?, ?)",
        (cur.lastrowid, kind, row["item_id"], annotator, now),
    )
    return assignment.Lease(kind, row["item_id"], row["round"], annotator, now, expires, None, None)


def gold_rate_for(db: sqlite_utils.Database, settings: Settings, annotator: str) -> float:
    """The share of gold items in ``annotator``'s stream: a study worker's study's own ``gold_rate`` (issue 40 §4;
    a study made before it had one follows the server's), anyone else's the server's ``gold_rate``."""
    row = db.conn.execute(
        "SELECT s.gold_rate FROM study_workers w JOIN studies s ON s.id = w.study_id WHERE w.username = ?",
        (annotator,),
    ).fetchone()
    return float(row[0]) if row is not None and row[0] is not None else settings.gold_rate


def next_task(db: sqlite_utils.Database, settings: Settings, kind: str, annotator: str) -> assignment.Lease | None:
    """The hand-out every worker flow calls: quality checks first (a paused or blocked worker gets nothing),
    then the task they hold, then a gold item when one is due, else the exact-N pool. Inside ``write()``."""
    if quality.check_worker(db, settings, annotator) != "active":
        return None
    held = assignment.current_lease(db, kind, annotator)
    if held is not None:
        return held
    if kind in GOLD_KINDS:  # a gold item handed out earlier and not submitted comes back first, due or not
        waiting = _own_gold_lease(db, kind, annotator, settings.lease_minutes)
        if waiting is not None:
            return waiting
    rate = gold_rate_for(db, settings, annotator)
    if rate > 0 and kind in GOLD_KINDS:
        position = (
            1
            + db.conn.execute(
                "SELECT count(*) FROM assignments WHERE annotator = ? AND kind = ?", (annotator, kind)
            ).fetchone()[0]
        )
        if gold_due(position, rate, phase_of(annotator)):
            lease = _gold_lease(db, kind, annotator, settings.lease_minutes)
            if lease is not None:
                return lease
    return assignment.next_task(db, kind, annotator, settings.lease_minutes)


def pending_judgments(database: Database, username: str | None) -> list[dict[str, Any]]:
    """Workers' intents on gold sequences below the agreement threshold, with the reference (reviewers)."""
    auth.require_role(database, username, "reviewer")
    rows = database.query(
        """SELECT g.assignment_id, g.item_id AS sequence_id, g.annotator, g.agreement, a.concrete_intent,
                  a.high_level_intent
           FROM gold_answers g JOIN annotations a
             ON a.sequence_id = g.item_id AND a.annotator = g.annotator AND a.source = 'live'
           WHERE g.kind = 'intent' AND g.outcome = 'pending' ORDER BY g.handed_at"""
    )
    for row in rows:
        row["reference"] = [list(r) for r in references(database.db, row["sequence_id"])]
    return rows


def judge(database: Database, settings: Settings, username: str | None, assignment_id: int, correct: bool) -> dict:
    """A reviewer's verdict on a gold answer waiting for one; the worker's quality is checked again."""
    user = auth.require_role(database, username, "reviewer")
    outcome = "correct" if correct else "wrong"
    with database.write() as db:
        row = db.conn.execute(
            "SELECT annotator, outcome FROM gold_answers WHERE assignment_id = ?", (int(assignment_id),)
        ).fetchone()
        if row is None or row["outcome"] != "pending":
            raise NotFound(f"gold answer {assignment_id} is not waiting for a reviewer")
        db.conn.execute(
            "UPDATE gold_answers SET outcome = ?, judged_by = ?, judged_at = ? WHERE assignment_id = ?",
            (outcome, user.username, utcnow(), int(assignment_id)),
        )
        audit(db, user.username, "gold.judge", row["annotator"], {"assignment_id": assignment_id, "outcome": outcome})
        state = quality.check_worker(db, settings, row["annotator"])
    return {"assignment_id": assignment_id, "outcome": outcome, "worker_state": state}
