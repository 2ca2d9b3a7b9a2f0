"""The planning tab (ViLPAct), one panel module per sub-tab: browse a question (observed-window clip or text only,
intent, six candidate futures with their STRIPS checks) and ask a model live or run a batch (browse.py), check
questions as an annotator (check.py), and the results (results.py: leaderboard with intervals and McNemar, human
accuracy, disagreement queue). Named endpoints for scripts: components/planning/api.py.

Handlers only read inputs, call ``backend.planning.service`` / ``.validation`` (which check the caller's
role) and format outputs.
"""

from __future__ import annotations

import gradio as gr

from backend.context import AppContext
from backend.errors import CompStudioError
from backend.planning import service, validation
from components.common import TabHandle, caller
from components.events import bind
from components.model_choices import offer_models_on_open
from components.opening import tab_frame
from components.planning.browse import BrowsePanel, build_browse_panel
from components.planning.check import CheckPanel, build_check_panel
from components.planning.results import build_results_panel
from components.planning.views import counts_markdown, is_reviewer
from components.study_status import study_line


def build_planning_tab(ctx: AppContext) -> TabHandle:
    with tab_frame("planning") as tab:
        gr.Markdown(
            "ViLPAct multiple-choice planning: given the first 20% of a video and an intent, which of six "
            "future action sequences is the most plausible?"
        )
        with gr.Tabs():
            with gr.Tab("Check questions", id="planning-check"):
                check = build_check_panel(ctx)
            with gr.Tab("Browse and ask a model", id="planning-browse"):
                browse = build_browse_panel(ctx)
            with gr.Tab("Results", id="planning-results") as results_tab:
                build_results_panel(ctx, results_tab)
    offer_models_on_open(ctx, tab, [browse.tools.model], "planning_models_open")
    outputs = [browse.qid, browse.tools_column, check.progress, check.fetch]
    return TabHandle(tab=tab, on_load=(bind(on_load, ctx, browse, check), outputs))


def on_load(ctx: AppContext, browse: BrowsePanel, check: CheckPanel, request: gr.Request) -> dict:
    """The page load's part: the question ids, the reviewers' tools, the person's counts and Next question."""
    name = caller(ctx, request)
    try:
        ids = service.question_ids(ctx, name)
        counts = validation.check_counts(ctx.database, name)
        study = validation.study_of(ctx.database, name)
    except CompStudioError:  # not signed in or not an annotator: app.py hides the tab anyway
        return {browse.tools_column: gr.update(visible=False)}  # an empty dict would read as one output value
    return {
        browse.qid: gr.update(choices=ids, value=ids[0] if ids else None),
        browse.tools_column: gr.update(visible=is_reviewer(ctx, name)),
        check.progress: study_line(study) if study else counts_markdown(counts),
        # a study worker always has the button: it hands the next question, or shows their code or the way to wait
        check.fetch: gr.update(visible=bool(study) or counts["left_for_you"] > 0),
    }
