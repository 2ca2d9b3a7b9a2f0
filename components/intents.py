"""The intent-annotation tab (annotators), and the named API endpoints intent_next / intent_submit /
intent_skip / intent_viewed / intent_draft that scripts, the load tests and the page's own script use."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from backend.accounts.auth import User, get_user
from backend.campaigns.instructions import INTENTS as INTENT_INSTRUCTIONS
from backend.context import AppContext
from backend.errors import CompStudioError, ValidationError, WatchTooShort
from backend.intents import service
from components.access import endpoint, listen
from components.common import TabHandle, caller, esc, ui_errors
from components.feedback import refused
from components.player import build_player, empty_value, player_value, watched_share_js
from components.study_status import study_end, study_line

INSTRUCTIONS = INTENT_INSTRUCTIONS.markdown()  # the text a study qualification shows too (backend/campaigns)
PLAYER_ID = "intent-video"
SUBMIT_LABEL = "Submit"  # "(Ctrl+Enter)" is added by CSS where there is a keyboard (web/look.py's CSS)


def _progress_line(progress: dict[str, int]) -> str:
    line = (
        f"**Mine today:** {progress['mine_today']} · **mine in total:** {progress['mine_total']} · "
        f"**sequences left for you:** {progress['left_for_me']}"
    )
    others = progress["left_in_pool"] - progress["left_for_me"]
    if others > 0:
        line += f" · {others} more still open for other annotators"
    return line


def _problems_markdown(exc: CompStudioError) -> str:
    if isinstance(exc, WatchTooShort):  # the player hides it once the watching meets the floor (player.js)
        return "\n\n".join(f'<span class="cs-watch-problem">⚠️ {esc(problem)}</span>' for problem in exc.problems)
    return _problem_lines(getattr(exc, "problems", None) or [str(exc)])


def _problem_lines(problems: list[str]) -> str:
    return "\n".join(f"⚠️ {esc(problem)}" + "  " for problem in problems)


def _task_markdown(task: dict[str, Any]) -> str:
    lines = [
        f"### Sequence {esc(task['sequence_id'])} · round {task['round']} · {esc(task['scene'] or 'scene unknown')}",
        # read by the page's script to flush the draft as the page closes (app.py, APP_JS)
        f'<span id="intent-sequence">{esc(task["sequence_id"])}</span>',
    ]  # hidden by CSS
    if task["source"] == "demo":
        lines.append("> **Demo content**: a generated video, not real data.")
    if task["video_missing"]:
        lines.append("> ⚠️ **No video file for this sequence**: judge from the action timeline only.")
    if task.get("guidance"):
        lines.append(f"> **Reviewer guidance from the previous round:** {esc(task['guidance'])}")
    # the actions are the player's timeline, each a button with its name and times (components/player.py)
    return "\n".join(lines)


def task_player(task: dict[str, Any], username: str | None, need_share: float | None) -> str:
    """The player's value for a task: its video, its actions on the timeline, Ctrl+Enter on Submit."""
    actions = [(a["name"], a["start"], a["end"]) for a in task["actions"]]
    return player_value(
        task["video"],
        actions,
        user=username,
        submit="#intent-submit",
        need_share=need_share,
        key=f"{task['sequence_id']}/{task['round']}",
        played=task.get("played") or [],
        keep_played={"url": "/api/intent_played", "item": task["sequence_id"]},
    )


@dataclass
class IntentsView:
    progress: gr.Markdown
    current: gr.Textbox  # held by the page (not gr.State), so a submit after a server restart still knows it
    start: gr.Button
    player: gr.Column
    video: gr.HTML  # the player (components/player.py)
    details: gr.Markdown
    form: gr.Column
    concrete: gr.Textbox
    high_level: gr.Textbox
    message: gr.Markdown
    submit: gr.Button
    draft_status: gr.Markdown
    last_saved: gr.Markdown
    typed_at: gr.Number
    watched: gr.Number
    skip_box: gr.Accordion
    reason: gr.Textbox
    skip_message: gr.Markdown
    skip: gr.Button

    @property
    def outputs(self) -> list[Any]:
        return [
            self.current,
            self.progress,
            self.details,
            self.player,
            self.video,
            self.form,
            self.skip_box,
            self.concrete,
            self.high_level,
            self.submit,
            self.message,
            self.draft_status,
            self.last_saved,
            self.start,
        ]


