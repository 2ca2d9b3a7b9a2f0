"""The selection panel of the In-context examples tab: a selector, its weights and which sides of equation 2 it
matches; the chosen examples in prompt order with their scores and what each newly covered, the Table 2
statistics (for the case, or for the whole test set with the count a variant keeps), the prompt, and a second
selector side by side. A mistake in the inputs is answered in the message line (components/icl/view.py)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.errors import CompStudioError, ValidationError
from backend.icl import service
from backend.icl.evaluation import eval_item
from backend.icl.matching import MATCHING
from backend.icl.prompts import ORDERS
from backend.icl.selection import PRESET_HELP, PRESETS
from backend.icl.selectors import setting_names
from backend.inference.benchmarks import EvalItem
from components.common import caller, esc
from components.events import Event, bind
from components.icl.cases import CasesPanel
from components.icl.view import HELP, ROW_COLUMNS, case_markdown, not_done


@dataclass(frozen=True)
class Selection:
    """The inputs of one selection, named as ``service.CaseRequest``'s fields (``line``: the test case)."""

    bank: gr.Dropdown
    tests: gr.Dropdown
    line: gr.Dropdown
    setting: gr.Dropdown
    order: gr.Dropdown
    n: gr.Number
    seed: gr.Number
    fictional: gr.Checkbox
    w_p: gr.Number
    w_s: gr.Number
    w_c: gr.Number
    diversity: gr.Dropdown
    primitive_once: gr.Dropdown
    matching: gr.Dropdown
    mmr_lambda: gr.Number
    mmr_pool: gr.Number

    @property
    def inputs(self) -> set[Any]:
        return {getattr(self, f.name) for f in fields(self)}

    def values(self, data: dict) -> dict[str, Any]:
        """The values of a call's inputs (Gradio's dict by component), by field name."""
        return {f.name: data[getattr(self, f.name)] for f in fields(self)}


@dataclass(frozen=True)
class Results:
    """The chosen examples, statistics and prompt; the second selector's beside them (``column_b``)."""

    summary: gr.Markdown
    table: gr.Dataframe
    prompt: gr.Textbox
    column_b: gr.Column
    summary_b: gr.Markdown
    table_b: gr.Dataframe
    prompt_b: gr.Textbox

    @property
    def outputs(self) -> list[Any]:
        return [self.summary, self.table, self.prompt, self.column_b, self.summary_b, self.table_b, self.prompt_b]


@dataclass(frozen=True)
class SelectionPanel:
    selection: Selection
    setting_b: gr.Dropdown
    setting_help: gr.Markdown
    run: gr.Button
    set_table: gr.Button
    message: gr.Markdown  # the tab's message line: what was done, or why not
    set_summary: gr.Markdown
    results: Results
    item: gr.State  # the selection on screen, as the "Ask a model" panel's item (item_of)


