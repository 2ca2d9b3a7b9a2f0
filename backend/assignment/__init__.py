"""Leases and exact-N hand-out, shared by every annotation flow (intents, planning checks, VQA answers).

A *task* (``kind``, ``item_id``) needs ``needed`` distinct annotators in its current round. Handing a
task out writes a lease that reserves one slot for ``lease_minutes``; the slot is freed when the lease
runs out (nothing to sweep: an expired lease simply stops counting). Choosing a task and claiming it
happen in the same ``BEGIN IMMEDIATE`` transaction, so two annotators asking at once can never both
take the last slot, and no task is ever handed out beyond ``needed`` counting live leases.

Rules:
* nobody gets a task twice: one ``assignments`` row per (task, annotator), across rounds;
* an annotator holds at most one live lease per kind; asking again returns the same task;
* an annotator whose lease ran out may get the task back while it still has a free slot (their draft is
  kept), and may still submit late while a slot is free; otherwise ``LeaseLost``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import sqlite_utils

from backend.errors import LeaseLost, NotFound, ValidationError
from backend.storage import audit, utcnow


@dataclass(frozen=True)
class Lease:
    kind: str
    item_id: str
    review_round: int  # the column `round`: ViLPAct's review round this lease belongs to
    annotator: str
    leased_at: str
    expires_at: str
    viewed_at: str | None
    guidance: str | None


@dataclass(frozen=True)
class Completion:
    """A task whose round reached its N submissions (what the webhook event ``item.completed`` reports; the
    service that owns the submit emits it, backend/webhooks)."""

    kind: str
    item_id: str
    review_round: int
    needed: int


def _later(minutes: float) -> str:
    return (datetime.now(UTC) + timedelta(minutes=minutes)).isoformat(timespec="microseconds")


_ACTIVE = """(SELECT count(*) FROM assignments a
               WHERE a.kind = t.kind AND a.item_id = t.item_id AND a.round = t.round
                 AND (a.status = 'submitted' OR (a.status = 'leased' AND a.expires_at > :now)))"""


def add_tasks(db: sqlite_utils.Database, kind: str, item_ids: list[str], needed: int) -> int:
    """Put items into the pool (idempotent: items already there are left as they are). Inside ``write()``."""
    now = utcnow()
    cursor = db.conn.executemany(
        "INSERT OR IGNORE INTO tasks (kind, item_id, round, status, needed, created_at) VALUES (?, ?, 1, 'open', ?, ?)",
        [(kind, item_id, needed, now) for item_id in item_ids],
    )
    # rowcount sums the rows inserted; total_changes would also count the task_counts trigger's writes (twice as many)
    return max(cursor.rowcount, 0)


def _lease_row(db: sqlite_utils.Database, kind: str, annotator: str, now: str) -> dict | None:
    row = db.conn.execute(
        """SELECT a.*, t.guidance FROM assignments a JOIN tasks t ON t.kind = a.kind AND t.item_id = a.item_id
           WHERE a.kind = ? AND a.annotator = ? AND a.status = 'leased' AND a.expires_at > ?
           ORDER BY a.leased_at DESC LIMIT 1""",
        (kind, annotator, now),
    ).fetchone()
    return dict(row) if row else None


def current_lease(db: sqlite_utils.Database, kind: str, annotator: str) -> Lease | None:
    """The live lease the annotator already holds, if any; claims nothing (a page that is only looked at)."""
    row = _lease_row(db, kind, annotator, utcnow())
    return _to_lease(row) if row else None


def _to_lease(row: dict) -> Lease:
    return Lease(
        row["kind"],
        row["item_id"],
        row["round"],
        row["annotator"],
        row["leased_at"],
        row["expires_at"],
        row["viewed_at"],
        row.get("guidance"),
    )


def next_task(db: sqlite_utils.Database, kind: str, annotator: str, lease_minutes: float) -> Lease | None:
    """The annotator's current lease, or a newly claimed task, or None when nothing is left for them.

    Must run inside ``Database.write()`` (BEGIN IMMEDIATE): the choice and the claim are one transaction.
    Preference: a task whose expired lease this annotator still holds (their draft), then tasks closest
    to completion (so sequences finish rather than all starting), then the oldest.
    """
    now = utcnow()
    current = _lease_row(db, kind, annotator, now)
    if current:
        return _to_lease(current)
    params = {"kind": kind, "annotator": annotator, "now": now}
    # 1. tasks already handed out: mine with an expired lease first, then closest to completion. The
    #    cheap filter (not done by me) runs first, over an index; progress is counted only for what is left.
    row = db.conn.execute(
        """WITH candidates AS MATERIALIZED (
               SELECT t.rowid AS task_rowid, t.item_id, t.round, t.guidance, t.needed, mine.id AS mine_id
               FROM tasks t
               LEFT JOIN assignments mine
                 ON mine.kind = t.kind AND mine.item_id = t.item_id AND mine.annotator = :annotator
               WHERE t.kind = :kind AND t.status = 'open' AND t.touched = 1
                 AND (mine.id IS NULL OR mine.status = 'leased'))
           SELECT c.item_id, c.round, c.guidance, c.mine_id,
                  (SELECT count(*) FROM assignments a
                   WHERE a.kind = :kind AND a.item_id = c.item_id AND a.round = c.round
                     AND (a.status = 'submitted' OR (a.status = 'leased' AND a.expires_at > :now))) AS active
           FROM candidates c
           WHERE active < c.needed
           ORDER BY (c.mine_id IS NOT NULL) DESC, active DESC, c.task_rowid
           LIMIT 1""",
        params,
    ).fetchone()
    # 2. otherwise the oldest task nobody has been handed yet
    if row is None:
        row = db.conn.execute(
            """SELECT item_id, round, guidance, NULL AS mine_id FROM tasks
               WHERE kind = :kind AND status = 'open' AND touched = 0 ORDER BY rowid LIMIT 1""",
            params,
        ).fetchone()
    if row is None:
        return None
    expires = _later(lease_minutes)
    if row["mine_id"] is not None:
        db.conn.execute(
            "UPDATE assignments SET round = ?, leased_at = ?, expires_at = ? WHERE id = ?",
            (row["round"], now, expires, row["mine_id"]),
        )
    else:
        db.conn.execute(
            """INSERT INTO assignments (kind, item_id, round, annotator, status, leased_at, expires_at)
               VALUES (?, ?, ?, ?, 'leased', ?, ?)""",
            (kind, row["item_id"], row["round"], annotator, now, expires),
        )
        db.conn.execute("UPDATE tasks SET touched = 1 WHERE kind = ? AND item_id = ?", (kind, row["item_id"]))
    return Lease(kind, row["item_id"], row["round"], annotator, now, expires, None, row["guidance"])


def get_assignment(db: sqlite_utils.Database, kind: str, item_id: str, annotator: str) -> dict | None:
    row = db.conn.execute(
        "SELECT * FROM assignments WHERE kind = ? AND item_id = ? AND annotator = ?", (kind, item_id, annotator)
    ).fetchone()
    return dict(row) if row else None


def mark_viewed(db: sqlite_utils.Database, kind: str, item_id: str, annotator: str) -> None:
    """Record that the annotator watched the item's video to its end (inside ``write()``)."""
    cur = db.conn.execute(
        "UPDATE assignments SET viewed_at = coalesce(viewed_at, ?) WHERE kind = ? AND item_id = ? AND annotator = ?",
        (utcnow(), kind, item_id, annotator),
    )
    if cur.rowcount == 0:
        raise NotFound(f"{kind} task {item_id!r} was not handed to you; ask for the next task")


