"""Prediction store and evaluation runs (backend/inference)."""

from backend.storage.migrations import Migration

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
]
