"""The In-context examples tab's panels called directly (components/icl/): no browser, no server, a real
AppContext with the demo sets (issue 43: a panel's events can be called without a browser)."""

from __future__ import annotations

import gradio as gr
import pytest

from backend.accounts import auth
from backend.icl.demo import ensure_icl_demo
from components.icl import cases, on_load, selection, upload


@pytest.fixture
def icl_ctx(ctx):
    ensure_icl_demo(ctx)
    auth.add_user(ctx.database, "ann", "annotator", "password1")
    return ctx


def test_the_load_fills_the_chooser_and_a_selection_without_a_case_is_answered_in_the_message(icl_ctx):
    with gr.Blocks():
        c = cases.layout()
        p = selection.layout(c)
        models = gr.Dropdown()
        up = upload.layout()
    request = gr.Request(username="ann")
    loaded = on_load(icl_ctx, c, models, up, request)
    assert loaded[c.bank]["value"] == "demo-bank" and loaded[up.box]["visible"] is False  # annotators upload nothing
    assert loaded[models]["choices"] == [] and loaded[c.case]["value"] is not None  # the first test set's first case
    data = {component: component.value for component in p.selection.inputs} | {p.setting_b: ""}
    data |= {c.bank: "demo-bank", c.tests: loaded[c.tests]["value"], c.case: None}
    assert selection.on_run(icl_ctx, p, data, request) == {
        p.message: "**Not done:** Choose an example bank, a test set and a test case."
    }
    chosen = selection.on_run(icl_ctx, p, {**data, c.case: loaded[c.case]["value"]}, request)
    assert chosen[p.message] == "" and len(chosen[p.results.table]) == 10 and chosen[p.item]["prompt"]
    assert chosen[p.results.column_b]["visible"] is False
