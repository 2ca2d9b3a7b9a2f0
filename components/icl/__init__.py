"""The In-context examples tab (CoFe): pick a test case (components/icl/cases.py), a selector, its weights and
which sides of equation 2 it matches, and see the chosen examples, the Table 2 statistics and the prompt, or compare
two selectors side by side (selection.py); ask a text model; reviewers and admins upload banks and test sets
(upload.py). Named endpoints for scripts: components/icl/api.py.

A mistake in the inputs (a bad weight, no test case, a bad file) is answered in the message line under the
buttons: nothing is raised into Gradio's status tracker, so no "Error" badge covers the page and every input
keeps its value (docs/decisions.md, "In-context tab: messages instead of raised errors").
"""

from __future__ import annotations

import gradio as gr

from backend.context import AppContext
from backend.errors import PermissionDenied
from backend.icl import service
from backend.icl.evaluation import BENCHMARK
from components.common import TabHandle, caller
from components.events import bind, wire
from components.icl import cases, selection, upload
from components.model_choices import offer_models_on_open
from components.models import build_ask_model
from components.opening import tab_frame


def build_icl_tab(ctx: AppContext) -> TabHandle:
    with tab_frame("icl", visible=False) as tab:
        gr.Markdown(
            "Choose in-context examples for a test case as CoFe does (structural similarity, "
            "diversity, complexity) or with a baseline, and inspect what each choice covers."
        )
        c = cases.layout()
        p = selection.layout(c)
        gr.Markdown("### Ask a model")
        models = build_ask_model(ctx, BENCHMARK, selection.item_of, p.item, api_name="icl_ask", elem_id="icl-ask-model")
        up = upload.layout()
    wire(ctx, [*cases.events(ctx, c), *selection.events(ctx, p), *upload.events(ctx, up, c, p.message)])
    # a model saved in the Models tab is offered when the tab is next opened, as in Planning and VQA (issue 44 §7)
    offer_models_on_open(ctx, tab, [models], "icl_models_open", names_of=service.answer_models)
    outputs = [c.bank, c.tests, models, up.box, c.category, c.case]
    return TabHandle(tab, on_load=(bind(on_load, ctx, c, models, up), outputs))


def on_load(
    ctx: AppContext, c: cases.CasesPanel, models: gr.Dropdown, up: upload.UploadPanel, request: gr.Request
) -> dict:
    """The tab's part of the page load: the stored sets, the first test set's cases, the models a reviewer may
    ask, and the upload for reviewers and admins."""
    user = caller(ctx, request)
    found = service.sets(ctx, user)
    banks, test_sets = found["bank"], found["tests"]
    try:
        names = service.answer_models(ctx, user)
    except PermissionDenied:  # annotators may browse selections; asking a model needs a reviewer
        names = []
    first_tests = test_sets[0] if test_sets else None
    return {
        c.bank: gr.update(choices=banks, value=banks[0] if banks else None),
        c.tests: gr.update(choices=test_sets, value=first_tests),
        models: gr.update(choices=names, value=names[0] if names else None),
        up.box: gr.update(visible=service.can_upload(ctx, user)),
        **cases.cases_of(ctx, c, first_tests, "", "", user),
    }
