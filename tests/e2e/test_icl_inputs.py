"""A real browser on the In-context examples tab (issue 13 and 18): a bad weight or MMR setting answers in the
message line with the inputs kept and no "Error" badge; one context length; only text models to ask; the
matching variants with Table 2 over the test set; uploading a test set (reviewers) that annotators never see."""

from __future__ import annotations

import json

import pytest
from browser_helpers import closing_new_contexts, icl_app
from e2e_helpers import browser_login
from playwright.sync_api import expect

from backend.errors import PermissionDenied, ValidationError
from backend.icl import service

pytestmark = pytest.mark.browser

PASSWORD = "password1"
FIRST_CASE = "0: [phrareco] The baby on a tray in the house screamed ."


@pytest.fixture(scope="module")
def app(served_app, browser, tmp_path_factory):
    """One app for the tests that only read the bank and the test set (the upload test has its own)."""
    with icl_app(served_app, browser, tmp_path_factory.mktemp("icl-inputs"), 600, PASSWORD) as running:
        yield running  # the module's windows close before its app stops


@pytest.fixture
def upload_app(served_app, browser, tmp_path):
    """A fresh app: an uploaded test set becomes the tab's choice when it opens."""
    with icl_app(served_app, browser, tmp_path, 600, PASSWORD) as running:
        yield running


@pytest.fixture(autouse=True)
def _close_windows(browser):
    with closing_new_contexts(browser):
        yield


def _field(page, elem_id: str):
    return page.locator(f"#{elem_id} textarea, #{elem_id} input").first


def _open_tab(browser, app, user: str, first_case: str = FIRST_CASE):
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    browser_login(page, app.url, user, PASSWORD)
    page.locator('button[data-tab-id="icl"]').click()
    expect(_field(page, "icl_case")).to_have_value(first_case, timeout=30_000)
    return page


def _choose(page, elem_id: str, value: str) -> None:
    _field(page, elem_id).fill(value)
    _field(page, elem_id).press("Enter")


def test_bad_mmr_and_weights_answer_in_the_message_line_and_keep_the_inputs(app, browser, tmp_path):
    page = _open_tab(browser, app, "res")
    _choose(page, "icl_setting", "mmr")
    page.get_by_text("CoFe weights (filled from the preset) and MMR").click()
    # the accordion mounts its fields as it opens: type once they are there and idle, and check that the
    # typed values stayed before pressing Run (a field mounted after the typing came back empty in one run)
    _field(page, "icl_mmr_pool").wait_for(state="visible")
    page.wait_for_function("() => !document.querySelector('.pending, .generating')", timeout=30_000)
    _field(page, "icl_mmr_lambda").fill("1.5")
    _field(page, "icl_mmr_pool").fill("0")
    expect(_field(page, "icl_mmr_lambda")).to_have_value("1.5")
    expect(_field(page, "icl_mmr_pool")).to_have_value("0")
    page.locator("#icl_run").click()
    message = page.locator("#icl_message")
    expect(message).to_contain_text("MMR λ must be between 0 and 1", timeout=10_000)
    expect(message).to_contain_text("the MMR pool must be between 1 and")
    expect(page.get_by_text("Error", exact=True)).to_have_count(0)  # no status badge over the page
    expect(_field(page, "icl_mmr_lambda")).to_have_value("1.5")
    expect(_field(page, "icl_case")).to_have_value(FIRST_CASE)
    page.screenshot(path=str(tmp_path / "icl_bad_mmr.png"), full_page=True)

    _field(page, "icl_w_s").fill("7")
    _choose(page, "icl_setting", "full_similarity")
    expect(_field(page, "icl_w_s")).to_have_value("1")  # the preset's weights are filled in
    _field(page, "icl_w_s").fill("-1")
    page.locator("#icl_run").click()
    expect(message).to_contain_text("w_s must be 0 or more", timeout=10_000)
    expect(message).not_to_contain_text("MMR")  # λ and pool matter only to the MMR selector
    expect(_field(page, "icl_w_s")).to_have_value("-1")

    _field(page, "icl_w_s").fill("1")
    _field(page, "icl_mmr_lambda").fill("0.7")
    _field(page, "icl_mmr_pool").fill("40")
    _choose(page, "icl_setting", "mmr")
    page.locator("#icl_run").click()
    summary = page.locator("#icl_summary")
    expect(summary).to_contain_text("Sentence embeddings: sentence-transformers/all-MiniLM-L6-v2", timeout=90_000)
    expect(summary).not_to_contain_text("&#")
    expect(message).to_have_text("")


