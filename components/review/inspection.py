"""The quality-inspection panel: draw a random sample of action sequences and judge each on ViLPAct's three
criteria (all actions occur, in order, none missing): each an explicit, required yes / no, or answered "no" by a
mark on the player's timeline (an action not in the video, out of order, one missing between the first and the
last; issue 27 §5)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from backend.context import AppContext
from backend.errors import ValidationError
from backend.review import inspection
from backend.review import service as review
from components.common import caller, counted, esc
from components.events import FAST, Event, bind, wire
from components.feedback import shown_in
from components.player import build_player, empty_value, marks_js, player_value

PLAYER_ID = "inspection-video"
YES_NO = ["yes", "no"]


@dataclass(frozen=True)
class Sample:
    """How to draw a new sample: its size, split and seed."""

    size: gr.Number
    split: gr.Textbox
    seed: gr.Number
    start: gr.Button


@dataclass(frozen=True)
class InspectionPanel:
    """``chooser`` is the inspection dropdown the tab's page-load handler fills."""

    chooser: gr.Dropdown
    item: gr.State
    body: gr.Markdown
    video: gr.HTML  # the player, with the timeline's marks (components/player.py)
    report: gr.Markdown
    all_occur: gr.Radio
    in_order: gr.Radio
    none_missing: gr.Radio
    comment: gr.Textbox
    message: gr.Markdown
    marks: gr.Textbox
    sample: Sample
    judge: gr.Button

    @property
    def outputs(self) -> list[Any]:
        return [
            self.item,
            self.body,
            self.video,
            self.report,
            self.all_occur,
            self.in_order,
            self.none_missing,
            self.comment,
            self.message,
        ]


def choices(ctx: AppContext, name: str | None) -> list[tuple[str, str]]:
    return [
        (f"#{r['id']} · {r['size']} from {r['split'] or 'all'} · by {r['created_by']}", str(r["id"]))
        for r in inspection.list_inspections(ctx.database, name)
    ]


def _show(ctx: AppContext, p: InspectionPanel, chosen: str | None, name: str | None) -> dict:
    if not chosen:
        return {
            p.item: None,
            p.body: "Draw a sample or choose an inspection.",
            p.report: "",
            p.message: "",
            p.video: gr.update(value=None, visible=False),
        }
    report = inspection.report(ctx.database, name, int(chosen))
    lines = [
        f"- **{esc(r['reviewer'])}**: {r['paper_form']} (all occur / in order / none missing) · marked on the "
        f"timeline: {counted(r['marks']['not_in_video'], 'action')} not in the video, "
        f"{r['marks']['out_of_order']} out of order, {counted(r['marks']['missing_between'], 'sequence')} missing an "
        "action"
        for r in report["reviewers"]
    ]
    nxt = inspection.next_item(ctx.database, name, int(chosen))
    if nxt is None:
        body, player = "### You have judged every sequence of this sample.", None
    else:
        item = review.view_item(ctx.database, ctx.settings, name, nxt["sequence_id"], 1)
        body = (
            f"### Sample item {nxt['position']} · sequence {esc(item['sequence_id'])} · "
            f"{esc(item['scene'] or 'scene unknown')}"
        )
        actions = [(a["name"], a["start"], a["end"]) for a in item["actions"]]
        key = f"{chosen}/{item['sequence_id']}"
        player = player_value(item["video"], actions, user=name, submit="#inspection-judge", marks=True, key=key)
        if not item["video"]:
            body += "\n\n> No video file for this sequence: judge from the action timeline."
    return {
        p.item: nxt,
        p.body: body,
        p.video: gr.update(value=player or empty_value(), visible=player is not None),
        p.message: "",
        p.report: "\n".join(lines) or "No judgments yet.",
        p.all_occur: None,
        p.in_order: None,
        p.none_missing: None,
        p.comment: "",
    }


def radio(criterion: str, elem_id: str) -> gr.Radio:
    """One criterion: an explicit yes / no, unanswered until the reviewer answers (or a timeline mark does)."""
    return gr.Radio(YES_NO, value=None, label=inspection.CRITERIA[criterion], elem_id=elem_id)


