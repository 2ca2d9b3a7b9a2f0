"""Sign in with Hugging Face: an OAuth userinfo becomes a CompStudio account.

The Space owner and the ``admins`` setting are admins; an optional organisation restriction
(``allowed_orgs``); everyone else signs up as annotator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backend.accounts import auth
from backend.errors import PermissionDenied
from backend.operations.space import space_admins
from backend.settings import Settings
from backend.storage import Database


def user_orgs(userinfo: Mapping[str, Any]) -> set[str]:
    """Organisation names in an OAuth userinfo (Hugging Face lists them under ``orgs``), lower-cased.

    >>> sorted(user_orgs({"orgs": [{"preferred_username": "LabA", "name": "Lab A"}]}))
    ['lab a', 'laba']
    """
    names: set[str] = set()
    for org in userinfo.get("orgs") or ():
        for key in ("preferred_username", "name"):
            if isinstance(org, Mapping) and org.get(key):
                names.add(str(org[key]).lower())
    return names


def oauth_sign_in(
    database: Database, settings: Settings, userinfo: Mapping[str, Any], env: Mapping[str, str] | None = None
) -> auth.User:
    """The account of someone who signed in with Hugging Face (``gr.OAuthProfile`` is this userinfo).

    With ``allowed_orgs`` set, only members of one of them (and the admins) may sign in.
    """
    username = userinfo.get("preferred_username")
    if not username:
        raise PermissionDenied("The Hugging Face sign-in gave no user name. Sign out and sign in again.")
    admins = space_admins(settings, env)
    if settings.allowed_orgs and username not in admins:
        allowed = {org.lower() for org in settings.allowed_orgs}
        if not allowed & user_orgs(userinfo):
            raise PermissionDenied(
                f"This CompStudio is open to members of {', '.join(settings.allowed_orgs)} only, and Hugging Face "
                f"did not report {username!r} as a member. Join the organisation or ask an admin."
            )
    return auth.oauth_user(database, username, admins)
