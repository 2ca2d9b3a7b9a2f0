"""The review queue panel: one sequence round at a time, a judgment and comment per annotation, the final
intents chosen from a reasonable annotation (edited if needed), a general note; skip with a reason."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from backend.context import AppContext
from backend.errors import ValidationError
from backend.review import service as review
from components.common import caller, counted, esc
from components.events import FAST, Event, bind, wire
from components.feedback import shown_in
from components.player import build_player, empty_value, player_value

REASONABLE, NOT_REASONABLE = "reasonable", "not reasonable"
# the queue's counts follow new arrivals while the tab is open (issue 27 §8): one count query per tick
QUEUE_POLL_SECONDS = 20.0


@dataclass(frozen=True)
class QueuePanel:
    """The queue's components; ``status``, ``details`` and ``form`` are what the tab's open handler fills."""

    status: gr.Markdown
    next_button: gr.Button
    show_names: gr.Checkbox
    current: gr.State
    video: gr.HTML  # the player (components/player.py)
    details: gr.Markdown
    columns: list[gr.Column]
    intent_views: list[gr.Markdown]
    verdicts: list[gr.Radio]
    comments: list[gr.Textbox]
    concrete_from: gr.Dropdown
    high_from: gr.Dropdown
    concrete_text: gr.Textbox
    high_text: gr.Textbox
    note: gr.Textbox
    submit: gr.Button
    skip_reason: gr.Textbox
    skip: gr.Button
    form: gr.Column
    message: gr.Markdown
    skip_message: gr.Markdown
    timer: gr.Timer  # the counts follow new arrivals while the tab is open

    @property
    def outputs(self) -> list[Any]:
        return [
            self.current,
            self.status,
            self.details,
            self.video,
            *self.columns,
            *self.intent_views,
            *self.verdicts,
            *self.comments,
            self.concrete_from,
            self.high_from,
            self.concrete_text,
            self.high_text,
            self.note,
            self.form,
            self.message,
            self.skip_message,
        ]

    @property
    def idle_outputs(self) -> list[Any]:
        """What the tab's open handler sets: the counts, and the form only while nothing is loaded."""
        return [self.status, self.details, self.form, self.video]


def status_markdown(counts: dict[str, int], holding: bool) -> str:
    """The queue's counts: all waiting rounds, and those this reviewer may take (issue 13 §3)."""
    text = f"**Waiting for review:** {counted(counts['waiting'], 'sequence round')}"
    if counts["for_you"] == 0:
        return text + " · none left for you"
    return text + f" · {counts['for_you']} for you" + (" (this one included)" if holding else "")


def nothing_left_markdown(waiting: int) -> str:
    text = "### Nothing left to review."
    if waiting:
        text += (
            f"\n\n{'The one waiting sequence round is' if waiting == 1 else f'The {waiting} waiting sequence rounds are'}"
            " for other reviewers: rounds you annotated or already reviewed, or held by another reviewer right now."
        )
    return text


def item_markdown(item: dict[str, Any]) -> str:
    lines = [
        f"### Sequence {esc(item['sequence_id'])} · round {item['round']} of {item['max_rounds']} · "
        f"{esc(item['scene'] or 'scene unknown')}"
    ]
    if item["video_missing"]:
        lines.append("> No video file for this sequence: judge from the action timeline.")
    if item.get("guidance"):
        lines.append("> **Guidance the annotators of this round saw:** " + esc(item["guidance"]).replace("\n", " "))
    # the actions are the player's timeline, each a button with its name and times (components/player.py)
    return "\n".join(lines)


def item_player(item: dict[str, Any], username: str | None) -> str:
    """The player's value for a review item: its video and timeline; Ctrl+Enter presses "Submit review"."""
    actions = [(a["name"], a["start"], a["end"]) for a in item["actions"]]
    key = f"{item['sequence_id']}/{item['round']}"
    return player_value(item["video"], actions, user=username, submit="#review-submit", key=key)


def intent_markdown(annotation: dict[str, Any]) -> str:
    """An annotation on two lines: who, and the concrete intent; then the high-level intent."""
    return (
        f"**{esc(annotation['label'])}** · Concrete: {esc(annotation['concrete_intent'])}  \n"
        f"High-level: {esc(annotation['high_level_intent'])}"
    )