def _layout() -> IntentsView:
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
    with gr.Accordion("Skip this sequence", open=False, elem_id="intent-skip-box") as skip_box:
        reason = gr.Textbox(label="Why do you skip it?", elem_id="intent-skip-reason", max_length=500)
        skip_message = gr.Markdown(elem_id="intent-skip-message")
        skip = gr.Button("Skip", elem_id="intent-skip")
    with gr.Accordion("Instructions", open=False, elem_id="intent-instructions-box"):
        gr.Markdown(INSTRUCTIONS, elem_id="intent-instructions")
    return IntentsView(
        progress,
        current,
        start,
        player,
        video,
        details,
        form,
        concrete,
        high_level,
        message,
        submit,
        draft_status,
        last_saved,
        typed_at,
        watched,
        skip_box,
        reason,
        skip_message,
        skip,
    )


def render(
    v: IntentsView, payload: dict[str, Any], username: str | None = None, need_share: float | None = None
) -> dict:
    """The tab's outputs, by component, for a ``next_intent_task`` / ``submit_intents`` payload; ``need_share``:
    the watch check's share, shown by the player (None: no check)."""
    task, study = payload["task"], payload.get("study")
    base = {
        v.progress: study_line(study) if study else _progress_line(payload["progress"]),
        v.draft_status: "",
        v.message: "",
        v.start: gr.update(visible=False),
    }
    if payload.get("stored"):
        stored = payload["stored"]
        base[v.last_saved] = (
            f"**Saved for {esc(stored['sequence_id'])}:** concrete “{esc(stored['concrete_intent'])}” · "
            f"high-level “{esc(stored['high_level_intent'])}”"
        )
    if task is None:  # nothing left: say so, and show no empty player, form or Skip
        return {
            **base,
            v.current: None,
            v.video: empty_value(),
            v.concrete: "",
            v.high_level: "",
            v.details: study_end(study, "intents")
            if study
            else f"### {esc(payload['paused'])}"
            if payload.get("paused")
            else "### Nothing left for you to annotate. Thank you!",
            v.player: gr.update(visible=False),
            v.form: gr.update(visible=False),
            v.skip_box: gr.update(visible=False),
            v.submit: gr.update(interactive=False),
        }
    draft = task["draft"] or {}
    return {
        **base,
        v.current: task["sequence_id"],
        v.details: _task_markdown(task),
        v.player: gr.update(visible=True),
        v.form: gr.update(visible=True),
        v.skip_box: gr.update(visible=True),
        v.video: task_player(task, username, need_share if task["must_view"] else None),
        v.concrete: draft.get("concrete_intent", ""),
        v.high_level: draft.get("high_level_intent", ""),
        # always usable: a short watch is refused by the server with "Watched N%" beside the fields
        v.submit: gr.update(interactive=True, value=SUBMIT_LABEL),
    }


def build_intents_tab(ctx: AppContext) -> TabHandle:
    db, settings = ctx.database, ctx.settings
    need = settings.full_view_share if settings.require_full_view else None

    with gr.Tab("Annotate intents", id="intents") as tab:
        v = _layout()

    def annotator(request: gr.Request) -> User | None:
        name = caller(ctx, request)
        user = get_user(db, name) if name else None
        return user if user is not None and user.has_role("annotator") else None

    @ui_errors
    def on_load(request: gr.Request) -> dict:
        """Annotators land on this tab and get their task; reviewers and admins land elsewhere, and are
        handed nothing until they ask for a sequence here (on_start): looking leases nothing."""
        user = annotator(request)
        if user is None:
            return {v.progress: "Your account cannot annotate." if caller(ctx, request) else "Sign in to annotate."}
        if user.role == "annotator":
            return render(v, service.next_intent_task(db, settings, user.username), user.username, need)
        held = service.held_intent_task(db, settings, user.username)
        if held["task"] is not None:
            return render(v, held, user.username, need)
        return {
            v.progress: _progress_line(held["progress"]),
            v.start: gr.update(visible=True),
            v.player: gr.update(visible=False),
            v.form: gr.update(visible=False),
            v.skip_box: gr.update(visible=False),
            v.details: "Press **Get a sequence to annotate** when you mean to work here: the sequence is then "
            f"reserved for you for {settings.lease_minutes:g} minutes.",
        }

    @ui_errors
    def on_start(sequence_id: str | None, request: gr.Request) -> dict:
        user = annotator(request)
        if user is None or sequence_id:  # a task is on the page already: keep it, and what was typed
            return {v.progress: gr.update()}  # (an empty dict would read as one output value)
        return render(v, service.next_intent_task(db, settings, user.username), user.username, need)

    listen(ctx, v.start.click, on_start, [v.current], v.outputs, api_name="intents_ui_start", api_visibility="private")
    _wire_work(ctx, v)
    _wire_drafts(ctx, v)
    return TabHandle(tab=tab, on_load=(on_load, v.outputs))


