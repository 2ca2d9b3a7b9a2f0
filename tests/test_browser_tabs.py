"""Every tab works on the shipped demo content, in a real browser, for the roles that may see it."""

from __future__ import annotations

import json

import pytest
from e2e_helpers import browser_login, chromium_browser, visit_every_tab

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
