"""Admin actions as the web app calls them: the same library functions as the CLI, behind a role check.

The CLI is the operator's own shell and is trusted; everything reached over HTTP goes through here.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from backend import auth
from backend.intents.export import export_intents
from backend.settings import Settings
from backend.storage import Database, utcnow
from backend.vilpact.importer import import_vilpact


def import_vilpact_as(
    database: Database, settings: Settings, username: str, root: str, videos: str | None = None
) -> dict:
    auth.require_role(database, username, "admin")
    report = import_vilpact(
        database, Path(root), videos=Path(videos) if videos else None, actor=username,
        annotators_per_sequence=settings.annotators_per_sequence,
    )
    return report.as_dict()


def export_intents_as(database: Database, settings: Settings, username: str, fmt: str) -> dict:
    """Export into ``<data>/exports/`` (never a path the caller chooses, never inside the served media folder)."""
    auth.require_role(database, username, "admin")
    stamp = utcnow().replace(":", "").replace("-", "")[:15]
    out = settings.data_dir / "exports" / f"intents-{stamp}.{fmt}"
    return export_intents(database, fmt, out)


def list_users_as(database: Database, username: str) -> list[dict]:
    auth.require_role(database, username, "admin")
    return [asdict(u) for u in auth.list_users(database)]


def add_user_as(database: Database, username: str, name: str, role: str, password: str) -> dict:
    auth.require_role(database, username, "admin")
    return asdict(auth.add_user(database, name, role, password, actor=username))


def set_role_as(database: Database, username: str, name: str, role: str) -> dict:
    auth.require_role(database, username, "admin")
    return asdict(auth.set_role(database, name, role, actor=username))


def set_disabled_as(database: Database, username: str, name: str, disabled: bool) -> dict:
    auth.require_role(database, username, "admin")
    if name == username and disabled:
        from backend.errors import ValidationError

        raise ValidationError("you cannot disable your own account")
    return asdict(auth.set_disabled(database, name, disabled, actor=username))


def audit_log_as(database: Database, username: str, limit: int = 200) -> list[dict]:
    auth.require_role(database, username, "admin")
    return database.query(
        "SELECT at, actor, action, target, detail FROM audit_log ORDER BY id DESC LIMIT ?", (int(limit),)
    )
