"""axe-core (axe-playwright-python) on the crowd's pages: the login page and the intent-annotation tab must have
no serious or critical violations (issue 13, section 8); so must the VQA answer page (its image) and a reviewer's
pages with content in them (a loaded review item, the dashboard empty and with figures); each in light and in
dark mode (issue 44; the study pages in dark: tests/e2e/test_dark_mode.py). The other tabs are
measured by scripts/accessibility.py (their counts are in the README)."""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe
from browser_helpers import closing_new_contexts
from e2e_helpers import axe_serious as serious
from e2e_helpers import browser_login
from playwright.sync_api import expect
from review_helpers import PASSWORD, add_people, add_sequences, annotate_all, judge_all

from backend.accounts import auth
from backend.campaigns import studies
from backend.review import service as review

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app(served_app):
    return served_app({"ann1": "annotator"}, password="password1", demo=True)


@pytest.fixture
def review_app(served_app, browser):
    """Two sequences annotated by two annotators: two rounds wait for review (a fresh app per test: the test
    reviews one)."""
    with (
        served_app.started(annotators_per_sequence=2, require_full_view=False) as running,
        closing_new_contexts(browser),  # the test's pages close before its app stops
    ):
        database = running.ctx.database
        add_sequences(database, ["S1", "S2"], needed=2)
        add_people(database, annotators=["a1", "a2"], reviewers=["rev"], password=PASSWORD)
        annotate_all(database, running.ctx.settings, ["a1", "a2"])
        yield running


@pytest.fixture(autouse=True)
def _close_windows(browser):
    """The windows a test opened close after it (open pages keep talking to the app)."""
    with closing_new_contexts(browser):
        yield


SCHEMES = pytest.mark.parametrize("scheme", ["light", "dark"])  # the system's preference, which every page follows


@SCHEMES
@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 900}, {"width": 390, "height": 844}])
def test_the_login_page_and_the_annotation_tab_have_no_serious_violations(app, browser, viewport, scheme):
    page = browser.new_context(viewport=viewport, color_scheme=scheme).new_page()
    page.goto(app.url)
    expect(page.get_by_label("User name")).to_be_visible(timeout=30_000)
    assert serious(page) == []
    assert page.title() == "Sign in · CompStudio"
    browser_login(page, app.url, "ann1", "password1")
    expect(page.locator("#intent-task h3")).to_contain_text("DEMO-", timeout=30_000)
    page.wait_for_function("() => !document.querySelector('.pending, .generating')", timeout=30_000)
    assert serious(page) == []
    # and with the server's message beside the fields after a refused submit, and the skip form open
    page.locator("#concrete-intent textarea, #concrete-intent input").fill("The person drinks")
    page.get_by_text("Skip this sequence").click()
    page.locator("#intent-skip").click()
    expect(page.locator("#intent-skip-message")).to_contain_text("say why")
    assert serious(page) == []


@SCHEMES
def test_the_vqa_answer_page_has_no_serious_violations(app, browser, scheme):
    """Gradio draws a shown image inside a button; without alt text that button has no name (critical)."""
    auth.add_user(app.ctx.database, f"ann-vqa-{scheme}", "annotator", "password1")
    page = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme).new_page()
    browser_login(page, app.url, f"ann-vqa-{scheme}", "password1")
    page.locator('button[data-tab-id="vqa"]').click()
    page.locator('button[data-tab-id="vqa-answer"]').click()
    expect(page.locator("#vqa-answer-image img")).to_be_visible(timeout=30_000)
    expect(page.locator("#vqa-answer-image img")).to_have_attribute("alt", "The image the question is about")
    assert serious(page) == []


