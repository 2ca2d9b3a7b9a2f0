"""What a reviewer sees on the Review tab (issue 13 §1, §3, §5, §6), in a real browser.

Mistakes show their message next to the button and leave the reviewer's choices in place; counts are right
when the tab opens and after every action; items without a video say so; results render without raw
entities and on a 0–1 axis.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from e2e_helpers import browser_login
from playwright.sync_api import expect
from review_helpers import PASSWORD, add_people, add_sequences, annotate_all

pytestmark = pytest.mark.browser

SHOTS = Path(os.environ.get("COMPSTUDIO_SHOTS", tempfile.gettempdir())) / "review-page"
ERROR_BADGE = ".error"  # Gradio's status tracker marks an output that failed with this class


_serial = itertools.count(1)


@pytest.fixture(scope="module")
def app(served_app):
    """One app for the module; each test gets a queue of its own (``rounds``)."""
    return served_app(annotators_per_sequence=2, require_full_view=False)


@dataclass(frozen=True)
class Rounds:
    """This test's reviewer and its two sequences (``first`` is handed out first)."""

    reviewer: str
    first: str
    second: str


@pytest.fixture
def rounds(app) -> Rounds:
    """Two sequences annotated by two annotators, so two rounds wait for review, with people of this test's own.
    What earlier tests left, whatever their order, is out of the way first, as if finished meanwhile: their
    sequences out of the pool (the dashboard counts only this test's) and their waiting rounds reviewed."""
    serial = next(_serial)
    database = app.ctx.database
    with database.write() as db:
        db.conn.execute("UPDATE tasks SET status = 'discarded' WHERE kind = 'intent'")
        db.conn.execute("UPDATE tasks SET status = 'complete' WHERE kind = 'review' AND status = 'open'")
    annotators = [f"t{serial}a1", f"t{serial}a2"]
    mine = Rounds(reviewer=f"t{serial}rev", first=f"S1-{serial}", second=f"S2-{serial}")
    add_people(database, annotators=annotators, reviewers=[mine.reviewer], password=PASSWORD)
    add_sequences(database, [mine.first, mine.second], needed=2)
    annotate_all(database, app.ctx.settings, annotators)
    return mine


