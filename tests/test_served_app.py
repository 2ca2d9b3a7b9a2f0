"""The ``served_app`` fixture itself (tests/conftest.py): each app its own port and data folder, the accounts asked
for with their passwords, the demo content when asked, a per-test app gone after its block, a restart on the
same folder and port."""

from __future__ import annotations

import httpx
import pytest
from e2e_helpers import IDENTITY_ACCOUNTS, IDENTITY_PASSWORD, ApiClient

from backend.accounts import auth

pytestmark = pytest.mark.slow  # starts app servers


def test_two_apps_have_their_own_port_data_folder_and_accounts(served_app):
    first = served_app({"ann": "annotator", "boss": "admin"})
    second = served_app([("rev", "reviewer", "another-password")], require_full_view=False)
    assert first.url != second.url
    assert first.ctx.settings.data_dir != second.ctx.settings.data_dir
    assert not first.ctx.settings.demo_content and second.ctx.settings.require_full_view is False
    assert auth.get_user(first.ctx.database, "boss").role == "admin"
    assert auth.get_user(second.ctx.database, "boss") is None
    ApiClient(first.url, "ann", IDENTITY_PASSWORD).close()  # the mapping's accounts take the shared password
    ApiClient(second.url, "rev", "another-password").close()
    with pytest.raises(PermissionError):
        ApiClient(second.url, "rev", IDENTITY_PASSWORD)


def test_identities_and_demo_content(served_app):
    app = served_app(demo=True, identities=True)
    assert app.ctx.settings.demo_content
    assert any((app.ctx.settings.media_dir / "demo").glob("*.mp4"))  # the videos, copied from the session's cache
    for identity, name in IDENTITY_ACCOUNTS.items():
        expected = "annotator" if identity == "author" else identity
        assert auth.get_user(app.ctx.database, name).role == expected


def test_a_started_app_stops_with_its_block_and_a_restart_keeps_folder_and_port(served_app):
    with served_app.started({"ann": "annotator"}, password="password-123") as app:
        url = app.url
        again = served_app.restart(app)
        assert again.url == url and again.ctx.settings.data_dir == app.ctx.settings.data_dir
        ApiClient(again.url, "ann", "password-123").close()  # the account is still in the database
        served_app.stop(again)
        with pytest.raises(httpx.ConnectError):
            httpx.get(url, timeout=5)
    with served_app.started() as app:
        url = app.url
        assert httpx.get(url, timeout=30, follow_redirects=True).status_code == 200
    with pytest.raises(httpx.ConnectError):
        httpx.get(url, timeout=5)
