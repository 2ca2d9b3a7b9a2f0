"""Prediction store and evaluation runs (backend/inference)."""

from backend.storage.migration import Migration

MIGRATIONS = [
    Migration(
        "inference_0001_predictions_runs",
        (
            # One answer of one model to one benchmark item under one prompt and generation settings.
            """CREATE TABLE predictions (
                id INTEGER PRIMARY KEY,
                model TEXT NOT NULL,
                benchmark TEXT NOT NULL,
                item_id TEXT NOT NULL,
                prompt_hash TEXT NOT NULL,
                settings_hash TEXT NOT NULL,
                status TEXT NOT NULL CHECK (status IN ('ok', 'unparsed', 'refusal', 'error')),
                raw_output TEXT,
                parsed TEXT,
                score REAL,
                latency_ms REAL,
                error TEXT,
                judge TEXT,
                run_id INTEGER,
                created_at TEXT NOT NULL,
                UNIQUE (model, benchmark, item_id, prompt_hash, settings_hash)
            )""",
            "CREATE INDEX predictions_run ON predictions (model, benchmark, settings_hash)",
            """CREATE TABLE eval_runs (
                id INTEGER PRIMARY KEY,
                benchmark TEXT NOT NULL,
                model TEXT NOT NULL,
                settings_hash TEXT NOT NULL,
                started_by TEXT NOT NULL,
                started_at TEXT NOT NULL,
                finished_at TEXT,
                status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'failed')),
                options TEXT,
                summary TEXT
            )""",
        ),
    ),
    Migration(
        "inference_0002_run_status_errors",
        (
            # Failed is failed (issue 24): a run with some failed calls ends 'finished with errors', one with
            # every call failed 'failed'; ``errors`` counts them. SQLite cannot alter a CHECK: rebuild the table.
            """CREATE TABLE eval_runs_new (
                id INTEGER PRIMARY KEY,
                benchmark TEXT NOT NULL,
                model TEXT NOT NULL,
                settings_hash TEXT NOT NULL,
                started_by TEXT NOT NULL,
                started_at TEXT NOT NULL,
                finished_at TEXT,
                status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'finished with errors', 'failed')),
                options TEXT,
                summary TEXT,
                errors INTEGER
            )""",
            """INSERT INTO eval_runs_new (id, benchmark, model, settings_hash, started_by, started_at, finished_at,
                   status, options, summary, errors)
               SELECT id, benchmark, model, settings_hash, started_by, started_at, finished_at, status, options, summary,
                   CAST(json_extract(summary, '$.errors') AS INTEGER) FROM eval_runs""",
            "DROP TABLE eval_runs",
            "ALTER TABLE eval_runs_new RENAME TO eval_runs",
            "CREATE INDEX eval_runs_benchmark ON eval_runs (benchmark, model, settings_hash)",
        ),
    ),
]
