"""A real browser against the real app: a planning question with its observed-window clip, an annotator
checks it (without the key or the STRIPS verdicts), a reviewer asks a model live, and the results show the
run and the human check; a check without a choice is refused without covering the question; each role sees
only the controls it can use; the counts follow every check."""

from __future__ import annotations

import re

import pytest
from browser_helpers import closing_new_contexts
from e2e_helpers import browser_login
from playwright.sync_api import expect

from backend.planning.media import write_synthetic_video
from backend.planning.questions import import_planning
from backend.vilpact.importer import import_vilpact
from tests.conftest import VILPACT_DATA

PASSWORD = "password1"
ERROR_BADGE = '[data-testid="status-tracker"] .error'


@pytest.fixture
def app(served_app, browser, tmp_path):
    data = VILPACT_DATA
    people = {"ann": "annotator", "rev": "reviewer"}
    with (
        served_app.started(people, password=PASSWORD, planning_annotators_per_question=1) as running,
        closing_new_contexts(browser),  # the test's pages close before its app stops
    ):
        db = running.ctx.database
        import_vilpact(db, data, add_to_pool=False)
        import_planning(db, data, annotators_per_question=1)
        video = write_synthetic_video(tmp_path / "videos" / "ZH4JE.mp4", 12, (160, 120))
        with db.write() as conn:  # one question gets a video; its clip is cut on first view
            conn.conn.execute("UPDATE sequences SET video_path = ? WHERE id = 'ZH4JE'", (str(video),))
        yield running


def _open(browser, app, user: str, subtab: str):
    page = browser.new_context().new_page()
    browser_login(page, app.url, user, PASSWORD)
    page.locator('button[data-tab-id="planning"]').click()
    page.locator(f'button[data-tab-id="planning-{subtab}"]').click()
    # what a person sees before acting: the tab, built on this first visit, has filled its list and counts
    if subtab == "browse":
        expect(page.locator("#planning-question-id input")).not_to_have_value("", timeout=30_000)
    elif subtab == "check":
        expect(page.locator("#planning-check-progress")).to_contain_text("left", timeout=30_000)
    return page


def _left(page) -> int:
    progress = page.locator("#planning-check-progress")
    expect(progress).to_contain_text("questions left for you", timeout=30_000)
    return int(re.search(r"questions left for you:\s*(\d+)", progress.inner_text()).group(1))


def test_check_ask_and_results(app, browser):
    annotator = _open(browser, app, "ann", "check")
    annotator.locator("#planning-check-next").click()
    question = annotator.locator("#planning-check-question")
    expect(question).to_contain_text("Question ZH4JE", timeout=30_000)  # the first question of the pool
    expect(annotator.locator("#planning-check-clip video")).to_be_visible(timeout=30_000)
    expect(question).to_contain_text("A.")
    expect(question).not_to_contain_text("key")  # annotators check without the key ...
    expect(question).not_to_contain_text("STRIPS")  # ... and without the STRIPS verdicts
    annotator.locator("#planning-check-choice").get_by_label("A", exact=True).check()
    annotator.locator("#planning-check-submit").click()
    expect(annotator.locator("#planning-check-status")).to_contain_text("Saved your check of ZH4JE", timeout=20_000)
    expect(question).to_contain_text("Text only", timeout=20_000)  # the next question has no video ...
    expect(annotator.locator("#planning-check-clip")).to_be_hidden()  # ... and shows no empty player

    reviewer = _open(browser, app, "rev", "browse")
    reviewer.locator("#planning-show").click()
    expect(reviewer.locator("#planning-question")).to_contain_text("key", timeout=30_000)
    model = reviewer.locator("#planning-model input").first
    model.fill("bigram-prior")
    model.press("Enter")
    reviewer.locator("#planning-ask").click()
    answer = reviewer.locator("#planning-answer")
    expect(answer).to_contain_text("bigram-prior answered", timeout=60_000)
    assert not re.search(r"&#?\w+;", answer.inner_text())  # no raw HTML entity on the screen
    # a live answer is not a run the reviewer started: no row in Recent runs, no run in Samples (issue 44 §10)
    assert app.ctx.database.scalar("SELECT count(*) FROM eval_runs WHERE json_extract(options, '$.live')") == 1
    reviewer.locator('button[data-tab-id="models"]').click()
    reviewer.locator("#models-refresh").click()  # the counts as of now, not as of the page's load
    reviewer.wait_for_function("() => !document.querySelector('.pending, .generating')", timeout=30_000)
    expect(reviewer.locator("#models-count")).to_contain_text("no runs yet", timeout=30_000)
    reviewer.locator('button[data-tab-id="results"]').click()
    reviewer.locator('button[data-tab-id="results-samples"]').click()
    reviewer.locator("#samples-run input").first.click()
    expect(reviewer.get_by_role("option", name=re.compile(r"^run \d+"))).to_have_count(0)
    reviewer.keyboard.press("Escape")
    reviewer.locator('button[data-tab-id="planning"]').click()

    reviewer.locator("#planning-limit input").first.fill("5")
    reviewer.locator("#planning-run").click()
    summary = reviewer.locator("#planning-run-summary")  # in words, not JSON (issue 44 §11)
    expect(summary).to_contain_text("Finished: bigram-prior on vilpact-planning", timeout=60_000)
    expect(summary).to_contain_text("Newly computed")
    expect(summary).not_to_contain_text("newly_computed")
    reviewer.locator('button[data-tab-id="models"]').click()
    expect(reviewer.locator("#models-count")).to_contain_text("1 recent run", timeout=30_000)
    reviewer.locator('button[data-tab-id="planning"]').click()

    reviewer.locator("#planning-author-sequence textarea, #planning-author-sequence input").first.fill("2NZ5C")
    reviewer.locator("#planning-author").click()
    expect(reviewer.locator("#planning-authored")).to_contain_text("Question 2NZ5C-q1", timeout=30_000)
    expect(reviewer.locator("#planning-authored")).to_contain_text("status: pending")

    reviewer.locator('button[data-tab-id="planning-results"]').click()
    reviewer.locator("#planning-results-refresh").click()
    board = reviewer.locator("#planning-leaderboard")
    expect(board).to_contain_text("bigram-prior", timeout=30_000)
    expect(board).to_contain_text("Humans (majority of")  # people's checks, a run of kind people
    expect(board).to_contain_text("Refused")  # answered, refused and unparsed are shown apart
    expect(board).to_contain_text("Unparsed")
    expect(board).to_contain_text("Questions covered")  # a partial run says "5 of N" (issue 13 §6)
    # one model run: the pairs table says there is nothing to pair (a second run fills it: tests/test_people_runs.py)
    expect(reviewer.locator("#planning-comparison")).to_contain_text("nothing to pair")