def test_one_context_length_and_only_text_models_to_ask(app, browser, tmp_path):
    page = _open_tab(browser, app, "res")
    page.locator("#icl_run").click()
    summary = page.locator("#icl_summary")
    expect(summary).to_contain_text("Context length:", timeout=60_000)
    expect(summary).to_contain_text("whitespace tokens (Table 2: the chosen examples' inputs and outputs)")
    prompt = page.locator("#icl_prompt")
    expected = service.select_case_json(app.ctx, "res", {"bank": "cogs-bank", "tests": "phrareco", "line": 0})
    expect(_field(page, "icl_prompt")).to_have_value(expected["prompt"])  # the preset's weights, not zeros
    expect(prompt).to_contain_text("Prompt")
    expect(prompt).not_to_contain_text("tokens")
    assert page.get_by_text("tokens").count() == 1  # said once on the page
    models = page.locator(".row", has=page.get_by_role("button", name="Ask a model")).locator("input").first
    models.click()
    options = page.get_by_role("option")
    expect(options.first).to_be_visible()
    offered = [text.split("\n")[-1].strip() for text in options.all_inner_texts()]
    assert "tiny-icl" in offered and "random" in offered
    assert "nsplan-lite" not in offered and "bigram-prior" not in offered
    page.screenshot(path=str(tmp_path / "icl_models.png"), full_page=True)


def test_matching_variant_and_table_over_the_test_set(app, browser, tmp_path):
    page = _open_tab(browser, app, "res")
    _choose(page, "icl_matching", "target_only")
    page.locator("#icl_run").click()
    summary = page.locator("#icl_summary")
    expect(summary).to_contain_text("Matching: target_only", timeout=60_000)
    page.locator("#icl_set_table").click()
    table = page.locator("#icl_set_summary")
    expect(table).to_contain_text("matching: target_only · test cases kept:", timeout=60_000)
    expect(table).to_contain_text("of 4")
    page.screenshot(path=str(tmp_path / "icl_matching.png"), full_page=True)
    result = service.set_table_json(
        app.ctx, "res", {"bank": "cogs-bank", "tests": "phrareco", "matching": "target_only"}
    )
    assert result["test_cases"] == 4 and 0 <= result["test_cases_kept"] <= 4
    assert f"test cases kept: {result['test_cases_kept']} of 4" in result["markdown"]


def test_reviewer_uploads_a_test_set_and_annotators_do_not_see_the_panel(upload_app, browser, tmp_path):
    app = upload_app
    good = tmp_path / "test_dative_like.jsonl"
    good.write_text(json.dumps({"input": "Noah gave Ava a donut .", "output": "GIVE ( NOAH , DONUT , AVA )"}) + "\n")
    bad = tmp_path / "test_broken_like.jsonl"
    bad.write_text(good.read_text() + '{"input": "Noah gave Ava ."}\n')
    page = _open_tab(browser, app, "res")
    page.get_by_text("Add an example bank or test set (reviewers and admins)").click()
    page.locator("#icl_upload_file input[type=file]").set_input_files(str(bad))
    # the file's row by its accessible name (Gradio splits the shown name into stem and suffix, so the
    # element's text can read "test_x .jsonl" depending on layout)
    expect(page.locator("#icl_upload_file").get_by_role("cell", name="test_broken_like.jsonl")).to_be_visible()
    page.locator("#icl_upload").click()
    message = page.locator("#icl_message")
    expect(message).to_contain_text(
        "test_broken_like.jsonl, line 2: 'output' must be a non-empty string. Nothing was imported.", timeout=10_000
    )
    page.locator("#icl_upload_file button[aria-label='Clear']").first.click()
    page.locator("#icl_upload_file input[type=file]").set_input_files(str(good))
    # the file's row by its accessible name (Gradio splits the shown name into stem and suffix, so the
    # element's text can read "test_x .jsonl" depending on layout)
    expect(page.locator("#icl_upload_file").get_by_role("cell", name="test_dative_like.jsonl")).to_be_visible()
    page.locator("#icl_upload").click()
    expect(message).to_contain_text("Stored the tests set test_dative_like (1 lines).", timeout=10_000)
    expect(_field(page, "icl_tests")).to_have_value("test_dative_like")
    expect(_field(page, "icl_case")).to_have_value("0: [dative] Noah gave Ava a donut .")
    expect(page.get_by_text("Error", exact=True)).to_have_count(0)

    annotator = _open_tab(browser, app, "ann", "0: [dative] Noah gave Ava a donut .")
    expect(annotator.get_by_text("Add an example bank or test set")).to_have_count(0)
    with pytest.raises(PermissionDenied, match="reviewer role"):
        service.upload_set(app.ctx, "ann", good, "sneaky", "tests")
    notes = tmp_path / "notes.txt"
    notes.write_text("not a set\n")
    with pytest.raises(ValidationError, match=r"upload a JSON Lines file \(.jsonl\), not .txt"):
        service.upload_set(app.ctx, "res", notes, "notes", "tests")
