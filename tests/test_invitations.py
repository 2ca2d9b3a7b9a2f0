"""One-time invitation links with a role: created by admins, used once, forged or reused links refused."""

from __future__ import annotations

import pytest

from backend.accounts import auth, sessions
from backend.accounts.invitations import accept_invitation, create_invitation, invitation_role, list_invitations
from backend.errors import PermissionDenied, ValidationError


@pytest.fixture
def people(ctx):
    auth.add_user(ctx.database, "boss", "admin", "password1")
    auth.add_user(ctx.database, "rev", "reviewer", "password1")
    return ctx


def test_an_invitation_signs_up_once_with_its_role(people):
    ctx = people
    made = create_invitation(ctx.database, ctx.settings, "boss", "reviewer", "https://studio.example.org")
    assert made["link"] == f"https://studio.example.org/invite?token={made['token']}"
    assert invitation_role(ctx.database, made["token"]) == "reviewer"
    name, session = accept_invitation(ctx.database, ctx.settings, made["token"], "newcomer", "my-own-password")
    assert auth.get_user(ctx.database, "newcomer").role == "reviewer"
    assert auth.authenticate(ctx.database, "newcomer", "my-own-password")
    assert sessions.user_for(ctx.database, session) == "newcomer"
    with pytest.raises(PermissionDenied, match="used already"):
        accept_invitation(ctx.database, ctx.settings, made["token"], "second", "another-password")
    assert auth.get_user(ctx.database, "second") is None
    listed = list_invitations(ctx.database, "boss")
    assert listed[0]["used_by"] == "newcomer" and "token" not in listed[0]
    # the database keeps only a digest of the token
    assert ctx.database.scalar("SELECT count(*) FROM invitations WHERE token_sha256 = ?", (made["token"],)) == 0


def test_forged_expired_and_unauthorised_invitations_are_refused(people):
    ctx = people
    with pytest.raises(PermissionDenied, match="not valid"):
        accept_invitation(ctx.database, ctx.settings, "forged-token", "someone", "a-password-1")
    with pytest.raises(PermissionDenied):
        create_invitation(ctx.database, ctx.settings, "rev", "admin")
    with pytest.raises(ValidationError, match="unknown role"):
        create_invitation(ctx.database, ctx.settings, "boss", "owner")
    made = create_invitation(ctx.database, ctx.settings, "boss", "annotator")
    with pytest.raises(ValidationError, match="taken"):
        accept_invitation(ctx.database, ctx.settings, made["token"], "rev", "a-password-1")
    with pytest.raises(ValidationError, match="8 characters"):
        accept_invitation(ctx.database, ctx.settings, made["token"], "someone", "short")
    assert invitation_role(ctx.database, made["token"]) == "annotator"  # a failed sign-up leaves it usable
    with ctx.database.write() as db:
        db.conn.execute("UPDATE invitations SET expires_at = '2000-01-01'")
    with pytest.raises(PermissionDenied, match="expired"):
        accept_invitation(ctx.database, ctx.settings, made["token"], "someone", "a-password-1")