def _selection(c: CasesPanel) -> tuple[Selection, gr.Dropdown]:
    """The selector's inputs (with the test case chosen in ``c``), and the second selector to compare with."""
    with gr.Row():
        setting = gr.Dropdown(setting_names(), value="full_similarity", label="Selector", elem_id="icl_setting")
        setting_b = gr.Dropdown(["", *setting_names()], value="", label="Compare with", elem_id="icl_setting_b")
        matching = gr.Dropdown(list(MATCHING), value="both", label="Matching (equation 2)", elem_id="icl_matching")
        order = gr.Dropdown(list(ORDERS), value="structure_closer", label="Prompt order")
        n = gr.Number(10, label="Examples", precision=0, minimum=1, maximum=50)
        seed = gr.Number(0, label="Seed", precision=0)
        fictional = gr.Checkbox(False, label="Fictional words (C.7)")
    with gr.Accordion("CoFe weights (filled from the preset) and MMR", open=False):
        with gr.Row():  # a gr.Number cannot stay blank (it sends 0), so the preset's values are shown and sent
            preset = PRESETS["full_similarity"]
            w_p, w_s, w_c = (gr.Number(getattr(preset, k), label=k, elem_id=f"icl_{k}") for k in ("w_p", "w_s", "w_c"))
            diversity = gr.Dropdown(["preset", "on", "off"], value="preset", label="S(C) term (diversity)")
            primitive_once = gr.Dropdown(["preset", "on", "off"], value="preset", label="Count a primitive once")
        with gr.Row():
            mmr_lambda = gr.Number(0.5, label="MMR λ (1: relevance only, 0: diversity only)", elem_id="icl_mmr_lambda")
            mmr_pool = gr.Number(
                100, label="MMR pool (most similar examples considered)", precision=0, elem_id="icl_mmr_pool"
            )
    chosen = Selection(
        bank=c.bank, tests=c.tests, line=c.case, setting=setting, order=order, n=n, seed=seed, fictional=fictional,
        w_p=w_p, w_s=w_s, w_c=w_c, diversity=diversity, primitive_once=primitive_once, matching=matching,
        mmr_lambda=mmr_lambda, mmr_pool=mmr_pool,
    )  # fmt: skip
    return chosen, setting_b


def _results() -> Results:
    with gr.Row():
        with gr.Column():
            summary = gr.Markdown(elem_id="icl_summary")
            table = gr.Dataframe(headers=ROW_COLUMNS, interactive=False, wrap=True, elem_id="icl_table")
            prompt = gr.Textbox(label="Prompt", lines=12, elem_id="icl_prompt", buttons=["copy"])
        with gr.Column(visible=False) as column_b:
            summary_b = gr.Markdown(elem_id="icl_summary_b")
            table_b = gr.Dataframe(headers=ROW_COLUMNS, interactive=False, wrap=True)
            prompt_b = gr.Textbox(label="Prompt", lines=12)
    return Results(summary, table, prompt, column_b, summary_b, table_b, prompt_b)


def layout(c: CasesPanel) -> SelectionPanel:
    selection, setting_b = _selection(c)
    setting_help = gr.Markdown(HELP["full_similarity"])
    with gr.Row():
        run = gr.Button("Select examples", variant="primary", elem_id="icl_run")
        set_table = gr.Button("Table 2 over the test set", elem_id="icl_set_table")
    message = gr.Markdown(elem_id="icl_message")
    set_summary = gr.Markdown(elem_id="icl_set_summary")
    results = _results()
    item = gr.State(None)
    return SelectionPanel(selection, setting_b, setting_help, run, set_table, message, set_summary, results, item)


def case_request(values: dict[str, Any], setting: str, weights: bool = True) -> service.CaseRequest:
    """A CaseRequest from the tab's inputs (by field name); ``weights=False`` keeps the preset's weights (the
    matching variant, when the second selector is a CoFe preset, carries over)."""
    if not values["bank"] or not values["tests"] or values["line"] is None:
        raise ValidationError("Choose an example bank, a test set and a test case.")
    switch = {"on": True, "off": False}
    matching = values.get("matching") or "both"
    return service.CaseRequest(
        bank=values["bank"],
        tests=values["tests"],
        line=int(values["line"]),
        setting=setting,
        n=int(values["n"] or 10),
        order=values["order"],
        seed=int(values["seed"] or 0),
        fictional=bool(values["fictional"]),
        w_p=values["w_p"] if weights else None,
        w_s=values["w_s"] if weights else None,
        w_c=values["w_c"] if weights else None,
        diversity=switch.get(values["diversity"]),
        primitive_once=switch.get(values["primitive_once"]) if weights else None,
        matching=matching if setting in PRESET_HELP else None,
        mmr_lambda=_number(values.get("mmr_lambda"), 0.5),
        mmr_pool=int(_number(values.get("mmr_pool"), 100)),
    )


def _number(value: Any, default: float) -> float:
    return default if value is None else float(value)


def _embedding_model(ctx: AppContext, setting: str) -> str | None:
    return ctx.settings.embedding_model if setting in {"embedding", "mmr"} else None


