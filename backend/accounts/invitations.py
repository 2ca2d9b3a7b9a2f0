"""One-time invitation links with a role (issue 16 §4): an admin creates one, the person who opens it signs
up once with a user name and password of their choice and is signed in.

The link carries a random 256-bit token; the database keeps only its SHA-256 (like sessions), so a copy of
the database cannot be turned into sign-ups. A token that is unknown (forged or mistyped), used, or older
than ``invitation_days`` is refused with a message that says which. Using it, creating the account and
opening the session are one transaction: two people racing with one link get one account.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from backend.accounts import auth, sessions
from backend.errors import PermissionDenied, ValidationError
from backend.settings import Settings
from backend.storage import Database, audit, utcnow

INVITE_PATH = "invite"


def invitation_link(base_url: str, token: str) -> str:
    """The link to send: ``<app URL>/invite?token=...``.

    >>> invitation_link("https://studio.example.org/", "abc")
    'https://studio.example.org/invite?token=abc'
    """
    return f"{base_url.rstrip('/')}/{INVITE_PATH}?token={token}"


def create_invitation(
    database: Database, settings: Settings, username: str | None, role: str, base_url: str = ""
) -> dict[str, Any]:
    """A new one-time link for ``role`` (admins). The token is shown now and never again."""
    admin = auth.require_role(database, username, "admin")
    if role not in auth.ROLES:
        raise ValidationError(f"unknown role {role!r}; valid roles: {', '.join(auth.ROLES)}")
    token = secrets.token_urlsafe(32)
    expires = (datetime.now(UTC) + timedelta(days=settings.invitation_days)).isoformat(timespec="microseconds")
    with database.write() as db:
        db.conn.execute(
            "INSERT INTO invitations (token_sha256, role, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
            (sessions.token_digest(token), role, admin.username, utcnow(), expires),
        )
        audit(db, admin.username, "invitations.create", role, {"expires_at": expires})
    return {"role": role, "token": token, "link": invitation_link(base_url, token), "expires_at": expires}


def list_invitations(database: Database, username: str | None) -> list[dict[str, Any]]:
    """Every invitation without its token: role, who made it, when it expires, who used it (admins)."""
    auth.require_role(database, username, "admin")
    return database.query(
        "SELECT role, created_by, created_at, expires_at, used_by, used_at FROM invitations ORDER BY created_at DESC"
    )


def _usable(row: Any) -> str:
    """The role of a usable invitation row, or PermissionDenied saying why it is not."""
    if row is None:
        raise PermissionDenied("This invitation link is not valid. Ask the admin who invited you for a new one.")
    if row["used_by"] is not None:
        raise PermissionDenied("This invitation link has been used already. Sign in, or ask an admin for a new link.")
    if row["expires_at"] <= utcnow():
        raise PermissionDenied("This invitation link has expired. Ask an admin for a new one.")
    return str(row["role"])


def invitation_role(database: Database, token: str) -> str:
    """The role a token invites to (the sign-up page shows it), or PermissionDenied."""
    row = database.query_one(
        "SELECT role, used_by, expires_at FROM invitations WHERE token_sha256 = ?", (sessions.token_digest(token),)
    )
    return _usable(row)


def accept_invitation(
    database: Database, settings: Settings, token: str, username: str, password: str, address: str = ""
) -> tuple[str, str]:
    """Sign up with the link: create the account, use the token up, open a session. Returns (user, session
    token). The password is hashed before the write lock is taken."""
    username = (username or "").strip()
    invitation_role(database, token)  # a bad link is refused before any hashing
    auth.check_new_account(username, "annotator", password)
    hashed = auth.hash_password(password)
    with database.write() as db:
        digest = sessions.token_digest(token)
        row = db.conn.execute("SELECT * FROM invitations WHERE token_sha256 = ?", (digest,)).fetchone()
        role = _usable(row)
        if not auth.insert_user(db.conn, username, role, password_hash=hashed, source="invitation"):
            raise ValidationError(f"the user name {username!r} is taken; choose another")
        db.conn.execute(
            "UPDATE invitations SET used_by = ?, used_at = ? WHERE token_sha256 = ?", (username, utcnow(), digest)
        )
        audit(db, username, "invitations.accept", username, {"role": role, "invited_by": row["created_by"]})
        session = sessions.create_in(db, username, settings.session_hours, address or None)
    return username, session
