from __future__ import annotations

import pytest

from backend.accounts import auth
from backend.errors import NotFound, PermissionDenied, ValidationError


def test_passwords_are_salted_slow_hashes(database):
    auth.add_user(database, "alice", "annotator", "correct horse")
    stored = database.scalar("SELECT password_hash FROM users WHERE username = 'alice'")
    assert "correct horse" not in stored and stored.startswith("scrypt$16384$8$1$")
    assert auth.hash_password("same") != auth.hash_password("same")  # salted
    assert auth.authenticate(database, "alice", "correct horse")
    assert not auth.authenticate(database, "alice", "wrong password")
    assert not auth.authenticate(database, "nobody", "correct horse")


def test_roles_are_ordered_and_checked(database):
    auth.add_user(database, "ann", "annotator", "password1")
    auth.add_user(database, "rev", "reviewer", "password1")
    auth.add_user(database, "boss", "admin", "password1")
    assert auth.require_role(database, "boss", "reviewer").username == "boss"
    assert auth.require_role(database, "rev", "annotator").role == "reviewer"
    with pytest.raises(PermissionDenied, match="needs the admin role"):
        auth.require_role(database, "rev", "admin")
    with pytest.raises(PermissionDenied, match="not signed in"):
        auth.require_role(database, None, "annotator")
    with pytest.raises(PermissionDenied, match="no account"):
        auth.require_role(database, "ghost", "annotator")


def test_disable_and_set_role(database):
    auth.add_user(database, "ann", "annotator", "password1")
    auth.set_role(database, "ann", "reviewer")
    assert auth.get_user(database, "ann").role == "reviewer"
    auth.set_disabled(database, "ann", True)
    assert not auth.authenticate(database, "ann", "password1")
    with pytest.raises(PermissionDenied, match="disabled"):
        auth.require_role(database, "ann", "annotator")
    with pytest.raises(NotFound):
        auth.set_role(database, "ghost", "admin")
    actions = [r["action"] for r in database.query("SELECT action FROM audit_log ORDER BY id")]
    assert actions == ["users.add", "users.set_role", "users.disable"]


@pytest.mark.parametrize(
    ("name", "role", "password", "message"),
    [
        ("ok-name", "boss", "password1", "unknown role"),
        ("bad name!", "annotator", "password1", "not valid"),
        ("short", "annotator", "1234567", "at least 8"),
    ],
)
def test_invalid_accounts_are_refused(database, name, role, password, message):
    with pytest.raises(ValidationError, match=message):
        auth.add_user(database, name, role, password)
    assert database.scalar("SELECT count(*) FROM users") == 0


def test_oauth_users_become_annotators_unless_named_admin(database):
    assert auth.oauth_user(database, "stranger", admins=("owner",)).role == "annotator"
    assert auth.oauth_user(database, "owner", admins=("owner",)).role == "admin"
    auth.set_role(database, "stranger", "reviewer")
    assert auth.oauth_user(database, "stranger", admins=("owner",)).role == "reviewer"  # keeps what an admin gave
    assert not auth.authenticate(database, "stranger", "")  # no password login for OAuth accounts


def test_insert_user_is_the_one_way_accounts_are_stored(database):
    with database.write() as db:
        assert auth.insert_user(db.conn, "carol", "reviewer", source="imported", disabled=True) is True
        assert auth.insert_user(db.conn, "carol", "admin") is False
    carol = auth.get_user(database, "carol")
    assert (carol.role, carol.disabled) == ("reviewer", True)
    with pytest.raises(ValidationError, match="already exists"):
        auth.add_user(database, "carol", "admin", "password1")


def test_the_command_line_acts_through_one_public_operator_identity(database):
    """``backend.accounts.admin.operator`` is the admin account every CLI command acts as where a service checks the
    admin role (the first enabled admin); ``acting_admin(..., operator=True)`` audits the shell as OPERATOR."""
    from backend.accounts.admin import OPERATOR, acting_admin, operator

    with pytest.raises(ValidationError, match="create an admin account first"):
        operator(database)
    auth.add_user(database, "ann", "annotator", "password-123")
    auth.add_user(database, "first", "admin", "password-123")
    auth.add_user(database, "second", "admin", "password-123")
    assert operator(database) == "first"
    auth.set_disabled(database, "first")
    assert operator(database) == "second"
    assert acting_admin(database, None, operator=True) == OPERATOR == "cli"
    assert acting_admin(database, "second") == "second"
    with pytest.raises(PermissionDenied):
        acting_admin(database, "ann")
