"""The Admin and Models tabs in a real browser (issue 13 §1, §3, §6): a mistake shows its message beside the
form and leaves the form usable, the counts are true whenever the tab opens, model text renders as written."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest
from e2e_helpers import ApiClient, browser_login
from playwright.sync_api import expect

import app as app_module

BADGE = "Error"  # the text of Gradio's status badge over an output that failed


@pytest.fixture(scope="module")
def running(served_app):
    app = served_app(demo=True)
    app_module.login_help(app.ctx)  # creates the demo accounts, as `python app.py` does
    app.passwords = json.loads((app.ctx.settings.data_dir / "demo-accounts.json").read_text())
    return app


@pytest.fixture
def admin_page(running, browser, tmp_path):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    browser_login(page, running.url, "demo-admin", running.passwords["demo-admin"])
    page.wait_for_selector("#whoami strong", timeout=60_000)
    yield page
    context.close()


def open_tab(page, name: str) -> None:
    page.get_by_role("tab", name=name, exact=True).click()
    page.wait_for_function("() => !document.querySelector('.pending, .generating')", timeout=30_000)


def accounts_shown(page) -> int:
    return int(page.locator("#users-count").inner_text().split()[0])


def no_error_badge(page) -> None:
    expect(page.get_by_text(BADGE, exact=True).filter(visible=True)).to_have_count(0)


def test_admin_account_mistakes_show_beside_the_form_which_stays_usable(admin_page, running, caplog, tmp_path):
    page = admin_page
    open_tab(page, "Admin")
    page.get_by_text("Accounts", exact=True).click()
    expect(page.locator("#users-table")).to_contain_text("demo-annotator")
    name, password = page.get_by_label("User name"), page.get_by_label("Password (8+ characters)")
    message = page.locator("#account-message")
    caplog.set_level(logging.WARNING, logger="compstudio.ui")

    name.fill("demo-annotator")
    password.fill("password123")
    page.get_by_role("button", name="Add account").click()
    expect(message).to_contain_text("user 'demo-annotator' already exists")  # the reply has come
    page.screenshot(path=str(tmp_path / "admin-duplicate.png"), full_page=True)
    no_error_badge(page)
    total = accounts_shown(page)
    assert name.input_value() == "demo-annotator" and password.input_value() == "password123"
    refused = [r for r in caplog.records if "already exists" in r.getMessage()]
    assert len(refused) == 1 and refused[0].exc_info is None

    for typed_name, typed_password, button, expected in (
        ("", "password123", "Add account", "Enter the user name"),
        ("short-pw", "short", "Add account", "at least 8 characters"),
        ("ghost", "", "Set role", "no user named 'ghost'"),
    ):
        name.fill(typed_name)
        password.fill(typed_password)
        page.get_by_role("button", name=button).click()
        expect(message).to_contain_text(expected)
        no_error_badge(page)
        password.click(timeout=2_000)  # nothing covers the person's fields
        assert name.input_value() == typed_name

    name.fill("new-person")  # fix it and resubmit at once
    password.fill("password123")
    page.get_by_role("button", name="Add account").click()
    expect(message).to_contain_text("Added new-person (annotator)")
    expect(page.locator("#users-table")).to_contain_text("new-person")
    expect(page.locator("#users-count")).to_contain_text(f"{total + 1} accounts")
    assert password.input_value() == ""
    page.get_by_label("Role").click()
    page.get_by_role("option", name="reviewer").click()
    page.get_by_role("button", name="Set role").click()
    expect(message).to_contain_text("new-person is now reviewer")
    expect(page.locator("#users-table")).to_contain_text("reviewer")
    assert running.ctx.database.scalar("SELECT role FROM users WHERE username = 'new-person'") == "reviewer"


def test_admin_counts_are_true_whenever_the_tab_opens(admin_page, running):
    page = admin_page
    open_tab(page, "Admin")
    page.get_by_text("Accounts", exact=True).click()
    expect(page.locator("#users-table")).to_contain_text("demo-annotator")
    other = ApiClient(running.url, "demo-admin", running.passwords["demo-admin"])
    other.run("admin_user_add", "added-elsewhere", "annotator", "password123")  # another admin, meanwhile
    other.close()
    open_tab(page, "Models")
    open_tab(page, "Admin")
    expect(page.locator("#users-table")).to_contain_text("added-elsewhere")
    total = running.ctx.database.scalar("SELECT COUNT(*) FROM users")
    expect(page.locator("#users-count")).to_contain_text(f"{total} accounts")


def test_models_mistakes_show_beside_the_form_and_text_renders_as_written(admin_page, running, tmp_path):
    page = admin_page
    open_tab(page, "Models")
    page.get_by_text("Add, edit or test a model").click()
    page.get_by_text("Advanced: the entry as JSON").click()
    editor, message = page.locator(".cm-content"), page.locator("#model-edit-message")
    bad = '{"name": "typo-model", "backend": "tensorflow"}'
    editor.fill(bad)
    expect(editor).to_have_text(bad)  # the editor holds it before Save sends it (a loaded machine lagged here once)
    editor.blur()
    page.locator("#model-save").click()
    expect(message).to_contain_text("unknown backend 'tensorflow'")  # the reply has come
    page.screenshot(path=str(tmp_path / "models-bad-entry.png"), full_page=True)
    no_error_badge(page)
    assert json.loads(editor.inner_text()) == json.loads(bad)  # the entry is kept to be fixed

    page.get_by_label("Model name to delete").fill("no-such-model")
    page.locator("#model-delete").click()
    expect(message).to_contain_text("no model 'no-such-model'")
    no_error_badge(page)

    description = "Embeds with sentence-transformers/all-MiniLM-L6-v2 <b>bold?</b> a_b *c*"
    editor.fill(json.dumps({"name": "my-encoder", "backend": "random", "description": description}))
    page.locator("#model-save").click()
    expect(message).to_contain_text("Saved my-encoder.")
    table = page.locator("#models-table")
    expect(table).to_contain_text(description)
    assert table.locator("b").count() == 0  # escaped: no markup from a registry entry
    expect(page.locator("#models-count")).to_contain_text("models")
    assert "&#" not in page.get_by_role("tabpanel").filter(visible=True).first.inner_text()

    page.locator("#run-benchmark input").fill("vilpact-planning")
    page.keyboard.press("Enter")
    page.locator("#run-model input").fill("no-such-model")
    page.keyboard.press("Enter")
    page.locator("#run-button").click()
    expect(page.locator("#run-message")).to_contain_text("unknown model 'no-such-model'")
    no_error_badge(page)
    assert page.locator("#run-model input").input_value() == "no-such-model"


def test_models_counts_are_true_whenever_the_tab_opens(admin_page, running):
    page = admin_page
    open_tab(page, "Models")
    random_row = page.locator("#models-table [role=row]", has_text="Seeded random baseline")
    expect(random_row).to_contain_text("not loaded")
    other = ApiClient(running.url, "demo-admin", running.passwords["demo-admin"])
    other.call("model_run", "vilpact-planning", "random", 2, False, None)  # a run from a script, meanwhile
    other.close()
    open_tab(page, "Admin")
    open_tab(page, "Models")
    expect(random_row).not_to_contain_text("not loaded")  # loaded now
    expect(random_row).to_contain_text("loaded")
    expect(page.locator("#models-count")).to_contain_text("1 recent run")
    expect(page.locator("#runs-table")).to_contain_text("random")
    expect(page.locator("#models-count")).to_contain_text("loaded (random")


def test_a_model_from_the_form_is_tested_saved_and_its_runs_read_in_words(running, browser, tmp_path):
    """Issue 44 §11: the form adds a served model, Test says what the server serves (warning when it does not serve
    the named model) in words, not JSON; Recent runs shows the score as the paper prints it and the start in the
    person's time zone, with headers in words; a never-used served model is not "loaded"."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from fake_openai_server import FakeOpenAIServer

    shots = Path(os.environ.get("COMPSTUDIO_SCREENSHOTS", tmp_path))
    context = browser.new_context(viewport={"width": 1280, "height": 900}, timezone_id="Asia/Tokyo")
    page = context.new_page()
    browser_login(page, running.url, "demo-admin", running.passwords["demo-admin"])
    page.wait_for_selector("#whoami strong", timeout=60_000)
    other = ApiClient(running.url, "demo-admin", running.passwords["demo-admin"])
    run = other.call("model_run", "vilpact-planning", "random", 9, False, None)
    other.close()
    with FakeOpenAIServer(model="fake-vlm") as server:
        open_tab(page, "Models")
        vllm_row = page.locator("#models-table [role=row]", has_text="vllm-local")
        expect(vllm_row).to_contain_text("served by its server")
        expect(page.locator("#models-table")).not_to_contain_text("true")  # words, not JSON booleans
        page.get_by_text("Add, edit or test a model").click()
        field = lambda elem_id: page.locator(f"#{elem_id} textarea, #{elem_id} input").first  # noqa: E731
        field("model-form-name").fill("my-server")
        field("model-form-path").fill("Qwen/not-served")
        field("model-form-urls").fill(server.base_url)
        field("model-form-concurrency").fill("4")
        page.locator("#model-test").click()
        result = page.locator("#model-test-result")
        expect(result).to_contain_text("does not serve 'Qwen/not-served' (it serves: fake-vlm)", timeout=30_000)
        expect(result).to_contain_text("did not answer")
        expect(result).not_to_contain_text('"serves_this_model"')  # readable text and a table, not a JSON dump
        expect(result.locator("a")).to_have_count(0)  # the URLs are text, not links
        field("model-form-path").fill("fake-vlm")
        page.locator("#model-test").click()
        expect(result).to_contain_text("my-server answered", timeout=30_000)
        expect(result).not_to_contain_text("Warning")
        expect(result.locator("table")).to_contain_text("0.0.fake")  # each replica's server version
        page.screenshot(path=str(shots / "models-form-tested.png"), full_page=True)
        page.locator("#model-form-save").click()
        expect(page.locator("#model-edit-message")).to_contain_text("Saved my-server.")
        expect(page.locator("#models-table [role=row]", has_text="my-server")).to_contain_text("served by its server")
        page.get_by_text("Advanced: the entry as JSON").click()
        assert '"concurrency": 4' in page.locator(".cm-content").inner_text()
        page.locator("#model-form-from input").click()  # start from a registered model: the form and the JSON fill
        page.get_by_role("option", name="vllm-local", exact=True).click()
        expect(field("model-form-urls")).to_have_value("http://127.0.0.1:8000/v1")
        expect(field("model-form-name")).to_have_value("vllm-local")
        expect(page.locator(".cm-content")).to_contain_text('"timeout_s": 60')  # options the form does not show
    saved = running.ctx.models.file_models(running.ctx.settings)["my-server"]
    assert (saved.path, saved.options["base_url"], saved.concurrency) == ("fake-vlm", server.base_url, 4)

    runs = page.locator("#runs-table")
    expect(runs).to_contain_text("Score (%)")
    expect(runs).to_contain_text("Newly computed")
    row = runs.locator("[role=row]", has_text="vilpact-planning").first
    expect(row).to_contain_text(f"{run['score'] * 100:.2f}")
    stored = running.ctx.database.scalar("SELECT started_at FROM eval_runs WHERE id = ?", (run["run_id"],))
    tokyo = datetime.fromisoformat(stored).astimezone(ZoneInfo("Asia/Tokyo")).strftime("%Y-%m-%d %H:%M JST")
    expect(row).to_contain_text(tokyo)
    context.close()
