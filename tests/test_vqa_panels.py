"""The VQA tab's panel handlers called directly, as plain functions with a real AppContext: no browser, no server
(issue 43 §6: a panel's events can be called without a browser). The same behaviours the browser tests check
(tests/e2e/test_vqa.py) at a fraction of their cost: the verifier's decision and what it says, the answer form
filled without the key, the score after submitting, "nothing left" hiding the form."""

from __future__ import annotations

import gradio as gr
import pytest

from backend.accounts import auth
from backend.vqa import service
from backend.vqa.demo import DEMO_FILE
from backend.vqa.permissions import set_permission
from components.common import esc
from components.vqa import answer, verify

IMAGES = DEMO_FILE.parent / "images"


@pytest.fixture
def item(ctx):
    """A two-image item by ``writer``, waiting for the verifiers ``ver1`` and ``ver2``; ``ann`` answers."""
    auth.add_user(ctx.database, "boss", "admin", "password123")
    for name in ("ann", "writer", "ver1", "ver2"):
        auth.add_user(ctx.database, name, "annotator", "password123")
    for name in ("writer", "ver1", "ver2"):
        set_permission(ctx.database, "boss", name, "author")
    images = service.upload_images(
        ctx.database, ctx.settings, "writer", [IMAGES / "astronaut.jpg", IMAGES / "astronaut_mirrored.jpg"]
    )
    return service.create_item(
        ctx.database,
        ctx.settings,
        "writer",
        category="Difference Spotting",
        question="In which image is the flag on the left?",
        options=["Left", "Right"],
        answer="A",
        choice_type="single",
        images=images,
    )


def _as(name: str) -> gr.Request:
    return gr.Request(username=name)


def test_verify_then_answer_through_the_panel_handlers(ctx, item):
    with gr.Blocks():  # the panels' components, as the tab lays them out; no event is served
        checking = verify.layout(ctx.settings.vqa_verifiers)
        answering = answer.layout()

    outcomes = []
    for verifier in ("ver1", "ver2"):
        shown = verify.on_fetch(ctx, checking, _as(verifier))
        assert shown[checking.current] == item.id and "✅" in shown[checking.details]  # verifiers judge the key
        fields = {component: shown.get(component) for component in checking.inputs}
        fields |= {checking.compositional: True, checking.key_right: True, checking.note: ""}
        decided = verify.on_accept(ctx, checking, fields, _as(verifier))
        outcomes.append(decided[checking.outcome])
        assert decided[checking.current] is None and decided[checking.form]["visible"] is False
    assert outcomes == [
        f"Recorded your accept of {esc(item.id)}; the item is still a **draft**: it waits for the other verifiers.",
        f"Recorded your accept of {esc(item.id)}; the item is now **verified**.",
    ]

    opened = answer.on_open(ctx, answering, _as("ann"))
    assert opened[answering.current] == item.id and opened[answering.form]["visible"] is True
    assert "flag on the left" in opened[answering.question] and "✅" not in opened[answering.question]  # no key
    assert opened[answering.choices]["choices"] == [("A. Left", "A"), ("B. Right", "B")]
    assert opened[answering.progress].endswith("**items left for you:** 1")

    done = answer.on_submit(ctx, answering, item.id, ["A"], _as("ann"))
    assert done[answering.result] == f"Your answer A for {esc(item.id)}: key A, score 1.00."
    assert done[answering.current] is None and done[answering.form]["visible"] is False
    assert done[answering.question] == "### Nothing left for you to answer. Thank you!"
    assert done[answering.progress] == "**Answered by you:** 1 · nothing left for you to answer"
