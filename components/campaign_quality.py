"""Crowd-campaign quality in the web app (issue 16 §3-4): the admins' workers panel (report, CSV for payment,
block / unblock / return answers to the pool, invitation links), the reviewers' worker-quality panel (flags
and why, resume a paused worker, judge gold intents), and the named JSON endpoints for scripts. Handlers
only call backend/campaigns and backend/accounts/invitations, which check the caller's role every time."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

import gradio as gr
import pandas as pd

from backend.accounts import invitations
from backend.accounts.auth import ROLES
from backend.campaigns import gold, quality, report
from backend.context import AppContext
from components.access import endpoint, listen
from components.common import EventOptions, caller, esc, ui_errors
from components.feedback import QUIET, Mistake, shown_in

PRIVATE: EventOptions = {"api_visibility": "private"}
FLAG_COLUMNS = ["annotator", "state", "reason", "kind", "item_id", "detail", "flagged_at"]
GOLD_COLUMNS = ["assignment_id", "annotator", "sequence_id", "agreement", "concrete_intent", "high_level_intent"]


def app_url(request: gr.Request) -> str:
    """The app's address as the browser sees it (for invitation links): the scheme and host of the page that made
    the call. Not its path: that is the admin's own mount (``/admin/``), and ``/invite`` is the shell's, at the root."""
    page = request.headers.get("referer") or request.headers.get("origin") or ""
    parts = urlsplit(page)
    if parts.scheme and parts.netloc:
        return f"{parts.scheme}://{parts.netloc}"
    return f"http://{request.headers.get('host', '127.0.0.1')}"


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


def build_workers_panel(ctx: AppContext) -> None:
    """Admin tab: the worker report and what an admin does to a worker."""
    db = ctx.database
    gr.Markdown(
        "One row per worker per study: the **state** to pay from (qualifying, working, finished, screened out, "
        "returned, blocked; what the platform reported in platform_status), tasks done (what the quota counts), "
        "real tasks submitted (gold items apart), accepted in review, gold accuracy, active time (lease to "
        "submission, overlaps once), completion time and quality flags. **Block** disables the account and frees "
        "its leases at once; **Return answers to the pool** then takes its unreviewed answers out and gives the "
        "slots back (exact N restored)."
    )
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

    def named(name: str) -> str:
        if not (name or "").strip():
            raise Mistake("Enter the worker's user name.")
        return name.strip()

    @shown_in(message)
    def on_report(study_id: float | None, request: gr.Request) -> dict:
        return {table: report_frame(ctx, caller(ctx, request), study_id), message: ""}

    @shown_in(message)
    def on_download(study_id: float | None, request: gr.Request) -> dict:
        me = caller(ctx, request)
        return {
            csv_file: gr.File(report_file(ctx, me, study_id), visible=True),
            table: report_frame(ctx, me, study_id),
            message: "",
        }

    @shown_in(message)
    def on_block(name: str, why: str, request: gr.Request) -> dict:
        me = caller(ctx, request)
        done = quality.block(db, me, named(name), why)
        text = f"Blocked **{esc(done['worker'])}**: {done['leases_released']} lease(s) freed."
        return {table: report_frame(ctx, me), message: text}

    @shown_in(message)
    def on_unblock(name: str, request: gr.Request) -> dict:
        me = caller(ctx, request)
        done = quality.unblock(db, me, named(name))
        return {table: report_frame(ctx, me), message: f"Unblocked **{esc(done['worker'])}**."}

    @shown_in(message)
    def on_return(name: str, request: gr.Request) -> dict:
        me = caller(ctx, request)
        done = quality.return_to_pool(db, me, named(name))
        text = (
            f"Returned {len(done['returned'])} answer(s) of **{esc(done['worker'])}** to the pool; "
            f"{done['kept_reviewed']} already reviewed stay."
        )
        return {table: report_frame(ctx, me), message: text}

    listen(ctx, refresh.click, on_report, [study], [table, message], api_name="admin_workers_report", **PRIVATE)
    listen(
        ctx, download.click, on_download, [study], [csv_file, table, message], api_name="admin_workers_csv", **PRIVATE
    )
    listen(
        ctx,
        block.click,
        on_block,
        [worker, reason],
        [table, message],
        **QUIET,
        **PRIVATE,
        api_name="admin_workers_block",
    )
    listen(
        ctx, unblock.click, on_unblock, [worker], [table, message], **QUIET, **PRIVATE, api_name="admin_workers_unblock"
    )
    listen(
        ctx, give_back.click, on_return, [worker], [table, message], **QUIET, **PRIVATE, api_name="admin_workers_return"
    )


def build_invitations_panel(ctx: AppContext) -> None:
    """Admin tab: one-time sign-up links with a role."""
    gr.Markdown("A link signs up **one** person with the role chosen here; they pick their own user name and password.")
    with gr.Row():
        role = gr.Dropdown(list(ROLES), value="annotator", label="Role", elem_id="invite-role")
        create = gr.Button("Create invitation link", elem_id="invite-create")
    link = gr.Textbox(label="Invitation link (shown once: copy it now)", interactive=False, elem_id="invite-link")
    message = gr.Markdown(elem_id="invite-message")

    @shown_in(message)
    def on_create(chosen: str, request: gr.Request) -> dict:
        made = invitations.create_invitation(ctx.database, ctx.settings, caller(ctx, request), chosen, app_url(request))
        return {link: made["link"], message: f"Valid until {esc(made['expires_at'][:16])} UTC, for one sign-up."}

    listen(ctx, create.click, on_create, [role], [link, message], **PRIVATE, api_name="admin_invitations_create")


def flags_frame(ctx: AppContext, me: str | None) -> pd.DataFrame:
    return pd.DataFrame(quality.flags(ctx.database, me), columns=FLAG_COLUMNS)


def gold_frame(ctx: AppContext, me: str | None) -> pd.DataFrame:
    return pd.DataFrame(gold.pending_judgments(ctx.database, me), columns=GOLD_COLUMNS)


def build_flags_panel(ctx: AppContext, opened: gr.Tab | None = None) -> None:
    """Review tab: open quality flags and why; resume a paused worker; judge gold intents below the threshold.
    ``opened``: the sub-tab holding the panel; opening it fills the flags and the gold answers to judge (issue 44:
    the panel opened empty until "Show flags" was pressed)."""
    db, settings = ctx.database, ctx.settings
    refresh = gr.Button("Refresh", elem_id="flags-refresh")
    flags = gr.Dataframe(headers=FLAG_COLUMNS, interactive=False, label="Open quality flags", elem_id="flags-table")
    with gr.Row():
        worker = gr.Textbox(label="Paused worker", elem_id="flags-worker")
        resume = gr.Button("Resume (flags looked at)", elem_id="flags-resume")
    pending = gr.Dataframe(
        headers=GOLD_COLUMNS, interactive=False, label="Gold intents to judge (below agreement)", elem_id="gold-table"
    )
    with gr.Row():
        answer = gr.Number(label="assignment_id", value=None, precision=0, elem_id="gold-answer")
        right = gr.Button("Reasonable", elem_id="gold-correct")
        wrong = gr.Button("Not reasonable", elem_id="gold-wrong")
    message = gr.Markdown(elem_id="flags-message")

    def fill(me: str | None) -> dict:
        return {flags: flags_frame(ctx, me), pending: gold_frame(ctx, me)}

    @shown_in(message)
    def on_refresh(request: gr.Request) -> dict:
        return {**fill(caller(ctx, request)), message: ""}

    @shown_in(message)
    def on_resume(name: str, request: gr.Request) -> dict:
        if not (name or "").strip():
            raise Mistake("Enter the paused worker's user name.")
        me = caller(ctx, request)
        done = quality.resume(db, me, name.strip())
        return {**fill(me), message: f"Resumed **{esc(done['worker'])}** ({done['flags_resolved']} flag(s) resolved)."}

    def judged(correct: bool):
        @shown_in(message)
        def handler(assignment_id: float | None, request: gr.Request) -> dict:
            if assignment_id is None:
                raise Mistake("Enter the assignment_id of the gold answer from the table.")
            me = caller(ctx, request)
            done = gold.judge(db, settings, me, int(assignment_id), correct)
            return {**fill(me), message: f"Judged {done['outcome']}."}

        return handler

    listen(ctx, refresh.click, on_refresh, None, [flags, pending, message], **PRIVATE, api_name="quality_ui_refresh")
    if opened is not None:
        listen(
            ctx,
            opened.select,
            on_refresh,
            None,
            [flags, pending, message],
            show_progress="hidden",
            **PRIVATE,
            api_name="quality_ui_open",
        )
    listen(
        ctx,
        resume.click,
        on_resume,
        [worker],
        [flags, pending, message],
        **QUIET,
        **PRIVATE,
        api_name="quality_ui_resume",
    )
    listen(
        ctx,
        right.click,
        judged(True),
        [answer],
        [flags, pending, message],
        **QUIET,
        **PRIVATE,
        api_name="quality_ui_gold_right",
    )
    listen(
        ctx,
        wrong.click,
        judged(False),
        [answer],
        [flags, pending, message],
        **QUIET,
        **PRIVATE,
        api_name="quality_ui_gold_wrong",
    )


def register_api(ctx: AppContext) -> None:
    """Named endpoints for scripts; each backend function checks the caller's role."""
    db, settings = ctx.database, ctx.settings

    @ui_errors
    def worker_report(study_id: str | None, request: gr.Request) -> list:
        """Admins: one row per worker per study (state, tasks done, accepted, gold accuracy, active and completion
        minutes, flags); study_id may be null."""
        return report.worker_report(db, caller(ctx, request), study_id or None)

    @ui_errors
    def worker_report_csv(study_id: str | None, request: gr.Request) -> str:
        """Admins: the worker report as CSV text (for payment and bonuses)."""
        return report.report_csv(report.worker_report(db, caller(ctx, request), study_id or None))

    @ui_errors
    def worker_block(name: str, reason: str, request: gr.Request) -> dict:
        """Admins: block a worker (account disabled, leases freed now)."""
        return quality.block(db, caller(ctx, request), name, reason)

    @ui_errors
    def worker_unblock(name: str, request: gr.Request) -> dict:
        """Admins: unblock a worker."""
        return quality.unblock(db, caller(ctx, request), name)

    @ui_errors
    def worker_return_to_pool(name: str, request: gr.Request) -> dict:
        """Admins: return a blocked worker's unreviewed answers to the pool (exact N restored)."""
        return quality.return_to_pool(db, caller(ctx, request), name)

    @ui_errors
    def quality_flags(include_resolved: bool, request: gr.Request) -> list:
        """Reviewers: quality flags with the reason and the worker's state."""
        return quality.flags(db, caller(ctx, request), bool(include_resolved))

    @ui_errors
    def worker_resume(name: str, request: gr.Request) -> dict:
        """Reviewers: resume a paused worker (their open flags are resolved)."""
        return quality.resume(db, caller(ctx, request), name)

    @ui_errors
    def gold_add(kind: str, item_ids: list[str], request: gr.Request) -> dict:
        """Reviewers: make items gold (kind: intent, planning or vqa_answer); all or nothing."""
        return gold.add_gold(db, caller(ctx, request), kind, list(item_ids or []))

    @ui_errors
    def gold_candidates(kind: str, limit: int, request: gr.Request) -> list:
        """Reviewers: items that could become gold now."""
        return gold.candidates(db, caller(ctx, request), kind, int(limit or 50))

    @ui_errors
    def gold_pending(request: gr.Request) -> list:
        """Reviewers: gold intents below the agreement threshold, with the reference, waiting for a verdict."""
        return gold.pending_judgments(db, caller(ctx, request))

    @ui_errors
    def gold_judge(assignment_id: int, correct: bool, request: gr.Request) -> dict:
        """Reviewers: judge one gold answer (correct true/false)."""
        return gold.judge(db, settings, caller(ctx, request), int(assignment_id), bool(correct))

    @ui_errors
    def invitation_create(role: str, request: gr.Request) -> dict:
        """Admins: a one-time sign-up link with a role (the token is returned once)."""
        return invitations.create_invitation(db, settings, caller(ctx, request), role, app_url(request))

    @ui_errors
    def invitation_list(request: gr.Request) -> list:
        """Admins: invitations (without tokens) and who used them."""
        return invitations.list_invitations(db, caller(ctx, request))

    for name, fn in {
        "worker_report": worker_report,
        "worker_report_csv": worker_report_csv,
        "worker_block": worker_block,
        "worker_unblock": worker_unblock,
        "worker_return_to_pool": worker_return_to_pool,
        "quality_flags": quality_flags,
        "worker_resume": worker_resume,
        "gold_add": gold_add,
        "gold_candidates": gold_candidates,
        "gold_pending": gold_pending,
        "gold_judge": gold_judge,
        "invitation_create": invitation_create,
        "invitation_list": invitation_list,
    }.items():
        endpoint(ctx, fn, api_name=name)
