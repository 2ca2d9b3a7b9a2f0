"""The intent-annotation panel's handlers called directly (components/intents/work.py): no browser, no server,
a real AppContext on demo content (issue 43: a panel's events can be called without a browser)."""

from __future__ import annotations

import gradio as gr
import pytest

from backend.accounts import auth
from components.common import esc
from components.intents.work import IntentsPanel, layout, on_load, on_skip, on_start, on_submit

GOOD = ("S/He wants to have a drink", "S/He is thirsty")


@pytest.fixture
def demo(demo_ctx):
    auth.add_user(demo_ctx.database, "ann1", "annotator", "password1")
    auth.add_user(demo_ctx.database, "rev", "reviewer", "password1")
    return demo_ctx


@pytest.fixture
def panel() -> IntentsPanel:
    with gr.Blocks():
        return layout()


def as_(name: str | None) -> gr.Request:
    return gr.Request(username=name)


def test_an_annotator_gets_a_task_and_a_short_watch_changes_only_the_message(demo, panel):
    shown = on_load(demo, panel, as_("ann1"))
    sequence = shown[panel.current]
    assert sequence and f'<span id="intent-sequence">{esc(sequence)}</span>' in shown[panel.details]
    assert shown[panel.form]["visible"] is True and shown[panel.start]["visible"] is False
    assert on_start(demo, panel, sequence, as_("ann1")) == {panel.progress: gr.update()}  # keeps what was typed
    refused = on_submit(demo, panel, sequence, *GOOD, None, as_("ann1"))
    assert list(refused) == [panel.message]  # the person's text and video are not touched
    assert 'class="cs-watch-problem"' in refused[panel.message] and "Watched 0%" in refused[panel.message]
    nothing = on_submit(demo, panel, None, *GOOD, 1.0, as_("ann1"))
    assert nothing == {panel.message: "⚠️ There is no task to submit.  "}


def test_skip_hands_the_next_task_and_a_reviewer_asks_before_leasing(demo, panel):
    sequence = on_load(demo, panel, as_("ann1"))[panel.current]
    assert list(on_skip(demo, panel, sequence, "", as_("ann1"))) == [panel.skip_message]  # a reason is needed
    skipped = on_skip(demo, panel, sequence, "the video is too dark", as_("ann1"))
    assert skipped[panel.current] not in (None, sequence) and skipped[panel.reason] == ""
    waiting = on_load(demo, panel, as_("rev"))
    assert panel.current not in waiting and waiting[panel.start]["visible"] is True  # nothing leased yet
    started = on_start(demo, panel, None, as_("rev"))
    assert started[panel.current] and started[panel.form]["visible"] is True
    assert on_load(demo, panel, as_("rev"))[panel.current] == started[panel.current]  # now held: shown on reload
    assert on_load(demo, panel, as_(None)) == {panel.progress: "Sign in to annotate."}
