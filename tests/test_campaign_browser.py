"""A crowd campaign in a real browser (issue 16 §5, parts 1-2): an admin creates a study and copies its link; a
worker arrives by it with Prolific parameters, passes the qualification, does the quota of intent tasks on the
demo content and sees the completion code; a forged link is refused; the finished worker cannot restart."""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from conftest import seed_demo_media
from e2e_helpers import app_in_process, browser_login
from playwright.sync_api import expect
from test_browser_intents import CONCRETE, HIGH_LEVEL, watch_video

from backend.accounts import auth
from backend.campaigns import studies
from backend.campaigns.qualification import draw_quiz

NAME = "Pilot <b>bold</b>"


@pytest.fixture
def app(settings, demo_media_cache):
    seed_demo_media(settings, demo_media_cache)
    with app_in_process(settings.replace(demo_content=True)) as running:
        auth.add_user(running.ctx.database, "boss", "admin", "password1")
        yield running


@pytest.fixture
def shots(tmp_path) -> Path:
    folder = Path(os.environ.get("COMPSTUDIO_SCREENSHOTS", tmp_path / "shots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def create_study_in_browser(app, browser, shots: Path) -> str:
    """The admin's side: the Studies tab, a new study, its link."""
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    browser_login(page, app.url, "boss", "password1")
    page.get_by_role("tab", name="Studies", exact=True).click()
    page.locator("#study-name input, #study-name textarea").fill(NAME)
    page.locator("#study-tasks input").fill("2")
    page.locator("#study-quiz-size input").fill("4")
    page.locator("#study-pass-mark input").fill("0.75")
    page.locator("#study-completion input, #study-completion textarea").fill("DONE42")
    page.locator("#study-screenout input, #study-screenout textarea").fill("OUT7")
    page.locator("#study-create").click()
    link_box = page.locator("#study-link input, #study-link textarea")
    expect(link_box).to_have_value(
        re.compile(r"/study/1\?PROLIFIC_PID=\{\{%PROLIFIC_PID%\}\}.*&sig=[-\w]{32}$"), timeout=30_000
    )
    expect(page.locator("#study-message")).to_contain_text("Created study 1")
    expect(page.locator("#study-message b")).to_have_count(0)  # the name is escaped
    expect(page.locator("#studies-table")).to_contain_text(NAME)
    page.screenshot(path=str(shots / "admin-studies.png"), full_page=True)
    link = link_box.input_value()
    page.context.close()
    return link


def as_prolific_sends_it(link: str, pid: str) -> str:
    return (
        link.replace("{{%PROLIFIC_PID%}}", pid).replace("{{%STUDY_ID%}}", "STUDY9").replace("{{%SESSION_ID%}}", "SESS1")
    )


def pass_qualification(app, page, pid: str) -> None:
    study = studies.get_study(app.ctx.database, 1)
    items = draw_quiz(study.kind, study.qualification_size, study.id, pid)
    expect(page.locator("#study-page")).to_have_attribute("data-state", "started", timeout=30_000)
    expect(page.locator("#study-page strong")).to_contain_text(NAME)  # escaped, shown as typed
    assert page.locator("#study-page fieldset").count() == 4
    for item in items:
        page.locator(f'input[name="{item.id}"][value="{item.answer}"]').check()


def annotate_one(page) -> None:
    expect(page.locator("#intent-task h3")).to_contain_text("DEMO-", timeout=60_000)
    watch_video(page)
    expect(page.locator("#intent-submit")).to_be_enabled(timeout=15_000)
    page.locator(CONCRETE).fill("S/He wants to get ready for the day")
    page.locator(HIGH_LEVEL).fill("S/He is in a hurry")
    page.locator("#intent-submit").click()


def test_worker_arrives_qualifies_works_and_gets_the_completion_code(app, browser, shots):
    link = create_study_in_browser(app, browser, shots)
    worker_link = as_prolific_sends_it(link, "5f00aa11bb22cc33dd44ee55")
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()

    page.goto(worker_link)
    pass_qualification(app, page, "5f00aa11bb22cc33dd44ee55")
    page.screenshot(path=str(shots / "qualification.png"), full_page=True)
    page.locator("#study-quiz-submit").click()
    expect(page.locator("#study-page")).to_have_attribute("data-state", "qualified", timeout=30_000)
    assert page.url.endswith("/study/1/here")  # the signature is no longer in the address bar
    expect(page.locator("#study-page")).to_contain_text("0 of 2 tasks done")
    page.screenshot(path=str(shots / "qualified.png"), full_page=True)

    page.locator("#study-start").click()
    expect(page.locator("#whoami")).to_contain_text("s1-5f00aa11bb22cc33dd44ee55", timeout=60_000)
    # a study worker's page holds their study's tab only (components/pages.py)
    assert [t.strip() for t in page.get_by_role("tab").all_inner_texts() if t.strip()] == ["Annotate intents"]
    page.screenshot(path=str(shots / "worker-page.png"))
    annotate_one(page)
    expect(page.locator("#intent-progress")).to_contain_text("1 of 2 tasks done", timeout=30_000)
    annotate_one(page)
    expect(page.locator("#study-completion-code")).to_have_text("DONE42", timeout=30_000)
    expect(page.locator("#intent-task")).to_contain_text("You have finished this study")
    expect(page.locator("#study-return-link")).to_have_attribute(
        "href", "https://app.prolific.com/submissions/complete?cc=DONE42"
    )
    expect(page.locator("#intent-video")).to_be_hidden()
    page.wait_for_function("() => !document.querySelector('.pending, .generating')", timeout=30_000)
    page.wait_for_function(  # the updated text has faded in (Gradio animates a Markdown's new content)
        "() => { for (let n = document.querySelector('#study-completion-code'); n; n = n.parentElement)"
        " { if (getComputedStyle(n).opacity !== '1') return false; } return true; }",
        timeout=30_000,
    )
    page.screenshot(path=str(shots / "completed.png"), full_page=True)

    worker = app.ctx.database.query_one("SELECT * FROM study_workers")
    assert worker["status"] == "finished"
    assert '"STUDY_ID": "STUDY9"' in worker["params"] and '"SESSION_ID": "SESS1"' in worker["params"]
    assert app.ctx.database.scalar("SELECT count(*) FROM annotations WHERE annotator = ?", (worker["username"],)) == 2

    # the same worker id comes back in a fresh browser: the final page, no new start, no session
    again = browser.new_context().new_page()
    again.goto(worker_link)
    expect(again.locator("#study-page")).to_have_attribute("data-state", "finished", timeout=30_000)
    expect(again.locator("#study-code")).to_have_text("DONE42")
    assert not [c for c in again.context.cookies() if c["name"].startswith("compstudio-session")]
    again.screenshot(path=str(shots / "finished-again.png"), full_page=True)
    assert app.ctx.database.scalar("SELECT count(*) FROM study_workers") == 1

    # a forged signature, and this study's signature on another study's number, are refused
    forged = browser.new_context().new_page()
    query = urlsplit(worker_link).query
    response = forged.goto(f"{app.url}/study/1?{query.replace('sig=', 'sig=X')}")
    assert response is not None and response.status == 403
    expect(forged.locator("#study-message")).to_contain_text("not valid")
    forged.screenshot(path=str(shots / "forged.png"), full_page=True)
    other = studies.create_study(
        app.ctx.database, "boss", name="Other", kind="intents", tasks_per_worker=1, completion_code="X1"
    )
    response = forged.goto(f"{app.url}/study/{other.id}?{query}")
    assert response is not None and response.status == 403
    expect(forged.locator("#study-message")).to_contain_text("belongs to another study")
    assert app.ctx.database.scalar("SELECT count(*) FROM study_workers") == 1
