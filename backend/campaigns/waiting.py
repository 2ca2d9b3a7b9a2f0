"""No worker stranded (issue 40 §4): a study reserves the tasks its places need, and a study worker who still finds
nothing free waits on a page that checks again by itself, then is paid for the work done.

Reservations: :mod:`backend.campaigns.reservations` (what the open studies need of each pool).

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

from backend.campaigns.reservations import studies_need, unclaimed_slots
from backend.campaigns.studies import KINDS, POOL_KIND, Study, get_study, open_slots
from backend.campaigns.workers import StudyWorker, row_by_user, set_status, submitted, worker_in_study
from backend.errors import PermissionDenied
from backend.settings import Settings
from backend.storage import Database, utcnow

RETRY_SECONDS = 20
WAITED_OUT = "no task free after waiting {minutes:g} minutes"


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
