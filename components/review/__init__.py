"""The review tab (reviewers and admins), one panel module per sub-tab: the queue, the dashboard, quality
inspection, agreement and comparisons, and (admins) export and publishing. Handlers only call
``backend.review``; every backend function checks the caller's role again. Named API endpoints
(components/review/api.py): review_next, review_submit, review_skip, review_dashboard, review_export,
dataset_publish."""

from __future__ import annotations

import gradio as gr

from backend.accounts import auth
from backend.context import AppContext
from components.access import listen
from components.common import TabHandle, caller, ui_errors
from components.review.agreement import build_agreement_panel
from components.review.dashboard import build_dashboard_panel
from components.review.inspection import build_inspection_panel
from components.review.inspection import choices as inspection_choices
from components.review.publish import build_publish_panel
from components.review.queue import PRIVATE_FAST, build_queue_panel
from components.review.queue import refresh as refresh_queue
from components.studies.flags import build_flags_panel


def build_review_tab(ctx: AppContext) -> TabHandle:
    with gr.Tab("Review", id="review", visible=False) as tab:
        with gr.Tabs():
            with gr.Tab("Queue", id="review-queue") as queue_tab:
                queue = build_queue_panel(ctx)
            with gr.Tab("Dashboard", id="review-dashboard") as dashboard_tab:
                dashboard = build_dashboard_panel(ctx)
            with gr.Tab("Inspection", id="review-inspection"):
                inspection = build_inspection_panel(ctx)
            with gr.Tab("Agreement", id="review-agreement"):
                build_agreement_panel(ctx)
            with gr.Tab("Worker quality", id="review-quality") as quality_tab:
                build_flags_panel(ctx, quality_tab)
            publish = build_publish_panel(ctx)

    def on_load(request: gr.Request) -> dict:
        """The page load's part: the inspection choices. The queue's counts come from the tab's select event,
        which Gradio fires whenever the tab is opened, the page opening on it included."""
        name = caller(ctx, request)
        user = auth.get_user(ctx.database, name) if name else None
        if user is None or not user.has_role("reviewer"):
            return {publish.tab: gr.Tab(visible=False)}
        return {
            publish.tab: gr.Tab(visible=user.has_role("admin")),
            inspection.chooser: gr.update(choices=inspection_choices(ctx, name)),
        }

    def on_open(item: dict | None, request: gr.Request) -> dict:
        return refresh_queue(ctx, queue, item, caller(ctx, request))

    # counts are right whenever the tab (or its queue) is opened, not only after Next item (issue 13 §3)
    # (one event for both: on the tab's first visit Gradio fires both selects at once, and "once" makes that one
    # call, issue 17)
    listen(
        ctx,
        [tab.select, queue_tab.select],
        ui_errors(on_open),
        [queue.current],
        queue.idle_outputs,
        trigger_mode="once",
        **PRIVATE_FAST,
        api_name="review_ui_open",
    )
    listen(ctx, dashboard_tab.select, *dashboard.show, api_name="review_ui_dashboard_open", **PRIVATE_FAST)
    outputs = [publish.tab, inspection.chooser]
    return TabHandle(tab=tab, on_load=(ui_errors(on_load), outputs), inner_tabs=((publish.tab, "admin"),))