def _slots(slots: int) -> tuple[list, list, list, list]:
    """One compact block per annotation: its intents on two lines, then the judgment beside the comment (issue 44
    §4: three annotations, the final choice and Submit on one 1280×900 screen). The radio and the comment keep
    their labels for screen readers (Gradio's ``show_label=False`` is a visually hidden label)."""
    intent_views, verdicts, comments, columns = [], [], [], []
    with gr.Column(elem_id="review-slots"):
        for i in range(slots):
            with gr.Column(visible=False, elem_id=f"review-slot-{i}", elem_classes=["review-slot"]) as column:
                intent_views.append(gr.Markdown(elem_id=f"review-intent-{i}"))
                with gr.Row(equal_height=True):
                    verdicts.append(
                        gr.Radio(
                            [REASONABLE, NOT_REASONABLE],
                            label=f"Judgment of annotation {i + 1}",
                            show_label=False,
                            container=False,
                            elem_id=f"review-verdict-{i}",
                            scale=0,
                            min_width=330,
                        )
                    )
                    comments.append(
                        gr.Textbox(
                            label=f"Comment on annotation {i + 1} (shown to the next round's annotators)",
                            show_label=False,
                            container=False,
                            placeholder="Comment for the next round",
                            elem_id=f"review-comment-{i}",
                            max_length=2000,
                            scale=1,
                            min_width=160,
                        )
                    )
            columns.append(column)
    return columns, intent_views, verdicts, comments


def _final_row(what: str, elem_id: str, text_label: str) -> tuple[gr.Dropdown, gr.Textbox]:
    """One final intent: which annotation it comes from (``<elem_id>-from``), and its text, editable."""
    with gr.Row(elem_classes=["review-final"]):
        source = gr.Dropdown(label=f"{what} from", elem_id=f"{elem_id}-from", scale=1, min_width=150)
        text = gr.Textbox(label=text_label, elem_id=elem_id, max_length=500, scale=2, min_width=200)
    return source, text


def _final_choice() -> tuple[gr.Dropdown, gr.Dropdown, gr.Textbox, gr.Textbox, gr.Textbox, gr.Button]:
    """The final choice under the annotations: which annotation each intent comes from, and its text (editable),
    the general note and Submit."""
    concrete_from, concrete_text = _final_row(
        "Final concrete intent", "review-concrete", "Final concrete intent (edit if needed; the original is kept)"
    )
    high_from, high_text = _final_row(
        "Final high-level intent", "review-high", "Final high-level intent (edit if needed)"
    )
    with gr.Row(elem_classes=["review-final"], equal_height=True):
        note = gr.Textbox(
            label="General note (shown to the next round if returned)",
            elem_id="review-note",
            max_length=2000,
            scale=3,
            min_width=200,
        )
        submit = gr.Button("Submit review", variant="primary", elem_id="review-submit", scale=1, min_width=140)
    return concrete_from, high_from, concrete_text, high_text, note, submit


def _layout(slots: int) -> QueuePanel:
    with gr.Row(elem_id="review-top", equal_height=True):
        status = gr.Markdown(elem_id="review-queue-status")
        next_button = gr.Button(
            "Next item", variant="secondary", elem_id="review-next", scale=0, min_width=140, size="md"
        )
        show_names = gr.Checkbox(
            label="Show annotator names", value=False, elem_id="review-show-names", scale=0, min_width=240
        )
    current = gr.State(None)
    details = gr.Markdown(elem_id="review-item")  # outside the form: it also says when nothing is left
    # hidden until an item is taken: the landing shows the queue and "Next item" only (issue 44 §4)
    with gr.Column(elem_id="review-item-form", visible=False) as form:
        # the player beside the annotations, the final choice and Submit under them: one 1280×900 screen
        with gr.Row(elem_id="review-work"):
            with gr.Column(scale=5, min_width=300):
                video = build_player("review-video", visible=False)
            with gr.Column(scale=7, min_width=300):
                columns, intent_views, verdicts, comments = _slots(slots)
                final = _final_choice()
                message = gr.Markdown(elem_id="review-message")
                with gr.Accordion("Skip this item", open=False):
                    skip_reason = gr.Textbox(label="Why do you skip it?", elem_id="review-skip-reason")
                    skip = gr.Button("Skip", elem_id="review-skip")
                    skip_message = gr.Markdown(elem_id="review-skip-message")
    timer = gr.Timer(QUEUE_POLL_SECONDS)
    return QueuePanel(
        status,
        next_button,
        show_names,
        current,
        video,
        details,
        columns,
        intent_views,
        verdicts,
        comments,
        *final,
        skip_reason,
        skip,
        form,
        message,
        skip_message,
        timer,
    )


