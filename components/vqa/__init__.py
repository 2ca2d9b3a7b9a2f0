"""The compositional VQA tab (MMComposition), one panel module per sub-tab: Answer (answer.py), Author
(authoring.py), Verify (verify.py, with disputes.py), Models (ask.py, voting.py, benchmark.py), Leaderboard
(leaderboard.py, chart.py) and Admin (admin.py). Handlers only read inputs, call ``backend.vqa`` (which checks every
caller's rights) and format outputs. The named endpoints for scripts are api.py's.

The sub-tabs' roles are said once, in the ``inner_tabs`` of the handle (web/audiences.py shows each on the pages of
the identities that may open it). An item is handed out (leased) only when the person opens the Answer panel to
work, not on page load; the leaderboard, its comparisons and chart are filled when its panel opens.
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from backend.context import AppContext
from backend.errors import CompStudioError
from backend.inference.registry import model_names
from backend.vqa import runs, service
from components.common import TabHandle, caller, ui_errors
from components.events import Event, bind, wire
from components.model_choices import offer_models_on_open
from components.opening import tab_frame
from components.vqa import answer, leaderboard
from components.vqa.admin import build_admin_panel
from components.vqa.answer import AnswerPanel, build_answer_panel
from components.vqa.ask import build_ask_panel
from components.vqa.authoring import build_author_panel
from components.vqa.benchmark import build_benchmark_panel
from components.vqa.leaderboard import LeaderboardPanel, build_leaderboard_panel
from components.vqa.verify import VerifyPanel, build_verify_panel, verify_counts
from components.vqa.voting import build_voting_panel

INTRO = (
    "Author, verify, answer and rank compositional VQA items (MMComposition). "
    "Scores use partial credit: 1 for the exact set, |P|/|A| for a correct subset, else 0."
)


@dataclass(frozen=True)
class VqaTab:
    """What the tab's own events and its part of the page load fill."""

    tab: gr.Tab
    answer_tab: gr.Tab
    board_tab: gr.Tab
    answer: AnswerPanel
    verify: VerifyPanel
    board: LeaderboardPanel

    @property
    def load_outputs(self) -> list:
        return [self.answer.progress, self.verify.progress, *self.board.outputs]


def build_vqa_tab(ctx: AppContext) -> TabHandle:
    with tab_frame("vqa") as tab:
        gr.Markdown(INTRO)
        with gr.Tabs():
            with gr.Tab("Answer", id="vqa-answer") as answer_tab:
                answer_panel = build_answer_panel(ctx)
            with gr.Tab("Author", id="vqa-author", visible=False) as author_tab:
                build_author_panel(ctx)
            with gr.Tab("Verify", id="vqa-verify", visible=False) as verify_tab:
                verify = build_verify_panel(ctx)
            with gr.Tab("Models", id="vqa-models", visible=False) as models_tab:
                pickers = build_models_panel(ctx)
            with gr.Tab("Leaderboard", id="vqa-leaderboard") as board_tab:
                board = build_leaderboard_panel(ctx)
            with gr.Tab("Admin", id="vqa-admin", visible=False) as admin_tab:
                build_admin_panel(ctx)
    offer_models_on_open(ctx, models_tab, pickers, "vqa_models_open")
    t = VqaTab(tab, answer_tab, board_tab, answer_panel, verify, board)
    wire(ctx, events(ctx, t))
    inner = ((author_tab, "author"), (verify_tab, "author"), (models_tab, "reviewer"), (admin_tab, "admin"))
    return TabHandle(tab=tab, on_load=(ui_errors(bind(on_load, ctx, t)), t.load_outputs), inner_tabs=inner)


def build_models_panel(ctx: AppContext) -> list[gr.Dropdown]:
    """The Models panel (reviewers); returns its model pickers (refilled from the registry when it opens)."""
    names = model_names(ctx)
    pickers = [build_ask_panel(ctx, names).model, build_voting_panel(ctx, names).panel]
    build_benchmark_panel(ctx)
    return pickers


def on_load(ctx: AppContext, t: VqaTab, request: gr.Request) -> dict:
    """The tab's part of the page load: the counts of the Answer and Verify panels, and the leaderboard."""
    name = caller(ctx, request)
    try:
        counts = service.left_counts(ctx.database, name)
    except CompStudioError:  # not signed in or not an annotator: their page has no VQA tab
        return {}
    return {
        t.answer.progress: answer.progress_line(counts),
        t.verify.progress: verify_counts(counts["verify"]) if counts["verify"] else "",
        **leaderboard.render(ctx, t.board, runs.leaderboard(ctx, name)),
    }


def events(ctx: AppContext, t: VqaTab) -> list[Event]:
    """Opening the tab or its Answer panel hands out an item; opening the leaderboard fills it."""
    open_answer = bind(answer.on_open, ctx, t.answer)
    refresh = bind(leaderboard.on_refresh, ctx, t.board)
    return [
        Event("vqa_leaderboard_open", "annotator", refresh, t.board_tab.select, None, t.board.outputs),
        Event("vqa_ui_open", "annotator", open_answer, t.tab.select, None, t.answer.outputs),
        Event("vqa_ui_answer_open", "annotator", open_answer, t.answer_tab.select, None, t.answer.outputs),
    ]
