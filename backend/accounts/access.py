"""The access table: who may call each endpoint of the web app (issue 15 §1).

Every Gradio event is also an HTTP endpoint (by name, and by ``fn_index`` for the private ones), so every
one of them is listed here with the least identity that may call it:

* ``anyone``: no sign-in needed;
* ``annotator``: any signed-in, enabled account;
* ``author``: an annotator holding the VQA ``author`` permission, a reviewer or an admin
  (backend/vqa/permissions.py);
* ``reviewer``, ``admin``: that role or a higher one (backend/accounts/auth.py).

There is no separate role for planning-question authors: writing planning questions needs ``reviewer``.

``EVENTS`` is keyed by each event's ``api_name``, one row per endpoint: the public names scripts call
(docs/api.md) and the ``<tab>_ui_<action>`` names of the page's own (private) events. Every event is
registered with an explicit ``api_name`` through ``components.access.listen`` / ``endpoint``, so a key never
derives from a Python function's name: renaming a handler changes nothing. Which HTTP routes need a
sign-in is the web shell's (web/gate.py guards every route under a mount).

The guard that ``listen``/``endpoint`` put in front of each handler (components/access.py) resolves the
caller once and checks them against the row of the event's ``api_name``; an ``api_name`` with no row is
refused to everyone (and logged). The services' own ``require_role`` checks stay the enforcement beneath
it. tests/test_access_table.py calls every endpoint as every identity and fails for an endpoint missing here
(naming it and this file) and for any outcome that differs from the table.

Adding an endpoint: give it an ``api_name`` (``listen(ctx, button.click, fn, ..., api_name="tab_ui_action")``)
and add one row below, in the block of its tab, with the least identity that may call it.
"""

from __future__ import annotations

from backend.accounts import auth
from backend.errors import PermissionDenied
from backend.storage import Database

#: identities, from the least to the most trusted (each includes the rights of those before it)
IDENTITIES: tuple[str, ...] = ("anyone", "annotator", "author", "reviewer", "admin")

EVENTS: dict[str, str] = {
    # -- Annotate intents (components/intents.py); the same names are served on POST /api/<name> (web/scripts.py)
    "intent_next": "annotator",
    "intent_submit": "annotator",
    "intent_skip": "annotator",
    "intent_viewed": "annotator",
    "intent_draft": "annotator",
    "intent_played": "annotator",
    "intents_ui_start": "annotator",
    "intents_ui_submit": "annotator",
    "intents_ui_skip": "annotator",
    "intents_ui_check": "annotator",
    "intents_ui_draft_concrete": "annotator",
    "intents_ui_draft_high_level": "annotator",
    # -- In-context examples (components/icl.py)
    "icl_sets": "annotator",
    "icl_cases": "annotator",
    "icl_select": "annotator",
    "icl_table": "annotator",
    "icl_answer": "reviewer",
    "icl_ask": "reviewer",
    "icl_ui_tests": "annotator",
    "icl_ui_tests_category": "annotator",
    "icl_ui_tests_query": "annotator",
    "icl_ui_setting": "annotator",
    "icl_ui_run": "annotator",
    "icl_ui_set_table": "annotator",
    "icl_ui_upload": "reviewer",
}


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
        raise PermissionDenied(f"This action is not in the access table (backend/accounts/access.py): {least!r}.")
    auth.require_role(database, username, least)
