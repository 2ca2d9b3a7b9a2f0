"""What an annotator sees on "Annotate intents" (issue 13), in a real browser: refused input leaves the
person's text usable with the server's message beside it, counts stay true, and the page works at phone width."""

from __future__ import annotations

import itertools
import logging

import pytest
from browser_helpers import CONCRETE, HIGH_LEVEL, closing_new_contexts, current_sequence
from e2e_helpers import browser_login
from playwright.sync_api import expect

from backend.accounts import auth

PASSWORD = "password1"
_serial = itertools.count(1)


@pytest.fixture(scope="module")
def app(served_app):
    """Demo content without the watch-to-the-end rule, so the flows need no video playback. One app for the
    module: each test signs in as an annotator of its own (``annotator``), and each demo sequence wants more
    annotators than the module's tests, so no test fills a sequence another test counts on (any order)."""
    return served_app(demo=True, require_full_view=False, annotators_per_sequence=10)


@pytest.fixture
def watching_app(served_app, browser):
    """Demo content with the default rule: submitting needs the video watched to its end."""
    with (
        served_app.started({"ann1": "annotator"}, password=PASSWORD, demo=True) as running,
        closing_new_contexts(browser),
    ):
        yield running


@pytest.fixture
def annotator(app, browser):
    """A fresh annotator account on the shared app; the browser windows the test opened are closed after it."""
    name = f"ann{next(_serial)}"
    auth.add_user(app.ctx.database, name, "annotator", PASSWORD)
    with closing_new_contexts(browser):
        yield name


def open_tab(browser, app, user: str = "ann1", viewport: dict | None = None):
    page = browser.new_context(viewport=viewport or {"width": 1280, "height": 900}).new_page()
    browser_login(page, app.url, user, PASSWORD)
    expect(page.locator("#intent-task h3")).to_contain_text("DEMO-", timeout=30_000)
    return page


def first_action(page) -> str:
    """The first action's name as the player's timeline shows it (components/player.py)."""
    return page.locator("#intent-video .csp-action").first.inner_text().strip()


def assert_usable(page, selector: str, text: str) -> None:
    """The field still holds what was typed and takes a click at once (no status badge over it)."""
    field = page.locator(selector)
    expect(field).to_have_value(text)
    field.click(timeout=3_000)  # Playwright refuses when another element would receive the click


def test_refused_intents_show_the_message_beside_the_kept_text(app, annotator, browser, caplog, capfd):
    caplog.set_level(logging.WARNING, logger="compstudio")
    page = open_tab(browser, app, annotator)
    sequence = current_sequence(page)
    message = page.locator("#intent-message")
    cases = [  # (concrete, high-level, what the server says)
        ("The person drinks water", "S/He is thirsty", "must start with"),
        ("S/He wants to drink a glass of water", f"S/He is {first_action(page).lower()}", "copies the action"),
        ("S/He wants to drink a glass of water", "S/He wants to drink a glass of water", "must differ"),
    ]
    for concrete, high_level, said in cases:
        page.locator(CONCRETE).fill(concrete)
        page.locator(HIGH_LEVEL).fill(high_level)
        page.locator("#intent-submit").click()
        expect(message).to_contain_text(said)
        expect(page.locator("[data-testid='toast-body']").filter(has_text=said).first).to_be_visible()  # a toast
        assert_usable(page, CONCRETE, concrete)
        assert_usable(page, HIGH_LEVEL, high_level)
        expect(page.locator("#intent-video video")).to_be_visible()
        assert current_sequence(page) == sequence
    page.locator(HIGH_LEVEL).fill("S/He is thirsty")  # fixed: resubmit at once
    page.locator("#intent-submit").click()
    expect(page.locator("#intent-last-saved")).to_contain_text(f"Saved for {sequence}")
    expect(message).to_have_text("")
    refusals = [r for r in caplog.records if r.getMessage().startswith(f"intent submit refused for {annotator}:")]
    assert len(refusals) == 3 and all(r.exc_info is None for r in refusals)
    assert "Traceback" not in capfd.readouterr().err


def test_skip_without_a_reason_says_why_and_keeps_the_text(app, annotator, browser):
    page = open_tab(browser, app, annotator)
    sequence = current_sequence(page)
    page.locator(CONCRETE).fill("S/He wants to keep this text")
    page.get_by_text("Skip this sequence").click()
    page.locator("#intent-skip").click()
    expect(page.locator("#intent-skip-message")).to_contain_text("say why you skip this task")
    assert_usable(page, CONCRETE, "S/He wants to keep this text")
    reason = "#intent-skip-reason textarea, #intent-skip-reason input"
    page.locator(reason).fill("the video does not play")
    page.locator("#intent-skip").click()
    expect(page.locator("#intent-task h3")).not_to_contain_text(sequence)
    expect(page.locator("#intent-skip-message")).to_have_text("")
    expect(page.locator("#intent-progress")).to_contain_text("sequences left for you: 4")


