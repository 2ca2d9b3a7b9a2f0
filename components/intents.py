"""The intent-annotation tab (annotators), and the named API endpoints intent_next / intent_submit /
intent_skip / intent_viewed / intent_draft that scripts, the load tests and the page's own script use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr

from backend.auth import get_user
from backend.context import AppContext
from backend.intents import service
from components.common import TabHandle, caller, esc, ui_errors

INSTRUCTIONS = """
Watch the video, read the actions below it, and answer: **what does the person want to do by taking
these actions?** Write two intents, each starting with *S/He wants to …* (what they plan) or
*S/He is …* (how they feel):

* **Concrete activity**, e.g. “S/He wants to drink a glass of water”.
* **High-level goal**, e.g. “S/He is thirsty” or “S/He wants to quench the thirst”.

Do not repeat an action name: say *why* the person acts. The two intents must differ.
Submit with the button or **Ctrl+Enter**; your text is saved as a draft while you type.
"""


def _progress_line(progress: dict[str, int]) -> str:
    return (
        f"**Mine today:** {progress['mine_today']} · **mine in total:** {progress['mine_total']} · "
        f"**sequences left in the pool:** {progress['left_in_pool']}"
    )


def _task_markdown(task: dict[str, Any]) -> str:
    lines = [f"### Sequence {esc(task['sequence_id'])} · round {task['round']} · {esc(task['scene'] or 'scene unknown')}",
             # read by the page's script to flush the draft as the page closes (app.py, APP_JS)
             f'<span id="intent-sequence">{esc(task["sequence_id"])}</span>']  # hidden by CSS
    if task["source"] == "demo":
        lines.append("> **Demo content**: a generated video, not real data.")
    if task["video_missing"]:
        lines.append("> ⚠️ **No video file for this sequence**: judge from the action timeline only.")
    if task.get("guidance"):
        lines.append(f"> **Reviewer guidance from the previous round:** {esc(task['guidance'])}")
    lines.append("")
    lines.append("**Actions in this sequence** (start–end in seconds):")
    lines.extend(f"{i}. {esc(line)}" for i, line in enumerate(task["timeline"], start=1))
    return "\n".join(lines)


def build_intents_tab(ctx: AppContext) -> TabHandle:
    db, settings = ctx.database, ctx.settings

    with gr.Tab("Annotate intents", id="intents") as tab:
        gr.Markdown(INSTRUCTIONS)
        progress = gr.Markdown(elem_id="intent-progress")
        # the sequence on the page; held by the page (not gr.State) so that it survives a server restart
        current = gr.Textbox(visible=False, elem_id="intent-current")
        # reviewers and admins land on other tabs; here they ask for a sequence when they mean to annotate
        start = gr.Button("Get a sequence to annotate", elem_id="intent-start", visible=False)
        with gr.Row():
            with gr.Column(scale=3):
                video = gr.Video(label="Video", elem_id="intent-video", interactive=False, autoplay=False, loop=False)
            with gr.Column(scale=2):
                details = gr.Markdown(elem_id="intent-task")
        concrete = gr.Textbox(label="Concrete activity", placeholder="S/He wants to …", elem_id="concrete-intent",
                              max_length=500)
        high_level = gr.Textbox(label="High-level goal", placeholder="S/He is … / S/He wants to …",
                                elem_id="high-level-intent", max_length=500)
        with gr.Row():
            submit = gr.Button("Submit (Ctrl+Enter)", variant="primary", elem_id="intent-submit", interactive=False)
            draft_status = gr.Markdown(elem_id="intent-draft-status")
        last_saved = gr.Markdown(elem_id="intent-last-saved")
        typed_at = gr.Number(visible=False)  # the browser's clock when a draft was typed (set by js below)
        with gr.Accordion("Skip this sequence", open=False):
            reason = gr.Textbox(label="Why do you skip it?", elem_id="intent-skip-reason", max_length=500)
            skip = gr.Button("Skip", elem_id="intent-skip")
        _register_api(ctx)

    outputs = [current, progress, details, video, concrete, high_level, submit, draft_status, last_saved, start]

    def render(payload: dict[str, Any]) -> dict:
        task = payload["task"]
        base = {progress: _progress_line(payload["progress"]), draft_status: "", start: gr.update(visible=False)}
        if payload.get("stored"):
            stored = payload["stored"]
            base[last_saved] = (
                f"**Saved for {esc(stored['sequence_id'])}:** concrete “{esc(stored['concrete_intent'])}” · "
                f"high-level “{esc(stored['high_level_intent'])}”"
            )
        if task is None:
            return {**base, current: None, video: None, concrete: "", high_level: "",
                    details: "### Nothing left for you to annotate. Thank you!",
                    submit: gr.update(interactive=False)}
        draft = task["draft"] or {}
        return {
            **base,
            current: task["sequence_id"],
            details: _task_markdown(task),
            video: task["video"],
            concrete: draft.get("concrete_intent", ""),
            high_level: draft.get("high_level_intent", ""),
            submit: gr.update(interactive=not task["must_view"],
                              value="Submit (Ctrl+Enter)" if not task["must_view"] else "Watch the video to the end first"),
        }

    def annotator(request: gr.Request):
        name = caller(ctx, request)
        user = get_user(db, name) if name else None
        return user if user is not None and user.has_role("annotator") else None

    @ui_errors
    def on_load(request: gr.Request) -> dict:
        """Annotators land on this tab and get their task; reviewers and admins land elsewhere, and are
        handed nothing until they ask for a sequence here (on_start): looking leases nothing."""
        user = annotator(request)
        if user is None:
            return {progress: "Your account cannot annotate." if caller(ctx, request) else "Sign in to annotate."}
        if user.role == "annotator":
            return render(service.next_intent_task(db, settings, user.username))
        held = service.held_intent_task(db, settings, user.username)
        if held["task"] is not None:
            return render(held)
        return {progress: _progress_line(held["progress"]), start: gr.update(visible=True),
                details: "Press **Get a sequence to annotate** when you mean to work here: the sequence is then "
                         f"reserved for you for {settings.lease_minutes:g} minutes."}

    @ui_errors
    def on_start(sequence_id: str | None, request: gr.Request) -> dict:
        user = annotator(request)
        if user is None or sequence_id:  # a task is on the page already: keep it, and what was typed
            return {}
        return render(service.next_intent_task(db, settings, user.username))

    @ui_errors
    def on_submit(sequence_id: str | None, concrete_text: str, high_text: str, request: gr.Request) -> dict:
        if not sequence_id:
            raise gr.Error("There is no task to submit.")
        result = service.submit_intents(db, settings, caller(ctx, request), sequence_id, concrete_text, high_text)
        gr.Info(f"Saved your intents for {sequence_id}.")
        return render(result)

    @ui_errors
    def on_skip(sequence_id: str | None, why: str, request: gr.Request) -> dict:
        if not sequence_id:
            raise gr.Error("There is no task to skip.")
        result = service.skip_intent_task(db, settings, caller(ctx, request), sequence_id, why)
        return {**render(result), reason: ""}

    @ui_errors
    def on_viewed(sequence_id: str | None, request: gr.Request) -> Any:
        if not sequence_id:
            return gr.update()
        service.mark_viewed(db, caller(ctx, request), sequence_id)
        return gr.update(interactive=True, value="Submit (Ctrl+Enter)")

    @ui_errors
    def on_draft(sequence_id: str | None, concrete_text: str, high_text: str, typed_ms: float | None,
                 request: gr.Request) -> Any:
        if not sequence_id:
            return ""
        saved = service.save_draft(db, caller(ctx, request), sequence_id, concrete_text, high_text, typed_ms)
        return f"Draft saved at {saved[11:19]} UTC" if saved else gr.update()

    start.click(on_start, [current], outputs, api_visibility="private")
    submit.click(on_submit, [current, concrete, high_level], outputs, api_visibility="private")
    skip.click(on_skip, [current, reason], [*outputs, reason], api_visibility="private")
    video.end(on_viewed, [current], submit, api_visibility="private")
    for box in (concrete, high_level):  # typing, and leaving the field (covers pasted text)
        # the browser stamps each save with its clock, so a save still queued when the page's closing flush
        # (APP_JS in app.py) has landed cannot overwrite the newer text
        gr.on([box.input, box.blur], on_draft, [current, concrete, high_level, typed_at], draft_status,
              js="(sequence, concrete, high, typed) => [sequence, concrete, high, Date.now()]",
              trigger_mode="always_last", show_progress="hidden", api_visibility="private")

    return TabHandle(tab=tab, min_role="annotator", on_load=(on_load, outputs))


def api_endpoints(ctx: AppContext) -> dict[str, Callable[..., dict]]:
    """The named scripting endpoints, by name: registered with gr.api below, and served on the lean
    ``/gradio_api/run/<name>`` route (components/fastpath.py)."""
    db, settings = ctx.database, ctx.settings

    @ui_errors
    def intent_next(request: gr.Request) -> dict:
        """Your current task (the same one until you submit or skip it) or a new one; task is null when done."""
        return service.next_intent_task(db, settings, caller(ctx, request))

    @ui_errors
    def intent_submit(sequence_id: str, concrete_intent: str, high_level_intent: str, request: gr.Request) -> dict:
        """Store your two intents for the sequence you were handed; returns the stored row and your next task."""
        return service.submit_intents(db, settings, caller(ctx, request), sequence_id, concrete_intent,
                                      high_level_intent)

    @ui_errors
    def intent_skip(sequence_id: str, reason: str, request: gr.Request) -> dict:
        """Give the sequence back with a reason; you will not get it again. Returns your next task."""
        return service.skip_intent_task(db, settings, caller(ctx, request), sequence_id, reason)

    @ui_errors
    def intent_draft(sequence_id: str, concrete_intent: str, high_level_intent: str, typed_ms: float | None,
                     request: gr.Request) -> dict:
        """Keep unfinished text for the sequence you hold (the page sends it as it closes). typed_ms: your
        clock when it was typed (ms), or null; an older save never overwrites a newer one. saved_at is null
        when nothing was kept (already submitted or skipped, or a newer draft is stored)."""
        saved = service.save_draft(db, caller(ctx, request), sequence_id, concrete_intent, high_level_intent,
                                   typed_ms)
        return {"sequence_id": sequence_id, "saved_at": saved}

    @ui_errors
    def intent_viewed(sequence_id: str, request: gr.Request) -> dict:
        """Report that the video was watched to its end (needed before submitting when require_full_view is on)."""
        service.mark_viewed(db, caller(ctx, request), sequence_id)
        return {"sequence_id": sequence_id, "viewed": True}

    return {fn.__name__: fn for fn in (intent_next, intent_submit, intent_skip, intent_viewed, intent_draft)}


def _register_api(ctx: AppContext) -> None:
    for name, fn in api_endpoints(ctx).items():
        gr.api(fn, api_name=name, queue=False)
