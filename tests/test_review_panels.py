"""The review tab's panels called directly, without a browser or a server (issue 43 §6): a panel is a layout
dataclass, plain handlers and its declared events, so a handler is a function of (ctx, panel, inputs, request)."""

from __future__ import annotations

import gradio as gr
import pytest

from components.review import agreement, queue
from components.review.api import endpoints
from tests.review_helpers import add_people, add_sequences, annotate_all


@pytest.fixture
def panel() -> queue.QueuePanel:
    with gr.Blocks():
        return queue._layout(3)


def test_the_queue_hands_a_reviewer_an_item_and_submit_records_the_review(ctx, database, settings, panel):
    add_sequences(database, ["s1"])
    add_people(database, annotators=["a1", "a2", "a3"], reviewers=["rev"])
    annotate_all(database, settings, ["a1", "a2", "a3"])
    shown = queue.on_next(ctx, panel, False, gr.Request(username="rev"))
    item = shown[panel.current]
    assert item["sequence_id"] == "s1" and len(item["annotations"]) == 3
    assert shown[panel.intent_views[0]].startswith("**Annotator A**") and "a1" not in shown[panel.intent_views[0]]
    first = str(item["annotations"][0]["annotation_id"])
    data = {panel.current: item, panel.note: "fine", panel.concrete_from: first, panel.high_from: first}
    data |= {panel.concrete_text: "", panel.high_text: ""}
    data |= {v: queue.REASONABLE for v in panel.verdicts} | {c: "" for c in panel.comments}
    after = queue.on_submit(ctx, panel, data, gr.Request(username="rev"))
    assert after[panel.status].startswith("**Saved:** s1 round 1 accepted")
    assert after[panel.current] is None  # nothing left for this reviewer


def test_a_handler_says_what_is_missing_and_the_events_declare_their_rows(ctx, database, panel):
    with pytest.raises(Exception, match="no item to skip"):
        queue.on_skip(ctx, panel, None, "why", gr.Request(username="rev"))
    rows = {event.name: event.least for event in queue.events(ctx, panel)}
    assert rows["review_ui_submit"] == "reviewer" and len(rows) == 7
    scripts = {event.name: (event.least, event.endpoint) for event in endpoints(ctx)}
    assert scripts["review_export"] == ("admin", True) and scripts["review_next"] == ("reviewer", True)
    with gr.Blocks():
        compare = agreement.layout()
    assert len(compare.fields.inputs) == 8
