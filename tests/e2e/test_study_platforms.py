"""Crowd studies on today's platforms, in a real browser (issue 40 §6): a CloudResearch Connect worker and a
generic-platform (SONA) worker from the link to the code, and a planning study's worker; a squatter's page (made-up ids from one address: the
quiz holds no place, then "come back later"); the "study full" page of a worker who passed when the last place had
gone; a worker waiting for a task; an archived Mechanical Turk study's report. The pages changed here are
screenshot on a desktop (1280x900) and a phone (390x844), light and dark (COMPSTUDIO_SCREENSHOTS keeps them)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser_helpers import CONCRETE, HIGH_LEVEL, watch_video
from campaign_helpers import archived_mturk_study
from e2e_helpers import browser_login
from playwright.sync_api import expect

from backend.accounts import auth
from backend.campaigns import links, studies, workers
from backend.storage import utcnow

pytestmark = pytest.mark.browser
PASSWORD = "password-boss"
VIEWS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
LIMIT = 3


@pytest.fixture(scope="module")
def app(served_app):
    return served_app({"boss": "admin"}, password=PASSWORD, demo=True, study_arrivals_per_address=LIMIT)


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("COMPSTUDIO_SCREENSHOTS", tmp_path_factory.mktemp("shots")))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def four_shots(browser, url: str, name: str, shots: Path, cookies=None, ready: str = "#study-page") -> None:
    """``url`` on a desktop and a phone, light and dark (the stand-alone pages follow the system's scheme; the
    app's pages take Gradio's ``__theme``)."""
    for view, size in VIEWS.items():
        for scheme in ("light", "dark"):
            context = browser.new_context(viewport=size, color_scheme=scheme)
            if cookies:
                context.add_cookies(cookies)
            page = context.new_page()
            page.goto(url + (("&" if "?" in url else "?") + "__theme=dark" if scheme == "dark" else ""))
            page.wait_for_selector(ready, timeout=60_000)
            page.screenshot(path=str(shots / f"{name}-{view}-{scheme}.png"), full_page=True)
            context.close()


def new_study(app, **fields):
    values = {"kind": "intents", "tasks_per_worker": 1, "completion_code": "DONE42", "screenout_code": "OUT7",
              "qualification_size": 0, "places": 5, **fields}  # fmt: skip
    return studies.create_study(app.ctx.database, "boss", **values)


def do_the_task(page) -> None:
    page.locator("#study-start").click()
    expect(page.locator("#intent-task h3")).to_contain_text("DEMO-", timeout=60_000)
    watch_video(page)
    expect(page.locator("#intent-submit")).to_be_enabled(timeout=15_000)
    page.locator(CONCRETE).fill("S/He wants to get ready for the day")
    page.locator(HIGH_LEVEL).fill("S/He is in a hurry")
    page.locator("#intent-submit").click()


def test_a_connect_worker_goes_from_the_link_to_the_code(app, browser, shots):
    study = new_study(app, name="Connect pilot", platform="connect", completion_code="CR12AB34CD")
    link = links.worker_link(app.ctx.database, study, app.url, "CRw0rker-1", assignmentId="A1", projectId="P1")
    context = browser.new_context(viewport=VIEWS["desktop"])
    page = context.new_page()
    page.goto(link)
    expect(page.locator("#study-page")).to_have_attribute("data-state", "qualified", timeout=30_000)
    do_the_task(page)
    code = page.locator("#study-completion-code")
    expect(code).to_have_text("CR12AB34CD", timeout=30_000)
    size = float(code.evaluate("e => getComputedStyle(e).fontSize").removesuffix("px"))
    assert size >= 24  # as big as on the stand-alone page (1.6rem)
    assert code.evaluate("e => getComputedStyle(e).userSelect") == "all"  # one click selects it to copy
    expect(page.locator("#study-return-link")).to_have_attribute(
        "href", "https://connect.cloudresearch.com/participant/project/CR12AB34CD/complete"
    )
    worker = app.ctx.database.query_one("SELECT * FROM study_workers WHERE study_id = ?", (study.id,))
    assert worker["status"] == "finished" and '"projectId": "P1"' in worker["params"]
    four_shots(browser, page.url, "study-code-in-app", shots, context.cookies(), ready="#study-completion-code")
    context.close()


def test_a_sona_worker_on_the_generic_platform_goes_from_the_link_to_the_code(app, browser):
    sona = "https://dept.sona-systems.com/webstudy_credit.aspx?experiment_id=123&credit_token=tok&survey_code={code}"
    study = new_study(app, name="SONA pilot", platform="generic", worker_param="survey_code", return_url=sona)
    admin_link = links.link_for(app.ctx.database, "boss", study.id, app.url)["link"]
    assert f"/study/{study.id}?survey_code=WORKER_ID&sig=" in admin_link
    page = browser.new_context(viewport=VIEWS["phone"]).new_page()
    page.goto(admin_link.replace("WORKER_ID", "48213"))
    expect(page.locator("#study-page")).to_have_attribute("data-state", "qualified", timeout=30_000)
    do_the_task(page)
    expect(page.locator("#study-completion-code")).to_have_text("DONE42", timeout=30_000)
    expect(page.locator("#study-return-link")).to_have_attribute("href", sona.replace("{code}", "DONE42"))
    page.context.close()


def test_a_planning_study_worker_goes_from_the_link_to_the_code(app, browser):
    """The Check questions panel ends with the code as the intents tab does (it said only "Nothing left")."""
    study = new_study(app, name="Planning pilot", kind="planning", completion_code="PLAN77")
    page = browser.new_context(viewport=VIEWS["desktop"]).new_page()
    page.goto(links.worker_link(app.ctx.database, study, app.url, "5f00aa11bb22cc33dd44aa77"))
    expect(page.locator("#study-page")).to_have_attribute("data-state", "qualified", timeout=30_000)
    page.locator("#study-start").click()
    expect(page.locator("#planning-check-progress")).to_contain_text("0 of 1 tasks done", timeout=60_000)
    page.locator("#planning-check-next").click()
    expect(page.locator("#planning-check-choice")).to_be_visible(timeout=60_000)
    page.locator("#planning-check-choice").get_by_label("A", exact=True).check()
    page.locator("#planning-check-submit").click()
    code = page.locator("#planning-check-question #study-completion-code")
    expect(code).to_have_text("PLAN77", timeout=60_000)
    expect(page.locator("#planning-check-question #study-return-link")).to_have_attribute(
        "href", "https://app.prolific.com/submissions/complete?cc=PLAN77"
    )
    expect(page.locator("#planning-check-progress")).to_contain_text("1 of 1 tasks done")
    page.goto(f"{app.url}/study/{study.id}/here")  # the stand-alone page says the same
    expect(page.locator("#study-page")).to_have_attribute("data-state", "finished", timeout=30_000)
    expect(page.locator("#study-code")).to_have_text("PLAN77")
    page.context.close()


def test_a_squatters_ids_hold_no_place_and_then_are_told_to_come_back(app, browser, shots):
    study = new_study(app, name="Squat", qualification_size=2, places=1)
    page = browser.new_context(viewport=VIEWS["desktop"]).new_page()
    for n in range(LIMIT):  # made-up ids: each gets the instructions, and none holds a place
        page.goto(links.worker_link(app.ctx.database, study, app.url, f"{0xFA4E0000 + n:024x}"))
        expect(page.locator("#study-page")).to_have_attribute("data-state", "started", timeout=30_000)
    assert studies.study_stats(app.ctx.database, "boss", study.id)["placed"] == 0
    squat = links.worker_link(app.ctx.database, study, app.url, f"{0xFA4E0099:024x}")
    reply = page.goto(squat)
    assert reply is not None and reply.status == 429
    expect(page.locator("#study-page")).to_have_attribute("data-state", "limited")
    expect(page.locator("#study-message")).to_contain_text("come back after")
    counted = app.ctx.database.scalar("SELECT count(*) FROM study_arrivals WHERE study_id = ?", (study.id,))
    assert counted == LIMIT + 1  # the refused arrival counts too
    four_shots(browser, squat, "study-come-back-later", shots)
    page.context.close()


def test_after_a_failed_try_on_a_phone_the_new_questions_are_in_view(app, browser, shots):
    """Issue 44: the mistakes of a failed try were ~1,500 px long and pushed the new questions out of view."""
    study = new_study(app, name="Quiz", qualification_size=5, places=5)
    context = browser.new_context(viewport=VIEWS["phone"])
    page = context.new_page()
    page.goto(links.worker_link(app.ctx.database, study, app.url, "5f00aa11bb22cc33dd44ee55"))
    page.locator("#study-quiz-start").click()
    worker = app.ctx.database.query_one("SELECT username FROM study_workers WHERE study_id = ?", (study.id,))
    for item in workers.quiz_for(study, workers.row_by_user(app.ctx.database.db, worker["username"])):
        page.locator(f'input[name="{item.id}"][value="{(item.answer + 1) % len(item.options)}"]').check()
    page.locator("#study-quiz-submit").click()
    expect(page.locator("#study-try-again")).to_be_visible(timeout=30_000)
    expect(page.locator("#study-quiz fieldset").first).to_be_in_viewport()
    expect(page.locator("#study-mistakes summary")).to_contain_text("5 questions")
    assert page.locator("#study-mistakes").evaluate("e => e.getBoundingClientRect().height") < 120
    four_shots(browser, f"{app.url}/study/{study.id}/here?quiz=1", "study-quiz-after-a-failed-try", shots,
               context.cookies())  # fmt: skip
    context.close()


def test_a_worker_who_passes_after_the_last_place_went_gets_the_full_page(app, browser, shots):
    db = app.ctx.database
    study = new_study(app, name="Full", qualification_size=2, places=1)
    late_link = links.worker_link(db, study, app.url, "5f00aa11bb22cc33dd44ee99")
    page = browser.new_context(viewport=VIEWS["desktop"]).new_page()
    page.goto(late_link)  # in the quiz: holds nothing
    expect(page.locator("#study-page")).to_have_attribute("data-state", "started", timeout=30_000)
    sig = links.study_signature(db.scalar("SELECT secret FROM studies WHERE id = ?", (study.id,)), study.id)
    first = workers.arrive(db, app.ctx.settings, study, links.verify_visit(db, study, {
        "PROLIFIC_PID": "5f00aa11bb22cc33dd44ee01", "sig": sig}), "198.51.100.1").worker  # fmt: skip
    keys = {item.id: str(item.answer) for item in workers.quiz_for(study, first)}
    assert workers.take_qualification(db, first.username, study.id, keys).worker.placed_at  # the last place
    page.locator("#study-quiz-start").click()
    late = db.query_one("SELECT * FROM study_workers WHERE platform_worker_id = '5f00aa11bb22cc33dd44ee99'")
    for item in workers.quiz_for(study, workers.row_by_user(db.db, late["username"])):
        page.locator(f'input[name="{item.id}"][value="{item.answer}"]').check()
    page.locator("#study-quiz-submit").click()
    expect(page.locator("#study-page")).to_have_attribute("data-state", "full", timeout=30_000)
    expect(page.locator("#study-message")).to_contain_text("every place in this study has just been taken")
    expect(page.locator("#study-message")).to_contain_text("not because of anything you did")
    expect(page.locator("#study-code")).to_have_text("OUT7")
    expect(page.locator("#study-return")).to_have_attribute(
        "href", "https://app.prolific.com/submissions/complete?cc=OUT7"
    )
    assert studies.study_stats(db, "boss", study.id)["full"] == 1
    four_shots(browser, late_link, "study-full", shots)  # the link again: the same page, nothing new starts
    page.context.close()


def test_a_worker_with_no_task_free_waits_on_a_page_that_checks_by_itself(app, browser, shots):
    db = app.ctx.database
    study = new_study(app, name="Waiting", tasks_per_worker=50, partial_code="PART9")
    link = links.worker_link(db, study, app.url, "5f00aa11bb22cc33dd44ee77")
    context = browser.new_context(viewport=VIEWS["desktop"])
    page = context.new_page()
    page.goto(link)
    expect(page.locator("#study-page")).to_have_attribute("data-state", "qualified", timeout=30_000)
    with db.write() as conn:  # every task is taken by others: nothing free for them
        conn.conn.execute("UPDATE tasks SET status = 'complete' WHERE kind = 'intent'")
    reply = page.goto(f"{app.url}/study/{study.id}/here?wait=1")
    assert reply is not None and reply.headers.get("refresh") == "20"
    expect(page.locator("#study-waiting")).to_contain_text("checks again by itself every 20 seconds")
    expect(page.locator("#study-wait-until")).to_contain_text("UTC")
    four_shots(browser, f"{app.url}/study/{study.id}/here?wait=1", "study-waiting", shots, context.cookies())
    with db.write() as conn:
        conn.conn.execute("UPDATE tasks SET status = 'open' WHERE kind = 'intent'")
    context.close()


def test_an_archived_mturk_studys_report_keeps_its_records(app, browser, shots):
    db = app.ctx.database
    hit = archived_mturk_study(db, name="Old HIT", completion_code="MT42")
    with db.write() as conn:  # a worker who finished before Mechanical Turk closed
        auth.insert_user(conn.conn, f"s{hit.id}-A1B2C3", "annotator", source="study")
        conn.conn.execute(
            """INSERT INTO study_workers (study_id, platform_worker_id, username, status, started_at, qualified_at,
                   finished_at, params, placed_at, end_reason) VALUES (?, 'A1B2C3', ?, 'finished', ?, ?, ?, '{}', ?,
                   'quota done')""",
            (hit.id, f"s{hit.id}-A1B2C3", utcnow(), utcnow(), utcnow(), utcnow()),
        )
    page = browser.new_context(viewport={"width": 1600, "height": 1000}).new_page()
    browser_login(page, app.url, "boss", PASSWORD)
    page.get_by_role("tab", name="Studies", exact=True).click()
    expect(page.locator("#studies-table")).to_contain_text("mturk (archived)", timeout=30_000)
    page.locator("#study-platform input").click()
    expect(page.get_by_role("option", name="connect")).to_be_visible()
    expect(page.get_by_role("option", name="mturk")).to_have_count(0)
    page.keyboard.press("Escape")
    for view, size in VIEWS.items():  # the tab as it is, on a desktop and a phone, light and dark (Gradio's class)
        page.set_viewport_size(size)
        for scheme in ("light", "dark"):
            page.evaluate(f"document.body.classList.toggle('dark', {str(scheme == 'dark').lower()})")
            page.screenshot(path=str(shots / f"admin-studies-{view}-{scheme}.png"), full_page=True)
    page.evaluate("document.body.classList.remove('dark')")
    page.set_viewport_size({"width": 1600, "height": 1000})
    page.get_by_role("tab", name="Admin", exact=True).click()
    page.get_by_text("Crowd workers: report, payment CSV, blocking").click()
    page.locator("#report-study input").fill(str(hit.id))
    page.locator("#report-refresh").click()
    row = page.locator("#report-table [role=row]", has_text="A1B2C3")
    expect(row).to_contain_text("finished", timeout=30_000)
    expect(row).to_contain_text("mturk (archived: closed 2026-09-30)")
    expect(row).to_contain_text("MT42")
    page.screenshot(path=str(shots / "admin-report-archived-mturk.png"), full_page=True)
    page.context.close()
    newcomer = browser.new_context().new_page()
    reply = newcomer.goto(links.worker_link(db, hit, app.url, "A9Z8Y7", assignmentId="ASG1", hitId="H1"))
    assert reply is not None and reply.status == 403
    expect(newcomer.locator("#study-message")).to_contain_text("closed permanently on 2026-09-30")
    newcomer.context.close()
