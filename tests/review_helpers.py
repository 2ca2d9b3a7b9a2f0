"""Small review scenarios: sequences in the pool, people, and scripted annotators (used by test_review_*), and a
lease moved back in time for the watch-time floor (test_intents_service, test_campaigns)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from backend import assignment
from backend.accounts import auth
from backend.intents import service as intents
from backend.review import service as review
from backend.storage import Database, utcnow

PASSWORD = "password-123"
ACTIONS = [
    {"class_id": "c006", "name": "Opening a door", "start": 0.0, "end": 2.5},
    {"class_id": "c106", "name": "Holding a cup/glass/bottle of something", "start": 3.0, "end": 9.0},
    {"class_id": "c110", "name": "Drinking from a cup/glass/bottle", "start": 6.5, "end": 12.0},
]
INTENTS = [  # (concrete, high-level) per annotator position
    ("S/He wants to have a glass of water", "S/He is thirsty"),
    ("S/He wants to take a break in the kitchen", "S/He is tired"),
    ("S/He wants to cool down with a drink", "S/He is hot"),
]


def add_sequences(database: Database, ids: list[str], split: str = "test", needed: int = 3, pool: bool = True) -> None:
    with database.write() as db:
        for sid in ids:
            db.conn.execute(
                """INSERT INTO sequences (id, video_id, actions, scene, split, act_seq_start, act_seq_end,
                       ob_start_frame, ob_end_frame, video_path, source, imported_at)
                   VALUES (?, ?, ?, 'Kitchen', ?, 0, 12, 1, 60, NULL, 'test', ?)""",
                (sid, sid, json.dumps(ACTIONS), split, utcnow()),
            )
        if pool:
            assignment.add_tasks(db, "intent", ids, needed)


def add_people(
    database: Database,
    annotators: list[str] = (),
    reviewers: list[str] = (),
    admins: list[str] = (),
    password: str | None = None,
) -> None:
    """Accounts; without a password (no scrypt hashing) unless the test signs in over HTTP."""
    for role, names in (("annotator", annotators), ("reviewer", reviewers), ("admin", admins)):
        for name in names:
            auth.add_user(database, name, role, password)


def annotate_all(database: Database, settings, annotators: list[str]) -> list[tuple[str, str, int]]:
    """Each annotator takes and submits tasks until none is left for them. Returns (annotator, seq, round)."""
    done = []
    for position, name in enumerate(annotators):
        task = intents.next_intent_task(database, settings, name)["task"]
        while task is not None:
            concrete, high_level = INTENTS[position % len(INTENTS)]
            result = intents.submit_intents(database, settings, name, task["sequence_id"], concrete, high_level)
            done.append((name, task["sequence_id"], task["round"]))
            task = result["task"]
    return done


def judge_all(item: dict, reasonable: list[bool], comment: str = "") -> list[review.Judgment]:
    return [
        review.Judgment(a["annotation_id"], ok, comment if not ok else "")
        for a, ok in zip(item["annotations"], reasonable, strict=True)
    ]


def handed_ago(db: Database, sequence_id: str, seconds: float) -> None:
    """Move the lease of ``sequence_id`` back by ``seconds``, as if the annotator had watched that long."""
    moment = (datetime.now(UTC) - timedelta(seconds=seconds)).isoformat(timespec="microseconds")
    with db.write() as conn:
        conn.execute(
            "UPDATE assignments SET leased_at = ? WHERE item_id = ? AND status = 'leased'", (moment, sequence_id)
        )
