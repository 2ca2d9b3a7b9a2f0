"""The Studies tab (admins): create a crowd study, copy its link, watch its counts, close it; and the named
endpoints study_create / study_list / study_link / study_close / study_stats (backend/campaigns)."""

from __future__ import annotations

from typing import Any

import gradio as gr
import pandas as pd

from backend.campaigns import links, studies, workers
from backend.campaigns.qualification import pool_for
from backend.context import AppContext
from backend.errors import PermissionDenied
from components.common import EventOptions, TabHandle, caller, esc, ui_errors
from components.feedback import QUIET, Mistake, shown_in

PRIVATE: EventOptions = {"api_visibility": "private"}
COLUMNS = [
    "id",
    "name",
    "kind",
    "platform",
    "status",
    "tasks_per_worker",
    "started",
    "qualified",
    "screened_out",
    "finished",
    "returned",
    "median_minutes",
]
HELP = (
    "A study sends crowd workers (Prolific, Mechanical Turk, or any platform that can put a worker id into a "
    "link) straight to their tasks: the link signs them in without a password, they take a short qualification, "
    "do their quota, and get the completion code. Paste the link into the platform's study page; the README's "
    "section *Run a crowd campaign* walks through it. Qualification questions available: "
    + ", ".join(f"{kind} {len(pool_for(kind))}" for kind in studies.KINDS)
    + "."
)


def public_address(request: gr.Request | None) -> str:
    """The app's address as the admin's browser reached it (a proxy's X-Forwarded-Host/-Proto first)."""
    if request is None:
        return ""
    headers = request.headers
    host = (headers.get("x-forwarded-host") or headers.get("host") or "").split(",")[0].strip()
    inner = getattr(request, "request", None)
    scheme = (headers.get("x-forwarded-proto") or (inner.url.scheme if inner is not None else "http")).split(",")[0]
    return f"{scheme.strip()}://{host}" if host else ""


def studies_frame(ctx: AppContext, me: str | None) -> pd.DataFrame:
    return pd.DataFrame(studies.list_studies(ctx.database, me), columns=COLUMNS)


def _study_id(value: Any) -> int:
    if value in (None, ""):
        raise Mistake("Enter the number of the study (the id column of the table).")
    return int(value)


def build_studies_tab(ctx: AppContext) -> TabHandle:
    db = ctx.database
    with gr.Tab("Studies", id="studies", visible=False) as tab:
        gr.Markdown(HELP)
        table = gr.Dataframe(headers=COLUMNS, interactive=False, label="Studies", elem_id="studies-table")
        with gr.Accordion("Create a study", open=True):
            with gr.Row():
                name = gr.Textbox(label="Name", elem_id="study-name", max_length=200)
                kind = gr.Dropdown(list(studies.KINDS), value="intents", label="Kind of work", elem_id="study-kind")
                platform = gr.Dropdown(
                    list(studies.PLATFORMS), value="prolific", label="Platform", elem_id="study-platform"
                )
            with gr.Row():
                tasks = gr.Number(value=10, precision=0, label="Tasks per worker", elem_id="study-tasks")
                minutes = gr.Number(value=60, precision=0, label="Time limit (minutes)", elem_id="study-minutes")
                size = gr.Number(value=5, precision=0, label="Qualification questions", elem_id="study-quiz-size")
                mark = gr.Number(value=0.8, label="Pass mark (share right)", elem_id="study-pass-mark")
            with gr.Row():
                completion = gr.Textbox(label="Completion code", elem_id="study-completion")
                screenout = gr.Textbox(label="Screen-out code", elem_id="study-screenout")
                return_url = gr.Textbox(
                    label="Return URL ({code} is filled in; empty: the platform's)", elem_id="study-return-url"
                )
            create = gr.Button("Create study", variant="primary", elem_id="study-create")
        with gr.Row():
            chosen = gr.Number(label="Study id", precision=0, elem_id="study-id")
            address = gr.Textbox(label="The app's public address", elem_id="study-address")
            show_link = gr.Button("Show its link", elem_id="study-show-link")
            close = gr.Button("Close the study", variant="stop", elem_id="study-close")
        link = gr.Textbox(label="Study link (paste it into the platform)", buttons=["copy"], elem_id="study-link")
        message = gr.Markdown(elem_id="study-message")
        _register_api(ctx)

    @shown_in(message)
    def on_create(
        study_name: str,
        study_kind: str,
        study_platform: str,
        n_tasks: float | None,
        n_minutes: float | None,
        quiz_size: float | None,
        pass_mark: float | None,
        completion_code: str,
        screenout_code: str,
        url: str,
        request: gr.Request,
    ) -> dict:
        me = caller(ctx, request)
        made = studies.create_study(
            db,
            me,
            name=study_name,
            kind=study_kind,
            platform=study_platform,
            tasks_per_worker=int(n_tasks or 0),
            time_limit_minutes=int(n_minutes or 0),
            qualification_size=int(quiz_size or 0),
            pass_mark=float(pass_mark if pass_mark is not None else -1),
            completion_code=completion_code,
            screenout_code=screenout_code,
            return_url=(url or "").strip() or None,
        )
        base = public_address(request)
        return {
            table: studies_frame(ctx, me),
            chosen: made.id,
            address: base,
            link: links.link_for(db, me, made.id, base)["link"] if base else "",
            message: f"Created study **{made.id}**, “{esc(made.name)}”. Its link is below.",
        }

    @shown_in(message)
    def on_link(study_id: Any, base: str, request: gr.Request) -> dict:
        base = (base or "").strip() or public_address(request)
        made = links.link_for(db, caller(ctx, request), _study_id(study_id), base)
        return {link: made["link"], address: base, message: ""}

    @shown_in(message)
    def on_close(study_id: Any, request: gr.Request) -> dict:
        me = caller(ctx, request)
        closed = studies.close_study(db, me, _study_id(study_id))
        return {table: studies_frame(ctx, me), message: f"Study **{closed.id}** is closed."}

    inputs = [name, kind, platform, tasks, minutes, size, mark, completion, screenout, return_url]
    create.click(on_create, inputs, [table, chosen, address, link, message], **QUIET, **PRIVATE)
    show_link.click(on_link, [chosen, address], [link, address, message], **QUIET, **PRIVATE)
    close.click(on_close, [chosen], [table, message], **QUIET, **PRIVATE)

    def on_open(request: gr.Request) -> dict:
        """The studies and their counts as they are now (page load and each visit of the tab)."""
        try:
            return {table: studies_frame(ctx, caller(ctx, request)), address: public_address(request)}
        except PermissionDenied:  # not an admin: the tab is hidden
            return {table: gr.update()}

    tab.select(on_open, None, [table, address], show_progress="hidden", **PRIVATE)
    return TabHandle(tab=tab, min_role="admin", on_load=(on_open, [table, address]), filled_on_select=True)