def layout(ctx: AppContext) -> InspectionPanel:
    settings = ctx.settings
    gr.Markdown(
        "Check a random sample of action sequences on ViLPAct's three criteria "
        "(the paper: 94 / 92 / 85 of 100 test videos)."
    )
    with gr.Row(equal_height=True):  # one row, so the work below starts high on the screen
        size = gr.Number(value=settings.inspection_sample_size, precision=0, label="Sample size", min_width=120)
        split = gr.Textbox(value=settings.inspection_split, label="Split (empty: all)", min_width=120)
        seed = gr.Number(value=None, precision=0, label="Seed (empty: random)", min_width=120)
        start = gr.Button("Draw a new sample", elem_id="inspection-start", min_width=160)
        chooser = gr.Dropdown(label="Inspection", elem_id="inspection-id", min_width=200, scale=2)
    item = gr.State(None)
    # the player and timeline beside the verdicts, so both are on a 1280×800 screen (issue 27 §8)
    with gr.Row(elem_id="inspection-work"):
        with gr.Column(scale=3, min_width=300):
            video = build_player(PLAYER_ID, visible=False)
        with gr.Column(scale=2, min_width=280):
            body = gr.Markdown(elem_id="inspection-item")
            all_occur = radio("all_occur", "inspection-all-occur")
            in_order = radio("in_order", "inspection-in-order")
            none_missing = radio("none_missing", "inspection-none-missing")
            comment = gr.Textbox(label="Comment", max_length=2000)
            judge = gr.Button("Save and next", variant="primary", elem_id="inspection-judge")
            message = gr.Markdown(elem_id="inspection-message")
    report = gr.Markdown(elem_id="inspection-report")
    marks = gr.Textbox(visible=False)  # the timeline's marks (JSON), set by the judge button's js
    sample = Sample(size, split, seed, start)
    return InspectionPanel(
        chooser, item, body, video, report, all_occur, in_order, none_missing, comment, message, marks, sample, judge
    )


def on_start(ctx: AppContext, p: InspectionPanel, n: float, part: str, seed: float | None, request: gr.Request) -> dict:
    name = caller(ctx, request)
    started = inspection.start_inspection(
        ctx.database, ctx.settings, name, int(n), (part or "").strip(), None if seed is None else int(seed)
    )
    chosen = str(started["inspection_id"])
    return {p.chooser: gr.update(choices=choices(ctx, name), value=chosen), **_show(ctx, p, chosen, name)}


def on_choose(ctx: AppContext, p: InspectionPanel, chosen: str | None, request: gr.Request) -> dict:
    return _show(ctx, p, chosen, caller(ctx, request))


def on_judge(ctx: AppContext, p: InspectionPanel, chosen: str | None, nxt: dict | None, occur: str | None,
             order: str | None, missing: str | None, note: str | None, marked: str | None,
             request: gr.Request) -> dict:  # fmt: skip
    if not chosen or not nxt:
        raise ValidationError("Nothing to judge: choose an inspection with sequences left.")
    name = caller(ctx, request)
    n_actions = len(review.view_item(ctx.database, ctx.settings, name, nxt["sequence_id"], 1)["actions"])
    verdict = inspection.judgment_from_answers(
        {"all_occur": occur, "in_order": order, "none_missing": missing},
        inspection.InspectionMarks.parse(marked, n_actions),
        note or "",
    )
    inspection.judge(ctx.database, name, int(chosen), nxt["sequence_id"], verdict)
    return _show(ctx, p, chosen, name)


def events(ctx: AppContext, p: InspectionPanel) -> list[Event]:
    """A mistake is said under the button; the reviewer's ticks and comment stay as they are."""
    s = p.sample
    judged = [p.chooser, p.item, p.all_occur, p.in_order, p.none_missing, p.comment, p.marks]
    return [
        Event("review_ui_inspection_start", "reviewer", shown_in(p.message)(bind(on_start, ctx, p)), s.start.click,
              [s.size, s.split, s.seed], [p.chooser, *p.outputs], FAST),
        Event("review_ui_inspection_choose", "reviewer", shown_in(p.message)(bind(on_choose, ctx, p)),
              p.chooser.input, [p.chooser], p.outputs, FAST),
        Event("review_ui_inspection_judge", "reviewer", shown_in(p.message)(bind(on_judge, ctx, p)), p.judge.click,
              judged, p.outputs, {**FAST, "js": marks_js(PLAYER_ID, 7), "show_progress": "minimal"}),
    ]  # fmt: skip


def build_inspection_panel(ctx: AppContext) -> InspectionPanel:
    p = layout(ctx)
    wire(ctx, events(ctx, p))
    return p
