"""Who may call what: the identities, and the check of one caller against the least identity an event declares.

Every Gradio event is also an HTTP endpoint, so each one declares the least identity that may call it, once, beside
the panel that owns it (components/events.py, ``Event(name, least, ...)``); the access table is read from the built
pages (web/access_table.py, ``compstudio access``, docs/access.md). The identities:

* ``anyone``: no sign-in needed;
* ``annotator``: any signed-in, enabled account;
* ``author``: an annotator holding the VQA ``author`` permission, a reviewer or an admin
  (backend/vqa/permissions.py);
* ``reviewer``, ``admin``: that role or a higher one (backend/accounts/auth.py).

There is no separate role for planning-question authors: writing planning questions needs ``reviewer``. The guard in
front of each handler (components/access.py) checks the caller against the event's identity; the services' own
``require_role`` checks stay the enforcement beneath it, because the command line and scripts call them directly.
"""

from __future__ import annotations

from backend.accounts import auth
from backend.errors import PermissionDenied
from backend.storage import Database

#: identities, from the least to the most trusted (each includes the rights of those before it)
IDENTITIES: tuple[str, ...] = ("anyone", "annotator", "author", "reviewer", "admin")


def allows(least: str, identity: str) -> bool:
    """Whether ``identity`` (one of IDENTITIES) may call an endpoint whose row says ``least``.

    >>> allows("author", "reviewer"), allows("reviewer", "author"), allows("annotator", "anyone")
    (True, False, False)
    """
    return IDENTITIES.index(identity) >= IDENTITIES.index(least)


def identity(database: Database, username: str | None) -> str:
    """The most trusted identity of ``username`` (one of IDENTITIES): "anyone" when not signed in or disabled,
    "author" for an annotator with the VQA author right, else the account's role."""
    user = auth.get_user(database, username) if username else None
    if user is None or user.disabled:
        return "anyone"
    if user.role == "annotator":
        from backend.vqa.permissions import is_author

        return "author" if is_author(database, user) else "annotator"
    return user.role


def check(database: Database, username: str | None, least: str) -> None:
    """Raise PermissionDenied unless ``username`` may call an endpoint whose row says ``least``."""
    if least == "anyone":
        return
    if least == "author":
        from backend.vqa.permissions import require_author

        require_author(database, username)
        return
    if least not in IDENTITIES:
        raise PermissionDenied(f"This action declares no identity that may call it: {least!r}.")
    auth.require_role(database, username, least)