@pytest.fixture
def page(app, rounds, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    browser_login(page, app.url, rounds.reviewer, PASSWORD)
    page.get_by_role("tab", name="Review").click()
    yield page
    context.close()


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def no_error_badges(page) -> None:
    expect(page.locator(f"#review-item-form {ERROR_BADGE}")).to_have_count(0)


def choose(page, slot: int, verdict: str) -> None:
    page.locator(f"#review-verdict-{slot}").get_by_label(verdict, exact=True).check()


def test_counts_are_right_when_the_tab_opens_and_after_a_submit(page, rounds):
    # the two complete rounds are waiting before anybody pressed Next item
    expect(page.locator("#review-queue-status")).to_contain_text("Waiting for review: 2", timeout=20_000)
    page.locator("#review-next").click()
    expect(page.locator("#review-item h3")).to_contain_text(f"Sequence {rounds.first}", timeout=20_000)
    choose(page, 0, "not reasonable")
    choose(page, 1, "not reasonable")
    page.locator("#review-submit").click()
    expect(page.locator("#review-queue-status")).to_contain_text("Saved", timeout=20_000)
    expect(page.locator("#review-queue-status")).to_contain_text("Waiting for review: 1")
    expect(page.locator("#review-item h3")).to_contain_text(f"Sequence {rounds.second}")
    choose(page, 0, "not reasonable")
    choose(page, 1, "not reasonable")
    page.locator("#review-submit").click()
    status = page.locator("#review-queue-status")
    expect(status).to_contain_text("Waiting for review: 0", timeout=20_000)
    expect(page.locator("#review-item")).to_contain_text("Nothing left to review")
    expect(page.locator("#review-item-form")).to_be_hidden()
    shot(page, "queue-empty")


def test_submit_without_verdicts_says_why_and_keeps_the_choices(page, rounds, caplog):
    page.locator("#review-next").click()
    expect(page.locator("#review-item h3")).to_contain_text(f"Sequence {rounds.first}", timeout=20_000)
    # no video for these sequences: no video box, the timeline flagged, and the item says why
    expect(page.locator("#review-video video")).to_have_count(0)
    expect(page.locator("#review-video .csp-missing")).to_contain_text("No video file for this sequence")
    expect(page.locator("#review-video .csp-action").first).to_be_visible()
    expect(page.locator("#review-item")).to_contain_text("No video file for this sequence")
    choose(page, 0, "not reasonable")
    page.locator("#review-comment-0 textarea").fill("too vague")
    page.locator("#review-note textarea").fill("a general note")
    with caplog.at_level(logging.INFO):
        page.locator("#review-submit").click()
        expect(page.locator("#review-message")).to_contain_text(
            "Judge every annotation: reasonable or not reasonable.", timeout=5_000
        )
    shot(page, "submit-without-verdicts")
    no_error_badges(page)
    expect(page.locator("#review-verdict-0").get_by_label("not reasonable", exact=True)).to_be_checked()
    expect(page.locator("#review-comment-0 textarea")).to_have_value("too vague")
    expect(page.locator("#review-note textarea")).to_have_value("a general note")
    assert "Traceback" not in caplog.text
    # fix it and submit at once
    choose(page, 1, "not reasonable")
    page.locator("#review-submit").click()
    expect(page.locator("#review-queue-status")).to_contain_text(
        f"Saved: {rounds.first} round 1 returned", timeout=20_000
    )
    expect(page.locator("#review-message")).to_have_text("")


def test_skip_without_reason_says_why(page, rounds):
    page.locator("#review-next").click()
    expect(page.locator("#review-item h3")).to_contain_text(f"Sequence {rounds.first}", timeout=20_000)
    choose(page, 0, "reasonable")
    page.get_by_text("Skip this item").click()
    page.locator("#review-skip").click()
    expect(page.locator("#review-skip-message")).to_contain_text("say why you skip this task", timeout=5_000)
    shot(page, "skip-without-reason")
    no_error_badges(page)
    expect(page.locator("#review-verdict-0").get_by_label("reasonable", exact=True)).to_be_checked()
    page.locator("#review-skip-reason textarea").fill("I know this annotator")
    page.locator("#review-skip").click()
    expect(page.locator("#review-item h3")).to_contain_text(f"Sequence {rounds.second}", timeout=20_000)
    expect(page.locator("#review-skip-message")).to_have_text("")


def test_with_nothing_loaded_the_page_offers_only_next_item(page, rounds):
    """Issue 44 §4: before an item is taken there is nothing to submit, so the landing shows the queue and
    "Next item" only: no Submit review button, no empty final-intents form."""
    expect(page.locator("#review-queue-status")).to_contain_text("Waiting for review: 2", timeout=20_000)
    expect(page.get_by_role("button", name="Next item")).to_be_visible()
    expect(page.locator("#review-item")).to_contain_text("Press Next item to take the next sequence round.")
    expect(page.get_by_role("button", name="Submit review")).to_have_count(0)
    expect(page.locator("#review-item-form")).to_be_hidden()
    expect(page.get_by_label("Final concrete intent from").filter(visible=True)).to_have_count(0)
    expect(page.get_by_label("Final high-level intent from").filter(visible=True)).to_have_count(0)
    no_error_badges(page)
    shot(page, "nothing-loaded")
    page.get_by_role("button", name="Next item").click()  # the form comes with the item
    expect(page.locator("#review-item h3")).to_contain_text(f"Sequence {rounds.first}", timeout=20_000)
    expect(page.get_by_role("button", name="Submit review")).to_be_visible()
    expect(page.get_by_label("Final concrete intent from").filter(visible=True)).to_have_count(1)


def test_compare_without_a_file_says_upload_and_results_have_no_raw_entities(page, tmp_path):
    page.get_by_role("tab", name="Agreement").click()
    page.locator("#compare-run").click()
    result = page.locator("#compare-result")
    expect(result).to_contain_text("Upload a CSV with two columns of paired scores.", timeout=5_000)
    expect(page.locator(f"#compare-result {ERROR_BADGE}")).to_have_count(0)
    shot(page, "compare-without-file")
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("a,b\n5,1\n6,1\n7,1\n8,1\n9,1\n10,1\n")
    page.locator("#compare-upload input[type=file]").set_input_files(str(pairs))
    # the file's name is drawn as two spans ("pairs", ".csv"): its table cell is named "pairs.csv"
    expect(page.locator("#compare-upload").get_by_role("cell", name="pairs.csv")).to_be_visible(timeout=20_000)
    page.locator("#compare-run").click()
    expect(result).to_contain_text("the first group's scores are significantly higher", timeout=20_000)
    assert "&#" not in result.inner_text() and "&amp;" not in result.inner_text()


def test_dashboard_share_axis_spans_zero_to_one(page, rounds):
    page.locator("#review-next").click()
    expect(page.locator("#review-item h3")).to_contain_text(f"Sequence {rounds.first}", timeout=20_000)
    choose(page, 0, "not reasonable")
    choose(page, 1, "not reasonable")
    page.locator("#review-submit").click()
    expect(page.locator("#review-queue-status")).to_contain_text("Saved", timeout=20_000)
    page.get_by_role("tab", name="Dashboard").click()
    page.locator("#review-refresh").click()
    expect(page.locator("#review-totals")).to_contain_text("awaiting review: 1", timeout=20_000)
    plot = page.locator("#review-rounds-plot")
    expect(plot.locator("canvas, svg").first).to_be_visible(timeout=20_000)
    shot(page, "dashboard")
    # the chart's y scale as the page received it: every share plot spans 0..1 whatever the data
    config = json.loads(page.evaluate("() => JSON.stringify(window.gradio_config)"))
    plots = {
        c["props"].get("elem_id"): c["props"]
        for c in config["components"]
        if c["type"] == "plot" or c["props"].get("elem_id") in {"review-rounds-plot", "review-annotators-plot"}
    }
    for elem_id in ("review-rounds-plot", "review-annotators-plot"):
        assert plots[elem_id]["y_lim"] == [0, 1], elem_id


def test_inspection_item_without_video_says_why(page):
    page.get_by_role("tab", name="Inspection").click()
    page.locator("#inspection-start").click()
    expect(page.locator("#inspection-item")).to_contain_text("Sample item 1", timeout=20_000)
    expect(page.locator("#inspection-item")).to_contain_text("No video file for this sequence")
    expect(page.locator("#inspection-video video")).to_have_count(0)  # the timeline still shows, flagged
    expect(page.locator("#inspection-video .csp-missing")).to_contain_text("No video file for this sequence")
    expect(page.locator("#inspection-video .csp-action").first).to_be_visible()
    shot(page, "inspection-no-video")


def test_axe_serious_and_critical_on_the_review_tab(page, rounds):
    from axe_playwright_python.sync_playwright import Axe

    expect(page.locator("#review-queue-status")).to_contain_text("Waiting for review", timeout=20_000)
    page.locator("#review-next").click()
    expect(page.locator("#review-item h3")).to_contain_text(f"Sequence {rounds.first}", timeout=20_000)
    results = Axe().run(page)
    serious = [v for v in results.response["violations"] if v["impact"] in {"serious", "critical"}]
    report = SHOTS / "axe-review.json"
    SHOTS.mkdir(parents=True, exist_ok=True)
    report.write_text(json.dumps(serious, indent=1))
    counts = {v["id"]: len(v["nodes"]) for v in serious}
    print("axe serious/critical on the review queue:", counts)
    # nothing serious but the theme's label contrast (Gradio's default theme, app-wide; counts in the README)
    assert set(counts) <= {"color-contrast"}, counts
