"""Sign-in: server-side sessions (they survive a restart) and the failed-sign-in throttle."""

from backend.storage.migration import Migration

MIGRATIONS = [
    Migration(
        "signin_0001_sessions_throttle",
        (
            # One row per signed-in browser. The cookie holds a random token; only its SHA-256 is stored,
            # so a copy of the database (a backup) cannot be replayed as a sign-in.
            """CREATE TABLE sessions (
                token_sha256 TEXT PRIMARY KEY,
                username TEXT NOT NULL REFERENCES users (username) ON DELETE CASCADE,
                created_at TEXT NOT NULL,
                expires_at TEXT NOT NULL,
                address TEXT
            ) WITHOUT ROWID""",
            "CREATE INDEX sessions_username ON sessions (username)",
            "CREATE INDEX sessions_expires ON sessions (expires_at)",
            # Failed sign-ins per key: 'account:<typed name, lower case>' or 'address:<client address>'.
            # refused: attempts turned away unchecked while the key had to wait (not written to the audit log
            # one by one, so that a flood cannot fill the disk).
            """CREATE TABLE signin_throttle (
                key TEXT PRIMARY KEY,
                failures INTEGER NOT NULL,
                last_failure_at TEXT NOT NULL,
                refused INTEGER NOT NULL DEFAULT 0
            ) WITHOUT ROWID""",
            # Names of this installation that must not change across restarts (the session cookie's name);
            # random per data folder, so two CompStudio servers on one host do not overwrite each other's cookie.
            """CREATE TABLE installation (
                name TEXT PRIMARY KEY,
                value TEXT NOT NULL
            ) WITHOUT ROWID""",
            "INSERT INTO installation (name, value) VALUES ('cookie_suffix', lower(hex(randomblob(6))))",
        ),
    ),
]
