"""AppContext: settings + database, built once at start-up and handed to every tab."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from backend.settings import Settings
from backend.storage import Database


@dataclass(frozen=True)
class AppContext:
    settings: Settings
    database: Database
    backup: Any = None  # backend.backup.BackupService, when the app runs one
    notices: tuple[str, ...] = ()  # start-up notices for admins (ephemeral storage, what was restored)


def build_context(settings: Settings) -> AppContext:
    """Create the data folder, open the database and apply migrations."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    settings.media_dir.mkdir(parents=True, exist_ok=True)
    database = Database(settings.db_path, busy_timeout_ms=settings.busy_timeout_ms)
    database.migrate()
    return AppContext(settings=settings, database=database)
