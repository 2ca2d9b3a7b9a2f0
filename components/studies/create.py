"""The Studies tab's form that creates a crowd study (``studies_create``): its kind, platform, quota, places,
qualification, codes, gold rate and, optionally, Prolific's check of arrivals. A study made shows in the list with
its link below (components/studies/manage.py)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import gradio as gr

from backend.campaigns import links, studies
from backend.context import AppContext
from components.common import caller, esc
from components.events import Event, bind
from components.feedback import QUIET, shown_in
from components.studies.listing import ListPanel, public_address, studies_shown
from components.studies.manage import ManagePanel


@dataclass(frozen=True)
class CreatePanel:
    """The form's fields, in the order ``on_create`` takes them (``inputs``), and its button."""

    name: gr.Textbox
    kind: gr.Dropdown
    platform: gr.Dropdown
    tasks: gr.Number
    minutes: gr.Number
    places: gr.Number
    size: gr.Number
    mark: gr.Number
    attempts: gr.Number
    completion: gr.Textbox
    screenout: gr.Textbox
    return_url: gr.Textbox
    id_param: gr.Textbox
    gold_rate: gr.Number
    partial: gr.Textbox
    prolific_token: gr.Textbox
    prolific_study: gr.Textbox
    create: gr.Button

    @property
    def inputs(self) -> list[Any]:
        return [getattr(self, field.name) for field in fields(self) if field.name != "create"]


def layout() -> CreatePanel:
    with gr.Accordion("Create a study", open=True):
        name, kind, platform, id_param = _work_row()
        with gr.Row():
            tasks = gr.Number(value=10, precision=0, label="Tasks per worker", elem_id="study-tasks")
            minutes = gr.Number(value=60, precision=0, label="Time limit (minutes)", elem_id="study-minutes")
            places = gr.Number(value=0, precision=0, label="Places (0: what the pool needs)", elem_id="study-places")
        with gr.Row():
            size = gr.Number(value=5, precision=0, label="Qualification questions", elem_id="study-quiz-size")
            mark = gr.Number(value=0.8, label="Pass mark (share right)", elem_id="study-pass-mark")
            attempts = gr.Number(value=2, precision=0, label="Qualification tries", elem_id="study-attempts")
        completion, screenout, return_url, gold_rate, partial = _codes_rows()
        prolific_token, prolific_study = _prolific_layout()
        create = gr.Button("Create study", variant="primary", elem_id="study-create")
    return CreatePanel(
        name=name,
        kind=kind,
        platform=platform,
        tasks=tasks,
        minutes=minutes,
        places=places,
        size=size,
        mark=mark,
        attempts=attempts,
        completion=completion,
        screenout=screenout,
        return_url=return_url,
        id_param=id_param,
        gold_rate=gold_rate,
        partial=partial,
        prolific_token=prolific_token,
        prolific_study=prolific_study,
        create=create,
    )


def _work_row() -> tuple[gr.Textbox, gr.Dropdown, gr.Dropdown, gr.Textbox]:
    """The study's name, kind of work, platform and (generic platforms) the worker id's parameter."""
    with gr.Row():
        name = gr.Textbox(label="Name (unique among open studies)", elem_id="study-name", max_length=200)
        kind = gr.Dropdown(list(studies.KINDS), value="intents", label="Kind of work", elem_id="study-kind")
        platform = gr.Dropdown(studies.open_platforms(), value="prolific", label="Platform", elem_id="study-platform")
        id_param = gr.Textbox(
            label="Id parameter (generic only; e.g. SONA: survey_code)",
            placeholder="worker",
            elem_id="study-id-param",
            max_length=40,
        )
    return name, kind, platform, id_param


def _codes_rows() -> tuple[gr.Textbox, gr.Textbox, gr.Textbox, gr.Number, gr.Textbox]:
    """The codes a worker gets, the way back to the platform, the gold rate and the partial-pay code."""
    with gr.Row():
        completion = gr.Textbox(label="Completion code (required)", elem_id="study-completion")
        screenout = gr.Textbox(label="Screen-out code (required with a qualification)", elem_id="study-screenout")
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
    return completion, screenout, return_url, gold_rate, partial


def _prolific_layout() -> tuple[gr.Textbox, gr.Textbox]:
    with gr.Accordion("Check arrivals with Prolific (optional)", open=False):
        gr.Markdown(
            "With your Prolific API token and the study's id on Prolific, every new id is checked: only a "
            "participant with a submission in that study may start. The token is kept and never shown."
        )
        with gr.Row():
            token = gr.Textbox(label="Prolific API token", type="password", elem_id="study-prolific-token")
            study = gr.Textbox(label="Prolific study id", elem_id="study-prolific-study")
    return token, study


def _number(value: float | None, default: int = 0) -> int:
    return int(value) if value is not None else default


def on_create(
    ctx: AppContext,
    p: CreatePanel,
    listing: ListPanel,
    manage: ManagePanel,
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
    """Create the study the form describes; show it in the list, with its link."""
    me = caller(ctx, request)
    made = studies.create_study(
        ctx.database,
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
        **studies_shown(ctx, me, listing, base),
        p.prolific_token: "",
        manage.chosen: made.id,
        manage.address: base,
        manage.link: links.link_for(ctx.database, me, made.id, base)["link"] if base else "",
        manage.message: f"Created study **{made.id}**, “{esc(made.name)}”. Its link is below.",
    }


def events(ctx: AppContext, p: CreatePanel, listing: ListPanel, manage: ManagePanel) -> list[Event]:
    outputs = [listing.table, listing.none_yet, listing.pool, p.prolific_token]
    outputs += [manage.chosen, manage.address, manage.link, manage.message]
    create = bind(shown_in(manage.message)(on_create), ctx, p, listing, manage)
    return [Event("studies_create", "admin", create, p.create.click, p.inputs, outputs, QUIET)]
