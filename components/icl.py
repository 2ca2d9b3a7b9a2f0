"""The In-context examples tab (CoFe): pick a test case, a selector and its weights; see the chosen examples
in prompt order with their scores and what each newly covered, what nothing covers, the Table 2 statistics,
the prompt; compare two selectors side by side; ask a text model."""

from __future__ import annotations

import html
from dataclasses import asdict, dataclass
from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.errors import PermissionDenied
from backend.icl import service
from backend.icl.evaluation import BENCHMARK, eval_item
from backend.icl.prompts import ORDERS
from backend.icl.selection import PRESET_HELP
from backend.icl.selectors import SETTINGS_HELP, setting_names
from backend.inference.benchmarks import EvalItem
from components.common import EventOptions, TabHandle, caller, esc, ui_errors
from components.models import build_ask_model

ROW_COLUMNS = ["position", "line", "input", "output", "primitive_coverage", "structural_similarity", "new_primitives", "new_structures"]
HELP = {**PRESET_HELP, **SETTINGS_HELP}


def _code(key: str) -> str:
    return f"<code>{html.escape(key)}</code>"


def case_markdown(view: service.CaseView) -> str:
    test, stats = view.result.test, view.result.stats
    aiming = ", ".join(_code(k) for k in view.aiming) or "none recognised for this category"
    missing_p = ", ".join(esc(k) for k in view.uncovered_primitives) or "none"
    lines = [
        f"**Input:** {esc(test.input)}  \n**Output:** {esc(test.output)}  \n**Category:** {esc(test.category) or '-'}",
        f"**Aiming combination (never in a chosen example):** {aiming}",
        f"**Coverage:** T_L {stats['T_L']:.0%} · T_N {stats['T_N']:.0%} · T_S^1 {stats['T_S1']:.0%} · "
        f"T_S^>1 {stats['T_S2']:.0%} · context {int(stats['context_length'])} tokens",
        f"**Primitives nothing covers:** {missing_p}",
        f"**Structures nothing covers ({len(view.uncovered_structures)}):** "
        + (", ".join(_code(k) for k in view.uncovered_structures[:30]) or "none")
        + (" ..." if len(view.uncovered_structures) > 30 else ""),
    ]
    return "\n\n".join(lines)


def prompt_label(view: service.CaseView) -> str:
    return f"Prompt ({len(view.result.prompt.split())} whitespace tokens)"


SELECTION_FIELDS = ("bank", "tests", "line", "setting", "order", "n", "seed", "fictional", "w_p", "w_s", "w_c",
                    "diversity", "primitive_once")


@dataclass
class IclView:
    """The tab's components: ``selection`` holds the inputs of one selection by CaseRequest field name."""

    bank: gr.Dropdown
    tests: gr.Dropdown
    category: gr.Dropdown
    query: gr.Textbox
    cases: gr.Dropdown
    setting: gr.Dropdown
    setting_b: gr.Dropdown
    setting_help: gr.Markdown
    selection: dict[str, Any]
    run: gr.Button
    results: dict[str, Any]
    item: gr.State
    models: gr.Dropdown


def _selector_inputs(selection: dict[str, Any]) -> tuple[gr.Dropdown, gr.Dropdown]:
    with gr.Row():
        selection["setting"] = gr.Dropdown(setting_names(), value="full_similarity", label="Selector",
                                           elem_id="icl_setting")
        setting_b = gr.Dropdown(["", *setting_names()], value="", label="Compare with", elem_id="icl_setting_b")
        selection["order"] = gr.Dropdown(list(ORDERS), value="structure_closer", label="Prompt order")
        selection["n"] = gr.Number(10, label="Examples", precision=0, minimum=1, maximum=50)
        selection["seed"] = gr.Number(0, label="Seed", precision=0)
        selection["fictional"] = gr.Checkbox(False, label="Fictional words (C.7)")
    with gr.Accordion("CoFe weights (blank: the preset's)", open=False):
        with gr.Row():
            for name in ("w_p", "w_s", "w_c"):
                selection[name] = gr.Number(None, label=name)
            selection["diversity"] = gr.Dropdown(["preset", "on", "off"], value="preset",
                                                 label="S(C) term (diversity)")
            selection["primitive_once"] = gr.Dropdown(["preset", "on", "off"], value="preset",
                                                      label="Count a primitive once")
    return selection["setting"], setting_b


