"""The intent-annotation tab (annotators), and the named API endpoints intent_next / intent_submit /
intent_skip / intent_viewed / intent_draft that scripts, the load tests and the page's own script use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr

from backend.context import AppContext
from backend.errors import CompStudioError, ValidationError
from backend.intents import service
from backend.intents.rules import accepted_forms
from components.common import TabHandle, caller, esc, refused, ui_errors

INSTRUCTIONS = f"""
Watch the video, read the actions below it, and answer: **what does the person want to do by taking
these actions?** Write two intents. Start each with **S/He**, **She** or **He**, then *wants to …* (what they
plan) or *is …* (how they feel); these beginnings are accepted: {accepted_forms()}.

* **Concrete activity**, e.g. “S/He wants to drink a glass of water”.
* **High-level goal**, e.g. “S/He is thirsty” or “S/He wants to quench the thirst”.

Do not repeat an action name: say *why* the person acts. The two intents must differ.
Submit with the button or **Ctrl+Enter** once you have watched the video to its end; your text is saved as a
draft while you type.
"""
KEY_HINT = '<p id="intent-key-hint-text" role="status" aria-live="polite"></p>'  # filled by APP_JS (app.py)


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
    problems = getattr(exc, "problems", None) or [str(exc)]
    return "\n".join(f"⚠️ {esc(problem)}" + "  " for problem in problems)


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
        gr.Markdown(INSTRUCTIONS, elem_id="intent-instructions")
        progress = gr.Markdown(elem_id="intent-progress")
        current = gr.State(None)
        with gr.Row():
            with gr.Column(scale=3, min_width=240) as player:
                video = gr.Video(label="Video", elem_id="intent-video", interactive=False, autoplay=False, loop=False)
            with gr.Column(scale=2, min_width=240):
                details = gr.Markdown(elem_id="intent-task")
        with gr.Column() as form:
            concrete = gr.Textbox(label="Concrete activity", placeholder="S/He wants to …", elem_id="concrete-intent",
                                  max_length=500)
            high_level = gr.Textbox(label="High-level goal", placeholder="S/He is … / S/He wants to …",
                                    elem_id="high-level-intent", max_length=500)
            message = gr.Markdown(elem_id="intent-message")  # why the last submit was refused, next to the fields
            gr.HTML(KEY_HINT, elem_id="intent-key-hint")
            with gr.Row():
                submit = gr.Button("Submit (Ctrl+Enter)", variant="primary", elem_id="intent-submit",
                                   interactive=False)
                draft_status = gr.Markdown(elem_id="intent-draft-status")
        last_saved = gr.Markdown(elem_id="intent-last-saved")
        typed_at = gr.Number(visible=False)  # the browser's clock when a draft was typed (set by js below)
        with gr.Accordion("Skip this sequence", open=False, elem_id="intent-skip-box") as skip_box:
            reason = gr.Textbox(label="Why do you skip it?", elem_id="intent-skip-reason", max_length=500)
            skip_message = gr.Markdown(elem_id="intent-skip-message")
            skip = gr.Button("Skip", elem_id="intent-skip")
        _register_api(ctx)

    outputs = [current, progress, details, player, video, form, skip_box, concrete, high_level, submit, message,
               draft_status, last_saved]

    def render(payload: dict[str, Any]) -> dict:
        task = payload["task"]
        base = {progress: _progress_line(payload["progress"]), draft_status: "", message: ""}
        if payload.get("stored"):
            stored = payload["stored"]
            base[last_saved] = (
                f"**Saved for {esc(stored['sequence_id'])}:** concrete “{esc(stored['concrete_intent'])}” · "
                f"high-level “{esc(stored['high_level_intent'])}”"
            )
        if task is None:  # nothing left: say so, and show no empty player, form or Skip
            return {**base, current: None, video: None, concrete: "", high_level: "",
                    details: "### Nothing left for you to annotate. Thank you!",
                    player: gr.update(visible=False), form: gr.update(visible=False),
                    skip_box: gr.update(visible=False), submit: gr.update(interactive=False)}
        draft = task["draft"] or {}
        return {
            **base,
            current: task["sequence_id"],
            details: _task_markdown(task),
            player: gr.update(visible=True), form: gr.update(visible=True), skip_box: gr.update(visible=True),
            video: task["video"],
            concrete: draft.get("concrete_intent", ""),
            high_level: draft.get("high_level_intent", ""),
            submit: gr.update(interactive=not task["must_view"],
                              value="Submit (Ctrl+Enter)" if not task["must_view"] else "Watch the video to the end first"),
        }

    @ui_errors
    def on_load(request: gr.Request) -> dict:
        name = caller(ctx, request)
        if name is None:
            return {progress: "Sign in to annotate."}
        from backend.auth import get_user

        user = get_user(db, name)
        if user is None or not user.has_role("annotator"):
            return {progress: "Your account cannot annotate."}
        return render(service.next_intent_task(db, settings, name))

    def on_submit(sequence_id: str | None, concrete_text: str, high_text: str, request: gr.Request) -> dict:
        name = caller(ctx, request)
        try:
            if not sequence_id:
                raise ValidationError("There is no task to submit.")
            result = service.submit_intents(db, settings, name, sequence_id, concrete_text, high_text)
        except CompStudioError as exc:  # only the message changes: the person's text and video stay usable
            refused("intent submit", name, exc)
            return {message: _problems_markdown(exc)}
        view = render(result)
        stored = result["stored"]
        typed = ((concrete_text or "").strip(), (high_text or "").strip())
        if result["duplicate"] and typed != (stored["concrete_intent"], stored["high_level_intent"]):
            kept = (f"You had already submitted {sequence_id}; your first text was kept and this one was not "
                    "stored.")
            gr.Warning(kept)
            return {**view, message: f"⚠️ {esc(kept)}"}
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
            return {skip_message: _problems_markdown(exc)}
        return {**render(result), reason: "", skip_message: ""}

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

    # show_progress="minimal": no overlay or status badge over the person's text boxes and video
    submit.click(on_submit, [current, concrete, high_level], outputs, show_progress="minimal",
                 api_visibility="private")
    skip.click(on_skip, [current, reason], [*outputs, reason, skip_message], show_progress="minimal",
               api_visibility="private")
    video.end(on_viewed, [current], submit, show_progress="hidden", api_visibility="private")
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
