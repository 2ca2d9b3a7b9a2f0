"""The intent-annotation panel: the player and its timeline beside the two fields, Submit, drafts and Skip.

Handlers are plain functions of the panel (callable in a test without a browser); :func:`events` declares the
panel's events, each with the least identity that may call it (components/events.py). What the panel shows for a
task is components/intents/view.py's."""

from __future__ import annotations

from typing import Any

import gradio as gr

from backend.accounts.auth import User, get_user
from backend.context import AppContext
from backend.errors import CompStudioError, ValidationError
from backend.intents import service
from components.common import caller, esc
from components.events import Event, bind, wire
from components.feedback import refused
from components.intents.view import (
    INSTRUCTIONS,
    PLAYER_ID,
    SUBMIT_LABEL,
    IntentsPanel,
    problem_lines,
    problems_markdown,
    progress_line,
    render,
)
from components.player import build_player, watched_share_js
from components.readable import local_clock


def layout() -> IntentsPanel:
    """The work first (player and timeline beside the fields, all on a 1280×800 screen), then the instructions,
    folded (issue 27 §8); on a phone the columns stack in the same order."""
    progress = gr.Markdown(elem_id="intent-progress")
    current = gr.Textbox(visible=False, elem_id="intent-current")
    # reviewers and admins land on other tabs; here they ask for a sequence when they mean to annotate
    start = gr.Button("Get a sequence to annotate", elem_id="intent-start", visible=False)
    with gr.Row(elem_id="intent-work"):
        with gr.Column(scale=3, min_width=300) as player:
            video = build_player(PLAYER_ID)
        with gr.Column(scale=2, min_width=280):
            details = gr.Markdown(elem_id="intent-task")
            with gr.Column() as form:
                concrete = gr.Textbox(
                    label="Concrete activity", placeholder="S/He wants to …", elem_id="concrete-intent", max_length=500
                )
                high_level = gr.Textbox(
                    label="High-level goal",
                    placeholder="S/He is … / S/He wants to …",
                    elem_id="high-level-intent",
                    max_length=500,
                )
                message = gr.Markdown(elem_id="intent-message")  # why the last submit was refused, by the fields
                with gr.Row():
                    submit = gr.Button(
                        SUBMIT_LABEL, variant="primary", elem_id="intent-submit", elem_classes=["cs-ctrl-enter"]
                    )
                    draft_status = gr.Markdown(elem_id="intent-draft-status")
    last_saved = gr.Markdown(elem_id="intent-last-saved")
    typed_at = gr.Number(visible=False)  # the browser's clock when a draft was typed (set by js below)
    watched = gr.Number(visible=False)  # the player's watched share, set by the submit's js
    zone = gr.Textbox(visible=False)  # the browser's time zone, set by the drafts' js
    with gr.Accordion("Skip this sequence", open=False, elem_id="intent-skip-box") as skip_box:
        reason = gr.Textbox(label="Why do you skip it?", elem_id="intent-skip-reason", max_length=500)
        skip_message = gr.Markdown(elem_id="intent-skip-message")
        skip = gr.Button("Skip", elem_id="intent-skip")
    with gr.Accordion("Instructions", open=False, elem_id="intent-instructions-box"):
        gr.Markdown(INSTRUCTIONS, elem_id="intent-instructions")
    return IntentsPanel(
        progress, current, start, player, video, details, form, concrete, high_level, message, submit,
        draft_status, last_saved, typed_at, watched, skip_box, reason, skip_message, skip, zone,
    )  # fmt: skip


def need_share(ctx: AppContext) -> float | None:
    """The share of the video the watch check asks for (None: no check)."""
    return ctx.settings.full_view_share if ctx.settings.require_full_view else None


def _annotator(ctx: AppContext, request: gr.Request) -> User | None:
    name = caller(ctx, request)
    user = get_user(ctx.database, name) if name else None
    return user if user is not None and user.has_role("annotator") else None


def on_load(ctx: AppContext, p: IntentsPanel, request: gr.Request) -> dict:
    """Annotators land on this tab and get their task; reviewers and admins land elsewhere, and are handed nothing
    until they ask for a sequence here (:func:`on_start`): looking leases nothing."""
    db, settings = ctx.database, ctx.settings
    user = _annotator(ctx, request)
    if user is None:
        return {p.progress: "Your account cannot annotate." if caller(ctx, request) else "Sign in to annotate."}
    if user.role == "annotator":
        return render(p, service.next_intent_task(db, settings, user.username), user.username, need_share(ctx))
    held = service.held_intent_task(db, settings, user.username)
    if held["task"] is not None:
        return render(p, held, user.username, need_share(ctx))
    return {
        p.progress: progress_line(held["progress"]),
        p.start: gr.update(visible=True),
        p.player: gr.update(visible=False),
        p.form: gr.update(visible=False),
        p.skip_box: gr.update(visible=False),
        p.details: "Press **Get a sequence to annotate** when you mean to work here: the sequence is then "
        f"reserved for you for {settings.lease_minutes:g} minutes.",
    }


