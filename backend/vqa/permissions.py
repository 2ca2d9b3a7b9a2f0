"""The ``author`` permission: lets an annotator write VQA items and verify others' items.

Roles stay ordered (annotator < reviewer < admin); a permission is an extra right granted to one account
by an admin, stored in ``vqa_permissions``. Reviewers and admins may author without it.
"""

from __future__ import annotations

from backend.accounts import auth
from backend.accounts.auth import User
from backend.errors import NotFound, PermissionDenied, ValidationError
from backend.storage import Database, audit, utcnow

PERMISSIONS = ("author",)


def has_permission(database: Database, username: str, permission: str) -> bool:
    return bool(
        database.scalar("SELECT 1 FROM vqa_permissions WHERE username = ? AND permission = ?", (username, permission))
    )


def set_permission(database: Database, actor: str | None, username: str, permission: str, granted: bool = True) -> bool:
    """Grant (or revoke) ``permission``; only admins. Returns whether the user holds it afterwards."""
    admin = auth.require_role(database, actor, "admin")
    if permission not in PERMISSIONS:
        raise ValidationError(f"unknown permission {permission!r}; valid: {', '.join(PERMISSIONS)}")
    if auth.get_user(database, username) is None:
        raise NotFound(f"no user named {username!r}")
    with database.write() as db:
        if granted:
            db.conn.execute(
                "INSERT OR IGNORE INTO vqa_permissions (username, permission, granted_by, granted_at) VALUES (?,?,?,?)",
                (username, permission, admin.username, utcnow()),
            )
        else:
            db.conn.execute("DELETE FROM vqa_permissions WHERE username = ? AND permission = ?", (username, permission))
        audit(
            db,
            admin.username,
            "vqa.permission.grant" if granted else "vqa.permission.revoke",
            username,
            {"permission": permission},
        )
    return granted


def is_author(database: Database, user: User) -> bool:
    return user.has_role("reviewer") or (
        user.has_role("annotator") and has_permission(database, user.username, "author")
    )


def require_author(database: Database, username: str | None) -> User:
    """The caller if they may author VQA items (author permission, reviewer or admin); else PermissionDenied."""
    user = auth.require_role(database, username, "annotator")
    if not is_author(database, user):
        raise PermissionDenied(
            f"Writing VQA items needs the author permission; {user.username!r} does not have it. Ask an admin."
        )
    return user
