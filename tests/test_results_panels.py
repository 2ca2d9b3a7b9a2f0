"""The Results and Models tabs' panels called as plain functions (issue 43 §6): a panel's handler takes the app's
context, its panel of components and the event's inputs, and returns its outputs by component. No server, no
browser: a real AppContext, real stored runs of the random baseline on the toy benchmark."""

from __future__ import annotations

import gradio as gr
import pytest

from backend.accounts import auth
from backend.errors import PermissionDenied
from backend.inference import service
from backend.inference.registry import ModelSpec
from backend.inference.runner import run_eval
from components.common import esc
from components.feedback import Mistake
from components.models import form, registry
from components.results.samples import build_samples_panel, compare, item, pages
from components.results.samples.text import COLUMNS, PAGE_SIZE

ITEMS = 24  # toy-colors


@pytest.fixture
def lab(ctx):
    for name, role in (("rev", "reviewer"), ("ann", "annotator"), ("boss", "admin")):
        auth.add_user(ctx.database, name, role, None)
    ctx.models.register_model(ModelSpec("random-2", "random", options={"seed": 2}))
    runs = {model: run_eval(ctx, "toy-colors", model) for model in ("random", "random-2")}
    return ctx, runs


def _as(name: str) -> gr.Request:
    return gr.Request(username=name)


def test_the_samples_panel_pages_opens_and_compares_runs_without_a_browser(lab):
    ctx, runs = lab
    with gr.Blocks(), gr.Tabs():
        s = build_samples_panel(ctx)
    run_id, other_id = str(runs["random"].run_id), str(runs["random-2"].run_id)

    opened = pages.on_open(ctx, s.page, s.vs.other, _as("rev"))
    assert [value for _, value in opened[s.page.run].choices] == [other_id, run_id]  # newest first
    shown = pages.on_show(ctx, s.page, run_id, "wrong", "", "", _as("rev"))
    assert f": {ITEMS} items (" in shown[s.page.counts]
    table = shown[s.page.table]
    assert list(table.columns) == COLUMNS and set(table["outcome"]) == {"wrong"} and len(table) <= PAGE_SIZE
    beyond = pages.on_next(ctx, s.page, run_id, "all", "", "", 5, _as("rev"))
    assert beyond[s.page.page_no] == 1  # 24 items fill one page: the next page past the last is the last
    assert pages.on_show(ctx, s.page, None, "all", "", "", _as("rev"))[s.page.counts] == "Choose a run first."

    first = table["item"].iloc[0]
    detail = item.on_pick(ctx, s.item, run_id, first, _as("rev"))
    assert detail[s.item.header].startswith(f"### {esc(first)}\n") and detail[s.item.key]["settings_hash"]
    versus = compare.on_compare(ctx, s.vs, run_id, other_id, _as("rev"))
    assert "only A was right on" in versus[s.vs.counts] and len(versus[s.vs.pairs]) == len(versus[s.vs.table])
    sides = compare.on_compare_pick(ctx, s.vs, versus[s.vs.pairs], 0)
    assert sides[s.vs.side_a].startswith("**A: random**") and sides[s.vs.side_b].startswith("**B: random&#45;2**")

    with pytest.raises(PermissionDenied, match="reviewer"):  # the service checks the role: no guard needed here
        pages.on_show(ctx, s.page, run_id, "all", "", "", _as("ann"))


def test_the_models_panels_fill_save_and_refuse_without_a_browser(lab):
    ctx, _ = lab
    with gr.Blocks(), gr.Tabs(), gr.Tab("Models") as tab:
        v = registry.layout(tab)
        editor = form.layout(ctx)
    opened = registry.on_open(ctx, v, "Europe/Paris", _as("rev"))
    registered = len(service.model_table(ctx, "rev"))
    assert opened[v.zone] == "Europe/Paris" and opened[v.count].startswith(f"**{registered} models**")
    assert opened[v.count].endswith(" · 2 recent runs") and len(opened[v.runs]) == 2
    assert {"random", "random-2"} <= {value for _, value in opened[v.model].choices}
    assert registry.on_load(ctx, v, _as("ann")) == {v.count: gr.update()}  # annotators never see the tab: left empty

    with pytest.raises(Mistake, match="not valid JSON"):
        form.on_json_to_form(ctx, editor, "{nope")
    filled = form.on_json_to_form(ctx, editor, '{"name": "coin", "backend": "random", "batch_size": 3}')
    assert filled[editor.fields.name] == "coin" and filled[editor.fields.batch_size] == 3
    with pytest.raises(PermissionDenied, match="admin"):
        form.on_save_json(ctx, editor, v, '{"name": "coin", "backend": "random"}', None, _as("rev"))
    saved = form.on_save_json(ctx, editor, v, '{"name": "coin", "backend": "random"}', None, _as("boss"))
    assert saved[editor.message] == "Saved **coin**." and "coin" in {value for _, value in saved[v.model].choices}
    with pytest.raises(Mistake, match="name of the model"):
        form.on_delete(ctx, editor, v, "  ", None, _as("boss"))