def on_start(ctx: AppContext, p: IntentsPanel, sequence_id: str | None, request: gr.Request) -> dict:
    user = _annotator(ctx, request)
    if user is None or sequence_id:  # a task is on the page already: keep it, and what was typed
        return {p.progress: gr.update()}  # (an empty dict would read as one output value)
    payload = service.next_intent_task(ctx.database, ctx.settings, user.username)
    return render(p, payload, user.username, need_share(ctx))


def on_submit(
    ctx: AppContext,
    p: IntentsPanel,
    sequence_id: str | None,
    concrete_text: str,
    high_text: str,
    watched: float | None,
    request: gr.Request,
) -> dict:
    """Store the two intents. A refusal changes only the message next to the fields: the person's text and video
    stay usable, and the server logs one line."""
    name = caller(ctx, request)
    try:
        if not sequence_id:
            raise ValidationError("There is no task to submit.")
        result = service.submit_intents(
            ctx.database, ctx.settings, name, sequence_id, concrete_text, high_text, watched
        )
    except CompStudioError as exc:
        refused("intent submit", name, exc)
        return {p.message: problems_markdown(exc)}
    view = render(p, result, name, need_share(ctx))
    stored = result["stored"]
    typed = ((concrete_text or "").strip(), (high_text or "").strip())
    if result["duplicate"] and typed != (stored["concrete_intent"], stored["high_level_intent"]):
        kept = f"You had already submitted {sequence_id}; your first text was kept and this one was not stored."
        gr.Warning(kept)
        return {**view, p.message: f"⚠️ {esc(kept)}"}
    gr.Info(f"Saved your intents for {sequence_id}.")
    return view


def on_skip(ctx: AppContext, p: IntentsPanel, sequence_id: str | None, why: str, request: gr.Request) -> dict:
    name = caller(ctx, request)
    try:
        if not sequence_id:
            raise ValidationError("There is no task to skip.")
        result = service.skip_intent_task(ctx.database, ctx.settings, name, sequence_id, why)
    except CompStudioError as exc:
        refused("intent skip", name, exc)
        return {p.skip_message: problems_markdown(exc)}
    return {**render(p, result, name, need_share(ctx)), p.reason: "", p.skip_message: ""}


def on_check(ctx: AppContext, sequence_id: str | None, concrete_text: str, high_text: str, request: gr.Request) -> Any:
    """The text's problems beside the fields at once (issue 17): this event skips the queue, which the submit
    waits in; the submit checks again and shows its toast."""
    name = caller(ctx, request)
    if not sequence_id or not name:
        return gr.update()
    try:
        problems = service.intent_problems(ctx.database, ctx.settings, name, sequence_id, concrete_text, high_text)
    except CompStudioError:
        return gr.update()  # the submit says why
    return problem_lines(problems) if problems else gr.update()


def on_draft(
    ctx: AppContext,
    sequence_id: str | None,
    concrete_text: str,
    high_text: str,
    typed_ms: float | None,
    zone: str | None,
    request: gr.Request,
) -> Any:
    """Keep the unfinished text; say when, on the person's own clock (``zone``: the browser's time zone)."""
    if not sequence_id:
        return ""
    saved = service.save_draft(ctx.database, caller(ctx, request), sequence_id, concrete_text, high_text, typed_ms)
    return f"Draft saved at {local_clock(saved, zone)}" if saved else gr.update()


def events(ctx: AppContext, p: IntentsPanel) -> list[Event]:
    """Start, the text check and Submit, Skip, and the drafts. Submit and Skip show their progress "minimal": a
    refusal puts no status badge over the person's text and video."""
    typed = [p.current, p.concrete, p.high_level]
    minimal = {"show_progress": "minimal"}
    # the browser stamps each draft with its clock, so a save still queued when the page's closing flush
    # (APP_JS in web/look.py) has landed cannot overwrite the newer text, and names its time zone for the answer
    draft = {
        "js": "(sequence, concrete, high, typed, zone) => [sequence, concrete, high, Date.now(), "
        "Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC']",
        "trigger_mode": "always_last",
        "show_progress": "hidden",
    }
    return [
        Event("intents_ui_start", "annotator", bind(on_start, ctx, p), p.start.click, [p.current], p.outputs),
        Event(
            "intents_ui_check", "annotator", bind(on_check, ctx), p.submit.click, typed, p.message,
            {"queue": False, "show_progress": "hidden"},
        ),
        Event(
            "intents_ui_submit", "annotator", bind(on_submit, ctx, p), p.submit.click, [*typed, p.watched], p.outputs,
            # the share the player's played ranges cover, checked by the server
            {**minimal, "js": watched_share_js(PLAYER_ID, 4)},
        ),
        Event(
            "intents_ui_skip", "annotator", bind(on_skip, ctx, p), p.skip.click, [p.current, p.reason],
            [*p.outputs, p.reason, p.skip_message], minimal,
        ),
        *(  # typing, and leaving the field
            Event(
                f"intents_ui_draft_{field}", "annotator", bind(on_draft, ctx), [box.input, box.blur],
                [*typed, p.typed_at, p.zone], p.draft_status, draft,
            )
            for field, box in (("concrete", p.concrete), ("high_level", p.high_level))
        ),
    ]  # fmt: skip


def build_work_panel(ctx: AppContext) -> IntentsPanel:
    p = layout()
    wire(ctx, events(ctx, p))
    return p