def claim_for_submit(db: sqlite_utils.Database, kind: str, item_id: str, annotator: str) -> tuple[dict, bool]:
    """Check the annotator may submit ``item_id`` now. Returns (assignment, already_submitted).

    ``already_submitted`` is True for a repeated submit (a client retry): the caller returns the stored
    result instead of writing again. Inside ``write()``.
    """
    row = get_assignment(db, kind, item_id, annotator)
    if row is None:
        raise NotFound(f"{kind} task {item_id!r} was not handed to you; ask for the next task first")
    if row["status"] == "submitted":
        return row, True
    if row["status"] == "skipped":
        raise ValidationError(f"you skipped {kind} task {item_id!r}; it cannot be submitted any more")
    now = utcnow()
    if row["expires_at"] <= now:
        task = db.conn.execute(
            f"SELECT t.needed, {_ACTIVE} AS active FROM tasks t WHERE t.kind = :kind AND t.item_id = :item",
            {"kind": kind, "item": item_id, "now": now},
        ).fetchone()
        if task is None or task["active"] >= task["needed"]:
            raise LeaseLost(
                f"Your reservation of {kind} task {item_id!r} ran out and it went to another annotator. "
                "Your text is kept as a draft; ask for the next task."
            )
    return row, False


def finish(
    db: sqlite_utils.Database, assignment_id: int, status: str, skip_reason: str | None = None
) -> Completion | None:
    """Mark a lease submitted or skipped, and close the task when its round has all N submissions. Returns the
    :class:`Completion` when this call closed it (the caller, which owns the event, emits ``item.completed``), else
    None. A skip adds no submission, so it never closes a round (the round was checked at its last submit)."""
    db.conn.execute(
        "UPDATE assignments SET status = ?, finished_at = ?, skip_reason = ? WHERE id = ?",
        (status, utcnow(), skip_reason, assignment_id),
    )
    row = db.conn.execute("SELECT kind, item_id, round FROM assignments WHERE id = ?", (assignment_id,)).fetchone()
    completed = db.conn.execute(
        """UPDATE tasks SET status = 'complete'
           WHERE kind = :kind AND item_id = :item AND status = 'open'
             AND (SELECT count(*) FROM assignments a WHERE a.kind = :kind AND a.item_id = :item
                  AND a.round = tasks.round AND a.status = 'submitted') >= needed
           RETURNING round, needed""",
        {"kind": row["kind"], "item": row["item_id"]},
    ).fetchone()
    if completed is None:
        return None
    return Completion(row["kind"], row["item_id"], completed["round"], completed["needed"])