def _wire_work(ctx: AppContext, v: IntentsView) -> None:
    """Submit and Skip. A refusal changes only the message next to the fields: the person's text and video stay
    usable (no status badge over them: show_progress="minimal"), and the server logs one line."""
    db, settings = ctx.database, ctx.settings
    need = settings.full_view_share if settings.require_full_view else None

    def on_submit(
        sequence_id: str | None, concrete_text: str, high_text: str, watched: float | None, request: gr.Request
    ) -> dict:
        name = caller(ctx, request)
        try:
            if not sequence_id:
                raise ValidationError("There is no task to submit.")
            result = service.submit_intents(db, settings, name, sequence_id, concrete_text, high_text, watched)
        except CompStudioError as exc:
            refused("intent submit", name, exc)
            return {v.message: _problems_markdown(exc)}
        view = render(v, result, name, need)
        stored = result["stored"]
        typed = ((concrete_text or "").strip(), (high_text or "").strip())
        if result["duplicate"] and typed != (stored["concrete_intent"], stored["high_level_intent"]):
            kept = f"You had already submitted {sequence_id}; your first text was kept and this one was not stored."
            gr.Warning(kept)
            return {**view, v.message: f"⚠️ {esc(kept)}"}
        gr.Info(f"Saved your intents for {sequence_id}.")
        return view

    def on_skip(sequence_id: str | None, why: str, request: gr.Request) -> dict:
        name = caller(ctx, request)
        try:
            if not sequence_id:
                raise ValidationError("There is no task to skip.")
            result = service.skip_intent_task(db, settings, name, sequence_id, why)
        except CompStudioError as exc:
            refused("intent skip", name, exc)
            return {v.skip_message: _problems_markdown(exc)}
        return {**render(v, result, name, need), v.reason: "", v.skip_message: ""}

    def on_check(sequence_id: str | None, concrete_text: str, high_text: str, request: gr.Request) -> Any:
        """The text's problems beside the fields at once (issue 17): this event skips the queue, which the
        submit below waits in; the submit checks again and shows its toast."""
        name = caller(ctx, request)
        if not sequence_id or not name:
            return gr.update()
        try:
            problems = service.intent_problems(db, settings, name, sequence_id, concrete_text, high_text)
        except CompStudioError:
            return gr.update()  # the submit says why
        return _problem_lines(problems) if problems else gr.update()

    listen(
        ctx,
        v.submit.click,
        on_check,
        [v.current, v.concrete, v.high_level],
        v.message,
        api_name="intents_ui_check",
        queue=False,
        show_progress="hidden",
        api_visibility="private",
    )
    listen(
        ctx,
        v.submit.click,
        on_submit,
        [v.current, v.concrete, v.high_level, v.watched],
        v.outputs,
        api_name="intents_ui_submit",
        js=watched_share_js(PLAYER_ID, 4),  # the share the player's played ranges cover, checked by the server
        show_progress="minimal",
        api_visibility="private",
    )
    listen(
        ctx,
        v.skip.click,
        on_skip,
        [v.current, v.reason],
        [*v.outputs, v.reason, v.skip_message],
        api_name="intents_ui_skip",
        show_progress="minimal",
        api_visibility="private",
    )


