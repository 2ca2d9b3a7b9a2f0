"""The In-context examples tab (CoFe): pick a test case, a selector and its weights; see the chosen examples
in prompt order with their scores and what each newly covered, what nothing covers, the Table 2 statistics,
the prompt; compare two selectors side by side; ask a text model."""

from __future__ import annotations

import html
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
from components.common import TabHandle, caller, esc, ui_errors
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


def build_icl_tab(ctx: AppContext) -> TabHandle:
    with gr.Tab("In-context examples", id="icl", visible=False) as tab:
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
        with gr.Row():
            setting = gr.Dropdown(setting_names(), value="full_similarity", label="Selector", elem_id="icl_setting")
            setting_b = gr.Dropdown(["", *setting_names()], value="", label="Compare with", elem_id="icl_setting_b")
            order = gr.Dropdown(list(ORDERS), value="structure_closer", label="Prompt order")
            n = gr.Number(10, label="Examples", precision=0, minimum=1, maximum=50)
            seed = gr.Number(0, label="Seed", precision=0)
            fictional = gr.Checkbox(False, label="Fictional words (C.7)")
        with gr.Accordion("CoFe weights (blank: the preset's)", open=False):
            with gr.Row():
                w_p = gr.Number(None, label="w_p")
                w_s = gr.Number(None, label="w_s")
                w_c = gr.Number(None, label="w_c")
                diversity = gr.Dropdown(["preset", "on", "off"], value="preset", label="S(C) term (diversity)")
                once = gr.Dropdown(["preset", "on", "off"], value="preset", label="Count a primitive once")
        setting_help = gr.Markdown(HELP["full_similarity"])
        run = gr.Button("Select examples", variant="primary", elem_id="icl_run")
        with gr.Row():
            with gr.Column():
                summary = gr.Markdown(elem_id="icl_summary")
                table = gr.Dataframe(headers=ROW_COLUMNS, interactive=False, wrap=True, elem_id="icl_table")
                prompt = gr.Textbox(label="Prompt", lines=12, elem_id="icl_prompt", buttons=["copy"])
            with gr.Column(visible=False) as column_b:
                summary_b = gr.Markdown(elem_id="icl_summary_b")
                table_b = gr.Dataframe(headers=ROW_COLUMNS, interactive=False, wrap=True)
                prompt_b = gr.Textbox(label="Prompt", lines=12)
        item = gr.State(None)
        gr.Markdown("### Ask a model")
        models = build_ask_model(ctx, BENCHMARK, _item_of, item, api_name="icl_ask")

    def _sets(request: gr.Request):
        found = service.sets(ctx, caller(ctx, request))
        banks, test_sets = found["bank"], found["tests"]
        return {
            bank: gr.update(choices=banks, value=banks[0] if banks else None),
            tests: gr.update(choices=test_sets, value=test_sets[0] if test_sets else None),
        }

    @ui_errors
    def on_load(request: gr.Request):
        from backend.inference import service as inference

        out = _sets(request)
        try:
            names = [m["name"] for m in inference.model_table(ctx, caller(ctx, request))]
        except PermissionDenied:  # annotators may browse selections; asking a model needs a reviewer
            names = []
        out[models] = gr.update(choices=names, value=names[0] if names else None)
        return out

    @ui_errors
    def on_tests(tests_name: str | None, cat: str, text_query: str, request: gr.Request):
        if not tests_name:
            return {category: gr.update(choices=[""], value=""), cases: gr.update(choices=[], value=None)}
        user = caller(ctx, request)
        cats = service.categories(ctx, user, tests_name)
        cat = cat if cat in cats else ""
        rows = service.search_cases(ctx, user, tests_name, cat, text_query or "")
        choices = [(f"{r['line']}: [{r['category']}] {r['input']}", r["line"]) for r in rows]
        return {
            category: gr.update(choices=["", *cats], value=cat),
            cases: gr.update(choices=choices, value=choices[0][1] if choices else None),
        }

    def _request(bank_name, tests_name, line, name, order_v, n_v, seed_v, fict, wp, ws, wc, div, once="preset"):
        if not bank_name or not tests_name or line is None:
            raise gr.Error("Choose an example bank, a test set and a test case.")
        return service.CaseRequest(
            bank=bank_name,
            tests=tests_name,
            line=int(line),
            setting=name,
            n=int(n_v or 10),
            order=order_v,
            seed=int(seed_v or 0),
            fictional=bool(fict),
            w_p=wp,
            w_s=ws,
            w_c=wc,
            diversity={"on": True, "off": False}.get(div),
            primitive_once={"on": True, "off": False}.get(once),
        )

    @ui_errors
    def on_run(
        bank_name,
        tests_name,
        line,
        name,
        name_b,
        order_v,
        n_v,
        seed_v,
        fict,
        wp,
        ws,
        wc,
        div,
        once,
        request: gr.Request,
    ):
        user = caller(ctx, request)
        args = (bank_name, tests_name, line, name, order_v, n_v, seed_v, fict, wp, ws, wc, div, once)
        view = service.select_case(ctx, user, _request(*args))
        out: dict[Any, Any] = {
            summary: case_markdown(view),
            table: pd.DataFrame(view.rows(), columns=ROW_COLUMNS),
            prompt: gr.update(value=view.result.prompt, label=prompt_label(view)),
            item: {
                "tests": tests_name,
                "line": int(line),
                "setting": name,
                "prompt": view.result.prompt,
                "truth": view.result.ground_truth,
                "category": view.result.test.category,
            },
            column_b: gr.update(visible=bool(name_b)),
        }
        if name_b:
            view_b = service.select_case(
                ctx,
                user,
                _request(bank_name, tests_name, line, name_b, order_v, n_v, seed_v, fict, None, None, None, "preset"),
            )
            out[summary_b] = f"#### {esc(name_b)}\n\n" + case_markdown(view_b)
            out[table_b] = pd.DataFrame(view_b.rows(), columns=ROW_COLUMNS)
            out[prompt_b] = gr.update(value=view_b.result.prompt, label=prompt_label(view_b))
        else:
            out[summary_b], out[table_b], out[prompt_b] = "", pd.DataFrame(columns=ROW_COLUMNS), ""
        return out

    load_outputs = [bank, tests, models]
    case_outputs = [category, cases]
    tests.change(on_tests, [tests, category, query], case_outputs, api_name="icl_cases", queue=False)
    category.change(on_tests, [tests, category, query], case_outputs, api_name=False, queue=False)
    query.submit(on_tests, [tests, category, query], case_outputs, api_name=False, queue=False)
    setting.change(lambda s: HELP.get(s, ""), [setting], [setting_help], api_name=False, queue=False)
    run.click(
        on_run,
        [bank, tests, cases, setting, setting_b, order, n, seed, fictional, w_p, w_s, w_c, diversity, once],
        [summary, table, prompt, item, column_b, summary_b, table_b, prompt_b],
        api_name="icl_select",
        concurrency_limit=2,
    )
    return TabHandle(tab, "annotator", on_load=(on_load, load_outputs))


def _item_of(value: dict[str, Any] | None) -> EvalItem:
    if not value:
        raise gr.Error("Select examples for a test case first.")
    return eval_item(value["tests"], value["line"], value["setting"], value["prompt"], value["truth"],
                     value.get("category", ""))
