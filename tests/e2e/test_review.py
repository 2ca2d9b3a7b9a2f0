"""End to end: scripted annotators over the HTTP API, a reviewer in a real browser, three rounds."""

from __future__ import annotations

import re

import pytest
from e2e_helpers import ApiClient, ApiError, browser_login, chromium_browser
from playwright.sync_api import expect
from review_helpers import INTENTS, PASSWORD, add_people, add_sequences, annotate_all

pytestmark = pytest.mark.browser

ROUNDS = {1: ["a1", "a2"], 2: ["b1", "b2"], 3: ["c1", "c2"]}
# What the reviewer decides, per round and sequence (True = reasonable), in annotation order.
DECISIONS = {
    1: {"S1": [True, False], "S2": [False, False], "S3": [False, False]},
    2: {"S2": [False, True], "S3": [False, False]},
    3: {"S3": [False, False]},
}


@pytest.fixture
def app(served_app):
    with served_app.started(annotators_per_sequence=2, require_full_view=False) as running:
        database = running.ctx.database
        add_people(database, annotators=sum(ROUNDS.values(), []), reviewers=["rev"], password=PASSWORD)
        add_sequences(database, ["S1", "S2", "S3"], needed=2)
        yield running


def annotate_over_http(url: str, names: list[str]) -> list[str]:
    """Scripted annotators: take tasks and submit until none is left. Returns the guidance they were shown."""
    guidance = []
    for position, name in enumerate(names):
        client = ApiClient(url, name, PASSWORD)
        task = client.run("intent_next")["task"]
        while task is not None:
            guidance.append(task["guidance"] or "")
            concrete, high_level = INTENTS[position]
            task = client.run("intent_submit", task["sequence_id"], concrete, high_level)["task"]
        client.close()
    return guidance


def review_in_browser(page, decisions: dict[str, list[bool]], status: str | None = None) -> None:
    page.locator("#review-next").click()
    for _ in decisions:
        header = page.locator("#review-item h3")
        expect(header).to_contain_text("Sequence S", timeout=20_000)
        if status is not None:  # what the queue's line says with the first item taken
            expect(page.locator("#review-queue-status")).to_contain_text(status)
            status = None
        sequence_id = header.inner_text().split("·")[0].replace("Sequence", "").strip()
        verdicts = decisions[sequence_id]
        for i, ok in enumerate(verdicts):
            page.locator(f"#review-verdict-{i}").get_by_label(
                "reasonable" if ok else "not reasonable", exact=True
            ).check()
            if not ok:
                page.locator(f"#review-comment-{i} textarea").fill(f"too vague ({sequence_id})")
        if any(verdicts):
            label = f"Annotator {'AB'[verdicts.index(True)]}"
            for dropdown in ("#review-concrete-from", "#review-high-from"):
                # the previous list has closed (the player's speed <select> has options of its own)
                expect(page.get_by_role("listbox").get_by_role("option")).to_have_count(0)
                page.locator(f"{dropdown} input").click()
                page.get_by_role("option", name=label, exact=True).click()
                expect(page.locator(f"{dropdown} input")).to_have_value(label)
            expect(page.locator("#review-concrete textarea")).not_to_have_value("")
        page.locator("#review-submit").click()
        expect(header).not_to_contain_text(f"Sequence {sequence_id} ", timeout=20_000)
    expect(page.locator("#review-item")).to_contain_text("Nothing left to review", timeout=20_000)


def rounds_table(page) -> dict[str, list[str]]:
    """The dashboard's per-round table as the reviewer sees it (Gradio draws virtual rows of grid cells)."""
    rows = page.locator("#review-rounds .virtual-row")
    expect(rows).to_have_count(3, timeout=20_000)
    return {cells[0]: cells for cells in (rows.nth(i).locator("[role=gridcell]").all_inner_texts() for i in range(3))}


