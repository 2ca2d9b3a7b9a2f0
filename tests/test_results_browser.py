"""A real browser on the Results tab (issue 14, parts 5 and 6; issue 18's A.4 charts): a reviewer builds the
report of a model run for real, sees its tables and charts and downloads it; a mistake (no model chosen,
one grid value) is said beside the button; a grid runs; the VQA leaderboard draws the below-chance charts."""

from __future__ import annotations

import zipfile

import pytest
from e2e_helpers import ApiClient, ApiError, browser_login
from playwright.sync_api import expect

from backend.accounts import auth

PASSWORD = "password1"
WAIT = 60_000  # generous: two cores shared by many developers (not a timing assertion)


@pytest.fixture(scope="module")
def running(served_app):
    from backend.icl.evaluation import evaluate_by_category
    from backend.inference.runner import run_eval
    from backend.vqa.models import run_model

    app = served_app({"boss": "admin"}, password=PASSWORD, demo=True)
    ctx = app.ctx
    for model in ("random", "bigram-prior"):
        run_eval(ctx, "vilpact-planning", model, limit=30, load_options={"mode": "text"})
    run_model(ctx, "boss", "random")
    run_model(ctx, "boss", "random", blind=True)
    evaluate_by_category(ctx, "random", {"n": 2}, limit=4)
    return app


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    return tmp_path_factory.mktemp("screenshots")


def _open(browser, running, subtab: str):
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    browser_login(page, running.url, "boss", PASSWORD)
    page.locator('button[data-tab-id="results"]').click()
    page.locator(f'button[data-tab-id="{subtab}"]').click()
    return page


def _choose(page, dropdown: str, name: str) -> None:
    page.locator(f"{dropdown} input").click()
    page.get_by_role("option", name=name, exact=True).click()


def test_build_and_download_the_report(browser, running, shots, tmp_path):
    page = _open(browser, running, "results-report")
    page.locator("#results-build").click()
    expect(page.locator("#results-message")).to_contain_text("choose at least one model", timeout=WAIT)
    expect(page.locator("#results-download")).to_be_hidden()
    page.screenshot(path=str(shots / "results-no-model.png"))

    _choose(page, "#results-models", "random")
    page.locator("#results-build").click()
    expect(page.locator("#results-message")).to_contain_text("Report built", timeout=WAIT)
    expect(page.locator("#results-planning")).to_contain_text("bigram-prior")
    expect(page.locator("#results-vqa")).to_contain_text("Random choice")
    expect(page.locator("#results-icl")).to_contain_text("full_similarity")
    expect(page.locator("#results-charts svg")).to_have_count(5)  # planning, VQA, two A.4, in-context
    with page.expect_download(timeout=WAIT) as info:
        page.locator("#results-download").click()
    path = tmp_path / "report.zip"
    info.value.save_as(path)
    with zipfile.ZipFile(path) as archive:
        assert "report.md" in archive.namelist() and "plots/vqa_categories.svg" in archive.namelist()
        assert "| random [blind] |" in archive.read("report.md").decode()
    page.screenshot(path=str(shots / "results.png"), full_page=True)


def test_run_a_grid_and_refuse_a_single_value(browser, running, shots):
    page = _open(browser, running, "results-grid")
    _choose(page, "#grid-model", "random")
    page.locator("#grid-values textarea, #grid-values input").first.fill("frames")
    page.locator("#grid-run").click()
    expect(page.locator("#grid-message")).to_contain_text("at least two different values", timeout=WAIT)
    page.locator("#grid-values textarea, #grid-values input").first.fill("frames,text")
    page.locator("#grid-run").click()
    expect(page.locator("#grid-message")).to_contain_text("Grid of 2 values", timeout=WAIT)
    expect(page.locator("#grid-table")).to_contain_text("input=text")
    expect(page.locator("#grid-pairs")).to_contain_text("input=frames")
    expect(page.locator("#grid-chart svg")).to_have_count(1)
    page.screenshot(path=str(shots / "results-grid.png"), full_page=True)


def test_vqa_leaderboard_draws_the_below_chance_charts(browser, running, shots):
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    browser_login(page, running.url, "boss", PASSWORD)
    page.locator('button[data-tab-id="vqa"]').click()
    page.locator('button[data-tab-id="vqa-leaderboard"]').click()
    page.get_by_text("Questions where models score below chance").click()
    page.get_by_role("button", name="Analyse").click()
    charts = page.locator("#vqa-below-chance-charts svg")
    expect(charts).to_have_count(2, timeout=WAIT)
    expect(page.locator("#vqa-below-chance-charts rect.bar").first).to_be_visible()
    expect(page.locator("#vqa-below-chance-download")).to_be_visible()
    page.locator("#vqa-below-chance-charts").screenshot(path=str(shots / "vqa-below-chance.png"))


def test_named_endpoints_check_the_role_and_say_what_is_wrong(running):
    auth.add_user(running.ctx.database, "ann", "annotator", PASSWORD)
    boss = ApiClient(running.url, "boss", PASSWORD)
    report = boss.call("results_report", ["random"])
    assert "random" in report["planning"]["runs"] and report["tables"]["vqa"]["rows"][0]["run"] == "Random choice"
    with pytest.raises(ApiError, match="choose at least one model"):
        boss.call("results_report", [])
    with pytest.raises(ApiError, match="reviewer role"):
        ApiClient(running.url, "ann", PASSWORD).call("results_report", ["random"])
    grid = boss.call("results_grid", "random", "vqa", "input", "frames,text", 5)
    assert grid["comparison"]["common_items"] == 5
