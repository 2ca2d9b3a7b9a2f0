"""Shared set-up for the campaign-quality tests: a ViLPAct pool imported once, copied per test, and gold
sequences whose reference is the released intents (put into the final dataset as a reviewer would)."""

from __future__ import annotations

from pathlib import Path

from backend.accounts import auth
from backend.context import AppContext, build_context
from backend.settings import Settings
from backend.storage import Database, utcnow
from backend.vilpact.importer import import_vilpact


def template_database(folder: Path, vilpact_dir: Path, annotators_per_sequence: int) -> Path:
    """Import ViLPAct once (about 1.5 s) into ``folder``; returns a snapshot to copy per test."""
    ctx = build_context(Settings(data_dir=folder / "data", demo_content=False))
    import_vilpact(ctx.database, vilpact_dir, annotators_per_sequence=annotators_per_sequence)
    snapshot = ctx.database.backup_to(folder / "template.db")
    ctx.database.close()
    return snapshot


def context_from_template(template: Path, data_dir: Path, **settings: object) -> AppContext:
    data_dir.mkdir(parents=True, exist_ok=True)
    Database(template).backup_to(data_dir / "compstudio.db")
    values: dict = {"demo_content": False, "require_full_view": False, **settings}
    return build_context(Settings(data_dir=data_dir, **values))


def release_as_reference(database: Database, sequence_ids: list[str]) -> None:
    """The released intents of these sequences become their final intents (the reviewed reference)."""
    with database.write() as db:
        for sequence_id in sequence_ids:
            rows = db.conn.execute(
                "SELECT concrete_intent, high_level_intent FROM annotations WHERE sequence_id = ? "
                "AND source = 'imported' ORDER BY id",
                (sequence_id,),
            ).fetchall()
            for position, row in enumerate(rows, start=1):
                db.conn.execute(
                    """INSERT INTO final_intents (sequence_id, position, concrete_intent, high_level_intent,
                           origin, decided_at) VALUES (?, ?, ?, ?, 'released', ?)""",
                    (sequence_id, position, row[0], row[1], utcnow()),
                )


def last_sequences(database: Database, count: int) -> list[str]:
    """Sequences at the end of the pool (the hand-out takes the oldest first, so these stay untouched)."""
    rows = database.query("SELECT item_id FROM tasks WHERE kind = 'intent' ORDER BY rowid DESC LIMIT ?", (count,))
    return [r["item_id"] for r in rows]


def add_people(database: Database, annotators: list[str]) -> None:
    """Accounts without passwords (the services check roles, not passwords): annotators, ``rev``, ``boss``."""
    with database.write() as db:
        for name in annotators:
            auth.insert_user(db.conn, name, "annotator")
        auth.insert_user(db.conn, "rev", "reviewer")
        auth.insert_user(db.conn, "boss", "admin")


def archived_mturk_study(database: Database, **fields: object):
    """A Mechanical Turk study as one made before MTurk closed (2026-09-30): new ones are refused, so it is made as a
    Prolific study and turned into MTurk's the way an older database holds it."""
    from backend.campaigns import studies

    values: dict = {"name": "HIT", "kind": "intents", "tasks_per_worker": 2, "completion_code": "DONE42",
                    "screenout_code": "OUT7", "qualification_size": 0, **fields}  # fmt: skip
    made = studies.create_study(database, None, operator=True, **values)
    with database.write() as db:
        db.conn.execute(
            """UPDATE studies SET platform = 'mturk', worker_param = 'workerId', study_param = 'hitId',
                   session_param = 'assignmentId', return_url = '' WHERE id = ?""",
            (made.id,),
        )
    return studies.get_study(database, made.id)
