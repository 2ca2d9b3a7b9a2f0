"""A crowd study in a real browser (issue 16 §5, issue 26 §8). An admin creates a study in the Studies tab (codes,
places, state and link in the table) and is refused for a code-less or a duplicate one; closing asks first and
says what happens to workers mid-study. A worker arrives by the Prolific link, reads the study's instructions,
fails the qualification once (the mistakes are explained), passes on the second try, logs out mid-study (the page
gives the link to continue, which brings them back), and gets a gold item as the last task: it is scored, the
completion code is shown, and the admin's report row says so. A forged link is refused; a finished worker
cannot restart."""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from browser_helpers import CONCRETE, HIGH_LEVEL, watch_video
from e2e_helpers import browser_login
from playwright.sync_api import expect

from backend.campaigns import gold, links, report, studies, workers
from backend.storage import utcnow

pytestmark = pytest.mark.browser
NAME = "Pilot <b>bold</b>"
GOLD_SEQUENCE = "DEMO-SANDWICH"  # the last demo sequence of the pool: nobody has started it when it becomes gold


@pytest.fixture(scope="module")
def app(served_app):
    people = {"boss": "admin", "rev": "reviewer"}
    running = served_app(people, password="password1", demo=True, gold_rate=0.5, gold_agreement_threshold=0.0)
    database = running.ctx.database
    with database.write() as db:  # the gold sequence's reference, as a review would have decided it
        db.conn.execute(
            """INSERT INTO final_intents (sequence_id, position, concrete_intent, high_level_intent, origin,
                   decided_at) VALUES (?, 1, 'S/He wants to make lunch', 'S/He is hungry', 'released', ?)""",
            (GOLD_SEQUENCE, utcnow()),
        )
    gold.add_gold(database, "rev", "intent", [GOLD_SEQUENCE])
    return running


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("COMPSTUDIO_SCREENSHOTS", tmp_path_factory.mktemp("shots")))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def fill(page, elem_id: str, value: str) -> None:
    page.locator(f"#{elem_id} input, #{elem_id} textarea").first.fill(value)


def admin_page(app, browser):
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    browser_login(page, app.url, "boss", "password1")
    page.get_by_role("tab", name="Studies", exact=True).click()
    return page


def test_admin_creates_a_valid_study_and_is_refused_for_a_codeless_or_duplicate_one(app, browser, shots):
    page = admin_page(app, browser)
    fill(page, "study-name", NAME)
    fill(page, "study-tasks", "2")
    fill(page, "study-quiz-size", "4")
    fill(page, "study-pass-mark", "0.75")
    fill(page, "study-places", "5")
    fill(page, "study-gold-rate", "0.5")  # the study's own gold rate (issue 40): lab annotators get none
    page.locator("#study-create").click()  # no codes yet
    expect(page.locator("#study-message")).to_contain_text("give a completion code", timeout=30_000)
    expect(page.locator("#study-message")).to_contain_text("give a screen-out code")
    fill(page, "study-completion", "DONE42")
    fill(page, "study-screenout", "OUT7")
    page.locator("#study-create").click()
    link_box = page.locator("#study-link input, #study-link textarea")
    expect(link_box).to_have_value(
        re.compile(r"/study/1\?PROLIFIC_PID=\{\{%PROLIFIC_PID%\}\}.*&sig=[-\w]{32}$"), timeout=30_000
    )
    expect(page.locator("#study-message")).to_contain_text("Created study 1")
    expect(page.locator("#study-message b")).to_have_count(0)  # the name is escaped
    row = page.locator("#studies-table [role=row]", has_text="DONE42")
    for shown in (NAME, "open", "OUT7", "prolific", "/study/1?PROLIFIC_PID="):
        expect(row).to_contain_text(shown)
    page.locator("#study-create").click()  # the same name again, while the first is open
    expect(page.locator("#study-message")).to_contain_text("already named", timeout=30_000)
    assert app.ctx.database.scalar("SELECT count(*) FROM studies") == 1
    page.screenshot(path=str(shots / "admin-studies.png"), full_page=True)
    # closing asks first and says what happens to workers mid-study; Cancel closes nothing
    other = studies.create_study(app.ctx.database, "boss", name="To close", kind="intents", tasks_per_worker=1,
                                 completion_code="C2", qualification_size=0, places=3)  # fmt: skip
    fill(page, "study-id", str(other.id))
    page.locator("#study-close").click()
    expect(page.locator("#study-close-effect")).to_contain_text("cannot be undone", timeout=30_000)
    expect(page.locator("#study-close-effect")).to_contain_text("completion code")
    page.screenshot(path=str(shots / "admin-close-confirm.png"), full_page=True)
    page.locator("#study-close-cancel").click()
    expect(page.locator("#study-message")).to_contain_text("Nothing was closed", timeout=30_000)
    assert studies.get_study(app.ctx.database, other.id).status == "open"
    page.locator("#study-close").click()
    page.locator("#study-close-yes").click()
    expect(page.locator("#study-message")).to_contain_text(f"Study {other.id} is closed", timeout=30_000)
    expect(page.locator("#study-message")).to_contain_text("0 worker(s) who did at least one task")
    assert studies.get_study(app.ctx.database, other.id).status == "closed"
    page.context.close()