def test_counts_stay_true_and_the_done_page_shows_no_empty_form(app, annotator, browser):
    page = open_tab(browser, app, annotator)
    progress = page.locator("#intent-progress")
    expect(progress).to_contain_text("sequences left for you: 5")
    for done in range(1, 6):
        sequence = current_sequence(page)
        page.locator(CONCRETE).fill("She wants to get something done today")
        page.locator(HIGH_LEVEL).fill("He is busy with the day")  # She/He are accepted forms
        page.locator("#intent-submit").click()
        expect(page.locator("#intent-last-saved")).to_contain_text(f"Saved for {sequence}")
        expect(progress).to_contain_text(f"mine in total: {done}")
        expect(progress).to_contain_text(f"sequences left for you: {5 - done}")
        expect(progress).to_contain_text("5 more still open for other annotators" if done == 5 else "more still open")
    expect(page.locator("#intent-task")).to_contain_text("Nothing left for you to annotate")
    for hidden in ("#intent-video", "#concrete-intent", "#high-level-intent", "#intent-submit", "#intent-skip-box"):
        expect(page.locator(hidden)).to_be_hidden()
    page.reload()  # and when the tab opens
    expect(progress).to_contain_text("sequences left for you: 0", timeout=30_000)


def test_the_instructions_list_exactly_the_forms_the_checker_accepts(app, annotator, browser):
    from backend.intents.rules import SUBJECTS, VERBS, parse_intent

    page = open_tab(browser, app, annotator)
    page.locator("#intent-instructions-box").get_by_text("Instructions").click()  # folded under the work
    instructions = page.locator("#intent-instructions")
    for subject in SUBJECTS:
        for verb in VERBS:
            expect(instructions).to_contain_text(f"“{subject} {verb} …”")
            assert parse_intent(f"{subject} {verb} hungry") is not None
    sequence = current_sequence(page)
    page.locator(CONCRETE).fill("He wants to drink a glass of water")
    page.locator(HIGH_LEVEL).fill("She is thirsty")
    page.locator("#intent-submit").click()
    expect(page.locator("#intent-last-saved")).to_contain_text(f"Saved for {sequence}")


def test_ctrl_enter_before_the_video_was_watched_says_why(watching_app, browser):
    page = open_tab(browser, watching_app)
    page.locator(CONCRETE).fill("S/He wants to drink a glass of water")
    page.locator(HIGH_LEVEL).fill("S/He is thirsty")
    page.locator(HIGH_LEVEL).press("Control+Enter")
    expect(page.locator("#intent-message")).to_contain_text("Watched 0% of the video: play at least 95%")
    assert_usable(page, HIGH_LEVEL, "S/He is thirsty")
    assert watching_app.ctx.database.scalar("SELECT count(*) FROM annotations WHERE source = 'live'") == 0


def test_a_repeated_submit_with_other_text_says_the_first_was_kept(app, annotator, browser):
    # two tabs, one account, one sequence
    first, second = open_tab(browser, app, annotator), open_tab(browser, app, annotator)
    sequence = current_sequence(first)
    assert current_sequence(second) == sequence
    first.locator(CONCRETE).fill("S/He wants to drink a glass of water")
    first.locator(HIGH_LEVEL).fill("S/He is thirsty")
    first.locator("#intent-submit").click()
    expect(first.locator("#intent-last-saved")).to_contain_text(f"Saved for {sequence}")
    second.locator(CONCRETE).fill("S/He wants to wash the dishes")
    second.locator(HIGH_LEVEL).fill("S/He is tidy")
    second.locator("#intent-submit").click()
    expect(second.locator("#intent-message")).to_contain_text(
        f"You had already submitted {sequence}; your first text was kept"
    )
    expect(second.locator("#intent-last-saved")).to_contain_text("drink a glass of water")
    stored = app.ctx.database.query(
        "SELECT concrete_intent FROM annotations WHERE sequence_id = ? AND annotator = ? AND source = 'live'",
        (sequence, annotator),
    )
    assert [row["concrete_intent"] for row in stored] == ["S/He wants to drink a glass of water"]


def test_the_tab_is_usable_at_phone_width(app, annotator, browser, tmp_path):
    page = open_tab(browser, app, annotator, viewport={"width": 390, "height": 844})
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390  # no sideways scrolling
    words_split = page.evaluate("""() => {  // no word of a visible heading is broken across lines
        const split = [];
        for (const heading of document.querySelectorAll('h1, h2, h3')) {
            if (!heading.offsetParent) continue;
            const walker = document.createTreeWalker(heading, NodeFilter.SHOW_TEXT);
            for (let text = walker.nextNode(); text; text = walker.nextNode()) {
                for (const match of text.textContent.matchAll(/[^\\s\\/·–-]+/g)) {
                    const range = document.createRange();
                    range.setStart(text, match.index); range.setEnd(text, match.index + match[0].length);
                    if (range.getClientRects().length > 1) split.push(match[0]);
                }
            }
        }
        return split;
    }""")
    assert words_split == []
    page.locator("#intent-video video").scroll_into_view_if_needed()
    expect(page.locator("#intent-video video")).to_be_in_viewport()
    page.screenshot(path=str(tmp_path / "annotate-intents-phone.png"), full_page=True)
    page.locator(CONCRETE).fill("S/He wants to drink a glass of water")
    page.locator(HIGH_LEVEL).fill("S/He is thirsty")
    expect(page.locator("#intent-submit")).to_be_in_viewport()
    page.screenshot(path=str(tmp_path / "annotate-intents-phone-typed.png"))
    page.locator("#intent-submit").click()
    expect(page.locator("#intent-last-saved")).to_contain_text("Saved for")
