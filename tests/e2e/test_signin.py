"""Signing in and out in a real browser (Debian chromium via Playwright) against the real app: the login page,
where each role lands, what signing in and out reserves, a restart, a disabled account, the throttle."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator

import httpx
import pytest
from browser_helpers import CONCRETE, HIGH_LEVEL, closing_new_contexts
from e2e_helpers import browser_login
from playwright.sync_api import expect

from backend.accounts import auth, signin
from backend.accounts.demo import ensure_demo_accounts
from backend.storage import utcnow

#: the demo content; no need to watch each demo video to its end here; a short lock so that a test can outlast it
DEMO = {"demo": True, "require_full_view": False, "signin_lock_after": 4, "signin_lock_minutes": 0.05}


PASSWORD = "password1"
_serial = itertools.count(1)


@pytest.fixture(scope="module")
def app(served_app):
    """One app for the module; a test that signs in, is disabled or demoted does so with accounts of its own
    (``people``), so the tests do not depend on one another's order. A start-up setting or a restart: own app."""
    running = served_app(**DEMO)
    running.accounts = ensure_demo_accounts(running.ctx).accounts  # what app.py's main prints
    return running


@pytest.fixture
def people(app, browser) -> Iterator[dict[str, str]]:
    """This test's own annotator, reviewer and admin on the shared app (role -> user name, password PASSWORD);
    the browser windows the test opened are closed after it."""
    serial = next(_serial)
    names = {role: f"{role}-{serial}" for role in ("annotator", "reviewer", "admin")}
    for role, name in names.items():
        auth.add_user(app.ctx.database, name, role, PASSWORD)
    with closing_new_contexts(browser):
        yield names


def live_leases(database, username: str) -> int:
    return database.scalar(
        "SELECT count(*) FROM assignments WHERE annotator = ? AND status = 'leased' AND expires_at > ?",
        (username, utcnow()),
    )


def selected_tab(page) -> str:
    return page.get_by_role("tab", selected=True).first.inner_text().strip()


def test_the_login_page_explains_keeps_the_name_and_says_why(app, people, browser, tmp_path):
    page = browser.new_context().new_page()
    page.goto(app.url)
    expect(page).to_have_url(f"{app.url}/login")
    expect(page.get_by_role("heading", name="CompStudio")).to_be_visible()
    expect(page.get_by_text("compositional-generalization benchmarks")).to_be_visible()
    expect(page.get_by_text("demo-accounts.json")).to_be_visible()
    content = page.content()
    assert not any(password in content for password in app.accounts.values())  # never the passwords
    page.screenshot(path=str(tmp_path / "login.png"), full_page=True)

    page.get_by_label("User name").fill("demo-annotator")
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text(signin.WRONG)
    expect(page.get_by_label("User name")).to_have_value("demo-annotator")
    expect(page.get_by_label("Password")).to_be_focused()
    page.screenshot(path=str(tmp_path / "login-wrong-password.png"), full_page=True)

    auth.add_user(app.ctx.database, "gone", "annotator", "password1")
    auth.set_disabled(app.ctx.database, "gone", True)
    page.get_by_label("User name").fill("gone")
    page.get_by_label("Password").fill("password1")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("This account is disabled")
    expect(page.get_by_label("User name")).to_have_value("gone")


