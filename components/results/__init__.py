"""The Results tab (reviewers and admins), one panel module per sub-tab: one report across the three benchmarks for
chosen models with its downloads (report.py), controlled comparisons: one model over a grid of one setting with
paired tests (grid.py), and any stored run item by item (samples/). The named JSON endpoints are in api.py.

Handlers call :mod:`backend.reporting` and :mod:`backend.inference.samples_api`, which check the caller's role; a
mistake (no model chosen, a wrong value) is shown beside the button (:func:`components.feedback.shown_in`).
"""

from __future__ import annotations

import gradio as gr

from backend.accounts import auth
from backend.context import AppContext
from backend.inference.registry import model_names
from components.common import TabHandle, caller
from components.events import bind
from components.model_choices import offer_models_on_open
from components.opening import tab_frame
from components.results.grid import build_grid_panel
from components.results.report import build_report_panel, charts_html
from components.results.samples import build_samples_panel

__all__ = ["build_results_tab", "charts_html"]  # charts_html: the VQA tab draws its leaderboard's charts with it


def build_results_tab(ctx: AppContext) -> TabHandle:
    with tab_frame("results", visible=False) as tab:  # shown to reviewers (web/audiences.py)
        with gr.Tabs():
            with gr.Tab("Report", id="results-report"):
                report = build_report_panel(ctx)
            with gr.Tab("Controlled comparison", id="results-grid"):
                grid = build_grid_panel(ctx)
            build_samples_panel(ctx)
    pickers = [report.models, grid.model]
    offer_models_on_open(ctx, tab, pickers, "results_models_open")
    return TabHandle(tab=tab, on_load=(bind(on_load, ctx, pickers), pickers))


def on_load(ctx: AppContext, pickers: list[gr.Dropdown], request: gr.Request) -> dict:
    """Every page load: the model lists for reviewers; nothing for anyone else (the tab is hidden)."""
    user = auth.get_user(ctx.database, caller(ctx, request) or "")
    if user is None or user.disabled or not user.has_role("reviewer"):
        return {picker: gr.update() for picker in pickers}
    names = model_names(ctx)
    return {picker: gr.Dropdown(choices=names) for picker in pickers}