def _result_columns() -> dict[str, Any]:
    out: dict[str, Any] = {}
    with gr.Row():
        with gr.Column():
            out["summary"] = gr.Markdown(elem_id="icl_summary")
            out["table"] = gr.Dataframe(headers=ROW_COLUMNS, interactive=False, wrap=True, elem_id="icl_table")
            out["prompt"] = gr.Textbox(label="Prompt", lines=12, elem_id="icl_prompt", buttons=["copy"])
        with gr.Column(visible=False) as out["column_b"]:
            out["summary_b"] = gr.Markdown(elem_id="icl_summary_b")
            out["table_b"] = gr.Dataframe(headers=ROW_COLUMNS, interactive=False, wrap=True)
            out["prompt_b"] = gr.Textbox(label="Prompt", lines=12)
    return out


def _layout(ctx: AppContext) -> IclView:
    gr.Markdown(
        "Choose in-context examples for a test case as CoFe does (structural similarity, "
        "diversity, complexity) or with a baseline, and inspect what each choice covers."
    )
    with gr.Row():
        bank = gr.Dropdown([], label="Example bank", elem_id="icl_bank", allow_custom_value=True)
        tests = gr.Dropdown([], label="Test set", elem_id="icl_tests", allow_custom_value=True)
        category = gr.Dropdown([""], value="", label="Category", elem_id="icl_category")
        query = gr.Textbox(label="Search inputs", elem_id="icl_query")
    cases = gr.Dropdown([], label="Test case", elem_id="icl_case", allow_custom_value=True)
    selection: dict[str, Any] = {"bank": bank, "tests": tests, "line": cases}
    setting, setting_b = _selector_inputs(selection)
    setting_help = gr.Markdown(HELP["full_similarity"])
    run = gr.Button("Select examples", variant="primary", elem_id="icl_run")
    results = _result_columns()
    item = gr.State(None)
    gr.Markdown("### Ask a model")
    models = build_ask_model(ctx, BENCHMARK, _item_of, item, api_name="icl_ask")
    return IclView(bank, tests, category, query, cases, setting, setting_b, setting_help, selection, run, results,
                   item, models)


def case_request(values: dict[str, Any], setting: str, weights: bool = True) -> service.CaseRequest:
    """A CaseRequest from the tab's inputs (by field name); ``weights=False`` keeps the preset's weights."""
    if not values["bank"] or not values["tests"] or values["line"] is None:
        raise gr.Error("Choose an example bank, a test set and a test case.")
    switch = {"on": True, "off": False}
    return service.CaseRequest(
        bank=values["bank"], tests=values["tests"], line=int(values["line"]), setting=setting,
        n=int(values["n"] or 10), order=values["order"], seed=int(values["seed"] or 0),
        fictional=bool(values["fictional"]),
        w_p=values["w_p"] if weights else None, w_s=values["w_s"] if weights else None,
        w_c=values["w_c"] if weights else None,
        diversity=switch.get(values["diversity"]),
        primitive_once=switch.get(values["primitive_once"]) if weights else None,
    )


def _select(ctx: AppContext, v: IclView, data: dict, user: str | None) -> dict:
    values = {name: data[component] for name, component in v.selection.items()}
    view = service.select_case(ctx, user, case_request(values, values["setting"]))
    r, name_b = v.results, data[v.setting_b]
    out: dict[Any, Any] = {
        r["summary"]: case_markdown(view),
        r["table"]: pd.DataFrame(view.rows(), columns=ROW_COLUMNS),
        r["prompt"]: gr.update(value=view.result.prompt, label=prompt_label(view)),
        v.item: {"tests": values["tests"], "line": int(values["line"]), "setting": values["setting"],
                 "prompt": view.result.prompt, "truth": view.result.ground_truth,
                 "category": view.result.test.category},
        r["column_b"]: gr.update(visible=bool(name_b)),
        r["summary_b"]: "", r["table_b"]: pd.DataFrame(columns=ROW_COLUMNS), r["prompt_b"]: "",
    }
    if name_b:  # the second selector runs with its preset's weights and diversity "preset"
        view_b = service.select_case(ctx, user, case_request({**values, "diversity": "preset"}, name_b, False))
        out[r["summary_b"]] = f"#### {esc(name_b)}\n\n" + case_markdown(view_b)
        out[r["table_b"]] = pd.DataFrame(view_b.rows(), columns=ROW_COLUMNS)
        out[r["prompt_b"]] = gr.update(value=view_b.result.prompt, label=prompt_label(view_b))
    return out


