"""A real browser on the In-context examples tab: a test case, its selection, its prompt, a second selector
side by side, and a tiny causal LM's answer with its exact-match verdict; plus the named API."""

from __future__ import annotations

import json
import re

import pytest
from browser_helpers import closing_new_contexts, icl_app
from e2e_helpers import ApiClient, ApiError, browser_login
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

PASSWORD = "password1"


@pytest.fixture(scope="module")
def app(served_app, browser, tmp_path_factory):
    """One app for the tests that leave the model registry as it was (the other test has its own)."""
    with icl_app(served_app, browser, tmp_path_factory.mktemp("icl"), 1200, PASSWORD) as running:
        yield running  # the module's windows close before its app stops


@pytest.fixture
def registry_app(served_app, browser, tmp_path):
    """A fresh app: the test saves a model, which every later test's model picker would offer."""
    with icl_app(served_app, browser, tmp_path, 1200, PASSWORD) as running:
        yield running


@pytest.fixture(autouse=True)
def _close_windows(browser):
    with closing_new_contexts(browser):
        yield


def _field(page, elem_id: str):
    return page.locator(f"#{elem_id} textarea, #{elem_id} input").first


def test_select_compare_and_ask_a_model(app, browser):
    page = browser.new_context().new_page()
    browser_login(page, app.url, "res", PASSWORD)
    page.locator('button[data-tab-id="icl"]').click()
    expect(_field(page, "icl_case")).to_have_value(
        "0: [phrareco] The baby on a tray in the house screamed .", timeout=30_000
    )
    _field(page, "icl_setting_b").fill("bm25")
    _field(page, "icl_setting_b").press("Enter")
    page.locator("#icl_run").click()
    summary = page.locator("#icl_summary")
    expect(summary).to_contain_text("SCREAM ( ON ( BABY , IN ( TRAY , HOUSE ) ) , NONE , NONE )", timeout=60_000)
    expect(summary).to_contain_text("subject[pp-mod]")
    expect(page.locator("#icl_table")).to_contain_text("primitive_coverage")
    expect(_field(page, "icl_prompt")).to_have_value(
        re.compile(r"^input: .*\noutput: .*(\n.*)*input: The baby on a tray in the house screamed \.\noutput:$"),
    )
    expect(page.locator("#icl_summary_b")).to_contain_text("bm25")
    page.get_by_role("button", name="Ask a model").click()
    expect(page.get_by_text("Parsed answer")).to_be_visible(timeout=60_000)
    expect(page.get_by_text("wrong")).to_be_visible()


def test_named_api_checks_roles(app):
    api = ApiClient(app.url, "ann", PASSWORD)
    result = api.run(
        "icl_select",
        {
            "bank": "cogs-bank",
            "tests": "phrareco",
            "line": 1,
            "setting": "high_diversity",
            "order": "atom_closer",
            "n": 10,
            "seed": 0,
            "primitive_once": False,
        },
    )
    assert result["test"]["input"] == "The spokesman in the house served Emma the rose ."
    assert len(result["examples"]) == 10 and result["prompt"].endswith("output:")
    shown = json.dumps(result)
    assert "The spokesman in the house served Emma the rose ." in shown
    assert "subject[pp-mod]" in shown
    selection = {"bank": "cogs-bank", "tests": "phrareco", "line": 1}
    with pytest.raises(ApiError, match="reviewer role"):
        api.call("icl_answer", selection, "tiny-icl")
    answer = ApiClient(app.url, "res", PASSWORD).call("icl_answer", selection, "tiny-icl")
    assert answer["correct_answer"] == result["ground_truth"] and answer["prompt"]


def test_a_model_saved_meanwhile_is_offered_when_the_tab_opens(registry_app, browser):
    """Issue 44 §7: like Planning, VQA and Results, the tab's model picker follows the registry without a reload."""
    from backend.inference.registry import ModelSpec
    from backend.inference.service import store_model

    app = registry_app

    page = browser.new_context().new_page()
    browser_login(page, app.url, "res", PASSWORD)
    page.locator('button[data-tab-id="icl"]').click()
    picker = _field(page, "icl-ask-model")
    expect(picker).not_to_have_value("", timeout=30_000)
    chosen = picker.input_value()
    store_model(app.ctx, "cli", ModelSpec("added-later", "random", description="saved in the Models tab"))
    page.locator('button[data-tab-id="models"]').click()
    page.locator('button[data-tab-id="icl"]').click()
    picker.click()
    expect(page.get_by_role("option", name="added-later", exact=True)).to_be_visible(timeout=30_000)
    expect(picker).to_have_value(chosen)  # the person's choice stays