def test_each_role_lands_on_its_tab_and_only_an_annotator_at_work_holds_a_lease(app, people, browser):
    db = app.ctx.database
    for role, tab in (("admin", "Admin"), ("reviewer", "Review")):
        name = people[role]
        page = browser.new_context().new_page()
        browser_login(page, app.url, name, PASSWORD)
        expect(page.get_by_role("tab", name=tab, exact=True)).to_have_attribute("aria-selected", "true", timeout=30_000)
        page.wait_for_function("() => !document.querySelector('.pending, .generating')", timeout=30_000)
        assert live_leases(db, name) == 0  # looking reserves nothing
        if role == "admin":  # opening the Annotate tab leases nothing either; asking for a sequence does
            page.get_by_role("tab", name="Annotate intents").click()
            expect(page.locator("#intent-start")).to_be_visible()
            assert live_leases(db, name) == 0
            page.locator("#intent-start").click()
            expect(page.locator("#intent-task h3")).to_contain_text("DEMO-", timeout=30_000)
            expect(page.locator("#intent-start")).to_be_hidden()
            assert live_leases(db, name) == 1
    page = browser.new_context().new_page()
    browser_login(page, app.url, people["annotator"], PASSWORD)
    expect(page.get_by_role("tab", name="Annotate intents")).to_have_attribute("aria-selected", "true", timeout=30_000)
    expect(page.locator("#intent-task h3")).to_contain_text("DEMO-", timeout=30_000)
    assert live_leases(db, people["annotator"]) == 1 and live_leases(db, people["reviewer"]) == 0


def test_log_out_signs_out_in_the_same_tab_and_frees_the_lease(app, people, browser, tmp_path):
    context = browser.new_context()
    page = context.new_page()
    browser_login(page, app.url, people["annotator"], PASSWORD)
    expect(page.locator("#intent-task h3")).to_contain_text("DEMO-", timeout=30_000)
    assert live_leases(app.ctx.database, people["annotator"]) == 1
    page.screenshot(path=str(tmp_path / "annotator-signed-in.png"))
    page.locator("#logout").click()
    expect(page).to_have_url(f"{app.url}/login?signed_out=1", timeout=15_000)
    expect(page.get_by_role("status")).to_have_text("You are signed out.")
    assert len(context.pages) == 1  # the same tab, no new one
    assert live_leases(app.ctx.database, people["annotator"]) == 0
    assert app.ctx.database.scalar("SELECT count(*) FROM sessions WHERE username = ?", (people["annotator"],)) == 0
    page.goto(app.url)
    expect(page).to_have_url(f"{app.url}/login")


ENDED = "#session-ended"
ERROR_TOASTS = ".toast-body.error, [data-testid='toast-body'].error"


def expect_one_sentence(page, sentence: str, link: str) -> None:
    """The page says why, once, with the way on, and shows no error toast or badge (issue 25 Must 8)."""
    expect(page.locator(ENDED)).to_contain_text(sentence, timeout=30_000)
    expect(page.locator(ENDED)).to_have_count(1)
    expect(page.locator("#session-ended-link")).to_have_attribute("href", link)
    expect(page.locator(ERROR_TOASTS).filter(visible=True)).to_have_count(0)
    assert page.get_by_text("Error", exact=True).filter(visible=True).count() == 0


def test_back_after_log_out_shows_the_login_page(app, people, browser):
    page = browser.new_context().new_page()
    browser_login(page, app.url, people["annotator"], PASSWORD)
    expect(page).to_have_url(f"{app.url}/annotator/")
    page.locator("#logout").click()
    expect(page).to_have_url(f"{app.url}/login?signed_out=1", timeout=15_000)
    page.go_back()  # the page was sent no-store: the browser asks again, and the gate sends it to /login
    expect(page).to_have_url(f"{app.url}/login", timeout=15_000)
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()


def test_logging_out_in_another_tab_then_acting_says_so(app, people, browser, tmp_path):
    context = browser.new_context()
    page = context.new_page()
    browser_login(page, app.url, people["annotator"], PASSWORD)
    expect(page.locator("#intent-task h3")).to_contain_text("DEMO-", timeout=30_000)
    other = context.new_page()
    other.goto(f"{app.url}/logout")
    expect(other).to_have_url(f"{app.url}/login?signed_out=1")
    page.bring_to_front()
    page.locator(CONCRETE).fill("S/He wants to keep typing")  # the draft save is an event
    page.locator("#intent-submit").click()
    expect_one_sentence(page, "You are signed out: sign in again.", "/login")
    page.screenshot(path=str(tmp_path / "signed-out-elsewhere.png"))


