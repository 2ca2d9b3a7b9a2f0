"""No worker stranded (issue 40 §4): a study reserves the tasks its places need, and a study worker who still finds
nothing free waits on a page that checks again by itself, then is paid for the work done.

Reservations. The pool of a kind has *unclaimed* slots: N minus the submissions and live leases of each open task.
Every open study of that kind needs some of them: what its placed workers still owe beyond the leases they hold,
and, for a study with a number of places, ``tasks_per_worker`` for each place not yet taken. A lab annotator (no
study) is handed a new task only while the unclaimed slots are more than what the studies need
(:func:`lab_may_take`, called by the hand-out inside its transaction), so lab annotators cannot take a study's last
tasks. By hand: 10 unclaimed slots; a study with 3 places of 2 tasks, one worker placed who did 1 task and holds
no lease: it needs 1 + 2 x 2 = 5, so lab annotators may take 5 more, and the 6th waits.

Waiting. A placed worker under their quota who finds no task free goes to ``/study/<id>/here?wait=1``
(:func:`wait`): the first visit starts the clock (``waiting_since``); the page reloads itself every
:data:`RETRY_SECONDS` and says until when it will wait; once a task is free it sends them back to their tasks; after
``study_wait_minutes`` they finish with the owner's partial-pay code (or the completion code) for the tasks done,
and the report's ``end_reason`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlite_utils

from backend.campaigns.studies import KINDS, POOL_KIND, Study, get_study, open_slots, study_from_row
from backend.campaigns.workers import StudyWorker, row_by_user, set_status, submitted, worker_in_study
from backend.errors import PermissionDenied
from backend.settings import Settings
from backend.storage import Database, utcnow

RETRY_SECONDS = 20
WAITED_OUT = "no task free after waiting {minutes:g} minutes"


def unclaimed_slots(db: sqlite_utils.Database, pool_kind: str) -> int:
    """Slots of the pool nobody has submitted or holds a live lease on."""
    return int(
        db.conn.execute(
            """SELECT coalesce(sum(max(t.needed - (SELECT count(*) FROM assignments a WHERE a.kind = t.kind
                   AND a.item_id = t.item_id AND a.round = t.round
                   AND (a.status = 'submitted' OR (a.status = 'leased' AND a.expires_at > :now))), 0)), 0)
               FROM tasks t WHERE t.kind = :kind AND t.status = 'open'""",
            {"kind": pool_kind, "now": utcnow()},
        ).fetchone()[0]
    )


def _study_need(db: sqlite_utils.Database, study: Study) -> int:
    rows = db.conn.execute(
        """SELECT (SELECT count(*) FROM assignments a WHERE a.annotator = w.username AND a.kind = :kind
                   AND (a.status = 'submitted' OR (a.status = 'leased' AND a.expires_at > :now))) AS held
           FROM study_workers w WHERE w.study_id = :study AND w.status = 'qualified' AND w.placed_at IS NOT NULL""",
        {"kind": study.pool_kind, "study": study.id, "now": utcnow()},
    ).fetchall()
    owed = sum(max(study.tasks_per_worker - int(row["held"]), 0) for row in rows)
    unplaced = max((study.places or 0) - len(rows), 0)
    return owed + unplaced * study.tasks_per_worker


def studies_need(db: sqlite_utils.Database, pool_kind: str) -> int:
    """Unclaimed slots the open studies of this kind need for their places (see the module's docstring)."""
    rows = db.conn.execute("SELECT * FROM studies WHERE status = 'open'").fetchall()
    return sum(_study_need(db, s) for s in map(study_from_row, rows) if s.pool_kind == pool_kind and not s.archived)


def lab_may_take(db: sqlite_utils.Database, pool_kind: str, username: str) -> bool:
    """Whether a lab annotator may be handed a *new* task of ``pool_kind`` now: a lease they hold is always theirs;
    otherwise only while the unclaimed slots are more than the studies need. Inside the hand-out's ``write()``."""
    held = db.conn.execute(
        "SELECT 1 FROM assignments WHERE kind = ? AND annotator = ? AND status = 'leased' AND expires_at > ?",
        (pool_kind, username, utcnow()),
    ).fetchone()
    if held is not None:
        return True
    need = studies_need(db, pool_kind)
    return need == 0 or unclaimed_slots(db, pool_kind) > need


def reservations(database: Database) -> list[dict[str, Any]]:
    """Per kind of work: the pool's open slots (``open``), those unclaimed now, what the open studies reserve, and
    what is free for lab annotators, for the Studies tab."""
    db = database.db
    rows = []
    for kind in KINDS:
        pool_kind = POOL_KIND[kind]
        unclaimed, reserved = unclaimed_slots(db, pool_kind), studies_need(db, pool_kind)
        rows.append(
            {
                "kind": kind,
                "open": open_slots(db, pool_kind),
                "unclaimed": unclaimed,
                "reserved": reserved,
                "free": max(unclaimed - reserved, 0),
            }
        )
    return rows


def task_free_for(db: sqlite_utils.Database, study: Study, worker: StudyWorker) -> bool:
    """Whether some task of the study's kind has a slot this worker could take now (read only; the hand-out decides)."""
    row = db.conn.execute(
        """SELECT 1 FROM tasks t WHERE t.kind = :kind AND t.status = 'open'
               AND NOT EXISTS (SELECT 1 FROM assignments m WHERE m.kind = t.kind AND m.item_id = t.item_id
                               AND m.annotator = :me AND m.status != 'leased')
               AND t.needed > (SELECT count(*) FROM assignments a WHERE a.kind = t.kind AND a.item_id = t.item_id
                   AND a.round = t.round AND (a.status = 'submitted' OR (a.status = 'leased' AND a.expires_at > :now)))
           LIMIT 1""",
        {"kind": study.pool_kind, "me": worker.username, "now": utcnow()},
    ).fetchone()
    return row is not None


@dataclass(frozen=True)
class Waiting:
    """Where a waiting worker stands: ``go`` (a task is free: back to the tasks), ``wait`` (until ``until``), or
    ``paid`` (waited out: finished with ``code``)."""

    state: str
    study: Study
    worker: StudyWorker
    until: datetime | None = None
    code: str = ""
    done: int = 0


def paid_code(study: Study) -> str:
    """The code a worker who waited out is paid with: the owner's partial-pay code, else the completion code."""
    return study.partial_code or study.completion_code


def wait(database: Database, settings: Settings, username: str | None, study_id: int) -> Waiting:
    """One visit of the waiting page (see the module's docstring). One transaction."""
    study, worker = worker_in_study(database, username, study_id)
    limit = timedelta(minutes=settings.study_wait_minutes)
    with database.write() as db:
        current = row_by_user(db, worker.username)
        if current is None or current.status != "qualified":
            raise PermissionDenied("You are not doing this study's tasks now; open your study link again.")
        done = submitted(db, current.username, study)
        if task_free_for(db, study, current):
            db.conn.execute("UPDATE study_workers SET waiting_since = NULL WHERE id = ?", (current.id,))
            return Waiting("go", study, current, done=done)
        now = datetime.now(UTC)
        since = datetime.fromisoformat(current.waiting_since) if current.waiting_since else now
        if current.waiting_since is None:
            db.conn.execute(
                "UPDATE study_workers SET waiting_since = ? WHERE id = ?",
                (now.isoformat(timespec="microseconds"), current.id),
            )
        if now - since >= limit:
            reason = WAITED_OUT.format(minutes=settings.study_wait_minutes)
            ended = set_status(db, current, "finished", reason)
            return Waiting("paid", get_study(database, study.id), ended, code=paid_code(study), done=done)
    return Waiting("wait", study, current, until=since + limit, done=done)
