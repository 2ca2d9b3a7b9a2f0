"""The Studies tab (admins): create a crowd study, copy its link, watch its counts, close it (after a confirmation
that says what happens to the workers in it); and the named endpoints study_create / study_list / study_link /
study_close / study_stats (backend/campaigns). Every event has an explicit, stable ``api_name`` (``studies_*``)."""

from __future__ import annotations

from typing import Any

import gradio as gr
import pandas as pd

from backend.campaigns import links, studies, waiting, workers
from backend.campaigns.qualification import pool_for
from backend.context import AppContext
from backend.errors import PermissionDenied, ValidationError
from components.access import endpoint, listen
from components.common import EventOptions, TabHandle, caller, esc, ui_errors
from components.feedback import QUIET, Mistake, shown_in

PRIVATE: EventOptions = {"api_visibility": "private"}
# the table's columns: (what the admin reads, the study's key)
SHOWN = (
    ("id", "id"),
    ("name", "name"),
    ("state", "status"),
    ("kind", "kind"),
    ("platform", "platform"),
    ("completion code", "completion_code"),
    ("screen-out code", "screenout_code"),
    ("places", "places"),
    ("gold rate", "gold_rate"),
    ("qualifying", "qualifying"),
    ("working", "working"),
    ("finished", "finished"),
    ("screened out", "screened_out"),
    ("full", "full"),
    ("returned", "returned"),
    ("tasks each", "tasks_per_worker"),
    ("tries", "tries"),
    ("median min", "median_minutes"),
    ("link", "link"),
)
COLUMNS = [label for label, _ in SHOWN]
HELP = (
    "A study sends crowd workers (Prolific, CloudResearch Connect, or any platform that can put a worker id into a "
    "link: SONA, Clickworker, a lab's own pool) straight to their tasks: the link signs them in without a password, "
    "they read the instructions, take a short qualification, do their quota, and get the completion code. A study "
    "needs a completion code, a screen-out code when it has a qualification, and a name no other open study has. "
    "**Places**: at most that many workers doing tasks at once (0: what the pool needs); a worker takes a place "
    "when they start work, not when they open the link, and the study's places reserve their tasks from lab "
    "annotators. Mechanical Turk closed on 2026-09-30: its studies stay for their records and reports, and no new "
    "one can be made. Paste the link into the platform's study page; docs/crowd.md walks through it. "
    "Qualification questions available: " + ", ".join(f"{kind} {len(pool_for(kind))}" for kind in studies.KINDS) + "."
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


def _row(ctx: AppContext, study: dict[str, Any], base: str) -> dict[str, Any]:
    link = ""
    if base:
        try:
            link = links.study_link(ctx.database, studies.get_study(ctx.database, study["id"]), base)
        except ValidationError:  # an address the browser gave that is no http(s) URL: no link shown
            link = ""
    places = study["places"] if study["places"] else "auto"
    platform = f"{study['platform']} (archived)" if study["platform"] in studies.ARCHIVED else study["platform"]
    if study["platform"] == "generic":
        platform = f"generic ({study['worker_param']}=)"
    gold = study["gold_rate"] if study["gold_rate"] is not None else "server's"
    return {
        **study,
        "platform": platform,
        "places": places,
        "gold_rate": gold,
        "tries": study["qualification_attempts"],
        "link": link,
    }


def pool_words(ctx: AppContext) -> str:
    """What the open studies reserve of each pool, and what is left for lab annotators."""
    rows = waiting.reservations(ctx.database)
    parts = [
        f"**{row['kind']}**: {row['unclaimed']} open tasks not handed out, {row['reserved']} reserved by studies, "
        f"{row['free']} free for lab annotators"
        for row in rows
    ]
    return "Tasks now: " + " · ".join(parts) + "."


def studies_frame(ctx: AppContext, me: str | None, base: str = "") -> pd.DataFrame:
    rows = [_row(ctx, study, base) for study in studies.list_studies(ctx.database, me)]
    return pd.DataFrame([[row[key] for _, key in SHOWN] for row in rows], columns=COLUMNS)


NO_STUDY = "No study yet: create one below, and it shows here with its counts and link."


def studies_shown(ctx: AppContext, me: str | None, table: gr.Dataframe, none_yet: gr.Markdown, base: str = "") -> dict:
    """The table of studies, or, before there is any, one sentence saying so: an empty table of nineteen columns
    is only headers that scroll sideways with nothing a keyboard can reach (axe: scrollable-region-focusable)."""
    frame = studies_frame(ctx, me, base)
    empty = frame.empty
    return {table: gr.update(value=frame, visible=not empty), none_yet: NO_STUDY if empty else ""}


def _study_id(value: Any) -> int:
    if value in (None, ""):
        raise Mistake("Enter the number of the study (the id column of the table).")
    return int(value)


def _number(value: float | None, default: int = 0) -> int:
    return int(value) if value is not None else default


def build_studies_tab(ctx: AppContext) -> TabHandle:
    db = ctx.database
    with gr.Tab("Studies", id="studies", visible=False) as tab:
        gr.Markdown(HELP)
        none_yet = gr.Markdown(elem_id="studies-none")
        table = gr.Dataframe(
            headers=COLUMNS, interactive=False, label="Studies", elem_id="studies-table", visible=False
        )  # shown once there is a study (studies_shown)
        pool = gr.Markdown(elem_id="studies-pool")
        with gr.Accordion("Create a study", open=True):
            with gr.Row():
                name = gr.Textbox(label="Name (unique among open studies)", elem_id="study-name", max_length=200)
                kind = gr.Dropdown(list(studies.KINDS), value="intents", label="Kind of work", elem_id="study-kind")
                platform = gr.Dropdown(
                    studies.open_platforms(), value="prolific", label="Platform", elem_id="study-platform"
                )
                id_param = gr.Textbox(
                    label="Id parameter (generic only; e.g. SONA: survey_code)",
                    placeholder="worker",
                    elem_id="study-id-param",
                    max_length=40,
                )
            with gr.Row():
                tasks = gr.Number(value=10, precision=0, label="Tasks per worker", elem_id="study-tasks")
                minutes = gr.Number(value=60, precision=0, label="Time limit (minutes)", elem_id="study-minutes")
                places = gr.Number(
                    value=0, precision=0, label="Places (0: what the pool needs)", elem_id="study-places"
                )
            with gr.Row():
                size = gr.Number(value=5, precision=0, label="Qualification questions", elem_id="study-quiz-size")
                mark = gr.Number(value=0.8, label="Pass mark (share right)", elem_id="study-pass-mark")
                attempts = gr.Number(value=2, precision=0, label="Qualification tries", elem_id="study-attempts")
            with gr.Row():
                completion = gr.Textbox(label="Completion code (required)", elem_id="study-completion")
                screenout = gr.Textbox(
                    label="Screen-out code (required with a qualification)", elem_id="study-screenout"
                )
                return_url = gr.Textbox(
                    label="Return URL ({code} is filled in; empty: the platform's)", elem_id="study-return-url"
                )
            with gr.Row():
                gold_rate = gr.Number(
                    value=0, label="Gold rate (share of tasks; e.g. 0.2)", elem_id="study-gold-rate", minimum=0
                )
                partial = gr.Textbox(
                    label="Partial-pay code (for a worker left with no task; empty: the completion code)",
                    elem_id="study-partial-code",
                )
            with gr.Accordion("Check arrivals with Prolific (optional)", open=False):
                gr.Markdown(
                    "With your Prolific API token and the study's id on Prolific, every new id is checked: only a "
                    "participant with a submission in that study may start. The token is kept and never shown."
                )
                with gr.Row():
                    prolific_token = gr.Textbox(
                        label="Prolific API token", type="password", elem_id="study-prolific-token"
                    )
                    prolific_study = gr.Textbox(label="Prolific study id", elem_id="study-prolific-study")
            create = gr.Button("Create study", variant="primary", elem_id="study-create")
        with gr.Row():
            chosen = gr.Number(label="Study id", precision=0, value=None, elem_id="study-id")
            address = gr.Textbox(label="The app's public address", elem_id="study-address")
            show_link = gr.Button("Show its link", elem_id="study-show-link")
            close = gr.Button("Close the study…", variant="stop", elem_id="study-close")
        with gr.Group(visible=False, elem_id="study-close-confirm") as confirm_box:
            effect = gr.Markdown(elem_id="study-close-effect")
            with gr.Row():
                confirm = gr.Button("Yes, close it", variant="stop", elem_id="study-close-yes")
                cancel = gr.Button("Cancel", elem_id="study-close-cancel")
        closing = gr.State(None)  # the study the confirmation is about (not whatever the id box says by then)
        link = gr.Textbox(label="Study link (paste it into the platform)", buttons=["copy"], elem_id="study-link")
        message = gr.Markdown(elem_id="study-message")

    @shown_in(message)
    def on_create(
        study_name: str,
        study_kind: str,
        study_platform: str,
        n_tasks: float | None,
        n_minutes: float | None,
        n_places: float | None,
        quiz_size: float | None,
        pass_mark: float | None,
        tries: float | None,
        completion_code: str,
        screenout_code: str,
        url: str,
        param: str,
        n_gold: float | None,
        partial_code: str,
        token: str,
        prolific_id: str,
        request: gr.Request,
    ) -> dict:
        me = caller(ctx, request)
        made = studies.create_study(
            db,
            me,
            name=study_name,
            kind=study_kind,
            platform=study_platform,
            tasks_per_worker=_number(n_tasks),
            time_limit_minutes=_number(n_minutes),
            places=_number(n_places) or None,
            qualification_size=_number(quiz_size),
            pass_mark=float(pass_mark if pass_mark is not None else -1),
            qualification_attempts=_number(tries),
            completion_code=completion_code,
            screenout_code=screenout_code,
            return_url=(url or "").strip() or None,
            worker_param=param or "",
            gold_rate=float(n_gold or 0),
            partial_code=partial_code or "",
            prolific_token=token or "",
            prolific_study_id=prolific_id or "",
        )
        base = public_address(request)
        return {
            **studies_shown(ctx, me, table, none_yet, base),
            pool: pool_words(ctx),
            prolific_token: "",
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
    def on_close_ask(study_id: Any, request: gr.Request) -> dict:
        preview = studies.closing_preview(db, caller(ctx, request), _study_id(study_id))
        if preview["status"] != "open":
            return {
                confirm_box: gr.Group(visible=False),
                closing: None,
                message: f"Study {preview['study_id']} is already closed.",
            }
        return {
            confirm_box: gr.Group(visible=True),
            effect: f"⚠️ **{esc(preview['effect'])}**",
            closing: preview["study_id"],
            message: "",
        }

    @shown_in(message)
    def on_close_confirm(study_id: int | None, base: str, request: gr.Request) -> dict:
        if study_id is None:
            raise Mistake("Press “Close the study…” first and read what closing does.")
        me = caller(ctx, request)
        preview = studies.closing_preview(db, me, int(study_id))
        closed = studies.close_study(db, me, int(study_id))
        return {
            **studies_shown(ctx, me, table, none_yet, (base or "").strip() or public_address(request)),
            pool: pool_words(ctx),
            confirm_box: gr.Group(visible=False),
            closing: None,
            message: (
                f"Study **{closed.id}** is closed: {preview['completion_on_close']} worker(s) who did at least one "
                f"task get the completion code, {preview['screenout_on_close']} still in the qualification or "
                "without a task get the screen-out code."
            ),
        }

    def on_close_cancel() -> dict:
        return {confirm_box: gr.Group(visible=False), closing: None, message: "Nothing was closed."}

    inputs = [name, kind, platform, tasks, minutes, places, size, mark, attempts, completion, screenout, return_url]
    inputs += [id_param, gold_rate, partial, prolific_token, prolific_study]
    listen(
        ctx,
        create.click,
        on_create,
        inputs,
        [table, none_yet, pool, prolific_token, chosen, address, link, message],
        api_name="studies_create",
        **QUIET,
        **PRIVATE,
    )
    listen(
        ctx,
        show_link.click,
        on_link,
        [chosen, address],
        [link, address, message],
        api_name="studies_link",
        **QUIET,
        **PRIVATE,
    )
    listen(
        ctx,
        close.click,
        on_close_ask,
        [chosen],
        [confirm_box, effect, closing, message],
        api_name="studies_close_ask",
        **QUIET,
        **PRIVATE,
    )
    listen(
        ctx,
        confirm.click,
        on_close_confirm,
        [closing, address],
        [table, none_yet, pool, confirm_box, closing, message],
        api_name="studies_close_confirm",
        **QUIET,
        **PRIVATE,
    )
    listen(
        ctx,
        cancel.click,
        on_close_cancel,
        None,
        [confirm_box, closing, message],
        api_name="studies_close_cancel",
        **PRIVATE,
    )

    def on_open(request: gr.Request) -> dict:
        """The studies and their counts as they are now (page load and each visit of the tab)."""
        try:
            base = public_address(request)
            me = caller(ctx, request)
            return {**studies_shown(ctx, me, table, none_yet, base), address: base, pool: pool_words(ctx)}
        except PermissionDenied:  # not an admin: the tab is hidden
            return {table: gr.update()}

    shown = [table, none_yet, address, pool]
    listen(ctx, tab.select, on_open, None, shown, show_progress="hidden", api_name="studies_open", **PRIVATE)
    return TabHandle(tab=tab, on_load=(on_open, shown), filled_on_select=True)


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
        places: int | None = None,
        qualification_attempts: int = 2,
        worker_param: str = "",
        gold_rate: float = 0.0,
        partial_code: str = "",
        prolific_token: str = "",
        prolific_study_id: str = "",
    ) -> dict:
        """Create a study; return_url "" takes the platform's default; places null or 0: what the pool needs;
        platform prolific, connect or generic (mturk is archived: refused); worker_param names the generic
        platform's id parameter; prolific_token with prolific_study_id checks arrivals against Prolific.
        Returns the study (never its secret nor the token)."""
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
            places=int(places) if places else None,
            qualification_attempts=int(qualification_attempts),
            worker_param=worker_param or "",
            gold_rate=float(gold_rate or 0),
            partial_code=partial_code or "",
            prolific_token=prolific_token or "",
            prolific_study_id=prolific_study_id or "",
        ).public()

    @ui_errors
    def study_list(request: gr.Request) -> list:
        """Every study with qualifying / working / screened_out / finished / returned / median_minutes."""
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
        while not yet qualified the questions of their next try (without answers), tries_left and the mistakes of
        their last try explained."""
        return workers.my_study(db, caller(ctx, request))

    @ui_errors
    def study_qualify(answers: dict, request: gr.Request) -> dict:
        """One try at the qualification: answers maps question id to the chosen option's index."""
        me = caller(ctx, request)
        study_id = workers.my_study(db, me)["study_id"]
        done = workers.take_qualification(db, me, study_id, {str(k): str(v) for k, v in answers.items()})
        return {
            "status": done.worker.status,
            "right": done.result.right,
            "asked": done.result.asked,
            "passed": done.result.passed,
            "tries_left": done.tries_left,
            "mistakes": done.mistakes,
            "full": done.worker.turned_away_at is not None,  # passed when the last place had gone: screened out
        }

    @ui_errors
    def study_leave(request: gr.Request) -> dict:
        """A study worker leaves (returns) their study; they cannot come back."""
        me = caller(ctx, request)
        return {"status": workers.leave_study(db, me, workers.my_study(db, me)["study_id"]).status}

    for name, fn in {
        "study_create": study_create,
        "study_list": study_list,
        "study_link": study_link,
        "study_close": study_close,
        "study_stats": study_stats,
        "study_me": study_me,
        "study_qualify": study_qualify,
        "study_leave": study_leave,
    }.items():
        endpoint(ctx, fn, api_name=name)