def gold_last_pid(study_id: int) -> str:
    """A Prolific id whose second (last) task is the gold one at gold_rate 0.5 (the place depends on the name)."""
    for n in range(1, 1000):
        pid = f"5f00aa11bb22cc33dd{n:06x}"
        phase = gold.phase_of(workers.worker_username(study_id, pid))
        if not gold.gold_due(1, 0.5, phase) and gold.gold_due(2, 0.5, phase):
            return pid
    raise AssertionError("no id with the gold item last")


def annotate_one(page) -> str:
    expect(page.locator("#intent-task h3")).to_contain_text("DEMO-", timeout=60_000)
    sequence = page.locator("#intent-task h3").inner_text().split()[1]
    watch_video(page)
    expect(page.locator("#intent-submit")).to_be_enabled(timeout=15_000)
    page.locator(CONCRETE).fill("S/He wants to get ready for the day")
    page.locator(HIGH_LEVEL).fill("S/He is in a hurry")
    page.locator("#intent-submit").click()
    return sequence


def answer_quiz(app, page, pid: str, attempt: int, right: bool) -> None:
    study = studies.get_study(app.ctx.database, 1)
    worker = workers.StudyWorker(0, 1, pid, "", "started", "", None, None, None, {}, quiz_attempts=attempt - 1)
    items = workers.quiz_for(study, worker)
    assert page.locator("#study-quiz fieldset").count() == len(items) == 4
    for item in items:
        value = item.answer if right else (item.answer + 1) % len(item.options)
        page.locator(f'input[name="{item.id}"][value="{value}"]').check()
    page.locator("#study-quiz-submit").click()


