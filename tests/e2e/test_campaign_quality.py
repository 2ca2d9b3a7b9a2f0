"""Crowd-campaign admin work in a real browser (issue 16 §3-4): an admin blocks a worker (their lease is freed)
and downloads the worker report as CSV; an invitation link signs a person up once, and is refused after."""

from __future__ import annotations

import csv
import io

import pytest
from e2e_helpers import browser_login
from playwright.sync_api import expect

from backend.accounts import auth
from backend.intents import service
from backend.storage import utcnow
from backend.vilpact.importer import import_vilpact
from tests.conftest import VILPACT_DATA

PASSWORD = "password-boss"


@pytest.fixture(scope="module")
def running(served_app):
    app = served_app({"boss": "admin"}, password=PASSWORD, quality_pause_after=3, require_full_view=False)
    import_vilpact(app.ctx.database, VILPACT_DATA, annotators_per_sequence=2)
    video = app.ctx.settings.media_dir / "to-watch.mp4"  # "too fast" needs a video to watch (issue 40)
    video.write_bytes(b"\0" * 64)
    with app.ctx.database.write() as db:
        auth.insert_user(db.conn, "crowd-7", "annotator")
        db.conn.execute("UPDATE sequences SET video_path = ?", (str(video),))
    return app


@pytest.fixture
def admin_page(running, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    browser_login(page, running.url, "boss", PASSWORD)
    page.wait_for_selector("#whoami strong", timeout=60_000)
    page.get_by_role("tab", name="Admin", exact=True).click()
    yield page
    context.close()


def test_admin_blocks_a_worker_and_downloads_the_report(admin_page, running, tmp_path):
    page, db = admin_page, running.ctx.database
    held = service.next_intent_task(db, running.ctx.settings, "crowd-7")["task"]["sequence_id"]
    page.get_by_text("Crowd workers: report, payment CSV, blocking").click()
    page.locator("#report-refresh").click()
    expect(page.locator("#report-table")).to_contain_text("crowd-7", timeout=30_000)
    page.get_by_label("Worker (user name)").fill("crowd-7")
    page.get_by_label("Reason (for the audit log)").fill("copies the action names <b>")
    page.locator("#worker-block").click()
    expect(page.locator("#worker-message")).to_contain_text("Blocked crowd-7: 1 lease(s) freed", timeout=30_000)
    expect(page.locator("#report-table")).to_contain_text("blocked")
    live = db.scalar(
        "SELECT count(*) FROM assignments WHERE item_id = ? AND status = 'leased' AND expires_at > ?",
        (held, utcnow()),
    )
    assert live == 0 and db.scalar("SELECT disabled FROM users WHERE username = 'crowd-7'") == 1
    page.locator("#report-download").click()
    link = page.locator("#report-file a").first
    expect(link).to_be_visible(timeout=30_000)
    page.screenshot(path=str(tmp_path / "admin-workers.png"), full_page=True)
    with page.expect_download(timeout=30_000) as download:
        link.click()
    text = download.value.path().read_text(encoding="utf-8")
    rows = {r["username"]: r for r in csv.DictReader(io.StringIO(text))}
    assert rows["crowd-7"]["state"] == "blocked" and rows["crowd-7"]["submitted"] == "0"
    audit = db.query_one("SELECT actor, detail FROM audit_log WHERE action = 'quality.block'")
    assert audit["actor"] == "boss" and "<b>" in audit["detail"]


def test_an_invitation_link_signs_up_once(admin_page, running, browser, tmp_path):
    page = admin_page
    page.get_by_text("Invitation links", exact=True).click()
    page.locator("#invite-role input").click()
    page.get_by_role("option", name="reviewer").click()
    page.locator("#invite-create").click()
    field = page.locator("#invite-link textarea, #invite-link input").first
    page.wait_for_function(
        "() => { const f = document.querySelector('#invite-link textarea, #invite-link input');"
        " return f && f.value.includes('/invite?token='); }",
        timeout=30_000,
    )
    link = field.input_value()
    assert link.startswith(f"{running.url}/invite?token=")  # the shell's page at the root, not under /admin/
    guest = browser.new_context()
    newcomer = guest.new_page()
    newcomer.goto(link)
    expect(newcomer.get_by_text("You are invited as reviewer")).to_be_visible()
    newcomer.get_by_label("User name").fill("new-reviewer")
    newcomer.get_by_label("Password (8 or more characters)").fill("chosen-password")
    newcomer.screenshot(path=str(tmp_path / "invite-form.png"), full_page=True)
    newcomer.get_by_role("button", name="Sign up").click()
    expect(newcomer.locator("#whoami")).to_contain_text("new-reviewer", timeout=60_000)
    expect(newcomer.locator("#whoami")).to_contain_text("reviewer")
    guest.close()
    again = browser.new_context()
    second = again.new_page()
    second.goto(link)
    expect(second.locator("#invite-message")).to_contain_text("used already")
    expect(second.get_by_role("button", name="Sign up")).to_have_count(0)
    second.goto(link.split("token=")[0] + "token=forged-" + link.split("token=")[1][:10])
    expect(second.locator("#invite-message")).to_contain_text("not valid")
    again.close()
    assert auth.get_user(running.ctx.database, "new-reviewer").role == "reviewer"


def test_a_reviewer_sees_why_a_worker_was_paused_and_resumes_them(admin_page, running, browser, tmp_path):
    """The Worker quality panel opens with the open flags shown, without pressing anything."""
    page, db, settings = admin_page, running.ctx.database, running.ctx.settings
    auth.add_user(db, "speedy", "annotator", "speedy-password")
    for _ in range(settings.quality_pause_after):  # answers in well under the video's length
        task = service.next_intent_task(db, settings, "speedy")["task"]
        service.submit_intents(db, settings, "speedy", task["sequence_id"], "S/He wants to eat", "S/He is hungry")
    worker_context = browser.new_context(viewport={"width": 1280, "height": 900})
    worker = worker_context.new_page()
    browser_login(worker, running.url, "speedy", "speedy-password")
    expect(worker.locator("#intent-task")).to_contain_text("paused for a quality check", timeout=60_000)
    worker.screenshot(path=str(tmp_path / "worker-paused.png"), full_page=True)
    worker_context.close()
    page.get_by_role("tab", name="Review", exact=True).click()
    page.get_by_role("tab", name="Worker quality", exact=True).click()  # opening it shows the flags (issue 44)
    table = page.locator("#flags-table")
    expect(table).to_contain_text("too_fast", timeout=30_000)
    expect(table).to_contain_text("the floor is")
    expect(table).to_contain_text("paused")
    page.screenshot(path=str(tmp_path / "review-flags.png"), full_page=True)
    page.get_by_label("Paused worker").fill("speedy")
    page.locator("#flags-resume").click()
    expect(page.locator("#flags-message")).to_contain_text("Resumed speedy (3 flag(s) resolved)", timeout=30_000)
    expect(table).not_to_contain_text("speedy")
    assert service.next_intent_task(db, settings, "speedy")["task"] is not None


def test_named_endpoints_check_the_role(running):
    from e2e_helpers import ApiClient, ApiError

    auth.add_user(running.ctx.database, "api-worker", "annotator", "password-api")
    worker = ApiClient(running.url, "api-worker", "password-api")
    boss = ApiClient(running.url, "boss", PASSWORD)
    try:
        for name, args in (
            ("worker_block", ("boss", "no")),
            ("worker_report", (None,)),
            ("quality_flags", (False,)),
            ("invitation_create", ("admin",)),
            ("gold_add", ("intent", ["2NZ5C"])),
        ):
            with pytest.raises(ApiError, match="role"):
                worker.run(name, *args)
        assert "api-worker" in {r["username"] for r in boss.run("worker_report", None)}
        assert boss.run("worker_report_csv", None).startswith("study_id,study,platform_worker_id,username,state")
        made = boss.run("invitation_create", "annotator")
        assert "/invite?token=" in made["link"] and boss.run("invitation_list")[0]["used_by"] is None
    finally:
        worker.close()
        boss.close()
