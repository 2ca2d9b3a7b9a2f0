"""The Admin tab's Charades panel in a real browser (issue 30 §5): an admin imports Charades-format annotations from
the import folder, previews a video's extracted sequence on its timeline with the three scores and the reasons
others were left out, accepts the sequences into the intent pool, and an annotator is handed one of them.
Text from the files is shown as text; mistakes show beside the form."""

from __future__ import annotations

import csv
import os
import shutil
from pathlib import Path

import pytest
from conftest import ROOT
from e2e_helpers import browser_login
from playwright.sync_api import expect

FIXTURE = ROOT / "tests" / "data" / "charades"
PASSWORD = "password1"
HOSTILE = "<img src=x onerror=window.__xss=1>"  # a video id a file could hold


@pytest.fixture(scope="module")
def running(served_app):
    app = served_app({"boss": "admin", "ann": "annotator"}, password=PASSWORD)
    app.video_ids = write_charades_files(app.ctx.settings.import_root / "charades-demo")
    return app


def write_charades_files(folder) -> list[str]:
    """A Charades release in ``folder`` (the app reads it when the admin imports): four videos of the fixture and
    one with a hostile id. Returns the video ids."""
    folder.mkdir(parents=True)
    for name in ("objectclasses", "verbclasses", "mapping"):
        shutil.copy(FIXTURE / f"Charades_v1_{name}.txt", folder)
    shutil.copy(FIXTURE / "Charades_v1_classes.txt", folder)
    with (FIXTURE / "Charades_v1_fixture.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))[:4]
    rows.append({**rows[0], "id": HOSTILE, "actions": "c027 0.00 3.00;c061 1.00 4.00"})  # too short: left out
    with (folder / "Charades_v1_train.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return [r["id"] for r in rows]


def open_panel(page) -> None:
    page.get_by_role("tab", name="Admin", exact=True).click()
    page.get_by_text("Charades annotations: extract sequences into the intent pool", exact=True).click()
    expect(page.locator("#charades-folder textarea, #charades-folder input").first).to_be_visible()


def test_import_preview_accept_and_an_annotator_gets_the_sequence(running, browser, tmp_path):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    browser_login(page, running.url, "boss", PASSWORD)
    page.wait_for_selector("#whoami strong", timeout=60_000)
    open_panel(page)
    folder = page.locator("#charades-folder textarea, #charades-folder input").first
    message = page.locator("#charades-message")

    page.locator("#charades-import").click()  # nothing typed
    expect(message).to_contain_text("Enter the folder of the Charades files")
    folder.fill("../../outside")
    page.locator("#charades-import").click()
    expect(message).to_contain_text("imports only from")
    assert folder.input_value() == "../../outside"  # the person's text stays

    folder.fill("charades-demo")
    page.locator("#charades-import").click()
    expect(message).to_contain_text("Imported 5 videos (5 new", timeout=30_000)
    expect(page.locator("#charades-summary")).to_contain_text("5 videos imported: 4 with a sequence")
    expect(page.locator("#charades-summary")).to_contain_text("4 kept sequences have no video file")
    first = running.video_ids[0]
    page.locator("#charades-preview").click()
    view = page.locator("#charades-timeline-view")
    expect(view).to_contain_text(f"{first}: kept: a sequence of", timeout=30_000)
    chosen, left_out = page.locator(".charades-bar.chosen"), page.locator(".charades-bar.left-out")
    extraction = running.ctx.database.query_one("SELECT actions FROM charades_videos WHERE id = ?", (first,))
    assert chosen.count() + left_out.count() == extraction["actions"].count('"c')
    assert chosen.count() >= 4 and left_out.count() >= 2
    table = page.locator("#charades-decisions")
    expect(table).to_contain_text("below 0.8 (extract_min_coherence)")
    expect(table).to_contain_text("more than 20 s away")
    expect(table).to_contain_text("seed")
    expect(table).to_contain_text("task relevance")  # the term that decided each action
    expect(table).to_contain_text("temporal relevance (extract_max_gap_s)")
    shots = Path(os.environ.get("COMPSTUDIO_SCREENSHOTS", tmp_path))
    page.screenshot(path=str(shots / "charades-preview-light.png"), full_page=True)

    video = page.locator("#charades-video input")
    video.fill(HOSTILE)
    page.locator("#charades-preview").click()
    expect(view).to_contain_text(f"{HOSTILE}: left out: its most coherent sequence has", timeout=30_000)  # as text
    expect(table).to_contain_text("Opening a book")
    assert page.evaluate("() => window.__xss") is None
    page.screenshot(path=str(tmp_path / "charades-short.png"), full_page=True)

    video.fill("NOPE1")
    page.locator("#charades-preview").click()
    expect(message).to_contain_text("no imported Charades video")

    page.locator("#charades-accept").click()  # no video folder was given: the panel warns and accepts nothing
    expect(message).to_contain_text("4 of the 4 sequences to accept have no video file", timeout=30_000)
    expect(message).to_contain_text("annotators would write intents from the action names alone")
    assert running.ctx.database.scalar("SELECT count(*) FROM sequences WHERE source = 'charades'") == 0
    page.locator("#charades-allow-missing input").check()
    page.locator("#charades-accept").click()
    expect(message).to_contain_text("Accepted 4 sequences into the intent pool (3 annotators each)", timeout=30_000)
    db = running.ctx.database
    assert db.scalar("SELECT count(*) FROM sequences WHERE source = 'charades'") == 4
    assert db.query("SELECT DISTINCT kind, needed FROM tasks") == [{"kind": "intent", "needed": 3}]
    page.locator("#charades-accept").click()
    expect(message).to_contain_text("Accepted 0 sequences into the intent pool (3 annotators each); 4 were already")

    page.locator("#charades-export").click()
    expect(message).to_contain_text("Exported 4 sequences")
    expect(page.locator("a[download], a[href*='charades_sequences.csv']").first).to_be_attached()

    page.goto(page.url.split("#")[0] + ("&" if "?" in page.url else "?") + "__theme=dark")  # a later visit, dark
    open_panel(page)  # Preview with no video chosen lists the imported ones again
    page.locator("#charades-preview").click()
    expect(page.locator("#charades-summary")).to_contain_text("5 videos imported", timeout=30_000)
    expect(view).to_contain_text(f"{first}: kept")
    expect(table).to_contain_text("task relevance")
    page.screenshot(path=str(shots / "charades-preview-dark.png"), full_page=True)
    context.close()

    annotator = browser.new_context().new_page()
    browser_login(annotator, running.url, "ann", PASSWORD)
    expect(annotator.locator("#intent-task h3")).to_contain_text(running.video_ids[0], timeout=30_000)
    annotator.context.close()