def test_three_rounds_through_the_browser(app, tmp_path):
    annotate_over_http(app.url, ROUNDS[1])
    with chromium_browser() as browser:
        page = browser.new_context().new_page()
        browser_login(page, app.url, "rev", PASSWORD)
        page.get_by_role("tab", name="Review").click()
        page.locator("#review-next").click()
        # names are hidden until asked for
        expect(page.locator("#review-intent-0")).to_contain_text("Annotator A", timeout=20_000)
        expect(page.locator("#review-intent-0")).not_to_contain_text("a1")
        page.locator("#review-show-names input").check()
        expect(page.locator("#review-intent-0")).to_contain_text(re.compile(r"\ba[12]\b"), timeout=20_000)
        page.locator("#review-show-names input").uncheck()

        review_in_browser(page, DECISIONS[1])
        guidance = annotate_over_http(app.url, ROUNDS[2])
        assert sorted(g.split("\n")[0] for g in guidance) == ["Round 1 review: no intent was judged reasonable."] * 4
        assert any("too vague (S2)" in g for g in guidance) and any("too vague (S3)" in g for g in guidance)
        # round-1 annotators never get the returned sequences again
        assert ApiClient(app.url, "a1", PASSWORD).run("intent_next")["task"] is None
        review_in_browser(page, DECISIONS[2])
        annotate_over_http(app.url, ROUNDS[3])
        # one round waits: "1 sequence round", not "1 sequence rounds" (issue 44 §13)
        review_in_browser(page, DECISIONS[3], status="Waiting for review: 1 sequence round · 1 for you")

        page.get_by_role("tab", name="Dashboard").click()
        page.locator("#review-refresh").click()
        table = rounds_table(page)
        # by hand: round 1 -> 3 reviewed, 1 accepted (0.3333); 6 annotations, 1 reasonable (0.1667)
        #          round 2 -> 2 reviewed, 1 accepted (0.5); 4 annotations, 1 reasonable (0.25)
        #          round 3 -> 1 reviewed, 0 accepted, 1 discarded; 2 annotations, 0 reasonable
        assert table["1"][1:4] == ["3", "1", "0.3333"] and table["1"][-1] == "0.1667"
        assert table["2"][1:4] == ["2", "1", "0.5"] and table["2"][-1] == "0.25"
        assert table["3"][1:4] == ["1", "0", "0"] and table["3"][5] == "1" and table["3"][-1] == "0"
        expect(page.locator("#review-totals")).to_contain_text("discarded: 1")

        # quality inspection of a sample (all 3 test sequences here), one judgment
        page.get_by_role("tab", name="Inspection").click()
        page.locator("#inspection-start").click()
        expect(page.locator("#inspection-item")).to_contain_text("Sample item 1", timeout=20_000)
        page.locator("#inspection-all-occur").get_by_label("yes").check()  # each criterion an explicit yes/no
        page.locator("#inspection-in-order").get_by_label("no").check()
        page.locator("#inspection-none-missing").get_by_label("no").check()
        page.locator("#inspection-judge").click()
        expect(page.locator("#inspection-item")).to_contain_text("Sample item 2", timeout=20_000)
        expect(page.locator("#inspection-report")).to_contain_text("rev: 1 / 0 / 0 of 1")

        # compare two uploaded columns of paired scores
        page.get_by_role("tab", name="Agreement").click()
        pairs = tmp_path / "pairs.csv"
        pairs.write_text("group_a,group_b\n1,2\n3,1\n4,4\n6,2\n5,1\n")
        page.locator("#compare-upload input[type=file]").set_input_files(str(pairs))
        # Gradio's file list shows the stem and the extension in two spans: "pairs.csv" or "pairs .csv" by layout
        expect(page.locator("#compare-upload")).to_contain_text(re.compile(r"pairs\s*\.csv"), timeout=20_000)
        page.locator("#compare-run").click()
        expect(page.locator("#compare-result")).to_contain_text(
            "n = 4 non-zero pairs of 5, 1 zero differences", timeout=20_000
        )
        expect(page.get_by_role("tab", name="Publish")).to_have_count(0)  # admins only

    database = app.ctx.database
    status = {r["item_id"]: r["status"] for r in database.query("SELECT * FROM tasks WHERE kind = 'intent'")}
    assert status == {"S1": "accepted", "S2": "accepted", "S3": "discarded"}
    assert database.scalar("SELECT count(*) FROM annotations WHERE sequence_id = 'S3'") == 6  # kept, not deleted

    annotator = ApiClient(app.url, "a1", PASSWORD)
    for endpoint, args in (
        ("review_next", ()),
        ("review_dashboard", ()),
        ("dataset_publish", ("team/x", True)),
        ("review_submit", ("S1", 1, [], None, "")),
    ):
        with pytest.raises(ApiError, match="reviewer role|admin role"):
            annotator.run(endpoint, *args)
    reviewer = ApiClient(app.url, "rev", PASSWORD)
    with pytest.raises(ApiError, match="admin role"):
        reviewer.run("dataset_publish", "team/x", True)


@pytest.fixture
def demo_review_app(served_app):
    """The demo's sequences (with their videos), each annotated by three annotators and waiting for review."""
    with served_app.started(demo=True, annotators_per_sequence=3, require_full_view=False) as running:
        add_people(running.ctx.database, annotators=["a1", "a2", "a3"], reviewers=["rev"], password=PASSWORD)
        annotate_all(running.ctx.database, running.ctx.settings, ["a1", "a2", "a3"])
        yield running


def bottom_of(page, selector: str) -> float:
    box = page.locator(selector).bounding_box()
    assert box is not None, f"{selector} is not drawn"
    return box["y"] + box["height"]


def test_a_review_item_fits_one_screen(demo_review_app):
    """Issue 44 §4: the landing shows the queue and "Next item" only; an item's three annotations, the final choice
    and "Submit review" are on one 1280×900 screen without scrolling (at 390×844: everything on the page)."""
    with chromium_browser() as browser:
        for width, height in ((1280, 900), (390, 844)):
            page = browser.new_context(viewport={"width": width, "height": height}).new_page()
            browser_login(page, demo_review_app.url, "rev", PASSWORD)
            page.get_by_role("tab", name="Review").click()
            expect(page.locator("#review-item")).to_contain_text("Press Next item")
            expect(page.locator("#review-next")).to_be_visible()
            for selector in ("#review-submit", "#review-concrete-from", "#review-note"):
                expect(page.locator(selector)).to_be_hidden()
            page.locator("#review-next").click()
            expect(page.locator("#review-intent-2")).to_contain_text("Annotator C")
            expect(page.locator("#review-video video")).to_be_visible()
            expect(page.locator("#review-submit")).to_be_visible()
            if width == 1280:
                assert page.evaluate("window.scrollY") == 0
                for selector in ("#review-verdict-2", "#review-comment-2", "#review-high-from", "#review-submit"):
                    assert bottom_of(page, selector) <= height, f"{selector} is below the screen"
            page.context.close()
