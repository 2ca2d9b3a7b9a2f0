"""Admin's crowd-workers panel (issue 16 §3-4): the worker report and its CSV for payment, and what an admin does to a
worker: block, unblock, return their unreviewed answers to the pool. Built inside the Admin tab
(components/admin.py); handlers only call backend/campaigns, which checks the admin role every time."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import gradio as gr
import pandas as pd

from backend.campaigns import quality, report
from backend.context import AppContext
from components.common import caller, esc
from components.events import Event, bind, wire
from components.feedback import QUIET, Mistake, shown_in

HELP = (
    "One row per worker per study: the **state** to pay from (qualifying, working, finished, screened out, "
    "returned, blocked; what the platform reported in platform_status), tasks done (what the quota counts), "
    "real tasks submitted (gold items apart), accepted in review, gold accuracy, active time (lease to "
    "submission, overlaps once), completion time and quality flags. **Block** disables the account and frees "
    "its leases at once; **Return answers to the pool** then takes its unreviewed answers out and gives the "
    "slots back (exact N restored)."
)


@dataclass(frozen=True)
class WorkersPanel:
    study: gr.Number
    refresh: gr.Button
    download: gr.Button
    table: gr.Dataframe
    csv_file: gr.File
    worker: gr.Textbox
    reason: gr.Textbox
    block: gr.Button
    unblock: gr.Button
    give_back: gr.Button
    message: gr.Markdown


def layout() -> WorkersPanel:
    gr.Markdown(HELP)
    with gr.Row():
        study = gr.Number(label="Study id (empty: everyone)", precision=0, value=None, elem_id="report-study")
        refresh = gr.Button("Show worker report", elem_id="report-refresh")
        download = gr.Button("Download CSV for payment", elem_id="report-download")
    table = gr.Dataframe(headers=list(report.COLUMNS), interactive=False, label="Workers", elem_id="report-table")
    csv_file = gr.File(label="Worker report (CSV)", interactive=False, visible=False, elem_id="report-file")
    with gr.Row():
        worker = gr.Textbox(label="Worker (user name)", elem_id="worker-name")
        reason = gr.Textbox(label="Reason (for the audit log)", elem_id="worker-reason")
    with gr.Row():
        block = gr.Button("Block", variant="stop", elem_id="worker-block")
        unblock = gr.Button("Unblock", elem_id="worker-unblock")
        give_back = gr.Button("Return answers to the pool", elem_id="worker-return")
    message = gr.Markdown(elem_id="worker-message")
    return WorkersPanel(study, refresh, download, table, csv_file, worker, reason, block, unblock, give_back, message)


def _study(value: float | None) -> str | None:
    return str(int(value)) if value not in (None, 0) else None


def report_frame(ctx: AppContext, me: str | None, study: float | None = None) -> pd.DataFrame:
    return pd.DataFrame(report.worker_report(ctx.database, me, _study(study)), columns=list(report.COLUMNS))


def report_file(ctx: AppContext, me: str | None, study: float | None = None) -> str:
    """The report as a CSV file under an unguessable temporary name (handed to Gradio's cache)."""
    text = report.report_csv(report.worker_report(ctx.database, me, _study(study)))
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    suffix = f"-study{_study(study)}" if _study(study) else ""
    path = Path(tempfile.mkdtemp(prefix="compstudio-report-")) / f"worker-report{suffix}-{stamp}.csv"
    path.write_text(text, encoding="utf-8")
    return str(path)


def _named(name: str) -> str:
    if not (name or "").strip():
        raise Mistake("Enter the worker's user name.")
    return name.strip()


def on_report(ctx: AppContext, p: WorkersPanel, study_id: float | None, request: gr.Request) -> dict:
    return {p.table: report_frame(ctx, caller(ctx, request), study_id), p.message: ""}


def on_download(ctx: AppContext, p: WorkersPanel, study_id: float | None, request: gr.Request) -> dict:
    me = caller(ctx, request)
    return {
        p.csv_file: gr.File(report_file(ctx, me, study_id), visible=True),
        p.table: report_frame(ctx, me, study_id),
        p.message: "",
    }


def on_block(ctx: AppContext, p: WorkersPanel, name: str, why: str, request: gr.Request) -> dict:
    me = caller(ctx, request)
    done = quality.block(ctx.database, me, _named(name), why)
    text = f"Blocked **{esc(done['worker'])}**: {done['leases_released']} lease(s) freed."
    return {p.table: report_frame(ctx, me), p.message: text}


def on_unblock(ctx: AppContext, p: WorkersPanel, name: str, request: gr.Request) -> dict:
    me = caller(ctx, request)
    done = quality.unblock(ctx.database, me, _named(name))
    return {p.table: report_frame(ctx, me), p.message: f"Unblocked **{esc(done['worker'])}**."}


def on_return(ctx: AppContext, p: WorkersPanel, name: str, request: gr.Request) -> dict:
    me = caller(ctx, request)
    done = quality.return_to_pool(ctx.database, me, _named(name))
    text = (
        f"Returned {len(done['returned'])} answer(s) of **{esc(done['worker'])}** to the pool; "
        f"{done['kept_reviewed']} already reviewed stay."
    )
    return {p.table: report_frame(ctx, me), p.message: text}


def events(ctx: AppContext, p: WorkersPanel) -> list[Event]:
    def shown(fn: Callable[..., dict]) -> Callable[..., dict]:
        return bind(shown_in(p.message)(fn), ctx, p)

    changed = [p.table, p.message]
    return [
        Event("admin_workers_report", "admin", shown(on_report), p.refresh.click, [p.study], changed),
        Event("admin_workers_csv", "admin", shown(on_download), p.download.click, [p.study], [p.csv_file, *changed]),
        Event("admin_workers_block", "admin", shown(on_block), p.block.click, [p.worker, p.reason], changed, QUIET),
        Event("admin_workers_unblock", "admin", shown(on_unblock), p.unblock.click, [p.worker], changed, QUIET),
        Event("admin_workers_return", "admin", shown(on_return), p.give_back.click, [p.worker], changed, QUIET),
    ]


def build_workers_panel(ctx: AppContext) -> WorkersPanel:
    """Admin tab: the worker report and what an admin does to a worker."""
    p = layout()
    wire(ctx, events(ctx, p))
    return p
