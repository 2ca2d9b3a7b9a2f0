"""Crowd campaigns (issue 16 §1-2): studies and the workers who arrived by a study link.

``study_workers`` is read by name by the campaign-quality module (gold items, flags, the worker report):
keep its table and column names.
"""

from backend.storage.migration import Migration

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
    # issue 26: studies that pay the right people
    Migration(
        "campaigns_0002_places_attempts_arrivals_platform_events",
        (
            # places: at most this many workers started and not yet finished, screened out or returned (NULL on a
            # study made before places existed: no limit); qualification_attempts: tries at the quiz (issue 26 §2)
            "ALTER TABLE studies ADD COLUMN places INTEGER CHECK (places IS NULL OR places > 0)",
            "ALTER TABLE studies ADD COLUMN qualification_attempts INTEGER NOT NULL DEFAULT 2 "
            "CHECK (qualification_attempts > 0)",
            # a name is unique among open studies: earlier duplicates get their id appended before the index
            """UPDATE studies SET name = name || ' (' || id || ')' WHERE status = 'open' AND EXISTS (
                   SELECT 1 FROM studies s WHERE s.status = 'open' AND lower(trim(s.name)) = lower(trim(studies.name))
                   AND s.id < studies.id)""",
            "CREATE UNIQUE INDEX studies_open_name ON studies (lower(trim(name))) WHERE status = 'open'",
            # quiz_attempts: tries used; quiz_feedback: the mistakes of the last failed try, explained (JSON list);
            # platform_status: the last submission status the platform reported (Prolific's webhook), e.g. RETURNED
            "ALTER TABLE study_workers ADD COLUMN quiz_attempts INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE study_workers ADD COLUMN quiz_feedback TEXT",
            "ALTER TABLE study_workers ADD COLUMN platform_status TEXT",
            "ALTER TABLE study_workers ADD COLUMN platform_status_at TEXT",
            "UPDATE study_workers SET quiz_attempts = 1 WHERE quiz_score IS NOT NULL",
            # one row per new worker id arriving at a study, by client address (the arrival rate limit)
            """CREATE TABLE study_arrivals (
                study_id INTEGER NOT NULL REFERENCES studies (id),
                address TEXT NOT NULL,
                arrived_at TEXT NOT NULL
            )""",
            "CREATE INDEX study_arrivals_by_address ON study_arrivals (study_id, address, arrived_at)",
            # every platform event handled (Prolific's X-Event-ID): the same event twice changes nothing
            """CREATE TABLE platform_events (
                event_key TEXT PRIMARY KEY,
                platform TEXT NOT NULL,
                event_type TEXT NOT NULL,
                resource_id TEXT NOT NULL DEFAULT '',
                status TEXT NOT NULL DEFAULT '',
                outcome TEXT NOT NULL,
                received_at TEXT NOT NULL
            ) WITHOUT ROWID""",
        ),
    ),
    # issue 40: a place is held by a worker who works, not by a visit
    Migration(
        "campaigns_0003_places_taken_at_work_prolific_check",
        (
            # placed_at: when the worker took one of the study's places (passing the qualification, or their first
            # task where there is none); turned_away_at: they passed when the last place was gone (screened out,
            # paid the screen-out code, counted apart in the report). Workers already qualified hold their place.
            "ALTER TABLE study_workers ADD COLUMN placed_at TEXT",
            "ALTER TABLE study_workers ADD COLUMN turned_away_at TEXT",
            "UPDATE study_workers SET placed_at = coalesce(qualified_at, started_at) "
            "WHERE status IN ('qualified', 'finished')",
            # the owner's Prolific API token and their Prolific study id: new ids are checked against Prolific's
            # submissions (backend/campaigns/prolific_api.py); the token is never shown again
            "ALTER TABLE studies ADD COLUMN prolific_token TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE studies ADD COLUMN prolific_study_id TEXT NOT NULL DEFAULT ''",
            # every arrival of a new worker id counts toward the address's limit, refused ones too
            "ALTER TABLE study_arrivals ADD COLUMN outcome TEXT NOT NULL DEFAULT 'admitted'",
        ),
    ),
    # issue 40: platforms as they are in December 2026, no worker stranded, exit paths that pay the right people
    Migration(
        "campaigns_0004_connect_gold_rate_partial_code_end_reason",
        (
            # CloudResearch Connect joins the platforms. SQLite cannot alter a CHECK, and rebuilding ``studies``
            # would trip the foreign keys of study_workers and study_arrivals (on for every connection): the
            # constraint's text is changed in place, as SQLite's ALTER TABLE page describes for CHECK changes (the
            # table's stored format does not change), then the connection's schema is reloaded.
            "PRAGMA writable_schema = ON",
            """UPDATE sqlite_master SET sql = replace(sql, "CHECK (platform IN ('prolific', 'mturk', 'generic'))",
                   "CHECK (platform IN ('prolific', 'mturk', 'generic', 'connect'))")
               WHERE type = 'table' AND name = 'studies'""",
            "PRAGMA writable_schema = RESET",
            # gold_rate: the study's own share of gold items (NULL on studies made before: the server's gold_rate);
            # partial_code: the owner's code for a worker who waited past study_wait_minutes with nothing free
            "ALTER TABLE studies ADD COLUMN gold_rate REAL CHECK (gold_rate IS NULL OR (gold_rate >= 0 AND gold_rate < 1))",
            "ALTER TABLE studies ADD COLUMN partial_code TEXT NOT NULL DEFAULT ''",
            # why a worker's part ended (quota done, study closed, nothing free after waiting, ...): the report says so
            "ALTER TABLE study_workers ADD COLUMN end_reason TEXT",
            # waiting_since: when a working worker first found no task free (the waiting page's clock)
            "ALTER TABLE study_workers ADD COLUMN waiting_since TEXT",
        ),
    ),
]
