"""Accounts and roles: who may do what, checked on every call.

Roles are ordered: ``annotator`` < ``reviewer`` < ``admin``; a role includes the rights of those below it.
Passwords are stored as salted scrypt hashes (``hashlib.scrypt``, the standard library's memory-hard KDF),
never as text.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import sqlite3
from dataclasses import dataclass

from backend.accounts.sessions import end_all_in
from backend.assignment import release_leases
from backend.errors import NotFound, PermissionDenied, ValidationError
from backend.storage import Database, audit, utcnow

ROLES: tuple[str, ...] = ("annotator", "reviewer", "admin")
_RANK = {role: rank for rank, role in enumerate(ROLES)}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{1,63}$")
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}


@dataclass(frozen=True)
class User:
    username: str
    role: str
    disabled: bool
    source: str
    created_at: str

    def has_role(self, role: str) -> bool:
        return not self.disabled and _RANK[self.role] >= _RANK[role]


def hash_password(password: str) -> str:
    salt = os.urandom(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, dklen=32, **_SCRYPT)
    b64 = base64.b64encode
    return f"scrypt${_SCRYPT['n']}${_SCRYPT['r']}${_SCRYPT['p']}${b64(salt).decode()}${b64(digest).decode()}"


def verify_password(password: str, stored: str | None) -> bool:
    if not stored or not stored.startswith("scrypt$"):
        return False
    _, n, r, p, salt, digest = stored.split("$")
    expected = base64.b64decode(digest)
    actual = hashlib.scrypt(
        password.encode(), salt=base64.b64decode(salt), dklen=len(expected), n=int(n), r=int(r), p=int(p)
    )
    return hmac.compare_digest(actual, expected)


def _check_role(role: str) -> None:
    if role not in _RANK:
        raise ValidationError(f"unknown role {role!r}; valid roles: {', '.join(ROLES)}")


def _row_to_user(row: dict) -> User:
    return User(row["username"], row["role"], bool(row["disabled"]), row["source"], row["created_at"])


def get_user(database: Database, username: str) -> User | None:
    row = database.query_one("SELECT * FROM users WHERE username = ?", (username,))
    return _row_to_user(row) if row else None


def list_users(database: Database) -> list[User]:
    return [_row_to_user(r) for r in database.query("SELECT * FROM users ORDER BY username")]


def check_new_account(username: str, role: str, password: str | None) -> None:
    """The rules for a new account's name, role and password (ValidationError naming the first broken one)."""
    _check_role(role)
    if not _NAME.match(username):
        raise ValidationError(
            f"user name {username!r} is not valid: use 2-64 letters, digits, '_', '.', '@' or '-', starting "
            "with a letter or digit"
        )
    if password is not None and len(password) < 8:
        raise ValidationError("the password must have at least 8 characters")


def add_user(
    database: Database, username: str, role: str, password: str | None, *, actor: str = "cli", source: str = "local"
) -> User:
    """Create an account. Password accounts need at least 8 characters."""
    check_new_account(username, role, password)
    hashed = hash_password(password) if password is not None else None
    with database.write() as db:
        if not insert_user(db.conn, username, role, password_hash=hashed, source=source):
            raise ValidationError(f"user {username!r} already exists")
        audit(db, actor, "users.add", username, {"role": role, "source": source})
    user = get_user(database, username)
    assert user is not None
    return user


def insert_user(
    conn: sqlite3.Connection,
    username: str,
    role: str,
    *,
    password_hash: str | None = None,
    disabled: bool = False,
    source: str = "local",
) -> bool:
    """Store one account row inside the caller's write transaction (every place that creates accounts uses
    this); False, and nothing changed, when the name exists. Callers validate name, role and password."""
    cur = conn.execute(
        "INSERT OR IGNORE INTO users (username, role, password_hash, disabled, source, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (username, role, password_hash, int(disabled), source, utcnow()),
    )
    return cur.rowcount == 1


def set_role(database: Database, username: str, role: str, *, actor: str = "cli") -> User:
    _check_role(role)
    with database.write() as db:
        cur = db.conn.execute("UPDATE users SET role = ? WHERE username = ?", (role, username))
        if cur.rowcount == 0:
            raise NotFound(f"no user named {username!r}")
        audit(db, actor, "users.set_role", username, {"role": role})
    return get_user(database, username)  # type: ignore[return-value]


def set_disabled(database: Database, username: str, disabled: bool = True, *, actor: str = "cli") -> User:
    with database.write() as db:
        cur = db.conn.execute("UPDATE users SET disabled = ? WHERE username = ?", (int(disabled), username))
        if cur.rowcount == 0:
            raise NotFound(f"no user named {username!r}")
        detail = None
        if disabled:  # its sessions and leases end now (sessions do not come back if it is enabled again)
            detail = {"sessions_ended": end_all_in(db, username), "leases_released": release_leases(db, username)}
        audit(db, actor, "users.disable" if disabled else "users.enable", username, detail)
    return get_user(database, username)  # type: ignore[return-value]


def authenticate(database: Database, username: str, password: str) -> bool:
    """The password check behind ``launch(auth=...)``: enabled local accounts with a matching hash."""
    row = database.query_one("SELECT password_hash, disabled FROM users WHERE username = ?", (username,))
    if row is None or row["disabled"]:
        return False
    return verify_password(password, row["password_hash"])


def oauth_user(database: Database, username: str, admins: tuple[str, ...]) -> User:
    """The account of someone signed in with Hugging Face, created on first sign-in.

    New users become annotators, or admins when named in the ``admins`` setting. An existing account
    keeps the role an admin gave it, except that a name listed in ``admins`` is always an admin.
    """
    with database.write() as db:
        row = db.conn.execute("SELECT * FROM users WHERE username = ?", (username,)).fetchone()
        wanted_admin = username in admins
        if row is None:
            role = "admin" if wanted_admin else "annotator"
            insert_user(db.conn, username, role, source="oauth")
            audit(db, username, "users.oauth_signup", username, {"role": role})
        elif wanted_admin and row["role"] != "admin":
            db.conn.execute("UPDATE users SET role = 'admin' WHERE username = ?", (username,))
            audit(db, "settings.admins", "users.set_role", username, {"role": "admin"})
    return get_user(database, username)  # type: ignore[return-value]


def require_role(database: Database, username: str | None, role: str) -> User:
    """The signed-in, enabled user ``username`` if they have at least ``role``; else PermissionDenied."""
    if not username:
        raise PermissionDenied("You are not signed in. Sign in and try again.")
    user = get_user(database, username)
    if user is None:
        raise PermissionDenied(f"There is no account named {username!r}. Ask an admin to create one.")
    if user.disabled:
        raise PermissionDenied(f"The account {username!r} is disabled. Ask an admin to enable it.")
    if not user.has_role(role):
        raise PermissionDenied(f"This needs the {role} role; {username!r} is {user.role}. Ask an admin.")
    return user
