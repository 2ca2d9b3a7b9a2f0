"""No worker stranded (issue 40 §4), the reservations: a study reserves the tasks its places need.

The pool of a kind has *unclaimed* slots: N minus the submissions and live leases of each open task.
Every open study of that kind needs some of them: what its placed workers still owe beyond the leases they hold,
and, for a study with a number of places, ``tasks_per_worker`` for each place not yet taken. A lab annotator (no
study) is handed a new task only while the unclaimed slots are more than what the studies need
(:func:`lab_may_take`, called by the hand-out inside its transaction), so lab annotators cannot take a study's last
tasks. By hand: 10 unclaimed slots; a study with 3 places of 2 tasks, one worker placed who did 1 task and holds
no lease: it needs 1 + 2 x 2 = 5, so lab annotators may take 5 more, and the 6th waits.

Its own module, below both the hand-out (:mod:`backend.campaigns.workers` asks :func:`lab_may_take`) and the waiting
page (:mod:`backend.campaigns.waiting`), so neither imports the other back.
"""

from __future__ import annotations

import sqlite_utils

from backend.campaigns.studies import Study, study_from_row
from backend.storage import utcnow


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
