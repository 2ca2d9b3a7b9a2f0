"""Account management as an admin does it in the web app: each function checks the admin role first.

The CLI (``python -m backend users ...``) is the operator's own shell and calls :mod:`backend.accounts.auth`
directly; everything reached over HTTP goes through here.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from backend.accounts import auth
from backend.errors import ValidationError
from backend.storage import Database


def list_accounts(database: Database, username: str | None) -> list[dict[str, Any]]:
    auth.require_role(database, username, "admin")
    return [asdict(u) for u in auth.list_users(database)]


def add_account(database: Database, username: str | None, name: str, role: str, password: str) -> dict[str, Any]:
    admin = auth.require_role(database, username, "admin")
    return asdict(auth.add_user(database, name, role, password, actor=admin.username))


def change_role(database: Database, username: str | None, name: str, role: str) -> dict[str, Any]:
    admin = auth.require_role(database, username, "admin")
    return asdict(auth.set_role(database, name, role, actor=admin.username))


def set_account_disabled(database: Database, username: str | None, name: str, disabled: bool) -> dict[str, Any]:
    admin = auth.require_role(database, username, "admin")
    if name == admin.username and disabled:
        raise ValidationError("you cannot disable your own account")
    return asdict(auth.set_disabled(database, name, disabled, actor=admin.username))


def audit_log(database: Database, username: str | None, limit: int = 200) -> list[dict[str, Any]]:
    auth.require_role(database, username, "admin")
    return database.query(
        "SELECT at, actor, action, target, detail FROM audit_log ORDER BY id DESC LIMIT ?", (int(limit),)
    )
