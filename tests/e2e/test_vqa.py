"""A real browser against the real app: an author builds a two-image item and a probing item, two
verifiers accept them, an annotator answers one without seeing its key, a model answers live, and the
leaderboard shows all of them."""

from __future__ import annotations

import pytest
from browser_helpers import closing_new_contexts
from e2e_helpers import ApiClient, browser_login
from playwright.sync_api import expect

from backend.vqa.demo import DEMO_FILE, ensure_vqa_demo
from backend.vqa.permissions import set_permission

IMAGES = DEMO_FILE.parent / "images"
PASSWORD = "password1"
ERROR_BADGE = '[data-testid="status-tracker"] .error'


@pytest.fixture
def app(served_app, browser):
    people = {"boss": "admin", "writer": "annotator", "ver1": "annotator", "ver2": "annotator", "ann": "annotator"}
    with served_app.started(people, password=PASSWORD) as running, closing_new_contexts(browser):
        for name in ("writer", "ver1", "ver2"):
            set_permission(running.ctx.database, "boss", name, "author")
        yield running


def _open(browser, app, user: str, subtab: str):
    page = browser.new_context().new_page()
    browser_login(page, app.url, user, PASSWORD)
    page.locator('button[data-tab-id="vqa"]').click()
    page.locator(f'button[data-tab-id="vqa-{subtab.lower()}"]').click()
    return page


def _field(page, elem_id: str):
    return page.locator(f"#{elem_id} textarea, #{elem_id} input").first


def _author(page, images: list[str]) -> None:
    page.locator("#vqa-author-files input[type=file]").set_input_files([str(IMAGES / i) for i in images])
    page.locator("#vqa-author-build").click()
    expect(page.locator("#vqa-author-preview img")).to_be_visible(timeout=30_000)


def test_author_verify_answer_model_and_leaderboard(app, browser):
    writer = _open(browser, app, "writer", "Author")
    _author(writer, ["astronaut.jpg", "astronaut_mirrored.jpg"])
    _field(writer, "vqa-author-category").fill("Difference Spotting")
    _field(writer, "vqa-author-category").press("Enter")
    _field(writer, "vqa-author-question").fill("In which image is the flag on the left?")
    _field(writer, "vqa-author-options").fill("Left\nRight")
    writer.locator("#vqa-author-correct").get_by_label("A. Left").check()
    writer.locator("#vqa-author-save").click()
    expect(writer.locator("#vqa-author-saved")).to_contain_text("Saved item", timeout=20_000)

    _author(writer, ["chelsea.jpg"])
    writer.get_by_text("Probing builder").click()
    _field(writer, "vqa-probe-true").fill("a cat with green eyes\na cat with a pink nose")
    _field(writer, "vqa-probe-conflict").fill("a dog on grass\na cat with blue eyes\na black cat")
    writer.locator("#vqa-probe-build").click()
    expect(_field(writer, "vqa-author-options")).not_to_have_value("Left\nRight", timeout=20_000)
    writer.locator("#vqa-author-save").click()
    expect(writer.locator("#vqa-author-saved")).to_contain_text("VL Composition Probing", timeout=20_000)

    for verifier in ("ver1", "ver2"):
        page = _open(browser, app, verifier, "Verify")
        for _ in range(2):
            page.locator("#vqa-verify-next").click()
            expect(page.locator("#vqa-verify-item")).to_contain_text("✅", timeout=20_000)
            page.locator("#vqa-verify-accept").click()
            expect(page.locator("#vqa-verify-outcome")).to_contain_text("Recorded your accept", timeout=20_000)
            # the first of two verifiers leaves a draft a draft: "still", never "now draft" (issue 44 §13)
            state = "still a draft" if verifier == "ver1" else "now verified"
            expect(page.locator("#vqa-verify-outcome")).to_contain_text(f"the item is {state}")
        page.close()

    annotator = _open(browser, app, "ann", "Answer")
    # the item is handed out when the annotator opens the Answer panel to work, not at sign-in
    expect(annotator.locator("#vqa-answer-question")).to_contain_text("?", timeout=30_000)
    assert "✅" not in annotator.locator("#vqa-answer-question").inner_text()
    expect(annotator.locator('button[data-tab-id="vqa-author"]')).to_have_count(0)
    annotator.locator("#vqa-answer-choices label").first.click()
    annotator.locator("#vqa-answer-submit").click()
    expect(annotator.locator("#vqa-answer-result")).to_contain_text("score", timeout=20_000)

    boss = _open(browser, app, "boss", "Models")
    _field(boss, "vqa-model").fill("random")
    _field(boss, "vqa-model").press("Enter")
    boss.get_by_role("button", name="Refresh the item list").click()
    expect(_field(boss, "vqa-model-item")).not_to_have_value("", timeout=20_000)
    boss.locator("#vqa-model-ask").click()
    expect(boss.locator("#vqa-model-answer")).to_contain_text("answered", timeout=30_000)
    boss.locator('button[data-tab-id="vqa-leaderboard"]').click()
    boss.get_by_role("button", name="Refresh").click()
    board = boss.locator("#vqa-leaderboard")
    for name in ("Random choice", "Humans (majority of", "random"):
        expect(board).to_contain_text(name, timeout=20_000)
    # one run of a model: the pairs table says so (two runs: tests/test_people_runs.py, tests/e2e/test_people.py)
    expect(boss.locator("#vqa-comparison")).to_contain_text("nothing to pair")

    # The same rules hold through the named API: no key before the answer, and none for the author.
    api = ApiClient(app.url, "ann", PASSWORD)
    task = api.run("vqa_next_answer")["task"]
    assert task is not None and "answer" not in task and "key" not in task
    assert api.run("vqa_submit_answer", task["id"], ["A"])["key"]
    assert ApiClient(app.url, "writer", PASSWORD).run("vqa_next_answer")["task"] is None