@SCHEMES
def test_a_reviewers_pages_with_content_have_no_serious_violations(review_app, browser, scheme):
    """A loaded item (the final-intent dropdowns' placeholder text was 2.5:1) and the dashboard: empty (its
    empty table was an unfocusable scroll region, its empty chart an unnamed graphic) and with figures."""
    page = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme).new_page()
    browser_login(page, review_app.url, "rev", PASSWORD)
    page.get_by_role("tab", name="Review", exact=True).click()
    page.locator('button[data-tab-id="review-dashboard"]').click()
    expect(page.locator("#review-totals")).to_contain_text("No sequence round has been reviewed yet", timeout=30_000)
    expect(page.locator("#review-rounds")).to_be_hidden()
    assert serious(page) == []
    page.locator('button[data-tab-id="review-queue"]').click()
    page.locator("#review-next").click()
    expect(page.locator("#review-intent-0")).to_contain_text("S/He", timeout=30_000)
    assert serious(page) == []

    database, settings = review_app.ctx.database, review_app.ctx.settings
    item = review.next_review(database, settings, "rev")["item"]  # the item on the page
    first = item["annotations"][0]["annotation_id"]
    review.submit_review(
        database, settings, "rev", item["sequence_id"], item["round"],
        judge_all(item, [True, False], "vague"), review.FinalChoice(first, first),
    )  # fmt: skip
    page.locator('button[data-tab-id="review-dashboard"]').click()
    page.locator("#review-refresh").click()
    expect(page.locator("#review-rounds")).to_be_visible(timeout=30_000)
    expect(page.locator("#review-totals")).not_to_contain_text("No sequence round")
    assert serious(page) == []


@SCHEMES
def test_the_results_tab_has_no_serious_violations(app, browser, scheme):
    """Its empty outputs' placeholders were named <div>s without a role (aria-prohibited-attr, serious)."""
    auth.add_user(app.ctx.database, f"rev-results-{scheme}", "reviewer", "password1")
    page = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme).new_page()
    browser_login(page, app.url, f"rev-results-{scheme}", "password1")
    page.get_by_role("tab", name="Results", exact=True).click()
    page.wait_for_function("() => !document.querySelector('.pending, .generating')", timeout=30_000)
    assert serious(page) == []


@SCHEMES
def test_the_studies_tab_has_no_serious_violations(served_app, browser, scheme):
    """Before any study it says so in a sentence instead of an empty table of nineteen columns (headers that
    scrolled sideways with nothing a keyboard could reach: scrollable-region-focusable, serious); with a study,
    the table shows it. A fresh app per scheme: the first test's study must not fill the second's tab."""
    with served_app.started({"boss": "admin"}, password="password1") as running:
        page = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme).new_page()
        browser_login(page, running.url, "boss", "password1")
        page.get_by_role("tab", name="Studies", exact=True).click()
        expect(page.locator("#studies-none")).to_contain_text("No study yet", timeout=30_000)
        expect(page.locator("#studies-table")).to_be_hidden()
        page.wait_for_function("() => !document.querySelector('.pending, .generating')", timeout=30_000)
        assert serious(page) == []
        studies.create_study(running.ctx.database, "boss", name=f"Pilot {scheme}", kind="intents",
                             tasks_per_worker=1, completion_code="DONE1", qualification_size=0, places=3)  # fmt: skip
        page.get_by_role("tab", name="Models", exact=True).click()
        page.get_by_role("tab", name="Studies", exact=True).click()  # the tab is filled each time it opens
        expect(page.locator("#studies-table")).to_contain_text(f"Pilot {scheme}", timeout=30_000)
        expect(page.locator("#studies-none")).not_to_contain_text("No study yet")
        page.wait_for_function("() => !document.querySelector('.pending, .generating')", timeout=30_000)
        assert serious(page) == []
        page.context.close()


def test_heading_levels_go_one_by_one_on_every_tab(app, browser):
    """The tabs' own headings start at h3 under the page's h1; a heading for screen readers between them keeps the
    order (axe's heading-order was the one moderate finding left on Review, VQA and In-context, issue 44)."""
    auth.add_user(app.ctx.database, "heading-admin", "admin", "password1")
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    browser_login(page, app.url, "heading-admin", "password1")
    expect(page.locator("#tabs-heading h2")).to_have_text("Your tabs", timeout=30_000)
    assert page.locator("#tabs-heading").bounding_box()["height"] <= 1  # read aloud, not shown
    found = {}
    for label in ("Review", "Compositional VQA", "In-context examples", "Annotate intents", "Results"):
        page.get_by_role("tab", name=label, exact=True).click()
        page.wait_for_function("() => !document.querySelector('.pending, .generating')", timeout=30_000)
        violations = Axe().run(page, options={"runOnly": ["heading-order"]}).response["violations"]
        found[label] = [node["html"][:80] for v in violations for node in v["nodes"]]
    assert found == {label: [] for label in found}
