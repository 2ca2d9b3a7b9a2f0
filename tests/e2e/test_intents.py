"""A real browser (Debian chromium via Playwright) against the real app: what annotators and admins do."""

from __future__ import annotations

import re
import time

import pytest
from browser_helpers import CONCRETE, HIGH_LEVEL, closing_new_contexts, current_sequence, watch_video
from conftest import VILPACT_DATA
from e2e_helpers import browser_login
from playwright.sync_api import expect


@pytest.fixture
def app(served_app, browser):
    people = {"ann1": "annotator", "ann2": "annotator", "ann3": "annotator", "boss": "admin"}
    # the Admin tab imports only below import_dir: the shipped release lies in assets/
    with (
        served_app.started(people, password="password1", demo=True, import_dir=str(VILPACT_DATA.parent)) as running,
        closing_new_contexts(browser),  # the test's pages close before its app stops
    ):
        yield running


def wait_until(condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.1)


def test_annotator_watches_submits_and_gets_the_next_task(app, browser):
    page = browser.new_context(timezone_id="Asia/Tokyo").new_page()  # the drafts' time is on the person's clock
    browser_login(page, app.url, "ann1", "password1")
    expect(page.locator("#intent-task h3")).to_contain_text("DEMO-", timeout=30_000)
    expect(page.get_by_role("tab", name="Admin")).to_have_count(0)
    first = current_sequence(page)
    watch_video(page)  # the watch check: the played ranges cover the video (tests/e2e/test_player.py)
    page.locator(CONCRETE).fill("S/He wants to pour a <b>drink</b> **now** <script>alert(1)</script>")
    page.locator(HIGH_LEVEL).fill("S/He is thirsty")
    page.locator(CONCRETE).press("Control+Enter")
    expect(page.locator("#intent-last-saved")).to_contain_text(
        "<b>drink</b> **now** <script>alert(1)</script>", timeout=20_000
    )
    assert (
        page.locator(
            "#intent-last-saved b, #intent-last-saved strong:has-text('now'), #intent-last-saved script"
        ).count()
        == 0
    )
    expect(page.locator("#intent-task h3")).not_to_contain_text(first)
    expect(page.locator("#intent-progress")).to_contain_text("Mine today: 1")
    stored = app.ctx.database.query_one("SELECT concrete_intent FROM annotations WHERE annotator = 'ann1'")
    assert stored["concrete_intent"].startswith("S/He wants to pour a <b>drink</b>")

    # a draft survives a reload
    second = current_sequence(page)
    page.locator(CONCRETE).press_sequentially("S/He wants to finish this later")
    expect(page.locator("#intent-draft-status")).to_contain_text("Draft saved", timeout=20_000)
    # issue 44: it said the server's UTC time; the person reads their own clock
    expect(page.locator("#intent-draft-status")).to_have_text(re.compile(r"Draft saved at \d\d:\d\d:\d\d JST"))
    wait_until(
        lambda: (
            "finish this later"
            in (app.ctx.database.scalar("SELECT payload FROM drafts WHERE annotator = 'ann1'") or "")
        )
    )
    page.reload()
    expect(page.locator(CONCRETE)).to_have_value("S/He wants to finish this later", timeout=30_000)
    assert current_sequence(page) == second

    # keystrokes typed just before a reload are not lost: the page sends them as it goes away
    # (a queued save of "S" or "S/He" still lands after the flush, and must not win: tests/test_intents_service)
    page.locator(HIGH_LEVEL).press_sequentially("S/He is tired")
    page.reload()
    expect(page.locator(HIGH_LEVEL)).to_have_value("S/He is tired", timeout=30_000)
    expect(page.locator(CONCRETE)).to_have_value("S/He wants to finish this later")


def test_three_annotators_at_once_give_each_sequence_exactly_three(app, browser):
    pages = []
    for name in ("ann1", "ann2", "ann3"):
        page = browser.new_context().new_page()
        browser_login(page, app.url, name, "password1")
        expect(page.locator("#intent-task h3")).to_contain_text("DEMO-", timeout=30_000)
        pages.append(page)
    for _round in range(5):
        for page in pages:  # all three play at the same time
            page.locator("#intent-video video").evaluate("v => { v.muted = true; return v.play(); }")
        for index, page in enumerate(pages):
            page.wait_for_function("() => document.querySelector('#intent-video video').ended", timeout=30_000)
            expect(page.locator("#intent-submit")).to_be_enabled(timeout=15_000)
            page.locator(CONCRETE).fill(f"S/He wants to get something done, take {index}")
            page.locator(HIGH_LEVEL).fill("S/He is busy with the day")
            page.locator("#intent-submit").click()
        for page in pages:
            expect(page.locator("#intent-progress")).to_contain_text(f"mine in total: {_round + 1}", timeout=20_000)
    for page in pages:
        expect(page.locator("#intent-task")).to_contain_text("Nothing left for you to annotate", timeout=20_000)
    rows = app.ctx.database.query(
        "SELECT sequence_id, count(*) AS n, count(DISTINCT annotator) AS people FROM annotations "
        "WHERE source = 'live' GROUP BY sequence_id"
    )
    assert len(rows) == 5 and all(r["n"] == 3 and r["people"] == 3 for r in rows)


def test_admin_imports_vilpact_in_the_browser(app, browser, vilpact_dir):
    page = browser.new_context().new_page()
    browser_login(page, app.url, "boss", "password1")
    page.get_by_role("tab", name="Admin").click()
    page.locator("#import-root textarea, #import-root input").fill(str(vilpact_dir))
    page.locator("#import-button").click()
    expect(page.get_by_text('"sequences"')).to_be_visible(timeout=60_000)
    assert app.ctx.database.scalar("SELECT count(*) FROM sequences WHERE source = 'vilpact'") == 2912
    page.locator("#import-root textarea, #import-root input").fill(str(vilpact_dir / "nowhere"))
    page.locator("#import-button").click()
    expect(page.get_by_text("not a folder. Nothing was imported.")).to_be_visible(timeout=30_000)
    page.locator("#import-root textarea, #import-root input").fill(str(app.ctx.settings.data_dir))  # outside it
    page.locator("#import-button").click()
    expect(page.get_by_text("is outside it")).to_be_visible(timeout=30_000)