@pytest.fixture
def demo_app(served_app, browser):
    """The 15 verified demo items (the first, demo-obj-p, is single choice) and one annotator."""
    with served_app.started({"ann": "annotator"}, password=PASSWORD) as running, closing_new_contexts(browser):
        ensure_vqa_demo(running.ctx)
        yield running


def _answer_first_option(page, done: int) -> None:
    page.locator("#vqa-answer-choices label").first.click()
    page.locator("#vqa-answer-submit").click()
    expect(page.locator("#vqa-answer-progress")).to_contain_text(f"Answered by you: {done}", timeout=20_000)


def test_two_ticks_on_single_choice_keep_the_ticks_and_the_image(demo_app, browser):
    page = _open(browser, demo_app, "ann", "Answer")
    expect(page.locator("#vqa-answer-question")).to_contain_text("single choice", timeout=30_000)
    expect(page.locator("#vqa-answer-image img")).to_be_visible(timeout=30_000)
    labels = page.locator("#vqa-answer-choices label")
    labels.nth(0).click()
    labels.nth(1).click()
    page.locator("#vqa-answer-submit").click()
    message = "select exactly one option"
    expect(page.locator("[data-testid='toast-body']").filter(has_text=message)).to_be_visible()
    expect(page.locator("#vqa-answer-result")).to_contain_text(message)
    # no "Error" badge over the image, the question or the ticks; both ticks are still there to fix
    expect(page.locator(ERROR_BADGE)).to_have_count(0)
    expect(page.locator("#vqa-answer-image img")).to_be_visible()
    checked = page.locator("#vqa-answer-choices input[type=checkbox]")
    expect(checked.nth(0)).to_be_checked()
    expect(checked.nth(1)).to_be_checked()
    labels.nth(1).click()  # untick one, at once: nothing to close first
    page.locator("#vqa-answer-submit").click()
    expect(page.locator("#vqa-answer-result")).to_contain_text("score", timeout=20_000)


def test_items_left_follow_every_answer_and_nothing_left_hides_the_form(demo_app, browser):
    db = demo_app.ctx.database
    page = _open(browser, demo_app, "ann", "Answer")
    progress = page.locator("#vqa-answer-progress")
    expect(progress).to_contain_text("items left for you: 15", timeout=30_000)
    for done in (1, 2, 3):
        _answer_first_option(page, done)
        expect(progress).to_contain_text(f"items left for you: {15 - done}")
    with db.write() as conn:  # all but the person's current item are answered by others meanwhile
        current = conn.conn.execute(
            "SELECT item_id FROM assignments WHERE annotator = 'ann' AND status = 'leased'"
        ).fetchone()[0]
        conn.conn.execute("UPDATE tasks SET status = 'complete' WHERE kind = 'vqa_answer' AND item_id != ?", (current,))
    _answer_first_option(page, 4)
    expect(page.locator("#vqa-answer-question")).to_contain_text("Nothing left for you to answer")
    expect(progress).to_contain_text("nothing left for you to answer")
    for hidden in ("#vqa-answer-image", "#vqa-answer-choices", "#vqa-answer-submit"):
        expect(page.locator(hidden)).to_be_hidden()


def test_category_chart_groups_runs_on_a_0_to_100_axis(demo_app, browser):
    db = demo_app.ctx.database
    page = _open(browser, demo_app, "ann", "Answer")
    for done in (1, 2, 3):
        _answer_first_option(page, done)
    page.locator('button[data-tab-id="vqa-leaderboard"]').click()
    page.get_by_role("button", name="Refresh").click()
    chart = page.locator("#vqa-category-chart")
    majority = ".vqa-bar[data-run='Humans (majority of 1)']"  # the three answers: one person each
    expect(chart.locator(majority).first).to_be_visible(timeout=20_000)
    expect(chart).to_contain_text("100%")
    for group in chart.locator(".vqa-group").all():  # each category: one bar per run, side by side
        bars = group.locator(".vqa-bar")
        runs = [bars.nth(i).get_attribute("data-run") for i in range(bars.count())]
        assert len(runs) == len(set(runs))
        scores = [float(bars.nth(i).get_attribute("data-score")) for i in range(bars.count())]
        assert all(0 <= score <= 100 for score in scores)
    both = chart.locator(".vqa-group").filter(has=page.locator(majority))
    boxes = [b.bounding_box() for b in both.first.locator(".vqa-bar").all()]
    # random, the majority and one annotator's mean: one bar each, not one stacked bar
    assert len(boxes) == 3 and len({b["y"] for b in boxes}) == 3
    assert db.scalar("SELECT count(*) FROM vqa_answers") == 3
