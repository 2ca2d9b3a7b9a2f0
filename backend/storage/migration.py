"""One schema migration: a name and its SQL statements. Its own module so that the schema modules
(``backend/storage/schema/``) can build theirs while ``backend/storage/migrations.py`` imports them all to fix
the order (no import circle)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    name: str
    statements: tuple[str, ...]