def item_of(value: dict[str, Any] | None) -> EvalItem:
    """The selection on screen (``SelectionPanel.item``) as the item a model is asked."""
    if not value:
        raise gr.Error("Select examples for a test case first.")
    return eval_item(
        value["tests"], value["line"], value["setting"], value["prompt"], value["truth"], value.get("category", "")
    )


def preset_fields(setting: str) -> list[Any]:
    """The selector's help and, for a CoFe preset, its w_p, w_s, w_c in the weight fields (baselines leave them)."""
    preset = PRESETS.get(setting)
    if preset is None:
        return [HELP.get(setting, ""), gr.skip(), gr.skip(), gr.skip()]
    return [HELP.get(setting, ""), preset.w_p, preset.w_s, preset.w_c]


def select(ctx: AppContext, p: SelectionPanel, data: dict, user: str | None) -> dict:
    """The outputs of one selection (and of the second selector beside it, when one is chosen)."""
    values = p.selection.values(data)
    request = case_request(values, values["setting"])
    view = service.select_case(ctx, user, request)
    r, name_b = p.results, data[p.setting_b]
    out: dict[Any, Any] = {
        p.message: "",
        r.summary: case_markdown(view, _embedding_model(ctx, values["setting"])),
        r.table: pd.DataFrame(view.rows(), columns=ROW_COLUMNS),
        r.prompt: view.result.prompt,
        p.item: {
            "tests": values["tests"],
            "line": int(values["line"]),
            "setting": request.variant,
            "prompt": view.result.prompt,
            "truth": view.result.ground_truth,
            "category": view.result.test.category,
        },
        r.column_b: gr.update(visible=bool(name_b)),
        r.summary_b: "",
        r.table_b: pd.DataFrame(columns=ROW_COLUMNS),
        r.prompt_b: "",
    }
    if name_b:  # the second selector runs with its preset's weights and diversity "preset"
        view_b = service.select_case(ctx, user, case_request({**values, "diversity": "preset"}, name_b, False))
        out[r.summary_b] = f"#### {esc(name_b)}\n\n" + case_markdown(view_b, _embedding_model(ctx, name_b))
        out[r.table_b] = pd.DataFrame(view_b.rows(), columns=ROW_COLUMNS)
        out[r.prompt_b] = view_b.result.prompt
    return out


def on_run(ctx: AppContext, p: SelectionPanel, data: dict, request: gr.Request) -> dict:
    try:
        return select(ctx, p, data, caller(ctx, request))
    except CompStudioError as exc:
        return not_done(p.message, exc)


def on_set_table(ctx: AppContext, p: SelectionPanel, data: dict, request: gr.Request) -> dict:
    values = p.selection.values(data)
    try:
        table = service.set_table(ctx, caller(ctx, request), case_request({**values, "line": 0}, values["setting"]))
    except CompStudioError as exc:
        return not_done(p.message, exc)
    return {
        p.message: "",
        p.set_summary: f"#### {esc(values['setting'])} over {esc(values['tests'])}\n\n" + table["markdown"],
    }


def events(ctx: AppContext, p: SelectionPanel) -> list[Event]:
    s, minimal = p.selection, {"show_progress": "minimal"}
    return [
        Event(
            "icl_ui_setting", "annotator", preset_fields, s.setting.change, [s.setting],
            [p.setting_help, s.w_p, s.w_s, s.w_c], {"queue": False},
        ),
        Event(
            "icl_ui_run", "annotator", bind(on_run, ctx, p), p.run.click, {*s.inputs, p.setting_b},
            [p.message, *p.results.outputs, p.item], {"concurrency_limit": 2, **minimal},
        ),
        Event(
            "icl_ui_set_table", "annotator", bind(on_set_table, ctx, p), p.set_table.click, s.inputs,
            [p.message, p.set_summary], {"concurrency_limit": 1, **minimal},
        ),
    ]  # fmt: skip
