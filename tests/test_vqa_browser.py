"""A real browser against the real app: an author builds a two-image item and a probing item, two
verifiers accept them, an annotator answers one without seeing its key, a model answers live, and the
leaderboard shows all of them."""

from __future__ import annotations

import pytest
from e2e_helpers import ApiClient, app_in_process, browser_login
from playwright.sync_api import expect

from backend.accounts import auth
from backend.vqa.demo import DEMO_FILE
from backend.vqa.permissions import set_permission

IMAGES = DEMO_FILE.parent / "images"
PASSWORD = "password1"


@pytest.fixture
def app(settings):
    with app_in_process(settings.replace(demo_content=False)) as running:
        db = running.ctx.database
        for name, role in (("boss", "admin"), ("writer", "annotator"), ("ver1", "annotator"), ("ver2", "annotator"),
                           ("ann", "annotator")):
            auth.add_user(db, name, role, PASSWORD)
        for name in ("writer", "ver1", "ver2"):
            set_permission(db, "boss", name, "author")
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
        page.close()

    annotator = _open(browser, app, "ann", "Answer")
    # looking leases nothing: the item is handed out when the annotator asks for one
    expect(annotator.locator("#vqa-answer-start")).to_be_visible(timeout=30_000)
    assert app.ctx.database.scalar("SELECT count(*) FROM assignments WHERE kind = 'vqa_answer'") == 0
    annotator.locator("#vqa-answer-start").click()
    expect(annotator.locator("#vqa-answer-question")).to_contain_text("?", timeout=30_000)
    expect(annotator.locator("#vqa-answer-start")).to_be_hidden()
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
    for name in ("Random choice", "Human", "random"):
        expect(board).to_contain_text(name, timeout=20_000)
    expect(boss.locator("#vqa-comparison")).to_contain_text("Holm p")  # the paired comparison (issue 14)

    # The same rules hold through the named API: no key before the answer, and none for the author.
    api = ApiClient(app.url, "ann", PASSWORD)
    task = api.run("vqa_next_answer")["task"]
    assert task is not None and "answer" not in task and "key" not in task
    assert api.run("vqa_submit_answer", task["id"], ["A"])["key"]
    assert ApiClient(app.url, "writer", PASSWORD).run("vqa_next_answer")["task"] is None
