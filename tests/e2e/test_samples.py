"""Issue 28 §6, in a real browser as a researcher uses it: run a baseline on the demo content from the Planning tab,
open Results → Samples, show the wrong items, open one and see the frames the model got (with their times) and
the parse trace; run a second baseline and compare the two runs item by item. Then what a model said, shown in
every part of the view, stays inert text."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest
from e2e_helpers import browser_login
from playwright.sync_api import expect

from backend.inference import samples
from backend.inference.registry import ModelSpec
from backend.inference.runner import run_eval
from backend.inference.samples_detail import compare_runs
from backend.planning.media import write_synthetic_video
from backend.planning.questions import list_questions
from tests.samples_helpers import XSS

pytestmark = pytest.mark.browser
PASSWORD = "password1"
SHOTS = Path(os.environ.get("COMPSTUDIO_SHOTS", tempfile.gettempdir())) / "samples"
WITH_VIDEO = 4  # the first questions get a demo video: their items carry frames
LIMIT = 8
INJECTED = """() => ({elements: document.querySelectorAll('[data-xss]').length, ran: window.__xss === 1})"""


@pytest.fixture(scope="module")
def app(served_app):
    running = served_app({"rev": "reviewer", "ann": "annotator"}, password=PASSWORD, demo=True)  # with the demo content
    ctx = running.ctx
    with ctx.database.write() as db:  # Charades videos are not shipped: synthetic ones cover the windows
        for question in list_questions(ctx.database)[:WITH_VIDEO]:
            seconds = question.ob_end_frame / 24 + 1
            video = write_synthetic_video(
                ctx.settings.media_dir / "stand-in" / f"{question.id}.mp4", seconds, (160, 120)
            )
            db.conn.execute("UPDATE sequences SET video_path = ? WHERE id = ?", (str(video), question.sequence_id))
    return running


def _choose(page, elem_id: str, text: str) -> None:
    """Pick the option of a Gradio dropdown whose label contains ``text``, as a person does."""
    page.locator(f"#{elem_id} input").first.click()
    page.get_by_role("option", name=re.compile(re.escape(text))).first.click()


def _run_baseline(page, model: str) -> None:
    page.locator('button[data-tab-id="planning"]').click()
    page.locator('button[data-tab-id="planning-browse"]').click()
    _choose(page, "planning-model", model)  # typing and Enter raced the list's filter under load
    expect(page.locator("#planning-model input").first).to_have_value(model)
    page.locator("#planning-limit input").first.fill(str(LIMIT))
    page.locator("#planning-run").click()
    expect(page.locator("#planning-run-summary")).to_contain_text(model, timeout=90_000)
    expect(page.locator("#planning-run-summary")).to_contain_text("Newly computed")


def _open_samples(page) -> None:
    page.locator('button[data-tab-id="results"]').click()
    page.locator('button[data-tab-id="results-samples"]').click()


LOADED = """() => { const images = [...document.querySelectorAll('#samples-media img')];
    return images.length > 0 && images.every(i => i.complete && i.naturalWidth > 0); }"""


def _frames_load_for_their_viewer_only(page, browser, url: str) -> None:
    """The frames the model got are drawn (each image decoded, not its alt text), from the page's own mount; the
    same file answers 200 to the page's person only: another person, or nobody, is refused (issue 44 §1)."""
    page.wait_for_function(LOADED, timeout=30_000)
    src = page.locator("#samples-media img").first.get_attribute("src")
    assert src is not None and src.startswith(page.url + "gradio_api/file="), (src, page.url)
    assert page.context.request.get(src, max_redirects=0).status == 200
    nobody = browser.new_context()
    assert nobody.request.get(src, max_redirects=0).status == 401
    annotator = browser.new_context().new_page()
    browser_login(annotator, url, "ann", PASSWORD)
    assert annotator.context.request.get(src, max_redirects=0).status == 401  # not their page: signed in elsewhere
    nobody.close()
    annotator.context.close()


