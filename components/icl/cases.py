"""The test-case chooser of the In-context examples tab: the example bank, the test set, a category and a text
search narrowing the test cases. A person's choice (``.input``) refills the cases; a set filled by the page load or
an upload comes with its cases already, so no second call follows it (issue 17: the load's change used to cost
every page a round trip)."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from backend.context import AppContext
from backend.icl import service
from components.common import caller
from components.events import Event, bind


@dataclass(frozen=True)
class CasesPanel:
    bank: gr.Dropdown
    tests: gr.Dropdown
    category: gr.Dropdown
    query: gr.Textbox
    case: gr.Dropdown  # the test case: its line in the test set


def layout() -> CasesPanel:
    with gr.Row():
        bank = gr.Dropdown([], label="Example bank", elem_id="icl_bank", allow_custom_value=True)
        tests = gr.Dropdown([], label="Test set", elem_id="icl_tests", allow_custom_value=True)
        category = gr.Dropdown([""], value="", label="Category", elem_id="icl_category")
        query = gr.Textbox(label="Search inputs", elem_id="icl_query")
    case = gr.Dropdown([], label="Test case", elem_id="icl_case", allow_custom_value=True)
    return CasesPanel(bank, tests, category, query, case)


def cases_of(ctx: AppContext, c: CasesPanel, tests_name: str | None, cat: str, query: str, user: str | None) -> dict:
    """The category and test-case choices of one test set (filled with the set, never by a second call)."""
    if not tests_name:
        return {c.category: gr.update(choices=[""], value=""), c.case: gr.update(choices=[], value=None)}
    cats = service.categories(ctx, user, tests_name)
    cat = cat if cat in cats else ""
    rows = service.search_cases(ctx, user, tests_name, cat, query or "")
    choices = [(f"{r['line']}: [{r['category']}] {r['input']}", r["line"]) for r in rows]
    return {
        c.category: gr.update(choices=["", *cats], value=cat),
        c.case: gr.update(choices=choices, value=choices[0][1] if choices else None),
    }


def on_tests(ctx: AppContext, c: CasesPanel, tests_name: str | None, cat: str, query: str, request: gr.Request) -> dict:
    return cases_of(ctx, c, tests_name, cat, query, caller(ctx, request))


def events(ctx: AppContext, c: CasesPanel) -> list[Event]:
    inputs, outputs, fast = [c.tests, c.category, c.query], [c.category, c.case], {"queue": False}
    handler = bind(on_tests, ctx, c)
    return [
        Event("icl_ui_tests", "annotator", handler, c.tests.input, inputs, outputs, fast),
        Event("icl_ui_tests_category", "annotator", handler, c.category.input, inputs, outputs, fast),
        Event("icl_ui_tests_query", "annotator", handler, c.query.submit, inputs, outputs, fast),
    ]
