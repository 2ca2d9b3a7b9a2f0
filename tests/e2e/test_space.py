"""A simulated Hugging Face Space, end to end, on the real app.

``SPACE_ID`` is set, a temporary folder stands in for ``/data``, Sign in with Hugging Face is mocked
(huggingface_hub's local-debug OAuth routes in place of the real ones, with its ``_get_mocked_oauth_info``
patched) and ``tests.fake_hub.FakeHub`` stands in for
the Hub. Sign-in as the owner gives admin and as a stranger annotator; the stranger's annotations are backed
up; a second start with a wiped data folder and the same Hub restores every annotation acknowledged before
the last good snapshot, skipping a corrupted newest one.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import huggingface_hub._oauth as hf_oauth
import pytest
from playwright.sync_api import expect

from backend import assignment
from backend.operations import backup
from backend.operations.hub import hub_snapshots
from backend.operations.service import BackupService
from backend.operations.start import SpaceStart, prepare_start
from backend.settings import Settings
from backend.storage import utcnow
from tests.e2e_helpers import chromium_browser
from tests.fake_hub import FakeHub

pytestmark = pytest.mark.browser

OWNER, STRANGER, REPO = "ada", "stranger", "ada/compstudio-backup"
SPACE_ENV = {"SPACE_ID": "ada/compstudio", "SPACE_AUTHOR_NAME": OWNER}


@pytest.fixture
def mocked_oauth(monkeypatch):
    """The user the next mocked sign-in returns: set ``userinfo["preferred_username"]`` before signing in."""
    for key, value in SPACE_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("SYSTEM", raising=False)  # SYSTEM=spaces would make Gradio call the real Hub
    info = {
        "access_token": "fake", "token_type": "bearer", "expires_in": 3600, "id_token": "fake",
        "scope": "openid profile", "expires_at": 0,
        "userinfo": {"sub": "1", "name": "Someone", "preferred_username": OWNER, "picture": "", "profile": ""},
    }  # fmt: skip
    monkeypatch.setattr(hf_oauth, "_get_mocked_oauth_info", lambda: info)
    # SPACE_ID set: attach_huggingface_oauth would add the real routes, which talk to huggingface.co
    monkeypatch.setattr(hf_oauth, "_add_oauth_routes", hf_oauth._add_mocked_oauth_routes)
    return info["userinfo"]


def sign_in(url: str, userinfo: dict, username: str) -> httpx.Client:
    """Click "Sign in with Hugging Face" as ``username``; returns a client carrying the session cookie.

    Gradio marks the cookie Secure, which httpx would not send back over http, so it is set as a header.
    """
    userinfo["preferred_username"] = username
    with httpx.Client(base_url=url, timeout=30) as http:
        response = http.get("/oauth/huggingface/login", follow_redirects=False)
        response = http.get(response.headers["location"], follow_redirects=False)
        session = response.cookies["session"]
    return httpx.Client(base_url=url, timeout=30, headers={"Cookie": f"session={session}"})


def call(client: httpx.Client, name: str, *args):
    body = client.post(f"/scripts/gradio_api/run/{name}", json={"data": list(args)}).json()
    return body.get("data", [None])[0], body.get("error")


def seed_sequences(ctx, count: int = 3) -> None:
    """Action sequences without videos in the intent pool (the demo content would cost ~10 s to encode)."""
    actions = json.dumps([
        {"class_id": "c107", "name": "Holding a cup/glass/bottle of something", "start": 0.0, "end": 2.0},
        {"class_id": "c106", "name": "Drinking from a cup/glass/bottle", "start": 2.0, "end": 4.0},
    ])  # fmt: skip
    ids = [f"SPACE-{i}" for i in range(count)]
    with ctx.database.write() as db:
        db.conn.execute(
            "INSERT OR IGNORE INTO action_classes (id, name) VALUES ('c107', 'Holding a cup/glass/bottle of something'), "
            "('c106', 'Drinking from a cup/glass/bottle')"
        )
        db.conn.executemany(
            "INSERT INTO sequences (id, video_id, actions, scene, split, source, imported_at) "
            "VALUES (?, ?, ?, 'Kitchen', 'test', 'demo', ?)",
            [(sid, sid, actions, utcnow()) for sid in ids],
        )
        assignment.add_tasks(db, "intent", ids, 1)


def start(base: Settings, persistent: Path, hub: FakeHub) -> SpaceStart:
    return prepare_start(base, SPACE_ENV, api=hub, persistent_root=persistent)


def annotate(client: httpx.Client, n: int) -> list[str]:
    """Submit ``n`` annotations as a crowd worker would; returns the acknowledged sequence ids."""
    done = []
    for i in range(n):
        task, error = call(client, "intent_next")
        assert error is None, error
        sequence_id = task["task"]["sequence_id"]
        assert call(client, "intent_viewed", sequence_id, 1.0)[1] is None
        stored, error = call(
            client, "intent_submit", sequence_id, f"S/He wants to get ready for guest number {i}.",
            "S/He is preparing the home for a visit.",
        )  # fmt: skip
        assert error is None, error
        assert stored["stored"]["sequence_id"] == sequence_id
        done.append(sequence_id)
    return done


def test_simulated_space_signs_in_backs_up_and_restores(tmp_path, mocked_oauth, served_app):
    hub = FakeHub()
    base = Settings(data_dir=tmp_path / "ephemeral", hub_backup_repo=REPO, backup_every_minutes=60, demo_content=False)
    persistent = tmp_path / "data-mount"
    persistent.mkdir()

    first = start(base, persistent, hub)
    assert first.settings.data_dir == persistent / "compstudio"
    assert first.banner is None and first.restored.snapshot is None  # the repo does not exist yet
    with served_app.started(settings=first.settings) as app:
        seed_sequences(app.ctx)
        service = BackupService(app.ctx.settings, app.ctx.database, hf_api=hub).start()
        try:
            owner = sign_in(app.url, mocked_oauth, OWNER)
            users, error = call(owner, "admin_users")
            assert error is None and {u["username"]: u["role"] for u in users}[OWNER] == "admin"

            stranger = sign_in(app.url, mocked_oauth, STRANGER)
            assert "admin" in (call(stranger, "admin_users")[1] or "")  # refused: annotators are not admins
            users, _ = call(owner, "admin_users")
            assert {u["username"]: u["role"] for u in users}[STRANGER] == "annotator"

            acknowledged = annotate(stranger, 2)
            service.snapshot_now()  # and its push to the Hub
            after_snapshot = annotate(stranger, 1)
            for client in (owner, stranger):
                client.close()
        finally:
            service.stop()  # a last snapshot with all three, pushed
    assert backup.backup_status(app.ctx.database, first.settings).last_hub_ok_at is not None

    snapshots = hub_snapshots(list(hub.repos[REPO]))
    assert len(snapshots) >= 2
    hub.repos[REPO][snapshots[0]] = hub.repos[REPO][snapshots[0]][:4096]  # the newest upload is corrupted

    wiped = tmp_path / "data-mount-after-restart"
    wiped.mkdir()
    second = start(base, wiped, hub)
    assert [s["snapshot"] for s in second.restored.skipped] == [snapshots[0]]
    assert second.restored.snapshot == f"{REPO}/{snapshots[1]}"
    assert "Restored" in second.notices()[0]
    with served_app.started(settings=second.settings) as app:
        rows = app.ctx.database.query("SELECT sequence_id FROM annotations WHERE annotator = ?", (STRANGER,))
        restored = {r["sequence_id"] for r in rows}
        assert set(acknowledged) <= restored
        assert not set(after_snapshot) & restored  # only in the corrupted snapshot
        stranger = sign_in(app.url, mocked_oauth, STRANGER)
        assert "admin" in (call(stranger, "admin_users")[1] or "")
        owner = sign_in(app.url, mocked_oauth, OWNER)
        assert call(owner, "admin_users")[1] is None
        owner.close()
        stranger.close()


def test_signing_out_of_hugging_face_frees_the_leases_at_once(mocked_oauth, served_app):
    with served_app.started() as app:
        seed_sequences(app.ctx)
        client = sign_in(app.url, mocked_oauth, STRANGER)
        task, error = call(client, "intent_next")
        assert error is None and task["task"] is not None
        held = "SELECT count(*) FROM assignments WHERE annotator = ? AND status = 'leased' AND expires_at > ?"
        assert app.ctx.database.scalar(held, (STRANGER, utcnow())) == 1
        response = client.get("/logout", follow_redirects=False)
        assert response.status_code == 303
        assert app.ctx.database.scalar(held, (STRANGER, utcnow())) == 0  # the sequence is free for others now
        audit = app.ctx.database.query("SELECT action, detail FROM audit_log WHERE actor = ? ORDER BY id", (STRANGER,))
        assert audit[-1]["action"] == "signout" and '"leases_released": 1' in audit[-1]["detail"]


def test_a_visitor_not_signed_in_is_asked_to_sign_in_with_hugging_face(mocked_oauth, served_app):
    """A visitor of the Space who has not signed in is sent to the login page, which says what to do (Sign in with
    Hugging Face), and meets no error."""
    with served_app.started() as app, chromium_browser() as browser:
        page = browser.new_page()
        page.goto(app.url)
        expect(page).to_have_url(f"{app.url}/login", timeout=30_000)
        link = page.get_by_role("link", name="Sign in with Hugging Face")
        expect(link).to_be_visible()
        expect(link).to_have_attribute("href", "/oauth/huggingface/login")
        expect(page.get_by_label("Password")).to_have_count(0)  # no password form on a Space
        page.goto(f"{app.url}/annotator/")  # a page's address: sent to sign in, no error
        expect(page).to_have_url(f"{app.url}/login")
