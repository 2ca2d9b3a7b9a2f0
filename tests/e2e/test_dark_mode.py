"""Dark mode and what a person sees around the work (issue 44 §6, §13): the sign-in and study pages follow
``?__theme=`` and the system's preference as the Gradio pages do; the player's speed menu and "Watched N%" are
readable in dark (WCAG AA, 4.5:1); axe-core finds nothing serious or critical on the sign-in, study and player
pages in dark; toasts no longer pile up over the header's Log out. Screenshots go to $COMPSTUDIO_SHOTS."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from e2e_helpers import axe_serious as serious
from e2e_helpers import browser_login
from playwright.sync_api import expect

from backend.campaigns import links, studies

pytestmark = pytest.mark.browser
PASSWORD = "password1"
SHOTS = Path(os.environ.get("COMPSTUDIO_SHOTS", tempfile.gettempdir())) / "dark"
PID = "5f00aa11bb22cc33dd000001"

#: the contrast ratio of an element's text against the first opaque background behind it (WCAG's formula)
CONTRAST = """(e) => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  let back = null;
  for (let n = e; n && !back; n = n.parentElement) {
    const c = rgb(getComputedStyle(n).backgroundColor);
    if (c.length >= 3 && (c.length < 4 || c[3] > 0.9)) back = c;
  }
  back = back || [255, 255, 255];
  const [a, b] = [lum(rgb(getComputedStyle(e).color)), lum(back)];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""
DARK_PAGE = "() => { const c = getComputedStyle(document.body).backgroundColor.match(/\\d+/g).map(Number); return c[0] + c[1] + c[2] < 150; }"


@pytest.fixture(scope="module")
def app(served_app):
    return served_app({"ann1": "annotator", "ann2": "annotator", "boss": "admin"}, password=PASSWORD, demo=True)


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


@pytest.mark.parametrize(
    ("system", "query", "dark"),
    [("light", "?__theme=dark", True), ("dark", "", True), ("dark", "?__theme=light", False), ("light", "", False)],
)
def test_the_sign_in_page_follows_the_theme_asked_for_and_the_system(app, browser, system, query, dark):
    page = browser.new_context(viewport={"width": 390, "height": 844}, color_scheme=system).new_page()
    page.goto(f"{app.url}/login{query}")
    expect(page.get_by_label("User name")).to_be_visible(timeout=30_000)
    assert page.evaluate(DARK_PAGE) is dark
    assert serious(page) == []
    shot(page, f"login-{system}{query.replace('?__theme=', '-asked-')}")
    page.context.close()


def test_a_study_page_in_dark_is_dark_and_readable(app, browser):
    study = studies.create_study(app.ctx.database, "boss", name="Dark pilot", kind="intents", tasks_per_worker=1,
                                 completion_code="DONE1", qualification_size=0, places=3)  # fmt: skip
    link = links.worker_link(app.ctx.database, study, app.url, PID)
    for width, height in ((1280, 900), (390, 844)):
        page = browser.new_context(viewport={"width": width, "height": height}, color_scheme="dark").new_page()
        page.goto(link)
        expect(page.locator("#study-page")).to_be_visible(timeout=30_000)
        assert page.evaluate(DARK_PAGE)
        assert serious(page) == []
        shot(page, f"study-dark-{width}")
        page.context.close()


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 900}, {"width": 390, "height": 844}])
def test_the_player_in_dark_reads_at_4_5_to_1_and_axe_finds_nothing(app, browser, viewport):
    page = browser.new_context(viewport=viewport, color_scheme="dark").new_page()
    browser_login(page, app.url, "ann1", PASSWORD)
    expect(page.locator("#intent-video video")).to_be_visible(timeout=30_000)
    assert page.evaluate("() => document.body.classList.contains('dark')")  # Gradio follows the system
    for selector in ("#intent-video .csp-speed", "#intent-video .csp-watched", "#intent-video .csp-need"):
        ratio = page.locator(selector).evaluate(CONTRAST)
        assert ratio >= 4.5, (selector, ratio)
    options = page.locator("#intent-video .csp-speed option").evaluate_all(f"els => els.map(e => ({CONTRAST})(e))")
    assert min(options) >= 4.5, options
    page.wait_for_function("() => !document.querySelector('.pending, .generating')", timeout=30_000)
    assert serious(page) == []
    shot(page, f"player-dark-{viewport['width']}")
    page.context.close()


def test_toasts_do_not_pile_up_over_log_out(app, browser):
    """Four refused submits make four warnings: the toast shows the newest (its title counts them) instead of
    growing down the page, and it does not cover the header's Log out."""
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    browser_login(page, app.url, "ann2", PASSWORD)
    expect(page.locator("#intent-video video")).to_be_visible(timeout=30_000)
    page.locator("#concrete-intent textarea, #concrete-intent input").fill("x")
    texts = '[data-testid="toast-text"]'  # Gradio gathers toasts of one kind into one, a message each
    for made in range(1, 5):
        page.locator("#intent-submit").click()
        page.wait_for_function(f"() => document.querySelectorAll('{texts}').length >= {made}", timeout=30_000)
    assert page.locator(texts).filter(visible=True).count() == 1  # the newest; the title counts them: (4)
    expect(page.locator(".toast-title").first).to_contain_text("(4)")
    page.evaluate("() => window.scrollTo(0, 0)")
    hit = """() => { const r = document.querySelector('#logout').getBoundingClientRect();
        const e = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2); return !!(e && e.closest('#logout')); }"""
    assert page.evaluate(hit)  # Log out is what a click there reaches
    shot(page, "toasts")
    page.context.close()
