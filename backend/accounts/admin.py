"""Account management as an admin does it in the web app: each function checks the admin role first.

The CLI (``python -m backend users ...``) is the operator's own shell and calls :mod:`backend.accounts.auth`
directly; everything reached over HTTP goes through here.

**The operator.** Whoever runs the command line is trusted (they hold the data folder). It acts through the one
public identity defined here, never a private helper of its own:

* :func:`operator` is the admin account the command line acts as where a service checks a signed-in admin
  (model runs, reports, grids, VQA votes, gold items, worker reports, invitations): the first enabled admin
  account.
* A service that takes ``operator=True`` (studies, webhooks) skips that check and audits the change under
  :data:`OPERATOR`; :func:`acting_admin` is that choice, made in one place.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from backend.accounts import auth
from backend.errors import ValidationError
from backend.storage import Database

#: the name the operator's shell is audited under where a service takes ``operator=True``
OPERATOR = "cli"


def operator(database: Database) -> str:
    """The admin account the command line acts as where a service checks the admin role (the first enabled admin).
    ``ValidationError`` when there is none: the operator creates one first."""
    admins = [u.username for u in auth.list_users(database) if u.role == "admin" and not u.disabled]
    if not admins:
        raise ValidationError("create an admin account first: python -m backend users add NAME --role admin ...")
    return admins[0]


def acting_admin(database: Database, username: str | None, operator: bool = False) -> str:
    """The name to audit: the signed-in admin (checked), or :data:`OPERATOR` for the operator's shell."""
    return OPERATOR if operator else auth.require_role(database, username, "admin").username


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
