"""Every tab works on the shipped demo content, in a real browser, for the roles that may see it."""

from __future__ import annotations

import json

import pytest
from e2e_helpers import IDENTITY_PASSWORD, browser_login, chromium_browser, visit_every_tab

import app as app_module

pytestmark = pytest.mark.browser


def test_demo_admin_visits_every_tab_and_an_annotator_sees_only_annotation(served_app):
    with served_app.started(demo=True) as running, chromium_browser() as browser:
        app_module.login_help(running.ctx)  # creates the demo accounts, as `python app.py` does
        passwords = json.loads((running.ctx.settings.data_dir / "demo-accounts.json").read_text())
        admin_page = browser.new_context().new_page()
        browser_login(admin_page, running.url, "demo-admin", passwords["demo-admin"])
        labels = visit_every_tab(admin_page)
        assert labels == [
            "Annotate intents",
            "Review",
            "Planning",
            "Compositional VQA",
            "In-context examples",
            "Results",
            "Models",
            "Admin",
            "Studies",
        ]
        annotator_page = browser.new_context().new_page()
        browser_login(annotator_page, running.url, "demo-annotator", passwords["demo-annotator"])
        seen = visit_every_tab(annotator_page)
        assert "Admin" not in seen and "Models" not in seen and "Review" not in seen and "Studies" not in seen
        assert "Annotate intents" in seen


def test_a_tab_is_built_on_its_first_visit_filled_and_keeps_what_was_typed(served_app, browser):
    """Issue 44 (sign-in speed): the page sent at sign-in holds its landing tab only; a tab opened for the first
    time is built then, filled as the page load would have filled it, and built once (what was typed survives
    leaving it and coming back)."""
    from playwright.sync_api import expect

    running = served_app({"lazy-admin": "admin"}, demo=True)
    page = browser.new_context().new_page()
    browser_login(page, running.url, "lazy-admin", IDENTITY_PASSWORD)
    page.wait_for_selector("#whoami strong", timeout=60_000)
    sent = page.evaluate("() => window.gradio_config.components.map(c => c.props.elem_id).filter(Boolean)")
    assert "app-header" in sent and "icl_query" not in sent and "run-benchmark" not in sent
    page.get_by_role("tab", name="Models", exact=True).click()
    # filled on the first visit: the registry's table (the tab's select event, run once the render is drawn)
    expect(page.locator("#run-benchmark")).to_be_visible(timeout=30_000)
    expect(page.get_by_role("tabpanel").filter(visible=True).first).to_contain_text("nsplan-lite", timeout=30_000)
    page.get_by_role("tab", name="In-context examples", exact=True).click()
    query = page.locator("#icl_query textarea, #icl_query input").first
    query.fill("jump twice")
    page.get_by_role("tab", name="Planning", exact=True).click()
    # the planning tab's part of the page load ran on its first visit: the person's counts
    expect(page.get_by_text("questions left for you")).to_be_visible(timeout=30_000)
    page.get_by_role("tab", name="In-context examples", exact=True).click()
    expect(query).to_have_value("jump twice")  # not built again
    page.context.close()
