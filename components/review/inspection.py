"""The quality-inspection panel: draw a random sample of action sequences and judge each on ViLPAct's three
criteria (all actions occur, in order, none missing)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from backend.context import AppContext
from backend.errors import ValidationError
from backend.review import inspection
from backend.review import service as review
from components.access import listen
from components.common import caller, esc
from components.feedback import shown_in
from components.review.queue import PRIVATE_FAST


@dataclass
class InspectionPanel:
    """``chooser`` is the inspection dropdown the tab's page-load handler fills."""

    chooser: gr.Dropdown
    item: gr.State
    body: gr.Markdown
    video: gr.Video
    report: gr.Markdown
    all_occur: gr.Checkbox
    in_order: gr.Checkbox
    none_missing: gr.Checkbox
    comment: gr.Textbox
    message: gr.Markdown

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
        f"- **{esc(r['reviewer'])}**: {r['paper_form']} (all occur / in order / none missing)"
        for r in report["reviewers"]
    ]
    nxt = inspection.next_item(ctx.database, name, int(chosen))
    if nxt is None:
        body, clip = "### You have judged every sequence of this sample.", None
    else:
        item = review.view_item(ctx.database, ctx.settings, name, nxt["sequence_id"], 1)
        timeline = "\n".join(f"{i}. {esc(line)}" for i, line in enumerate(item["timeline"], start=1))
        body = (
            f"### Sample item {nxt['position']} · sequence {esc(item['sequence_id'])} · "
            f"{esc(item['scene'] or 'scene unknown')}\n\n**Actions** (start–end in seconds):\n{timeline}"
        )
        clip = item["video"]
        if not clip:
            body += "\n\n> No video file for this sequence: judge from the action timeline."
    return {
        p.item: nxt,
        p.body: body,
        p.video: gr.update(value=clip, visible=bool(clip)),
        p.message: "",
        p.report: "\n".join(lines) or "No judgments yet.",
        p.all_occur: False,
        p.in_order: False,
        p.none_missing: False,
        p.comment: "",
    }


def build_inspection_panel(ctx: AppContext) -> InspectionPanel:
    settings = ctx.settings
    gr.Markdown(
        "Check a random sample of action sequences on ViLPAct's three criteria "
        "(the paper: 94 / 92 / 85 of 100 test videos)."
    )
    with gr.Row():
        size = gr.Number(value=settings.inspection_sample_size, precision=0, label="Sample size")
        split = gr.Textbox(value=settings.inspection_split, label="Split (empty: all)")
        seed = gr.Number(value=None, precision=0, label="Seed (empty: random)")
    start = gr.Button("Draw a new sample", elem_id="inspection-start")
    chooser = gr.Dropdown(label="Inspection", elem_id="inspection-id")
    item = gr.State(None)
    body = gr.Markdown(elem_id="inspection-item")
    video = gr.Video(label="Video", interactive=False, visible=False, elem_id="inspection-video")
    all_occur = gr.Checkbox(label=inspection.CRITERIA["all_occur"], elem_id="inspection-all-occur")
    in_order = gr.Checkbox(label=inspection.CRITERIA["in_order"], elem_id="inspection-in-order")
    none_missing = gr.Checkbox(label=inspection.CRITERIA["none_missing"], elem_id="inspection-none-missing")
    comment = gr.Textbox(label="Comment", max_length=2000)
    judge = gr.Button("Save and next", variant="primary", elem_id="inspection-judge")
    message = gr.Markdown(elem_id="inspection-message")
    report = gr.Markdown(elem_id="inspection-report")
    p = InspectionPanel(chooser, item, body, video, report, all_occur, in_order, none_missing, comment, message)

    def on_start(n: float, part: str, seed_value: float | None, request: gr.Request) -> dict:
        name = caller(ctx, request)
        started = inspection.start_inspection(
            ctx.database, settings, name, int(n), (part or "").strip(), None if seed_value is None else int(seed_value)
        )
        chosen = str(started["inspection_id"])
        return {chooser: gr.update(choices=choices(ctx, name), value=chosen), **_show(ctx, p, chosen, name)}

    def on_choose(chosen: str | None, request: gr.Request) -> dict:
        return _show(ctx, p, chosen, caller(ctx, request))

    def on_judge(data: dict, request: gr.Request) -> dict:
        chosen, nxt = data[chooser], data[item]
        if not chosen or not nxt:
            raise ValidationError("Nothing to judge: choose an inspection with sequences left.")
        name = caller(ctx, request)
        verdict = inspection.InspectionJudgment(
            data[all_occur], data[in_order], data[none_missing], data[comment] or ""
        )
        inspection.judge(ctx.database, name, int(chosen), nxt["sequence_id"], verdict)
        return _show(ctx, p, chosen, name)

    # a mistake is said under the button; the reviewer's ticks and comment stay as they are
    listen(
        ctx,
        start.click,
        shown_in(message)(on_start),
        [size, split, seed],
        [chooser, *p.outputs],
        **PRIVATE_FAST,
        api_name="review_ui_inspection_start",
    )
    listen(
        ctx,
        chooser.input,
        shown_in(message)(on_choose),
        [chooser],
        p.outputs,
        **PRIVATE_FAST,
        api_name="review_ui_inspection_choose",
    )
    listen(
        ctx,
        judge.click,
        shown_in(message)(on_judge),
        {chooser, item, all_occur, in_order, none_missing, comment},
        p.outputs,
        show_progress="minimal",
        **PRIVATE_FAST,
        api_name="review_ui_inspection_judge",
    )
    return p
