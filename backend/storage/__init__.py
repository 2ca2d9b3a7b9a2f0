"""Storage: the SQLite database, its schema, and the one serialised write path."""

from backend.storage.db import Database, audit, utcnow

__all__ = ["Database", "audit", "utcnow"]
