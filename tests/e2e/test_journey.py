"""A researcher's journey in a real browser (issue 24 §8): add a model in the Models tab -> it is offered in
Planning, VQA and Results at once -> run it on planning (Planning tab) and VQA (Models tab) -> both reach their
leaderboards and the report -> a model whose server is down shows as failed and stays out -> compare two models."""

from __future__ import annotations

import json
import os
import shutil
import socket

import pytest
from e2e_helpers import browser_login
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
PASSWORD = "password1"
WAIT = 120_000  # generous: two cores shared by many developers (not a timing assertion)


@pytest.fixture(scope="module")
def running(served_app):
    return served_app({"boss": "admin"}, password=PASSWORD, demo=True)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tab(page, tab_id: str) -> None:
    page.locator(f'button[data-tab-id="{tab_id}"]').click()


def _offered(page, dropdown: str, name: str, choose: bool = True) -> None:
    page.locator(f"{dropdown} input").click()
    expect(page.get_by_role("option", name=name, exact=True)).to_be_visible(timeout=WAIT)
    if choose:
        page.get_by_role("option", name=name, exact=True).click()
    else:
        page.keyboard.press("Escape")


def _add_with_the_form(page, name: str, backend: str) -> None:
    """The way a person adds a model (issue 44 §11): the form's fields, then Save model."""
    page.locator("#model-form-name input, #model-form-name textarea").first.fill(name)
    page.locator("#model-form-backend input").click()
    page.get_by_role("option", name=backend, exact=True).click()
    page.locator("#model-form-save").click()
    expect(page.locator("#model-edit-message")).to_contain_text(f"Saved {name}", timeout=WAIT)


def _add_as_json(page, entry: dict) -> None:
    """Options the form does not show (retries, timeout) go through its Advanced JSON view."""
    page.get_by_text("Advanced: the entry as JSON").click()
    page.locator("#model-json .cm-content").fill(json.dumps(entry))
    page.locator("#model-save").click()
    expect(page.locator("#model-edit-message")).to_contain_text(f"Saved {entry['name']}", timeout=WAIT)


def _run_from_models_tab(page, benchmark: str, model: str, said: str) -> None:
    page.locator("#run-benchmark input").fill(benchmark)
    page.keyboard.press("Enter")
    page.locator("#run-model input").fill(model)
    page.keyboard.press("Enter")
    page.locator("#run-limit input").fill("0")
    page.locator("#run-button").click()
    expect(page.locator("#run-message")).to_contain_text(said, timeout=WAIT)


def test_a_model_added_in_models_is_run_from_two_tabs_and_reaches_every_leaderboard(browser, running, tmp_path):
    page = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
    browser_login(page, running.url, "boss", PASSWORD)
    _tab(page, "models")
    page.get_by_text("Add, edit or test a model").click()
    _add_with_the_form(page, "journey-rand", "random")
    down = {"base_url": f"http://127.0.0.1:{_closed_port()}/v1", "retries": 0, "timeout_s": 2}
    _add_as_json(page, {"name": "journey-down", "backend": "openai", "path": "m", "options": down})

    # offered at once, without a reload, in Planning, VQA and Results
    _tab(page, "planning")
    _tab(page, "planning-browse")
    _offered(page, "#planning-model", "journey-rand")
    page.locator("#planning-limit input").fill("20")
    page.locator("#planning-run").click()
    expect(page.locator("#planning-run-summary")).to_contain_text("journey-rand", timeout=WAIT)
    _tab(page, "vqa")
    _tab(page, "vqa-models")
    _offered(page, "#vqa-model", "random")  # the second model of the comparison, run from the VQA tab
    page.get_by_role("button", name="Run on all verified items").click()
    expect(page.locator("#vqa-model-answer")).to_contain_text("Run random finished", timeout=WAIT)
    _tab(page, "results")
    _offered(page, "#results-models", "journey-rand", choose=False)

    # VQA from the Models tab (the run that never reached the VQA leaderboard), and the server that is down
    _tab(page, "models")
    _run_from_models_tab(page, "mmcomposition", "journey-rand", "Finished: journey-rand on mmcomposition")
    _run_from_models_tab(page, "mmcomposition", "journey-down", "Failed (15 errors): journey-down")
    expect(page.locator("#runs-table")).to_contain_text("failed (15 errors)")
    page.screenshot(path=str(tmp_path / "models-runs.png"), full_page=True)

    _tab(page, "vqa")
    _tab(page, "vqa-leaderboard")  # filled when it opens: no Refresh
    board = page.locator("#vqa-leaderboard")
    expect(board).to_contain_text("journey-rand", timeout=WAIT)
    expect(board).not_to_contain_text("journey-down")
    compared = page.locator("#vqa-comparison")
    expect(compared).to_contain_text("journey-rand", timeout=WAIT)
    expect(compared).to_contain_text("random")
    expect(compared).not_to_contain_text("journey-down")
    page.screenshot(path=str(tmp_path / "vqa-leaderboard.png"), full_page=True)

    _tab(page, "planning")
    _tab(page, "planning-results")
    expect(page.locator("#planning-leaderboard")).to_contain_text("journey-rand", timeout=WAIT)

    _tab(page, "results")
    _tab(page, "results-report")
    _offered(page, "#results-models", "journey-rand")
    _offered(page, "#results-models", "journey-down")
    page.keyboard.press("Escape")
    page.locator("#results-build").click()
    expect(page.locator("#results-message")).to_contain_text("No results yet: journey-down", timeout=WAIT)
    expect(page.locator("#results-coverage")).to_contain_text("no results yet")
    expect(page.locator("#results-vqa")).to_contain_text("journey-rand")
    expect(page.locator("#results-planning")).to_contain_text("journey-rand")
    expect(page.locator("#results-icl")).to_contain_text("no results yet for these models")  # not bare headers
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    if os.environ.get("JOURNEY_SHOTS"):  # to look at them: JOURNEY_SHOTS=/some/folder
        shutil.copytree(tmp_path, os.environ["JOURNEY_SHOTS"], dirs_exist_ok=True)