def _wire_drafts(ctx: AppContext, v: IntentsView) -> None:
    @ui_errors
    def on_draft(
        sequence_id: str | None, concrete_text: str, high_text: str, typed_ms: float | None, request: gr.Request
    ) -> Any:
        if not sequence_id:
            return ""
        saved = service.save_draft(ctx.database, caller(ctx, request), sequence_id, concrete_text, high_text, typed_ms)
        return f"Draft saved at {saved[11:19]} UTC" if saved else gr.update()

    for field, box in (("concrete", v.concrete), ("high_level", v.high_level)):  # typing, and leaving the field
        # the browser stamps each save with its clock, so a save still queued when the page's closing flush
        # (APP_JS in app.py) has landed cannot overwrite the newer text
        listen(
            ctx,
            [box.input, box.blur],
            on_draft,
            [v.current, v.concrete, v.high_level, v.typed_at],
            v.draft_status,
            api_name=f"intents_ui_draft_{field}",
            js="(sequence, concrete, high, typed) => [sequence, concrete, high, Date.now()]",
            trigger_mode="always_last",
            show_progress="hidden",
            api_visibility="private",
        )


def api_endpoints(ctx: AppContext) -> dict[str, Callable[..., dict]]:
    """The named scripting endpoints, by name: registered with gr.api below, and served on the lean
    ``POST /api/<name>`` routes (web/scripts.py)."""
    db, settings = ctx.database, ctx.settings

    @ui_errors
    def intent_next(request: gr.Request) -> dict:
        """Your current task (the same one until you submit or skip it) or a new one; task is null when done."""
        return service.next_intent_task(db, settings, caller(ctx, request))

    @ui_errors
    def intent_submit(sequence_id: str, concrete_intent: str, high_level_intent: str, request: gr.Request) -> dict:
        """Store your two intents for the sequence you were handed; returns the stored row and your next task.
        With require_full_view on, report the share you watched with intent_viewed first."""
        return service.submit_intents(
            db, settings, caller(ctx, request), sequence_id, concrete_intent, high_level_intent
        )

    @ui_errors
    def intent_skip(sequence_id: str, reason: str, request: gr.Request) -> dict:
        """Give the sequence back with a reason; you will not get it again. Returns your next task."""
        return service.skip_intent_task(db, settings, caller(ctx, request), sequence_id, reason)

    @ui_errors
    def intent_draft(
        sequence_id: str, concrete_intent: str, high_level_intent: str, typed_ms: float | None, request: gr.Request
    ) -> dict:
        """Keep unfinished text for the sequence you hold (the page sends it as it closes). typed_ms: your
        clock when it was typed (ms), or null; an older save never overwrites a newer one. saved_at is null
        when nothing was kept (already submitted or skipped, or a newer draft is stored)."""
        saved = service.save_draft(db, caller(ctx, request), sequence_id, concrete_intent, high_level_intent, typed_ms)
        return {"sequence_id": sequence_id, "saved_at": saved}

    @ui_errors
    def intent_played(sequence_id: str, ranges: list[list[float]], request: gr.Request) -> dict:
        """Keep the parts of the video you have played ([[start, end], ...] in seconds; the page's player sends
        them as it plays), joined with those kept before: a reload or a crash restores them. played is null
        when the sequence is no longer yours."""
        return {"played": service.save_played(db, settings, caller(ctx, request), sequence_id, ranges)}

    @ui_errors
    def intent_viewed(sequence_id: str, watched_share: float, request: gr.Request) -> dict:
        """Report the share of the video you played (0–1, from the player's played ranges; seeking ahead covers
        nothing): at least full_view_share lets you submit when require_full_view is on."""
        service.mark_viewed(db, settings, caller(ctx, request), sequence_id, watched_share)
        return {"sequence_id": sequence_id, "viewed": True}

    return {
        "intent_next": intent_next,
        "intent_submit": intent_submit,
        "intent_skip": intent_skip,
        "intent_viewed": intent_viewed,
        "intent_draft": intent_draft,
        "intent_played": intent_played,
    }


def _register_api(ctx: AppContext) -> None:
    for name, fn in api_endpoints(ctx).items():
        endpoint(ctx, fn, api_name=name, queue=False)
