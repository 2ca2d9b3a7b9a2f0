"""Crowd campaigns (issue 16 §1-2): studies and the workers who arrived by a study link.

``study_workers`` is read by name by the campaign-quality module (gold items, flags, the worker report):
keep its table and column names.
"""

from backend.storage.migrations import Migration

MIGRATIONS = [
    Migration(
        "campaigns_0001_studies",
        (
            # One crowd study (campaign). kind: the work its workers do; platform: whose URL parameters carry
            # the worker, study and session ids (their names are stored, so a generic platform can rename them);
            # secret: signs the study link (backend/campaigns/links.py), never shown after the link is made.
            """CREATE TABLE studies (
                id INTEGER PRIMARY KEY,
                name TEXT NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('intents', 'planning', 'vqa')),
                tasks_per_worker INTEGER NOT NULL CHECK (tasks_per_worker > 0),
                time_limit_minutes INTEGER NOT NULL CHECK (time_limit_minutes > 0),
                completion_code TEXT NOT NULL DEFAULT '',
                screenout_code TEXT NOT NULL DEFAULT '',
                return_url TEXT NOT NULL DEFAULT '',
                platform TEXT NOT NULL CHECK (platform IN ('prolific', 'mturk', 'generic')),
                worker_param TEXT NOT NULL,
                study_param TEXT,
                session_param TEXT,
                qualification_size INTEGER NOT NULL CHECK (qualification_size >= 0),
                pass_mark REAL NOT NULL CHECK (pass_mark >= 0 AND pass_mark <= 1),
                secret TEXT NOT NULL,
                status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
                created_by TEXT NOT NULL,
                created_at TEXT NOT NULL,
                closed_at TEXT
            )""",
            # One row per platform worker id per study: a worker id seen in a study can never start it again.
            # username: the annotator account the first visit created (no password; signs in by the link only).
            # params: the platform's parameters of the first visit (JSON; e.g. STUDY_ID, SESSION_ID).
            """CREATE TABLE study_workers (
                id INTEGER PRIMARY KEY,
                study_id INTEGER NOT NULL REFERENCES studies (id),
                platform_worker_id TEXT NOT NULL,
                username TEXT NOT NULL UNIQUE REFERENCES users (username),
                status TEXT NOT NULL
                    CHECK (status IN ('started', 'qualified', 'screened_out', 'finished', 'returned')),
                started_at TEXT NOT NULL,
                qualified_at TEXT,
                finished_at TEXT,
                quiz_score REAL,
                quiz_answers TEXT,
                params TEXT NOT NULL DEFAULT '{}',
                UNIQUE (study_id, platform_worker_id)
            )""",
            "CREATE INDEX study_workers_status ON study_workers (study_id, status)",
        ),
    ),
]
