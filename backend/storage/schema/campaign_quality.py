"""Campaign quality (issue 16 §3-4): gold items and their answers, quality flags and worker states, answers
returned to the pool, and one-time invitation links. Per annotator: a lab campaign has no study; a study's
workers are found by joining ``study_workers.username``."""

from backend.storage.migration import Migration

MIGRATIONS = [
    Migration(
        "campaign_quality_0001_gold_flags_invitations",
        (
            # An item whose answer is known, mixed into workers' streams (kind: intent | planning | vqa_answer).
            # Its pool task, if it had one nobody had started, is set to status 'gold': the exact-N hand-out
            # only takes 'open' tasks, so a gold item never enters anyone's N.
            """CREATE TABLE gold_items (
                kind TEXT NOT NULL,
                item_id TEXT NOT NULL,
                added_by TEXT NOT NULL,
                added_at TEXT NOT NULL,
                retired INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (kind, item_id)
            ) WITHOUT ROWID""",
            # One gold item handed to one worker. outcome: NULL until the answer is in; then 'correct',
            # 'wrong', or 'pending' (an intent below the agreement threshold, waiting for a reviewer).
            """CREATE TABLE gold_answers (
                assignment_id INTEGER PRIMARY KEY REFERENCES assignments (id),
                kind TEXT NOT NULL,
                item_id TEXT NOT NULL,
                annotator TEXT NOT NULL,
                handed_at TEXT NOT NULL,
                outcome TEXT CHECK (outcome IN ('correct', 'wrong', 'pending')),
                agreement REAL,
                judged_by TEXT,
                judged_at TEXT
            )""",
            "CREATE INDEX gold_answers_annotator ON gold_answers (annotator, kind)",
            "CREATE INDEX gold_answers_item ON gold_answers (kind, item_id)",
            # Why a worker was flagged (reason: too_fast | gold_accuracy), one row per (worker, reason, item);
            # resolved when a reviewer or admin has looked at it.
            """CREATE TABLE quality_flags (
                id INTEGER PRIMARY KEY,
                annotator TEXT NOT NULL,
                reason TEXT NOT NULL CHECK (reason IN ('too_fast', 'gold_accuracy')),
                kind TEXT NOT NULL,
                item_id TEXT NOT NULL DEFAULT '',
                detail TEXT NOT NULL,
                flagged_at TEXT NOT NULL,
                resolved_by TEXT,
                resolved_at TEXT,
                UNIQUE (annotator, reason, kind, item_id)
            )""",
            "CREATE INDEX quality_flags_open ON quality_flags (annotator, resolved_at)",
            # A worker's standing: active (no row), paused (automatically, past the flag limit) or blocked
            # (by an admin; the account is disabled too). checked_until: the last finished_at already checked.
            """CREATE TABLE worker_quality (
                username TEXT PRIMARY KEY,
                state TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused', 'blocked')),
                reason TEXT,
                changed_by TEXT,
                changed_at TEXT,
                checked_until TEXT NOT NULL DEFAULT ''
            ) WITHOUT ROWID""",
            # A blocked worker's unreviewed answer taken out of the data and its slot given back to the pool;
            # the answer's row is kept here as JSON for the record.
            """CREATE TABLE returned_submissions (
                id INTEGER PRIMARY KEY,
                kind TEXT NOT NULL,
                item_id TEXT NOT NULL,
                annotator TEXT NOT NULL,
                answer TEXT NOT NULL,
                returned_by TEXT NOT NULL,
                returned_at TEXT NOT NULL
            )""",
            # One-time sign-up links; only the SHA-256 of the token is stored.
            """CREATE TABLE invitations (
                token_sha256 TEXT PRIMARY KEY,
                role TEXT NOT NULL CHECK (role IN ('annotator', 'reviewer', 'admin')),
                created_by TEXT NOT NULL,
                created_at TEXT NOT NULL,
                expires_at TEXT NOT NULL,
                used_by TEXT,
                used_at TEXT
            ) WITHOUT ROWID""",
        ),
    ),
]
