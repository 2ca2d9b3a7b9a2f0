"""People against models, in a real browser (issue 41). A VQA study is run by three crowd workers who arrive by
its link and answer in the study's page (two answer the key, the third always ticks the first option), and each
ends with the completion code, in the Answer panel and on their study page; then a
researcher sees the run "Humans (majority of 3)" on the VQA leaderboard with its interval and the items it covers,
the paired comparison of the baseline ``echo`` (always "A") against those people with the discordant counts the
answers give, and the same rows in the report; the leaderboard and the report are screenshotted in light and
dark mode."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from e2e_helpers import browser_login
from playwright.sync_api import expect

from backend.campaigns import links, studies
from backend.inference import samples
from backend.inference.registry import ModelSpec, write_models
from backend.vqa.items import list_items
from backend.vqa.models import run_model

pytestmark = pytest.mark.browser
PASSWORD = "password1"
WAIT = 60_000  # generous: two cores shared by many developers (not a timing assertion)
TASKS = 3
CODE = "PEOPLE1"
RETURN = f"https://app.prolific.com/submissions/complete?cc={CODE}"
PIDS = [f"{0x5F00AA11BB22CC33DD440000 + i:024x}" for i in range(3)]  # Prolific ids: 24 hexadecimal digits
TABLES = ["#vqa-leaderboard", "#vqa-paper-table", "#vqa-people-vs-models", "#vqa-comparison"]
ECHO = ModelSpec("echo", "python", "inference_helpers:echo_factory")  # always answers "A"


@pytest.fixture(scope="module")
def app(served_app):
    running = served_app(
        {"boss": "admin", "rev": "reviewer"}, password=PASSWORD, demo=True, vqa_answers_per_item=3,
        human_best_min_items=TASKS,
    )  # fmt: skip
    write_models(running.ctx.settings, [ModelSpec("random", "random", options={"seed": 0}), ECHO])
    run_model(running.ctx, "rev", "echo")
    return running


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("COMPSTUDIO_SCREENSHOTS", tmp_path_factory.mktemp("shots")))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def serious(page, within: list[str] | None = None) -> list[str]:
    """axe-core's serious and critical findings on the page as it stands, or ``within`` these elements
    (tests/e2e/test_accessibility.py checks every page; this one checks the leaderboard's new tables filled)."""
    from axe_playwright_python.sync_playwright import Axe

    page.wait_for_function("() => !document.querySelector('.pending')", timeout=WAIT)
    context = {"include": [[selector] for selector in within]} if within else None
    found = Axe().run(page, context=context).response["violations"]
    return [f"{v['impact']} {v['id']}: {[n['target'] for n in v['nodes']][:3]}" for v in found if v["impact"] in {"serious", "critical"}]  # fmt: skip


def _work(browser, link: str, study_id: int, keys: dict[str, tuple[str, ...]], right: bool) -> list[str]:
    """One worker from the study link to the code: Start, TASKS items answered (the key, or the first option), then
    the completion code in the Answer panel and on their study page."""
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(link)
    expect(page.locator("#study-page")).to_have_attribute("data-state", "qualified", timeout=WAIT)
    page.locator("#study-start").click()
    answered: list[str] = []
    question = page.locator("#vqa-answer-question")
    for _ in range(TASKS):
        expect(question).to_contain_text("item ", timeout=WAIT)
        if answered:  # the next item comes with the answer's feedback
            expect(question).not_to_contain_text(f"item {answered[-1]}", timeout=WAIT)
        item_id = re.search(r"item (\S+)", question.inner_text()).group(1)  # type: ignore[union-attr]
        letters = keys[item_id] if right else ("A",)
        labels = page.locator("#vqa-answer-choices label")
        for letter in letters:
            labels.nth("ABCDEFGH".index(letter)).click()
        page.locator("#vqa-answer-submit").click()
        expect(page.locator("#vqa-answer-result")).to_contain_text(f"for {item_id}:", timeout=WAIT)
        answered.append(item_id)
    # their part is done: the completion code where they answered, as big as on the study page, and the way back
    code = page.locator("#vqa-answer-question #study-completion-code")
    expect(code).to_have_text(CODE, timeout=WAIT)
    assert float(code.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 24  # 1.6rem: web/look.py
    expect(page.locator("#vqa-answer-question #study-return-link")).to_have_attribute("href", RETURN)
    expect(page.locator("#vqa-answer-progress")).to_contain_text(f"{TASKS} of {TASKS} tasks done")
    with page.context.expect_page() as opened:  # the header's "your study page" (Gradio opens links in a new tab)
        page.locator("#study-page-link").click()
    page = opened.value
    assert page.url.endswith(f"/study/{study_id}/here")  # from the server's root, not under /worker-vqa/
    expect(page.locator("#study-page")).to_have_attribute("data-state", "finished", timeout=WAIT)
    expect(page.locator("#study-code")).to_have_text(CODE)
    expect(page.locator("#study-return")).to_have_attribute("href", RETURN)
    page.goto(link)  # their link again: the same final page, nothing starts
    expect(page.locator("#study-page")).to_have_attribute("data-state", "finished", timeout=WAIT)
    expect(page.locator("#study-code")).to_have_text(CODE)
    page.context.close()
    return answered


def test_a_vqa_study_s_three_workers_become_the_humans_row_paired_with_the_baseline(app, browser, shots):
    db = app.ctx.database
    study = studies.create_study(
        db, "boss", name="VQA people", kind="vqa", tasks_per_worker=TASKS, qualification_size=0,
        completion_code=CODE,
    )  # fmt: skip
    keys = {item.id: item.answer for item in list_items(db, status="verified")}
    done = []
    for pid, right in zip(PIDS, (True, True, False), strict=True):
        link = links.worker_link(db, study, app.url, pid, STUDY_ID="S", SESSION_ID=pid)
        done.append(_work(browser, link, study.id, keys, right))
    items = sorted(set(done[0]))
    assert all(sorted(d) == items for d in done) and len(items) == TASKS  # three answers on each item
    # by hand: people answer the key by majority (two of three) on every item; echo answers "A", right only
    # where the key is A alone: the discordant items are those whose key is anything else
    people_only = sum(1 for item in items if keys[item] != ("A",))

    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    browser_login(page, app.url, "rev", PASSWORD)
    page.locator('button[data-tab-id="vqa"]').click()
    page.locator('button[data-tab-id="vqa-leaderboard"]').click()
    board = page.locator("#vqa-leaderboard")
    row = board.locator("[role=row]", has_text="Humans (majority of 3)")
    expect(row).to_contain_text("people", timeout=WAIT)
    expect(row).to_contain_text("100.00–100.00")  # its 95% interval: every item right by majority
    cells = [c.strip() for c in row.locator("[role=gridcell]").all_inner_texts()]
    assert cells[:3] == ["Humans (majority of 3)", "people", "100.00"] and str(TASKS) in cells
    expect(board.locator("[role=row]", has_text="Best annotator")).to_contain_text("people")
    expect(page.locator("#vqa-paper-table")).to_contain_text("Random Choice")
    pair = page.locator("#vqa-people-vs-models [role=row]", has_text="Humans (majority of 3)").filter(has_text="echo")
    expect(pair).to_be_visible(timeout=WAIT)
    numbers = [c.strip() for c in pair.locator("[role=gridcell]").all_inner_texts()]
    assert numbers[:3] == ["echo", "Humans (majority of 3)", str(TASKS)]  # the items both answered
    assert numbers[7:9] == ["0", str(people_only)]  # only the model right, only people right
    page.locator("#vqa-leaderboard").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "people-leaderboard.png"), full_page=True)
    assert serious(page) == []  # axe-core: the new tables add no serious or critical finding

    page.locator('button[data-tab-id="results"]').click()
    page.locator('button[data-tab-id="results-report"]').click()
    page.locator("#results-models input").click()
    page.get_by_role("option", name="echo", exact=True).click()
    page.locator("#results-build").click()
    expect(page.locator("#results-message")).to_contain_text("Report built", timeout=WAIT)
    expect(page.locator("#results-vqa")).to_contain_text("Humans (majority of 3)")
    paper = page.locator("#results-vqa_paper")
    expect(paper).to_contain_text("Random Choice")
    first = [c.strip() for c in paper.locator("[role=row]").nth(1).locator("[role=gridcell]").all_inner_texts()]
    assert first[0] == "Humans (majority of 3)"
    people = page.locator("#results-vqa_people [role=row]", has_text="Humans (majority of 3)").filter(has_text="echo")
    assert [c.strip() for c in people.locator("[role=gridcell]").all_inner_texts()][7:9] == ["0", str(people_only)]
    page.screenshot(path=str(shots / "people-report.png"), full_page=True)

    # Samples: the people beside echo's answers, and the gap filter (people agree on the key, echo is wrong)
    run = samples.find_run(db, "echo", "mmcomposition")
    page.locator('button[data-tab-id="results-samples"]').click()
    page.locator("#samples-run input").first.click()
    page.get_by_role("option", name=re.compile(re.escape(f"run {run.run_id}: echo"))).first.click()
    page.locator("#samples-filter input").first.click()
    page.get_by_role("option", name="models wrong where people agree (a gap)").click()
    expect(page.locator("#samples-counts")).to_contain_text(f"{people_only} models wrong where", timeout=WAIT)
    expect(page.locator("#samples-page-info")).to_contain_text(f"Showing {people_only} that match")
    gap = [item for item in items if keys[item] != ("A",)]
    table = page.locator("#samples-table")
    for item in gap:
        expect(table).to_contain_text(item)
    expect(table).to_contain_text("(3 people)")
    page.screenshot(path=str(shots / "people-samples.png"), full_page=True)

    dark = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="dark").new_page()
    browser_login(dark, app.url + "/?__theme=dark", "rev", PASSWORD)
    dark.locator('button[data-tab-id="vqa"]').click()
    dark.locator('button[data-tab-id="vqa-leaderboard"]').click()
    expect(dark.locator("#vqa-leaderboard")).to_contain_text("Humans (majority of 3)", timeout=WAIT)
    dark.screenshot(path=str(shots / "people-leaderboard-dark.png"), full_page=True)
    # the tables in dark mode (the tab strip's own dark contrast is the theme's: tests/e2e/test_accessibility.py)
    assert serious(dark, TABLES) == []
    dark.locator('button[data-tab-id="results"]').click()
    dark.locator('button[data-tab-id="results-report"]').click()
    dark.locator("#results-models input").click()
    dark.get_by_role("option", name="echo", exact=True).click()
    dark.locator("#results-build").click()
    expect(dark.locator("#results-vqa_people")).to_contain_text("Humans (majority of 3)", timeout=WAIT)
    dark.screenshot(path=str(shots / "people-report-dark.png"), full_page=True)