def test_a_researcher_looks_inside_a_baseline_run_and_compares_two(app, browser):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    browser_login(page, app.url, "rev", PASSWORD)
    _run_baseline(page, "random")
    first = samples.find_run(app.ctx.database, "random", "vilpact-planning")
    video_ids = {q.id for q in list_questions(app.ctx.database)[:WITH_VIDEO]}
    wrong = [s for s in samples.iter_samples(app.ctx, first.run_id, samples.SampleQuery("wrong"))]
    target = next(s for s in wrong if s.item_id in video_ids)  # a wrong answer to a question with a video

    _open_samples(page)
    _choose(page, "samples-run", f"run {first.run_id}: random")
    _choose(page, "samples-filter", "wrong")
    counts = page.locator("#samples-counts")
    expect(counts).to_contain_text(f"{LIMIT} items", timeout=30_000)
    expect(page.locator("#samples-page-info")).to_contain_text(f"Showing {len(wrong)} that match")
    table = page.locator("#samples-table")
    expect(table).to_contain_text(target.item_id)
    expect(table).not_to_contain_text("right")  # only the wrong ones are listed

    _choose(page, "samples-pick", target.item_id)
    header = page.locator("#samples-item")
    expect(header).to_contain_text(target.item_id, timeout=30_000)
    expect(header).to_contain_text("the recorded prompt hashes to this key")
    frames = page.locator("#samples-media img")
    expect(frames).to_have_count(app.ctx.settings.planning_frames, timeout=30_000)
    expect(page.locator("#samples-media")).to_contain_text(re.compile(r"frame 1 · \d+\.\d\d s"))
    _frames_load_for_their_viewer_only(page, browser, app.url)
    expect(header).to_contain_text(f"Video 1: {app.ctx.settings.planning_frames} frames sampled of")
    trace = page.locator("#samples-trace")
    expect(trace).to_contain_text("Read as:")
    expect(trace).to_contain_text("letter list")  # the rule that read the baseline's letter
    expect(page.locator("#samples-prompt textarea")).to_have_value(re.compile("Their intent:"))
    expect(page.locator("#samples-raw textarea")).to_have_value(target.raw_output)
    page.screenshot(path=str(SHOTS / "samples-item.png"), full_page=True)

    _run_baseline(page, "bigram-prior")
    second = samples.find_run(app.ctx.database, "bigram-prior", "vilpact-planning")
    expected = compare_runs(app.ctx, first.run_id, second.run_id, everything=True)
    _open_samples(page)
    page.locator("#samples-refresh").click()
    _choose(page, "samples-run", f"run {first.run_id}: random")
    _choose(page, "samples-other", f"run {second.run_id}: bigram-prior")
    page.locator("#samples-compare").click()
    vs = page.locator("#samples-vs-counts")
    expect(vs).to_contain_text(f"Both answered {expected.common} items", timeout=30_000)
    expect(vs).to_contain_text(f"only A was right on {expected.a_only_right}, only B on {expected.b_only_right}")
    if expected.rows:
        _choose(page, "samples-vs-pick", expected.rows[0].base_id)
        expect(page.locator("#samples-vs-a")).to_contain_text("A: random", timeout=30_000)
        expect(page.locator("#samples-vs-b")).to_contain_text("B: bigram-prior")
    page.locator("#samples-vs-table").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "samples-compare.png"), full_page=True)


def test_what_a_model_said_stays_text(app, browser):
    app.ctx.models.register_model(ModelSpec("scripted", "python", "samples_helpers:scripted_factory"))
    run = run_eval(app.ctx, "toy-colors", "scripted")
    said = [s for s in samples.iter_samples(app.ctx, run.run_id) if s.raw_output == XSS]
    page = browser.new_context().new_page()
    browser_login(page, app.url, "rev", PASSWORD)
    _open_samples(page)
    _choose(page, "samples-run", f"run {run.run_id}: scripted")
    page.locator("#samples-search input, #samples-search textarea").first.fill("data-xss")
    page.locator("#samples-search input, #samples-search textarea").first.press("Enter")
    expect(page.locator("#samples-page-info")).to_contain_text(f"Showing {len(said)} that match", timeout=30_000)
    expect(page.locator("#samples-table")).to_contain_text("data-xss")  # shown as the text it is
    _choose(page, "samples-pick", said[0].item_id)
    expect(page.locator("#samples-trace")).to_contain_text("bold", timeout=30_000)
    expect(page.locator("#samples-raw textarea")).to_have_value(XSS)
    assert page.evaluate(INJECTED) == {"elements": 0, "ran": False}
    page.screenshot(path=str(SHOTS / "samples-xss.png"), full_page=True)
