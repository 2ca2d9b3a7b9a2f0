"""The video workbench (issue 27) in a real browser, on H.264 videos made by the demo's writer
(backend/vilpact/demo_video.py): speed kept across tasks, the timeline seeks and follows playback, the keys, the
honest watch check, keys typed into a field, the planning player held to the observed window, inspection marks
in the report, the layout at 1280×800 and at phone width, axe-core on the three tabs. Each test fails with its
feature broken (checked by breaking each once). Screenshots go to $COMPSTUDIO_SHOTS (default: a temp folder)."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from browser_helpers import closing_new_contexts
from e2e_helpers import browser_login
from playwright.sync_api import expect
from review_helpers import handed_ago

from backend import assignment
from backend.intents import service as intents
from backend.planning.media import write_synthetic_video
from backend.planning.questions import import_planning
from backend.vilpact.demo_video import write_demo_video
from backend.vilpact.importer import import_vilpact
from backend.vilpact.sequences import insert_sequences
from backend.vilpact.video import video_facts
from tests.conftest import VILPACT_DATA

pytestmark = pytest.mark.browser

PASSWORD = "password1"
SHOTS = Path(os.environ.get("COMPSTUDIO_SHOTS", tempfile.gettempdir())) / "player"
# 8 s videos; the third action starts at 4.0 s, the fourth overlaps it (lanes)
ACTIONS = (
    ("Putting a cup/glass/bottle somewhere", 0.0, 3.0),
    ("Pouring into a cup", 1.0, 4.0),
    ("Drinking", 4.0, 6.5),
    ("Tidying", 6.0, 8.0),
)
DURATION = 8.0
SEQUENCES = tuple(f"PLAYER-{letter}" for letter in "ABCDEFGHIJKL")  # one each for every login below, and spares
GOOD = ("S/He wants to have a drink", "S/He is taking a break")
VIDEO = "#intent-video video"


@pytest.fixture(scope="module")
def app(served_app):
    people = {f"ann{n}": "annotator" for n in range(1, 8)} | {"rev": "reviewer"}
    running = served_app(people, password=PASSWORD, annotators_per_sequence=1, planning_annotators_per_question=1)
    settings, db = running.ctx.settings, running.ctx.database
    data_dir = settings.data_dir
    import_vilpact(db, VILPACT_DATA, add_to_pool=False)
    import_planning(db, VILPACT_DATA, annotators_per_question=1)
    clip = write_synthetic_video(data_dir.parent / "videos" / "ZH4JE.mp4", 12, (160, 120))
    video = write_demo_video(settings.media_dir / "player" / "PLAYER.mp4", list(ACTIONS), DURATION, 60)
    rows = [_sequence_row(sid, str(video.resolve())) for sid in SEQUENCES]  # one file, inside the media folder
    rows.append(_sequence_row("PLAYER-NOVIDEO", None))
    with db.write() as conn:
        conn.conn.execute("UPDATE sequences SET video_path = ? WHERE id = 'ZH4JE'", (str(clip),))
        insert_sequences(conn.conn, rows)
        assignment.add_tasks(conn, "intent", list(SEQUENCES), 1)
    # one submitted sequence waits for review (the layout test's Review item), whatever the tests' order
    task = intents.next_intent_task(db, settings, "ann5")["task"]
    handed_ago(db, task["sequence_id"], 60)  # as if watched for a minute
    intents.submit_intents(db, settings, "ann5", task["sequence_id"], *GOOD, watched_share=1.0)
    return running


@pytest.fixture(autouse=True)
def _close_windows(browser):
    """The windows a test opened close after it (a dozen open pages with videos would slow the later tests)."""
    with closing_new_contexts(browser):
        yield


def _sequence_row(sid: str, video: str | None) -> dict:
    actions = [{"class_id": f"c{i:03d}", "name": n, "start": s, "end": e} for i, (n, s, e) in enumerate(ACTIONS)]
    return {
        "id": sid,
        "video_id": sid,
        "actions": json.dumps(actions),
        "scene": "Kitchen",
        "split": "player",
        "act_seq_start": 0,
        "act_seq_end": DURATION,
        "ob_start_frame": 0,
        "ob_end_frame": int(DURATION * 24 * 0.2),
        "video_path": video,
        "source": "test",
        "imported_at": "2026-12-02T00:00:00+00:00",
    }


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def _annotator(browser, app, user: str, **context):
    page = browser.new_context(viewport=context.pop("viewport", {"width": 1280, "height": 800}), **context).new_page()
    browser_login(page, app.url, user, PASSWORD)
    expect(page.locator(VIDEO)).to_be_visible(timeout=30_000)
    page.wait_for_function(f"() => document.querySelector('{VIDEO}').readyState >= 2", timeout=30_000)
    return page


def _video(page, expression: str, selector: str = VIDEO):
    return page.locator(selector).evaluate(f"v => {expression}")


def _set_time(page, seconds: float, selector: str = VIDEO) -> None:
    page.locator(selector).evaluate(
        """(v, t) => new Promise((done) => { v.pause(); v.addEventListener('seeked', () => done(), {once: true});
                                            v.currentTime = t; })""",
        seconds,
    )


def _blur(page) -> None:
    page.evaluate("() => document.activeElement && document.activeElement.blur()")


def _watched(page, scope: str = "#intent-video") -> int:
    return int(re.search(r"Watched (\d+)%", page.locator(f"{scope} .csp-watched").inner_text()).group(1))


def test_speed_2x_gives_playback_rate_2_and_is_kept_on_the_next_task(app, browser):
    page = _annotator(browser, app, "ann1")
    speed = page.get_by_label("Playback speed")
    speed.select_option("2")
    assert _video(page, "v.playbackRate") == 2
    first = page.locator("#intent-task h3").inner_text()
    page.locator("#intent-skip-box").get_by_text("Skip this sequence").click()
    page.locator("#intent-skip-reason textarea, #intent-skip-reason input").fill("The player test skips it")
    page.locator("#intent-skip").click()
    expect(page.locator("#intent-task h3")).not_to_have_text(first, timeout=20_000)
    page.wait_for_function(f"() => document.querySelector('{VIDEO}').readyState >= 2", timeout=30_000)
    assert _video(page, "v.playbackRate") == 2  # the next task's video, at the person's speed
    expect(page.get_by_label("Playback speed")).to_have_value("2")
    shot(page, "speed-kept")


def test_clicking_the_third_action_seeks_to_its_start_and_the_highlight_follows_playback(app, browser):
    page = _annotator(browser, app, "ann1")
    third = page.get_by_role("button", name="Drinking 4–6.5 s")
    third.click()
    page.wait_for_function(f"() => Math.abs(document.querySelector('{VIDEO}').currentTime - 4) < 0.1")
    assert abs(_video(page, "v.currentTime") - 4.0) < 0.1
    expect(third).to_have_attribute("aria-current", "true")
    fourth = page.get_by_role("button", name="Tidying 6–8 s")
    expect(fourth).not_to_have_attribute("aria-current", "true")
    _video(page, "{ v.muted = true; v.playbackRate = 2; return v.play(); }")
    expect(third).not_to_have_attribute("aria-current", "true", timeout=10_000)  # past 6.5 s ...
    expect(fourth).to_have_attribute("aria-current", "true")  # ... the fourth is on screen
    shot(page, "highlight")


def test_j_l_seek_5_s_and_period_steps_one_frame_at_the_files_rate(app, browser):
    page = _annotator(browser, app, "ann1")
    fps = video_facts(app.ctx.settings.media_dir / "player" / "PLAYER.mp4").fps
    assert fps == 12  # the demo writer's rate, read from the file (not an assumed 24 or 30)
    _set_time(page, 1.0)
    _blur(page)
    page.keyboard.press("l")
    page.wait_for_function(f"() => Math.abs(document.querySelector('{VIDEO}').currentTime - 6) < 0.05")
    page.keyboard.press("j")
    page.wait_for_function(f"() => Math.abs(document.querySelector('{VIDEO}').currentTime - 1) < 0.05")
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => Math.abs(document.querySelector('{VIDEO}').currentTime - 6) < 0.05")
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(f"() => Math.abs(document.querySelector('{VIDEO}').currentTime - 1) < 0.05")
    page.keyboard.press(".")
    page.wait_for_function(
        f"() => Math.abs(document.querySelector('{VIDEO}').currentTime - (1 + 1 / {fps})) < 0.005", timeout=5_000
    )
    page.keyboard.press(",")
    page.wait_for_function(f"() => Math.abs(document.querySelector('{VIDEO}').currentTime - 1) < 0.005")
    page.keyboard.press("]")  # the next action's start after 1 s: 4 s
    page.wait_for_function(f"() => Math.abs(document.querySelector('{VIDEO}').currentTime - 4) < 0.05")
    page.keyboard.press("[")
    page.wait_for_function(f"() => Math.abs(document.querySelector('{VIDEO}').currentTime - 1) < 0.05")
    page.keyboard.press("?")
    expect(page.locator("#intent-video .csp-keylist")).to_be_visible()
    expect(page.locator("#intent-video .csp-keylist")).to_contain_text("one frame back / forward")
    page.keyboard.press("k")
    page.wait_for_function(f"() => !document.querySelector('{VIDEO}').paused")
    page.keyboard.press("k")
    page.wait_for_function(f"() => document.querySelector('{VIDEO}').paused")


def test_keys_typed_into_an_intent_field_do_not_move_the_video_and_ctrl_enter_submits(app, browser):
    page = _annotator(browser, app, "ann1")
    _set_time(page, 2.0)
    field = page.locator("#concrete-intent textarea, #concrete-intent input")
    field.click()
    page.keyboard.type("j l k , . [ ] ? ")
    page.keyboard.press("ArrowLeft")
    assert field.input_value() == "j l k , . [ ] ? "
    assert _video(page, "v.currentTime") == 2.0 and _video(page, "v.paused")
    expect(page.locator("#intent-video .csp-keylist")).to_be_hidden()
    page.keyboard.press("Control+Enter")  # submits from the field (the server refuses this text, and says so)
    expect(page.locator("#intent-message")).to_contain_text("you wrote “j l k", timeout=20_000)


def test_a_seek_to_the_end_is_refused_and_watching_at_2x_submits(app, browser):
    page = _annotator(browser, app, "ann2")
    page.locator("#concrete-intent textarea, #concrete-intent input").fill(GOOD[0])
    page.locator("#high-level-intent textarea, #high-level-intent input").fill(GOOD[1])
    _set_time(page, DURATION - 0.4)
    _video(page, "{ v.muted = true; return v.play(); }")
    page.wait_for_function(f"() => document.querySelector('{VIDEO}').ended", timeout=20_000)
    assert _watched(page) < 10
    page.locator("#intent-submit").click()
    message = page.locator("#intent-message")
    expect(message).to_contain_text("of the video: play at least 95%", timeout=20_000)
    expect(page.locator("#intent-last-saved")).to_be_empty()
    shot(page, "watch-refused")
    page.get_by_label("Playback speed").select_option("2")
    _set_time(page, 0.0)
    _video(page, "{ v.muted = true; return v.play(); }")
    page.wait_for_function(f"() => document.querySelector('{VIDEO}').ended", timeout=30_000)
    assert _watched(page) >= 95
    expect(message).to_be_hidden()  # the "watch first" warning goes as soon as the watching meets the floor
    page.locator("#intent-submit").click()
    expect(page.locator("#intent-last-saved")).to_contain_text("Saved for", timeout=20_000)
    expect(message).to_be_hidden()  # the refusal no longer holds: cleared
    assert _watched(page) == 0  # the next task starts unwatched


def test_the_planning_player_cannot_go_past_the_observed_window(app, browser):
    page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    browser_login(page, app.url, "ann3", PASSWORD)
    page.locator('button[data-tab-id="planning"]').click()
    page.locator('button[data-tab-id="planning-check"]').click()
    page.locator("#planning-check-next").click()
    clip = "#planning-check-clip video"
    expect(page.locator(clip)).to_be_visible(timeout=30_000)
    page.wait_for_function(f"() => document.querySelector('{clip}').readyState >= 2", timeout=30_000)
    config = json.loads(
        page.evaluate(
            "() => JSON.stringify(window.csPlayers && [...window.csPlayers].map(p => p.cfg).filter(c => c && c.limit)[0])"
        )
    )
    limit = config["limit"]
    assert limit and all(action["end"] <= limit + 1e-6 for action in config["actions"])  # observed actions only
    buttons = page.locator("#planning-check-clip .csp-action")
    assert buttons.count() == len(config["actions"]) >= 1
    page.locator(clip).evaluate("(v, t) => { v.currentTime = t; }", limit + 5)
    page.wait_for_function(f"() => !document.querySelector('{clip}').seeking")
    assert _video(page, "v.currentTime", clip) <= limit + 0.05
    page.locator(clip).evaluate("v => { v.muted = true; v.playbackRate = 2; v.currentTime = 0; return v.play(); }")
    page.wait_for_function(f"() => {{ const v = document.querySelector('{clip}'); return v.paused || v.ended; }}",
                           timeout=30_000)  # fmt: skip
    assert _video(page, "v.currentTime", clip) <= limit + 0.05
    shot(page, "planning-window")


def _inspection(browser, app):
    page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    browser_login(page, app.url, "rev", PASSWORD)
    page.get_by_role("tab", name="Review").click()
    page.get_by_role("tab", name="Inspection").click()
    page.get_by_label("Split (empty: all)").fill("player")
    page.get_by_label("Seed (empty: random)").fill("7")
    page.locator("#inspection-start").click()
    expect(page.locator("#inspection-item")).to_contain_text("Sample item 1", timeout=20_000)
    return page


def test_inspection_marks_reach_the_report(app, browser):
    page = _inspection(browser, app)
    page.locator("#inspection-judge").click()  # nothing answered: nothing stored
    expect(page.locator("#inspection-message")).to_contain_text("Answer yes or no", timeout=20_000)
    expect(page.locator("#inspection-item")).to_contain_text("Sample item 1")
    page.get_by_role("button", name="Drinking: not in the video").click()
    page.get_by_role("button", name="An action is missing between the first and the last").click()
    page.locator("#inspection-in-order").get_by_label("yes").check()
    shot(page, "inspection-marks")
    page.locator("#inspection-judge").click()
    expect(page.locator("#inspection-item")).to_contain_text("Sample item 2", timeout=20_000)
    report = page.locator("#inspection-report")
    expect(report).to_contain_text("rev: 0 / 1 / 0 of 1")
    expect(report).to_contain_text("1 action not in the video, 0 out of order, 1 sequence missing an action")
    stored = app.ctx.database.query_one("SELECT marks FROM inspection_judgments WHERE reviewer = 'rev'")
    assert json.loads(stored["marks"]) == {"not_in_video": [2], "out_of_order": [], "missing_between": True}
    # a missing video still shows the timeline, flagged: judge on until the sequence without a file
    for _ in range(len(SEQUENCES) + 1):
        if "No video file" in page.locator("#inspection-item").inner_text():
            break
        for box in ("#inspection-all-occur", "#inspection-in-order", "#inspection-none-missing"):
            page.locator(box).get_by_label("yes").check()
        before = page.locator("#inspection-item h3").inner_text()
        page.locator("#inspection-judge").click()
        expect(page.locator("#inspection-item h3")).not_to_have_text(before, timeout=20_000)
    expect(page.locator("#inspection-video .csp-missing")).to_contain_text("No video file")
    expect(page.locator("#inspection-video .csp-action")).to_have_count(len(ACTIONS))
    shot(page, "inspection-no-video")


def _on_screen(page, selector: str) -> None:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    assert box["y"] >= 0 and box["y"] + box["height"] <= 800, (selector, box)


def _after(page, selector: str) -> str:
    """The button's text with what CSS adds after it (the "(Ctrl+Enter)" where there is a keyboard)."""
    return page.locator(selector).evaluate("b => b.innerText + getComputedStyle(b, '::after').content")


