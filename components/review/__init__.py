"""The review tab (reviewers and admins), one panel module per sub-tab: the queue, the dashboard, quality
inspection, agreement and comparisons, worker quality (components/studies/flags.py) and (admins) export and
publishing. Handlers only call ``backend.review``; every backend function checks the caller's role again. Named API
endpoints (components/review/api.py): review_next, review_submit, review_skip, review_dashboard, review_export,
dataset_publish."""

from __future__ import annotations

import gradio as gr

from backend.context import AppContext
from components.common import TabHandle, caller
from components.events import FAST, Event, bind, wire
from components.opening import tab_frame
from components.review.agreement import build_agreement_panel
from components.review.dashboard import build_dashboard_panel
from components.review.inspection import InspectionPanel, build_inspection_panel
from components.review.inspection import choices as inspection_choices
from components.review.publish import build_publish_panel
from components.review.queue import QueuePanel, build_queue_panel, refresh
from components.studies.flags import build_flags_panel


def build_review_tab(ctx: AppContext) -> TabHandle:
    with tab_frame("review", visible=False) as tab:
        with gr.Tabs():
            with gr.Tab("Queue", id="review-queue") as queue_tab:
                queue = build_queue_panel(ctx)
            with gr.Tab("Dashboard", id="review-dashboard") as dashboard_tab:
                build_dashboard_panel(ctx, dashboard_tab)
            with gr.Tab("Inspection", id="review-inspection"):
                inspection = build_inspection_panel(ctx)
            with gr.Tab("Agreement", id="review-agreement"):
                build_agreement_panel(ctx)
            with gr.Tab("Worker quality", id="review-quality") as quality_tab:
                build_flags_panel(ctx, quality_tab)
            publish = build_publish_panel(ctx)
    wire(ctx, events(ctx, queue, [tab.select, queue_tab.select]))
    on_load = (bind(on_page_load, ctx, inspection), [inspection.chooser])
    return TabHandle(tab=tab, on_load=on_load, inner_tabs=((publish.tab, "admin"),))


def on_page_load(ctx: AppContext, inspection: InspectionPanel, request: gr.Request) -> dict:
    """The page load's part: the inspection choices. The queue's counts come from the tab's select event, which
    Gradio fires whenever the tab is opened, the page opening on it included. (The Publish sub-tab is on admins'
    pages only: web/audiences.py builds it so from ``inner_tabs``.)"""
    return {inspection.chooser: gr.update(choices=inspection_choices(ctx, caller(ctx, request)))}


def on_open(ctx: AppContext, queue: QueuePanel, item: dict | None, request: gr.Request) -> dict:
    return refresh(ctx, queue, item, caller(ctx, request))


def events(ctx: AppContext, queue: QueuePanel, opened: list) -> list[Event]:
    """The counts are right whenever the tab (or its queue) is opened, not only after Next item (issue 13 §3); one
    event for both: on the tab's first visit Gradio fires both selects at once, and "once" makes that one call."""
    once = {**FAST, "trigger_mode": "once"}
    return [Event("review_ui_open", "reviewer", bind(on_open, ctx, queue), opened, [queue.current],
                  queue.idle_outputs, once)]  # fmt: skip