def test_a_reviewer_demoted_while_review_is_open_is_told_to_reload(app, people, browser, tmp_path):
    page = browser.new_context().new_page()
    browser_login(page, app.url, people["reviewer"], PASSWORD)
    expect(page).to_have_url(f"{app.url}/reviewer/")
    expect(page.get_by_role("tab", name="Review", exact=True)).to_have_attribute(
        "aria-selected", "true", timeout=30_000
    )
    auth.set_role(app.ctx.database, people["reviewer"], "annotator", actor=people["admin"])
    page.locator("#review-next").click()
    expect_one_sentence(page, "Your role changed: reload the page.", "/")
    page.screenshot(path=str(tmp_path / "role-changed.png"))
    page.locator("#session-ended-link").click()  # the way on: the annotator's page
    expect(page).to_have_url(f"{app.url}/annotator/", timeout=30_000)


def test_a_restart_keeps_the_annotator_signed_in_and_working(served_app, browser):
    page = browser.new_context().new_page()
    first = served_app(**DEMO)
    password = ensure_demo_accounts(first.ctx).accounts["demo-annotator"]
    browser_login(page, first.url, "demo-annotator", password)
    expect(page.locator("#intent-task h3")).to_contain_text("DEMO-", timeout=30_000)
    sequence = page.locator("#intent-sequence").text_content().strip()
    second = served_app.restart(first)  # the same data folder and port, a new process state
    try:
        page.locator(CONCRETE).fill("S/He wants to carry on after the restart")
        page.locator(HIGH_LEVEL).fill("S/He is patient")
        page.locator("#intent-submit").click()
        expect(page.locator("#intent-last-saved")).to_contain_text("carry on after the restart", timeout=30_000)
        stored = second.ctx.database.query_one("SELECT sequence_id FROM annotations WHERE annotator = 'demo-annotator'")
        assert stored == {"sequence_id": sequence}
        page.reload()
        expect(page.locator("#whoami")).to_contain_text("demo-annotator", timeout=30_000)
    finally:
        page.context.close()  # before the app stops: an open page holds its shutdown
        served_app.stop(second)


def test_a_disabled_account_is_signed_out_at_once(app, people, browser):
    context = browser.new_context()
    page = context.new_page()
    browser_login(page, app.url, people["annotator"], PASSWORD)
    expect(page.locator("#intent-task h3")).to_contain_text("DEMO-", timeout=30_000)
    cookies = {c["name"]: c["value"] for c in context.cookies()}
    session_cookie = [name for name in cookies if name.startswith("compstudio-session-")]
    assert session_cookie and all(
        c["httpOnly"] and c["sameSite"] == "Lax" for c in context.cookies() if c["name"] in session_cookie
    )
    # a sign-in posted from another site's page is refused (login CSRF); the same post from here is not
    form = {"username": people["reviewer"], "password": PASSWORD}
    assert httpx.post(f"{app.url}/login", data=form, headers={"Origin": "https://evil.example"}).status_code == 403
    assert httpx.post(f"{app.url}/login", data=form, headers={"Origin": app.url}).status_code == 200
    auth.set_disabled(app.ctx.database, people["annotator"], True, actor=people["admin"])
    reply = httpx.post(f"{app.url}/api/intent_next", json={"data": []}, cookies=cookies)
    assert reply.status_code == 401
    page.reload()
    expect(page).to_have_url(f"{app.url}/login")