def idle(p: QueuePanel, counts: dict[str, int]) -> dict:
    """Nothing loaded yet: the counts and "Next item"; the form waits for an item (issue 44 §4)."""
    left = counts["for_you"] > 0
    return {
        p.status: status_markdown(counts, holding=False),
        p.details: "Press **Next item** to take the next sequence round."
        if left
        else nothing_left_markdown(counts["waiting"]),
        p.form: gr.update(visible=False),
        p.video: gr.update(value=empty_value(), visible=False),
    }


def render(p: QueuePanel, payload: dict[str, Any], username: str | None = None) -> dict:
    """The queue's outputs, by component, for a ``next_review`` / ``skip_review`` payload."""
    item = payload["item"]
    counts = {"waiting": payload["queue"], "for_you": payload["for_you"]}
    out: dict[Any, Any] = {
        p.status: status_markdown(counts, holding=item is not None),
        p.current: item,
        p.details: item_markdown(item) if item else nothing_left_markdown(counts["waiting"]),
        # the player shows the timeline also when the file is missing (flagged there)
        p.video: gr.update(value=item_player(item, username) if item else empty_value(), visible=item is not None),
        p.form: gr.update(visible=item is not None),
        p.concrete_text: "",
        p.high_text: "",
        p.note: "",
        p.message: "",
        p.skip_message: "",
    }
    if item is None:
        # one update object per component: Gradio consumes the update dict it postprocesses
        empty = {p.concrete_from: gr.update(choices=[], value=None), p.high_from: gr.update(choices=[], value=None)}
        return {**out, **{c: gr.update(visible=False) for c in p.columns}, **empty}
    choices = [(a["label"], str(a["annotation_id"])) for a in item["annotations"]]
    out[p.concrete_from] = gr.update(choices=choices, value=None)
    out[p.high_from] = gr.update(choices=choices, value=None)
    for i, column in enumerate(p.columns):
        present = i < len(item["annotations"])
        out[column] = gr.update(visible=present)
        out[p.intent_views[i]] = intent_markdown(item["annotations"][i]) if present else ""
        out[p.verdicts[i]] = None
        out[p.comments[i]] = ""
    return out


def _submit(ctx: AppContext, p: QueuePanel, data: dict, name: str | None) -> dict:
    item = data[p.current]
    if not item:
        raise ValidationError("There is no item to submit; press Next item.")
    annotations = item["annotations"]
    judged = [data[p.verdicts[i]] for i in range(len(annotations))]
    if any(v is None for v in judged):
        raise ValidationError("Judge every annotation: reasonable or not reasonable.")
    judgments = [
        review.Judgment(a["annotation_id"], judged[i] == REASONABLE, data[p.comments[i]] or "")
        for i, a in enumerate(annotations)
    ]
    final = None
    if data[p.concrete_from] and data[p.high_from]:
        final = review.FinalChoice(
            int(data[p.concrete_from]), int(data[p.high_from]), data[p.concrete_text] or None, data[p.high_text] or None
        )
    db, settings = ctx.database, ctx.settings
    result = review.submit_review(
        db, settings, name, item["sequence_id"], item["round"], judgments, final, data[p.note] or ""
    )
    outcome = result["review"]["outcome"] or "recorded (second review)"
    out = render(p, review.next_review(db, settings, name), name)
    out[p.status] = f"**Saved:** {esc(item['sequence_id'])} round {item['round']} {outcome} · {out[p.status]}"
    return out