def _register_api(ctx: AppContext) -> None:
    """Named study endpoints for scripts; each checks the admin role in the backend."""
    db = ctx.database

    @ui_errors
    def study_create(
        name: str,
        kind: str,
        tasks_per_worker: int,
        time_limit_minutes: int,
        completion_code: str,
        screenout_code: str,
        return_url: str,
        platform: str,
        qualification_size: int,
        pass_mark: float,
        request: gr.Request,
    ) -> dict:
        """Create a study; return_url "" takes the platform's default. Returns the study (never its secret)."""
        return studies.create_study(
            db,
            caller(ctx, request),
            name=name,
            kind=kind,
            tasks_per_worker=int(tasks_per_worker),
            time_limit_minutes=int(time_limit_minutes),
            completion_code=completion_code,
            screenout_code=screenout_code,
            return_url=return_url or None,
            platform=platform,
            qualification_size=int(qualification_size),
            pass_mark=float(pass_mark),
        ).public()

    @ui_errors
    def study_list(request: gr.Request) -> list:
        """Every study with started / qualified / screened_out / finished / returned / median_minutes."""
        return studies.list_studies(db, caller(ctx, request))

    @ui_errors
    def study_link(study_id: int, base_url: str, request: gr.Request) -> dict:
        """The study link to paste into the platform; base_url is the app's public address."""
        return links.link_for(db, caller(ctx, request), int(study_id), base_url or public_address(request))

    @ui_errors
    def study_close(study_id: int, request: gr.Request) -> dict:
        """Close a study: no new workers; those in it see their completion code."""
        return studies.close_study(db, caller(ctx, request), int(study_id)).public()

    @ui_errors
    def study_stats(study_id: int, request: gr.Request) -> dict:
        """One study's counts."""
        return studies.study_stats(db, caller(ctx, request), int(study_id))

    @ui_errors
    def study_me(request: gr.Request) -> dict:
        """A study worker's own state: status, tasks done of the quota, the completion code once finished, and
        while not yet qualified the qualification's questions (without their answers)."""
        return workers.my_study(db, caller(ctx, request))

    @ui_errors
    def study_qualify(answers: dict, request: gr.Request) -> dict:
        """A study worker's one try at the qualification: answers maps question id to the chosen option's index."""
        me = caller(ctx, request)
        study_id = workers.my_study(db, me)["study_id"]
        worker, result = workers.take_qualification(db, me, study_id, {str(k): str(v) for k, v in answers.items()})
        return {"status": worker.status, "right": result.right, "asked": result.asked, "passed": result.passed}

    @ui_errors
    def study_leave(request: gr.Request) -> dict:
        """A study worker leaves (returns) their study; they cannot come back."""
        me = caller(ctx, request)
        return {"status": workers.leave_study(db, me, workers.my_study(db, me)["study_id"]).status}

    for fn in (study_create, study_list, study_link, study_close, study_stats, study_me, study_qualify, study_leave):
        gr.api(fn, api_name=fn.__name__)
