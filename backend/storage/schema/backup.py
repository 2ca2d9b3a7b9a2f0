"""Backups: one row per snapshot attempt (local file or Hub push), so admins see the last success."""

from backend.storage.migration import Migration

MIGRATIONS = [
    Migration(
        "backup_0001_runs",
        (
            """CREATE TABLE backup_runs (
                id INTEGER PRIMARY KEY,
                kind TEXT NOT NULL CHECK (kind IN ('local', 'hub', 'restore')),
                at TEXT NOT NULL,
                ok INTEGER NOT NULL,
                file TEXT,
                bytes INTEGER,
                detail TEXT
            )""",
            "CREATE INDEX backup_runs_kind ON backup_runs (kind, ok, at)",
        ),
    ),
]