def test_fifty_wrong_passwords_lock_the_account_and_the_page_says_so(served_app, browser, tmp_path):
    # a 6-second lock (the test's window is closed before its app stops)
    with served_app.started(**{**DEMO, "signin_lock_minutes": 0.1}) as app, closing_new_contexts(browser):
        password = ensure_demo_accounts(app.ctx).accounts["demo-annotator"]
        db, settings, tried = app.ctx.database, app.ctx.settings, 0
        page = browser.new_context().new_page()
        page.goto(app.url)
        page.get_by_label("User name").fill("demo-annotator")
        with httpx.Client(base_url=app.url) as client:
            for n in range(50):  # fifty wrong passwords in a row, as fast as the server answers
                reply = client.post("/login", data={"username": "demo-annotator", "password": f"guess {n}"})
                assert reply.status_code in {401, 429}
                tried += reply.status_code == 401
            assert tried < 50 and tried <= settings.signin_lock_after
            state = signin.throttle_state(db, settings, "account:demo-annotator")
            assert state["refused"] == 50 - tried and state["wait_seconds"] > 0
            while not signin.throttle_state(db, settings, "account:demo-annotator")["locked"]:
                # a patient guesser, who waits as long as the server says: locked after signin_lock_after
                time.sleep(float(reply.headers.get("Retry-After", "0.2")))
                reply = client.post("/login", data={"username": "demo-annotator", "password": "another guess"})
                tried += reply.status_code == 401
        assert tried == settings.signin_lock_after
        assert (
            db.scalar("SELECT count(*) FROM audit_log WHERE action = 'signin.failed' AND target = 'demo-annotator'")
            == tried
        )
        assert db.scalar("SELECT count(*) FROM audit_log WHERE action = 'signin.locked'") == 1
        page.get_by_label("Password").fill(password)  # even the right password waits for the lock
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("alert")).to_contain_text(
            "Too many failed sign-ins for this account: signing in is locked"
        )
        expect(page.get_by_label("User name")).to_have_value("demo-annotator")
        page.screenshot(path=str(tmp_path / "login-locked.png"), full_page=True)
        deadline = time.monotonic() + 60
        while True:  # and works again once the lock is over
            page.get_by_label("Password").fill(password)
            with page.expect_navigation():
                page.get_by_role("button", name="Sign in").click()
            page.wait_for_selector("#whoami, #signin-message", timeout=30_000)
            if not page.locator("#signin-message").count():
                break
            assert "Too many failed sign-ins" in page.locator("#signin-message").inner_text()
            assert time.monotonic() < deadline, "still refused long after the lock"
            time.sleep(0.5)
        expect(page.locator("#whoami")).to_contain_text("demo-annotator", timeout=30_000)


def test_typing_after_the_session_ended_says_where_one_types_that_it_is_not_saved(app, people, browser, tmp_path):
    """Issue 44 §12: text typed once the session has ended cannot be saved; the page says so beside the field being
    typed in (and in the bar at the top), with what to do, and no error toast."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    browser_login(page, app.url, people["annotator"], PASSWORD)
    expect(page.locator("#intent-task h3")).to_contain_text("DEMO-", timeout=30_000)
    field = page.locator(CONCRETE)
    field.press_sequentially("S/He wants to save this")
    expect(page.locator("#intent-draft-status")).to_contain_text("Draft saved", timeout=30_000)
    other = context.new_page()
    other.goto(f"{app.url}/logout")
    page.bring_to_front()
    field.press_sequentially(" and more", delay=20)  # typed after the session ended: the draft save is refused
    note = page.locator(".session-ended-note")
    expect(note).to_be_visible(timeout=30_000)
    expect(note).to_contain_text("not saved")
    expect(note.get_by_role("link", name="Sign in")).to_have_attribute("href", "/login")
    expect(page.locator("#intent-draft-status")).to_be_hidden()  # "Draft saved at ..." would be stale now
    box, note_box = field.bounding_box(), note.bounding_box()
    assert 0 <= note_box["y"] - (box["y"] + box["height"]) < 120  # right under the field typed in
    expect_one_sentence(page, "You are signed out: sign in again.", "/login")
    page.screenshot(path=str(tmp_path / "typed-after-sign-out.png"))
    stored = app.ctx.database.query_one("SELECT * FROM drafts WHERE annotator = ?", (people["annotator"],))
    assert stored is None or "and more" not in str(dict(stored))