def skip(db: sqlite_utils.Database, kind: str, item_id: str, annotator: str, reason: str) -> None:
    """Give a leased task back with a reason; it is never handed to this annotator again. Inside ``write()``."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError("say why you skip this task (for example: the video does not play)")
    row = get_assignment(db, kind, item_id, annotator)
    if row is None or row["status"] != "leased":
        raise NotFound(f"{kind} task {item_id!r} is not leased to you; nothing to skip")
    finish(db, row["id"], "skipped", reason[:500])
    db.conn.execute("DELETE FROM drafts WHERE annotator = ? AND kind = ? AND item_id = ?", (annotator, kind, item_id))
    audit(db, annotator, f"{kind}.skip", item_id, {"reason": reason[:500]})


def release_leases(db: sqlite_utils.Database, annotator: str) -> int:
    """End every live lease the annotator holds, of every kind (they signed out): the slots are free at
    once. Drafts stay, and the annotator may get the same task back while it has a free slot. Returns how
    many were released. Inside ``write()``."""
    now = utcnow()
    return db.conn.execute(
        "UPDATE assignments SET expires_at = ? WHERE annotator = ? AND status = 'leased' AND expires_at > ?",
        (now, annotator, now),
    ).rowcount


def pool_progress(db: sqlite_utils.Database, kind: str, annotator: str) -> dict[str, int]:
    """Mine today, mine in total, and the tasks still open in the pool."""
    today = datetime.now(UTC).date().isoformat()
    mine_total, mine_today = db.conn.execute(
        """SELECT count(*), coalesce(sum(finished_at >= ?), 0) FROM assignments
           WHERE annotator = ? AND kind = ? AND status = 'submitted'""",
        (today, annotator, kind),
    ).fetchone()
    left = db.conn.execute(
        "SELECT coalesce(sum(n), 0) FROM task_counts WHERE kind = ? AND status = 'open'", (kind,)
    ).fetchone()[0]
    return {"mine_today": int(mine_today), "mine_total": int(mine_total), "left_in_pool": int(left)}


def left_for(db: sqlite_utils.Database, kind: str, annotator: str, extra_condition: str = "") -> int:
    """Open tasks this annotator could still be handed (or holds now): not yet submitted or skipped by them,
    with a free slot or their own live lease. "Left in the pool" counts tasks that still need *someone*; an
    annotator who did all of them must read 0 here, not the pool's count. ``extra_condition`` is an SQL
    ``AND ...`` over ``t`` (the task) with ``:annotator``: the caller's own rule, e.g. "not their own item".

    Untouched tasks have every slot free, so only tasks in progress need their slots counted.
    """
    params = {"kind": kind, "annotator": annotator, "now": utcnow()}
    untouched = db.conn.execute(
        "SELECT count(*) FROM tasks t WHERE t.kind = :kind AND t.status = 'open' AND t.touched = 0 " + extra_condition,
        params,
    ).fetchone()[0]
    in_progress = db.conn.execute(
        f"""SELECT count(*) FROM tasks t
            LEFT JOIN assignments mine
              ON mine.kind = t.kind AND mine.item_id = t.item_id AND mine.annotator = :annotator
            WHERE t.kind = :kind AND t.status = 'open' AND t.touched = 1
              AND (mine.id IS NULL OR mine.status = 'leased')
              AND ((mine.status = 'leased' AND mine.expires_at > :now) OR {_ACTIVE} < t.needed) """
        + extra_condition,
        params,
    ).fetchone()[0]
    return int(untouched) + int(in_progress)