def refresh(ctx: AppContext, p: QueuePanel, item: dict | None, name: str | None) -> dict:
    """The counts as of now (the tab's load and select events); the loaded item, if any, is left alone."""
    counts = review.review_counts(ctx.database, ctx.settings, name)
    if item:
        return {p.status: status_markdown(counts, holding=True)}
    return idle(p, counts)


def _pick_text(item: dict | None, annotation_id: str | None, field: str) -> str:
    found = [a for a in (item or {}).get("annotations", []) if str(a["annotation_id"]) == str(annotation_id)]
    return found[0][field] if found else ""


def on_next(ctx: AppContext, p: QueuePanel, show: bool, request: gr.Request) -> dict:
    name = caller(ctx, request)
    return render(p, review.next_review(ctx.database, ctx.settings, name, show_names=show), name)


def on_names(ctx: AppContext, p: QueuePanel, item: dict | None, show: bool, request: gr.Request) -> dict:
    if not item:
        return {p.intent_views[0]: gr.update()}  # nothing loaded (an empty dict would read as one output value)
    name = caller(ctx, request)
    fresh = review.view_item(ctx.database, ctx.settings, name, item["sequence_id"], item["round"], show)
    shown = fresh["annotations"]
    return {view: intent_markdown(shown[i]) if i < len(shown) else "" for i, view in enumerate(p.intent_views)}


def on_submit(ctx: AppContext, p: QueuePanel, data: dict, request: gr.Request) -> dict:
    return _submit(ctx, p, data, caller(ctx, request))


def on_skip(ctx: AppContext, p: QueuePanel, item: dict | None, why: str, request: gr.Request) -> dict:
    if not item:
        raise ValidationError("There is no item to skip; press Next item.")
    name = caller(ctx, request)
    skipped = review.skip_review(ctx.database, ctx.settings, name, item["sequence_id"], item["round"], why)
    return {**render(p, skipped, name), p.skip_reason: ""}


def on_poll(ctx: AppContext, item: dict | None, request: gr.Request) -> str:
    counts = review.review_counts(ctx.database, ctx.settings, caller(ctx, request))
    return status_markdown(counts, holding=bool(item))


def concrete_from(item: dict | None, annotation_id: str | None) -> str:
    return _pick_text(item, annotation_id, "concrete_intent")


def high_level_from(item: dict | None, annotation_id: str | None) -> str:
    return _pick_text(item, annotation_id, "high_level_intent")


def events(ctx: AppContext, p: QueuePanel) -> list[Event]:
    """The queue's events; a mistake in Submit or Skip is said next to its button, and the reviewer's choices stay
    as they are (no "Error" badges)."""
    submitted = {p.current, *p.verdicts, *p.comments, p.concrete_from, p.high_from, p.concrete_text, p.high_text}
    minimal = {**FAST, "show_progress": "minimal"}
    return [
        Event("review_ui_queue_poll", "reviewer", bind(on_poll, ctx), p.timer.tick, [p.current], p.status,
              {**FAST, "show_progress": "hidden"}),
        Event("review_ui_next", "reviewer", bind(on_next, ctx, p), p.next_button.click, [p.show_names], p.outputs,
              FAST),
        Event("review_ui_names", "reviewer", bind(on_names, ctx, p), p.show_names.change,
              [p.current, p.show_names], p.intent_views, FAST),
        Event("review_ui_concrete_from", "reviewer", concrete_from, p.concrete_from.change,
              [p.current, p.concrete_from], p.concrete_text, FAST),
        Event("review_ui_high_from", "reviewer", high_level_from, p.high_from.change, [p.current, p.high_from],
              p.high_text, FAST),
        Event("review_ui_submit", "reviewer", shown_in(p.message)(bind(on_submit, ctx, p)), p.submit.click,
              {*submitted, p.note}, p.outputs, minimal),
        Event("review_ui_skip", "reviewer", shown_in(p.skip_message)(bind(on_skip, ctx, p)), p.skip.click,
              [p.current, p.skip_reason], [*p.outputs, p.skip_reason], minimal),
    ]  # fmt: skip


def build_queue_panel(ctx: AppContext) -> QueuePanel:
    p = _layout(max(ctx.settings.annotators_per_sequence, 1))
    wire(ctx, events(ctx, p))
    return p