def build_icl_tab(ctx: AppContext) -> TabHandle:
    with gr.Tab("In-context examples", id="icl", visible=False) as tab:
        v = _layout(ctx)
        _register_api(ctx)

    @ui_errors
    def on_load(request: gr.Request) -> dict:
        from backend.inference import service as inference

        found = service.sets(ctx, caller(ctx, request))
        banks, test_sets = found["bank"], found["tests"]
        try:
            names = [m["name"] for m in inference.model_table(ctx, caller(ctx, request))]
        except PermissionDenied:  # annotators may browse selections; asking a model needs a reviewer
            names = []
        return {
            v.bank: gr.update(choices=banks, value=banks[0] if banks else None),
            v.tests: gr.update(choices=test_sets, value=test_sets[0] if test_sets else None),
            v.models: gr.update(choices=names, value=names[0] if names else None),
        }

    @ui_errors
    def on_tests(tests_name: str | None, cat: str, text_query: str, request: gr.Request) -> dict:
        if not tests_name:
            return {v.category: gr.update(choices=[""], value=""), v.cases: gr.update(choices=[], value=None)}
        user = caller(ctx, request)
        cats = service.categories(ctx, user, tests_name)
        cat = cat if cat in cats else ""
        rows = service.search_cases(ctx, user, tests_name, cat, text_query or "")
        choices = [(f"{r['line']}: [{r['category']}] {r['input']}", r["line"]) for r in rows]
        return {
            v.category: gr.update(choices=["", *cats], value=cat),
            v.cases: gr.update(choices=choices, value=choices[0][1] if choices else None),
        }

    @ui_errors
    def on_run(data: dict, request: gr.Request) -> dict:
        return _select(ctx, v, data, caller(ctx, request))

    _wire(v, on_tests, on_run)
    return TabHandle(tab, "annotator", on_load=(on_load, [v.bank, v.tests, v.models]))


def _wire(v: IclView, on_tests: Any, on_run: Any) -> None:
    private: EventOptions = {"api_visibility": "private", "queue": False}
    case_inputs, case_outputs = [v.tests, v.category, v.query], [v.category, v.cases]
    v.tests.change(on_tests, case_inputs, case_outputs, **private)
    v.category.change(on_tests, case_inputs, case_outputs, **private)
    v.query.submit(on_tests, case_inputs, case_outputs, **private)
    v.setting.change(lambda s: HELP.get(s, ""), [v.setting], [v.setting_help], **private)
    v.run.click(on_run, {*v.selection.values(), v.setting_b}, [*v.results.values(), v.item],
                api_visibility="private", concurrency_limit=2)


def _register_api(ctx: AppContext) -> None:
    """Named JSON endpoints: icl_sets, icl_cases, icl_select, icl_answer."""

    @ui_errors
    def icl_sets(request: gr.Request) -> dict:
        """The stored example banks and test sets: {"bank": [...], "tests": [...]}."""
        return service.sets(ctx, caller(ctx, request))

    @ui_errors
    def icl_cases(tests: str, category: str, query: str, request: gr.Request) -> list[dict]:
        """Test cases of a test set (``line``, ``category``, ``input``), filtered by category and text."""
        return service.search_cases(ctx, caller(ctx, request), tests, category or "", query or "")

    @ui_errors
    def icl_select(selection: dict, request: gr.Request) -> dict:
        """One selection: {bank, tests, line, setting?, n?, order?, seed?, fictional?, w_p?, w_s?, w_c?,
        diversity?, primitive_once?}; returns the chosen examples, statistics, prompt and ground truth."""
        return service.select_case_json(ctx, caller(ctx, request), selection)

    @ui_errors
    def icl_answer(selection: dict, model: str, request: gr.Request) -> dict:
        """A text model's live answer to the prompt of one selection (reviewers): exact match per the paper."""
        from backend.inference import service as inference

        user = caller(ctx, request)
        chosen = service.select_case_json(ctx, user, selection)
        value = {"tests": selection["tests"], "line": int(selection["line"]),
                 "setting": selection.get("setting") or "full_similarity", "prompt": chosen["prompt"],
                 "truth": chosen["ground_truth"], "category": chosen["test"]["category"]}
        return asdict(inference.ask_model(ctx, user, BENCHMARK, model, _item_of(value)))

    for fn in (icl_sets, icl_cases, icl_select):
        gr.api(fn, api_name=fn.__name__, concurrency_limit=2)
    gr.api(icl_answer, api_name="icl_answer", concurrency_id="models", concurrency_limit=1)


def _item_of(value: dict[str, Any] | None) -> EvalItem:
    if not value:
        raise gr.Error("Select examples for a test case first.")
    return eval_item(value["tests"], value["line"], value["setting"], value["prompt"], value["truth"],
                     value.get("category", ""))