def _serious(page) -> list[str]:
    results = Axe().run(page)
    return [
        f"{v['impact']} {v['id']}: {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
        if v["impact"] in {"serious", "critical"}
    ]


def test_at_1280x800_player_timeline_and_first_field_are_on_screen_and_axe_finds_nothing(app, browser):
    page = _annotator(browser, app, "ann4")
    expect(page.locator("#intent-video .csp-keys")).to_be_visible()  # a keyboard here: the keys are offered
    for selector in (VIDEO, "#intent-video .csp-timeline", "#concrete-intent", "#intent-submit"):
        _on_screen(page, selector)
    assert "Ctrl+Enter" in _after(page, "#intent-submit")  # a keyboard here: the key is offered
    assert _serious(page) == []
    shot(page, "annotate-1280")

    review = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    browser_login(review, app.url, "rev", PASSWORD)
    review.get_by_role("tab", name="Review").click()
    review.locator("#review-next").click()  # ann2's submitted sequence waits for review
    expect(review.locator("#review-video .csp-timeline")).to_be_visible(timeout=20_000)
    for selector in ("#review-video video", "#review-video .csp-timeline", "#review-verdict-0"):
        _on_screen(review, selector)
    assert _serious(review) == []
    shot(review, "review-1280")

    inspection = _inspection(browser, app)
    for selector in ("#inspection-video video", "#inspection-video .csp-timeline", "#inspection-all-occur"):
        _on_screen(inspection, selector)
    assert _serious(inspection) == []
    shot(inspection, "inspection-1280")


