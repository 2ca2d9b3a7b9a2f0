"""A real browser against the real app: a planning question with its observed-window clip, an annotator
checks it, a reviewer asks a model live, and the results show the run and the human check."""

from __future__ import annotations

import pytest
from e2e_helpers import app_in_process, browser_login
from playwright.sync_api import expect

from backend.accounts import auth
from backend.planning.media import write_synthetic_video
from backend.planning.questions import import_planning
from backend.vilpact.importer import import_vilpact
from tests.conftest import VILPACT_DATA

PASSWORD = "password1"


@pytest.fixture
def app(settings, tmp_path):
    data = VILPACT_DATA
    with app_in_process(settings.replace(demo_content=False, planning_annotators_per_question=1)) as running:
        db = running.ctx.database
        import_vilpact(db, data, add_to_pool=False)
        import_planning(db, data, annotators_per_question=1)
        video = write_synthetic_video(tmp_path / "videos" / "ZH4JE.mp4", 12, (160, 120))
        with db.write() as conn:  # one question gets a video; its clip is cut on first view
            conn.conn.execute("UPDATE sequences SET video_path = ? WHERE id = 'ZH4JE'", (str(video),))
        auth.add_user(db, "ann", "annotator", PASSWORD)
        auth.add_user(db, "rev", "reviewer", PASSWORD)
        yield running


def _open(browser, app, user: str, subtab: str):
    page = browser.new_context().new_page()
    browser_login(page, app.url, user, PASSWORD)
    page.locator('button[data-tab-id="planning"]').click()
    page.locator(f'button[data-tab-id="planning-{subtab}"]').click()
    return page


def test_check_ask_and_results(app, browser):
    annotator = _open(browser, app, "ann", "check")
    annotator.locator("#planning-check-next").click()
    question = annotator.locator("#planning-check-question")
    expect(question).to_contain_text("Question ZH4JE", timeout=30_000)  # the first question of the pool
    expect(annotator.locator("#planning-check-clip video")).to_be_visible(timeout=30_000)
    expect(question).to_contain_text("STRIPS")
    expect(question).not_to_contain_text("key")
    annotator.locator("#planning-check-choice").get_by_label("A", exact=True).check()
    annotator.locator("#planning-check-submit").click()
    expect(annotator.locator("#planning-check-status")).to_contain_text("Saved your check of ZH4JE", timeout=20_000)
    expect(question).to_contain_text("Text only", timeout=20_000)  # the next question has no video

    reviewer = _open(browser, app, "rev", "browse")
    reviewer.locator("#planning-show").click()
    expect(reviewer.locator("#planning-question")).to_contain_text("key", timeout=30_000)
    model = reviewer.locator("#planning-model input").first
    model.fill("bigram-prior")
    model.press("Enter")
    reviewer.locator("#planning-ask").click()
    expect(reviewer.locator("#planning-answer")).to_contain_text("bigram-prior answered", timeout=60_000)

    reviewer.locator("#planning-limit input").first.fill("5")
    reviewer.locator("#planning-run").click()
    expect(reviewer.locator("#planning-run-summary")).to_contain_text("newly_computed", timeout=60_000)

    reviewer.locator("#planning-author-sequence textarea, #planning-author-sequence input").first.fill("2NZ5C")
    reviewer.locator("#planning-author").click()
    expect(reviewer.locator("#planning-authored")).to_contain_text("Question 2NZ5C-q1", timeout=30_000)
    expect(reviewer.locator("#planning-authored")).to_contain_text("status: pending")

    reviewer.locator('button[data-tab-id="planning-results"]').click()
    reviewer.locator("#planning-results-refresh").click()
    board = reviewer.locator("#planning-leaderboard")
    expect(board).to_contain_text("bigram-prior", timeout=30_000)
    expect(board).to_contain_text("human (majority)")
    expect(board).to_contain_text("refusals")  # answered, refused and unparsed are shown apart
    expect(board).to_contain_text("parse failures")
    expect(board).to_contain_text("questions run")  # a partial run says "5 of N" (issue 13 §6)
    expect(reviewer.locator("#planning-comparison")).to_contain_text("Holm p")