def test_check_without_a_choice_is_refused_and_the_question_stays_usable(app, browser, caplog):
    page = _open(browser, app, "ann", "check")
    page.locator("#planning-check-next").click()
    question = page.locator("#planning-check-question")
    expect(question).to_contain_text("Question ZH4JE", timeout=30_000)
    expect(page.locator("#planning-check-clip video")).to_be_visible(timeout=30_000)
    page.locator("#planning-check-submit").click()
    message = "Mark one choice as plausible, or choose 'None is plausible'."
    expect(page.locator("[data-testid='toast-body']").filter(has_text=message)).to_be_visible()
    expect(page.locator("#planning-check-status")).to_contain_text(message)
    refused = [r for r in caplog.records if r.name == "compstudio.ui"]  # one log line, no traceback
    assert len(refused) == 1 and message in refused[0].getMessage() and refused[0].exc_info is None
    # nothing is covered by an "Error" badge: the clip, the question and the choices stay usable at once
    expect(page.locator(ERROR_BADGE)).to_have_count(0)
    expect(page.locator("#planning-check-clip video")).to_be_visible()
    expect(question).to_contain_text("Question ZH4JE")
    page.locator("#planning-check-choice").get_by_label("B", exact=True).check()  # no badge to close first
    page.locator("#planning-check-submit").click()
    expect(page.locator("#planning-check-status")).to_contain_text("Saved your check of ZH4JE", timeout=20_000)


def test_each_role_sees_what_it_can_use(app, browser):
    annotator = _open(browser, app, "ann", "browse")
    expect(annotator.locator("#planning-question-id")).to_be_visible(timeout=30_000)
    annotator.locator("#planning-show").click()
    shown = annotator.locator("#planning-question")
    expect(shown).to_contain_text("Question", timeout=30_000)
    expect(shown).not_to_contain_text("key")
    expect(shown).not_to_contain_text("STRIPS")
    for control in ("#planning-ask", "#planning-run", "#planning-author"):  # reviewers' controls are not shown
        expect(annotator.locator(control)).to_be_hidden()

    reviewer = _open(browser, app, "rev", "check")
    for control in ("#planning-ask", "#planning-run", "#planning-author"):
        reviewer.locator('button[data-tab-id="planning-browse"]').click()
        expect(reviewer.locator(control)).to_be_visible(timeout=30_000)
    reviewer.locator('button[data-tab-id="planning-check"]').click()
    reviewer.locator("#planning-check-next").click()
    question = reviewer.locator("#planning-check-question")
    expect(question).to_contain_text("STRIPS", timeout=30_000)  # reviewers see the verdicts and the key
    expect(question).to_contain_text("key")


def test_counts_follow_each_check_and_nothing_left_hides_the_form(app, browser):
    page = _open(browser, app, "ann", "check")
    before = _left(page)  # shown when the tab opens, before anything is handed out
    db = app.ctx.database
    assert before == db.scalar("SELECT count(*) FROM tasks WHERE kind = 'planning' AND status = 'open'")
    page.locator("#planning-check-next").click()
    expect(page.locator("#planning-check-question")).to_contain_text("Question", timeout=30_000)
    page.locator("#planning-check-choice").get_by_label(re.compile("None is plausible")).check()
    page.locator("#planning-check-submit").click()
    expect(page.locator("#planning-check-progress")).to_contain_text(
        f"questions left for you: {before - 1}", timeout=20_000
    )
    expect(page.locator("#planning-check-progress")).to_contain_text("Checked by you: 1")
    with db.write() as conn:  # the other questions are checked by others meanwhile
        conn.conn.execute("UPDATE tasks SET status = 'complete' WHERE kind = 'planning'")
    page.locator("#planning-check-choice").get_by_label("A", exact=True).check()
    page.locator("#planning-check-submit").click()
    expect(page.locator("#planning-check-question")).to_contain_text("Nothing left for you to check", timeout=20_000)
    expect(page.locator("#planning-check-progress")).to_contain_text("nothing left for you to check")
    expect(page.locator("#planning-check-choice")).to_be_hidden()
    expect(page.locator("#planning-check-submit")).to_be_hidden()
    expect(page.locator("#planning-check-clip")).to_be_hidden()