def test_phone_width_the_timeline_scrolls_targets_are_24px_work_before_instructions(app, browser):
    page = _annotator(browser, app, "ann4", viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    timeline = page.locator("#intent-video .csp-timeline")
    assert timeline.evaluate("t => t.scrollWidth > t.clientWidth")  # scrolls sideways
    expect(page.locator("#intent-video .csp-keys")).to_be_hidden()  # no keyboard on a phone: no keys offered
    sizes = page.locator("#intent-video button, #intent-video select").evaluate_all(
        "els => els.filter(e => e.offsetParent !== null)"
        ".map(e => { const r = e.getBoundingClientRect(); return [e.textContent, r.width, r.height]; })"
    )
    assert sizes and all(w >= 24 and h >= 24 for _text, w, h in sizes), sizes
    work = page.locator("#intent-video").bounding_box()
    instructions = page.locator("#intent-instructions-box").bounding_box()
    assert work["y"] < instructions["y"]
    expect(page.locator("#intent-instructions")).to_be_hidden()  # folded
    assert "Ctrl+Enter" not in _after(page, "#intent-submit")  # no key promised on a phone
    assert _serious(page) == []
    shot(page, "phone-390")  # the viewport (a full-page shot re-emulates the screen, and the pointer with it)
    page.locator("#intent-submit").scroll_into_view_if_needed()
    shot(page, "phone-390-submit")


def _kept(response, seconds: float) -> bool:
    """Whether ``response`` answers the player's sending of played ranges that reach ``seconds``."""
    if "/api/intent_played" not in response.url:
        return False
    ranges = response.request.post_data_json["data"][1]
    return bool(ranges) and ranges[-1][1] >= seconds


def _play_until(page, seconds: float) -> None:
    """Play at 2× from where the video is, muted, and pause once it reaches ``seconds`` (or its end); return once
    the server keeps the ranges the player sent as it paused."""
    with page.expect_response(lambda response: _kept(response, seconds - 0.5), timeout=30_000) as kept:
        _video(page, "{ v.muted = true; v.playbackRate = 2; return v.play(); }")
        page.wait_for_function(
            f"() => {{ const v = document.querySelector('{VIDEO}'); return v.ended || v.currentTime >= {seconds}; }}",
            timeout=30_000,
        )
        _video(page, "{ v.pause(); }")
    assert kept.value.ok and kept.value.json()["data"][0]["played"]


def test_a_reload_keeps_what_was_watched_and_the_rest_completes_it(app, browser):
    """Issue 44 §3: the played ranges belong to the lease. Half the video, a reload: "Watched 50%" comes back;
    playing the other half brings it to the floor, and the submit is accepted without watching it all again."""
    page = _annotator(browser, app, "ann6")
    _set_time(page, 0.0)
    _play_until(page, DURATION / 2)
    half = _watched(page)
    assert 45 <= half < 95
    page.reload()
    page.wait_for_function(f"() => document.querySelector('{VIDEO}')?.readyState >= 2", timeout=30_000)
    expect(page.locator("#intent-video .csp-watched")).to_have_text(re.compile(r"Watched [1-9]\d%"))
    assert abs(_watched(page) - half) <= 2  # restored, not 0%
    _set_time(page, DURATION / 2)
    _play_until(page, DURATION)
    assert _watched(page) >= 95
    page.locator("#concrete-intent textarea, #concrete-intent input").fill(GOOD[0])
    page.locator("#high-level-intent textarea, #high-level-intent input").fill(GOOD[1])
    page.locator("#intent-submit").click()
    expect(page.locator("#intent-last-saved")).to_contain_text("Saved for", timeout=20_000)


def test_text_fields_show_focus_and_ctrl_enter_hands_the_keys_to_the_next_player(app, browser):
    """Issue 44 §8: the focused field has a visible outline (the other has none); after Ctrl+Enter the focus is
    on the next task's player, so its keys work at once (k plays) instead of typing into the empty field."""
    page = _annotator(browser, app, "ann7")
    _set_time(page, 0.0)
    _play_until(page, DURATION)
    concrete = page.locator("#concrete-intent textarea, #concrete-intent input")
    high = page.locator("#high-level-intent textarea, #high-level-intent input")
    concrete.click()
    page.keyboard.type(GOOD[0])
    outline = "e => [getComputedStyle(e).outlineStyle, parseFloat(getComputedStyle(e).outlineWidth)]"
    style, width = concrete.evaluate(outline)
    assert style != "none" and width >= 2, (style, width)
    assert high.evaluate(outline)[0] == "none" or high.evaluate(outline)[1] == 0
    page.keyboard.press("Tab")
    page.keyboard.type(GOOD[1])
    style, width = high.evaluate(outline)
    assert style != "none" and width >= 2, (style, width)
    shot(page, "focus-ring")
    first = page.locator("#intent-task h3").inner_text()
    page.keyboard.press("Control+Enter")
    expect(page.locator("#intent-last-saved")).to_contain_text("Saved for", timeout=20_000)
    expect(page.locator("#intent-task h3")).not_to_have_text(first)
    page.wait_for_function("() => document.activeElement?.closest('#intent-video') !== null", timeout=10_000)
    page.wait_for_function(f"() => document.querySelector('{VIDEO}').readyState >= 2", timeout=30_000)
    _video(page, "{ v.muted = true; }")
    page.keyboard.press("k")
    page.wait_for_function(f"() => !document.querySelector('{VIDEO}').paused")
    assert concrete.input_value() == ""  # nothing typed into the next task's field


def test_a_long_action_name_is_not_cut_and_reads_in_full(app, browser):
    """Issue 44 §13: a long name wraps in its bar instead of ending in "…", and the full name with its times is
    written under the timeline while the bar is pointed at (the bar's title says it too)."""
    for viewport, extra in (
        ({"width": 1280, "height": 800}, {}),
        ({"width": 390, "height": 844}, {"is_mobile": True, "has_touch": True}),
    ):
        page = _annotator(browser, app, "ann1", viewport=viewport, **extra)
        bar = page.get_by_role("button", name="Putting a cup/glass/bottle somewhere 0–3 s")
        fits = "b => b.scrollWidth <= b.clientWidth + 1 && b.scrollHeight <= b.clientHeight + 1"
        assert bar.evaluate(fits), bar.evaluate("b => [b.scrollWidth, b.clientWidth, b.scrollHeight, b.clientHeight]")
        assert bar.get_attribute("title") == "Putting a cup/glass/bottle somewhere 0–3 s"
        bar.click()
        expect(page.locator("#intent-video .csp-now-line")).to_contain_text(
            "Putting a cup/glass/bottle somewhere (0–3 s)"
        )
        shot(page, f"long-name-{viewport['width']}")
        page.context.close()