def test_a_worker_reads_fails_once_passes_logs_out_comes_back_and_gold_last_is_scored(app, browser, shots):
    db = app.ctx.database
    link = links.link_for(db, "boss", 1, app.url)["link"]
    pid = gold_last_pid(1)
    worker_link = (
        link.replace("{{%PROLIFIC_PID%}}", pid).replace("{{%STUDY_ID%}}", "STUDY9").replace("{{%SESSION_ID%}}", "SESS1")
    )
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(worker_link)
    # 1. the instructions first: the same text as the annotation tab, the rules included
    expect(page.locator("#study-page")).to_have_attribute("data-state", "started", timeout=30_000)
    expect(page.locator("#study-instructions")).to_contain_text("Do not repeat an action name")
    expect(page.locator("#study-instructions")).to_contain_text("Rules")
    expect(page.locator("#study-page strong").first).to_contain_text(NAME)  # escaped, shown as typed
    page.screenshot(path=str(shots / "study-instructions.png"), full_page=True)
    page.locator("#study-quiz-start").click()
    # 2. the quiz, the instructions a click away; a first try with every answer wrong
    summary = page.locator("#study-instructions summary")
    expect(summary).to_be_visible(timeout=30_000)
    summary.click()
    expect(page.locator("#study-instructions")).to_contain_text("The concrete and the high-level intent must differ")
    answer_quiz(app, page, pid, 1, right=False)
    expect(page.locator("#study-try-again")).to_be_visible(timeout=30_000)
    # the mistakes are folded into one line, so the new questions are in view (issue 44)
    expect(page.locator("#study-quiz fieldset").first).to_be_in_viewport()
    expect(page.locator("#study-mistakes li.mistake").first).to_be_hidden()
    page.locator("#study-mistakes summary").click()
    expect(page.locator("#study-mistakes li.mistake")).to_have_count(4)
    expect(page.locator("#study-mistakes")).to_contain_text("the right answer is")
    page.screenshot(path=str(shots / "study-mistakes.png"), full_page=True)
    assert db.scalar("SELECT status FROM study_workers") == "started"  # not screened out after one try
    answer_quiz(app, page, pid, 2, right=True)
    expect(page.locator("#study-page")).to_have_attribute("data-state", "qualified", timeout=30_000)
    assert page.url.endswith("/study/1/here")  # the signature is no longer in the address bar
    expect(page.locator("#study-page")).to_contain_text("0 of 2 tasks done")
    # 3. the first task (real), then Log out: the study page with the link to continue, no password form
    page.locator("#study-start").click()
    expect(page.locator("#whoami")).to_contain_text(f"s1-{pid}", timeout=60_000)
    first = annotate_one(page)
    assert first != GOLD_SEQUENCE
    expect(page.locator("#intent-progress")).to_contain_text("1 of 2 tasks done", timeout=30_000)
    page.locator("#logout").click()
    expect(page.locator("#study-page")).to_have_attribute("data-state", "signed_out", timeout=30_000)
    expect(page.locator("#study-page")).to_contain_text("Your work so far is saved")
    expect(page.locator("input[type=password]")).to_have_count(0)
    page.screenshot(path=str(shots / "study-signed-out.png"), full_page=True)
    page.locator("#study-continue").click()
    expect(page.locator("#study-page")).to_have_attribute("data-state", "qualified", timeout=30_000)
    expect(page.locator("#study-page")).to_contain_text("1 of 2 tasks done")
    # 4. the last task is the gold item: scored at its submit, then the completion code
    page.locator("#study-start").click()
    assert annotate_one(page) == GOLD_SEQUENCE
    expect(page.locator("#study-completion-code")).to_have_text("DONE42", timeout=30_000)
    expect(page.locator("#study-return-link")).to_have_attribute(
        "href", "https://app.prolific.com/submissions/complete?cc=DONE42"
    )
    username = f"s1-{pid}"
    assert db.query("SELECT item_id, outcome FROM gold_answers WHERE annotator = ?", (username,)) == [
        {"item_id": GOLD_SEQUENCE, "outcome": "correct"}
    ]
    page.screenshot(path=str(shots / "study-completed.png"), full_page=True)
    # 5. the admin's report row: finished, 2 tasks done (1 real), gold 1 of 1
    admin = browser.new_context(viewport={"width": 1600, "height": 1000}).new_page()
    browser_login(admin, app.url, "boss", "password1")
    admin.get_by_role("tab", name="Admin", exact=True).click()
    admin.get_by_text("Crowd workers: report, payment CSV, blocking").click()
    fill(admin, "report-study", "1")
    admin.locator("#report-refresh").click()
    row = admin.locator("#report-table [role=row]", has_text=username)
    expect(row).to_contain_text("finished", timeout=30_000)
    cells = [c.strip() for c in row.locator("[role=gridcell]").all_inner_texts()]
    shown = dict(zip(report.COLUMNS, cells, strict=True))
    assert (shown["state"], shown["tasks_done"], shown["submitted"], shown["gold_judged"], shown["gold_accuracy"]) == (
        "finished", "2", "1", "1", "1"), shown  # fmt: skip
    assert shown["platform_worker_id"] == pid and shown["study_id"] == "1"
    admin.screenshot(path=str(shots / "admin-report.png"), full_page=True)
    admin.context.close()
    # 6. the same worker id again: the final page, no new start; a forged link is refused
    again = browser.new_context().new_page()
    again.goto(worker_link)
    expect(again.locator("#study-page")).to_have_attribute("data-state", "finished", timeout=30_000)
    assert db.scalar("SELECT count(*) FROM study_workers WHERE study_id = 1") == 1
    query = urlsplit(worker_link).query
    response = again.goto(f"{app.url}/study/1?{query.replace('sig=', 'sig=X')}")
    assert response is not None and response.status == 403
    expect(again.locator("#study-message")).to_contain_text("not valid")
