"""The Admin tab's Charades panel (issue 30 §5): import Charades-format annotations from the import folder, preview
ViLPAct's sequence extraction per video (the chosen actions on the video's timeline with their three scores, and
why the others were left out), accept the kept sequences into the intent pool or export them.

Every event has an explicit, stable ``api_name`` (``admin_charades_*``) and its least identity, declared in
:func:`events`; the backend checks the admin role on every call (backend/vilpact/charades_pool.py). Everything shown that a file
wrote (video ids, class names, scenes) is escaped.
"""

from __future__ import annotations

import html
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.vilpact.charades import import_charades_folder
from backend.vilpact.charades_pool import Preview, admin_accept, admin_export, admin_preview, kept_without_video
from backend.vilpact.extraction import Extraction
from backend.vilpact.layout import FPS
from components.admin.shown import shown
from components.common import caller, esc
from components.events import Event, wire
from components.feedback import QUIET, Mistake

DECISION_COLUMNS = [
    "in",
    "action",
    "start",
    "end",
    "task",
    "sem.",
    "temp.",
    "task rel.",
    "coh.",
    "decided by",
    "why",
]
COLUMN_WIDTHS: list[str | int] = ["4%", "15%", "6%", "6%", "12%", "6%", "6%", "6%", "6%", "13%", "20%"]
MAX_CHOICES = 1000  # videos listed in the picker; any other id can be typed


def summary_text(preview: Preview, missing: list[str]) -> str:
    """The counts, and a warning when kept sequences have no video file (``missing``: their ids)."""
    counts = preview.summary
    if not counts["videos"]:
        return "No Charades videos imported yet."
    text = (
        f"**{counts['videos']} videos imported**: {counts['kept']} with a sequence of at least "
        f"{preview.extractor.config.min_actions} actions (kept), {counts['left_out']} left out."
    )
    if missing:
        named = ", ".join(esc(m) for m in missing[:5]) + (" ..." if len(missing) > 5 else "")
        text += (
            f"\n\n⚠ **{len(missing)} kept sequences have no video file** ({named}): annotators would write "
            "intents from the action names alone. Import with a video folder, or tick "
            "'Accept sequences without a video file' to accept them anyway."
        )
    return text


def video_choices(preview: Preview) -> list[tuple[str, str]]:
    return [
        (f"{video.id} · {'kept' if e.kept else 'left out'} ({len(e.chosen)} of {len(video.actions)} actions)", video.id)
        for video, e in preview.items[:MAX_CHOICES]
    ]


LABEL_WIDTH = 300  # px of the label column beside the timeline


def _lane(label: str, left: float, width: float, chosen: bool, tip: str) -> str:
    look = "background:#2e7d32" if chosen else "background:#bdbdbd;outline:1px dashed #757575"
    return (
        f'<div class="charades-lane" style="display:flex;align-items:center;height:22px">'
        f'<div style="width:{LABEL_WIDTH}px;flex:none;font-size:12px;white-space:nowrap;overflow:hidden;'
        f'text-overflow:ellipsis;padding-right:6px;{"" if chosen else "color:#757575"}" title="{html.escape(label)}">'
        f"{html.escape(label)}</div>"
        f'<div style="position:relative;flex:1;height:14px">'
        f'<div class="charades-bar {"chosen" if chosen else "left-out"}" title="{html.escape(tip)}" '
        f'style="position:absolute;left:{left:.2f}%;width:{max(width, 0.6):.2f}%;top:0;bottom:0;{look};'
        f'border-radius:3px"></div></div></div>'
    )


def _short(term: str) -> str:
    """A left-out action's deciding term, short enough for its lane label ("task", "gap", "order" ...).

    >>> _short("temporal relevance (extract_max_gap_s)"), _short("task relevance")
    ('gap', 'task')
    """
    if "max_gap" in term:
        return "gap"
    return "order" if "order" in term else term.split()[0]


def timeline_html(extraction: Extraction, names: dict[str, str], length: float | None) -> str:
    """The video's actions as bars on its timeline (one lane each, in time order, named on the left): chosen in
    green with their coherence, left out in grey; the observed window (first 20% of the sequence) shaded."""
    actions = [d.action for d in extraction.decisions]
    if not actions:
        return f"<p>{esc(extraction.video_id)}: this video has no annotated actions.</p>"
    span = max([a.end for a in actions] + [length or 0.0]) or 1.0
    lanes = []
    for d in extraction.decisions:
        a = d.action
        mark = "seed" if not d.scores else f"{d.scores.coherence:.2f}" if d.chosen else _short(d.term)
        label = f"{'✓' if d.chosen else '✗'} {names.get(a.class_id, a.class_id)} · {mark}"
        tip = f"{a.class_id} {a.start:g}–{a.end:g} s: {d.reason}"
        lanes.append(_lane(label, 100 * a.start / span, 100 * (a.end - a.start) / span, d.chosen, tip))
    window = ""
    chosen = extraction.chosen
    if chosen:
        start, end = min(a.start for a in chosen), max(a.end for a in chosen)
        ob_end = int((start + (end - start) / 5) * FPS) / FPS
        window = (
            f'<div class="charades-window" title="observed window (first 20% of the sequence)" '
            f'style="position:absolute;top:0;bottom:0;left:calc({LABEL_WIDTH}px + (100% - {LABEL_WIDTH}px) * '
            f"{start / span:.4f});width:calc((100% - {LABEL_WIDTH}px) * {(ob_end - start) / span:.4f});"
            f'background:rgba(33,150,243,.18)"></div>'
        )
    axis = (
        f'<div style="display:flex;font-size:11px;color:#616161"><div style="width:{LABEL_WIDTH}px;flex:none"></div>'
        f'<div style="flex:1;display:flex;justify-content:space-between;border-top:1px solid #9e9e9e">'
        f"<span>0 s</span><span>{span / 2:.1f} s</span><span>{span:.1f} s</span></div></div>"
    )
    return (
        f'<div id="charades-timeline-view"><p><strong>{esc(extraction.video_id)}</strong>: {esc(extraction.verdict)}'
        f" · ✓ chosen (green) with its coherence, ✗ left out (grey) with the term that decided it; shaded: the "
        f'observed window. Hover a bar for the reason.</p><div style="position:relative">{window}{"".join(lanes)}</div>'
        f"{axis}</div>"
    )


def decisions_frame(preview: Preview, extraction: Extraction) -> pd.DataFrame:
    rows = []
    for d in extraction.decisions:
        a, s = d.action, d.scores
        rows.append(
            [
                "✓" if d.chosen else "",
                preview.extractor.names.get(a.class_id, a.class_id),
                a.start,
                a.end,
                preview.extractor.task(a.class_id),
                *(
                    [round(s.semantic, 2), round(s.temporal, 2), round(s.task, 2), round(s.coherence, 2)]
                    if s
                    else [""] * 4
                ),
                d.term,
                d.reason,
            ]
        )
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


@dataclass(frozen=True)
class CharadesPanel:
    folder: gr.Textbox
    videos: gr.Textbox
    start: gr.Button  # import
    message: gr.Markdown
    summary: gr.Markdown
    video: gr.Dropdown
    preview: gr.Button
    timeline: gr.HTML
    decisions: gr.Dataframe
    accept: gr.Button
    export: gr.Button
    allow_missing: gr.Checkbox
    file: gr.File  # the exported CSV, shown once there is one


def _help(ctx: AppContext) -> None:
    gr.Markdown(
        "A folder of Charades-format annotations on the server (`Charades_v1_train.csv` or any `*.csv` with "
        "`id` and `actions`, `Charades_v1_classes.txt`, and optionally the object, verb and mapping files), inside "
        f"the import folder <code>{html.escape(str(ctx.settings.import_root))}</code>. ViLPAct's Algorithm 1 "
        "then picks each video's sequence (settings `extract_*`); accepted sequences enter the intent pool with "
        f"{ctx.settings.annotators_per_sequence} annotators each."
    )


def layout(ctx: AppContext) -> CharadesPanel:
    _help(ctx)
    with gr.Row():
        folder = gr.Textbox(label="Charades folder", elem_id="charades-folder")
        videos = gr.Textbox(label="Video folder (optional)", elem_id="charades-videos")
    start = gr.Button("Import Charades annotations", elem_id="charades-import")
    message = gr.Markdown(elem_id="charades-message")
    summary = gr.Markdown(elem_id="charades-summary")
    with gr.Row():
        video = gr.Dropdown(
            label="Video", choices=[], allow_custom_value=True, elem_id="charades-video", filterable=True
        )
        preview = gr.Button("Preview", elem_id="charades-preview")
    timeline = gr.HTML(elem_id="charades-timeline")
    decisions = gr.Dataframe(
        headers=DECISION_COLUMNS,
        interactive=False,
        wrap=True,
        column_widths=COLUMN_WIDTHS,
        label="Actions",
        elem_id="charades-decisions",
    )
    with gr.Row():
        accept = gr.Button("Accept kept sequences into the intent pool", variant="primary", elem_id="charades-accept")
        export = gr.Button("Export CSV (released layout)", elem_id="charades-export")
    allow_missing = gr.Checkbox(
        label="Accept sequences without a video file", value=False, elem_id="charades-allow-missing"
    )
    file = gr.File(label="Download", interactive=False, visible=False)
    return CharadesPanel(
        folder,
        videos,
        start,
        message,
        summary,
        video,
        preview,
        timeline,
        decisions,
        accept,
        export,
        allow_missing,
        file,
    )


def _listed(ctx: AppContext, p: CharadesPanel, found: Preview, value: str | None) -> dict:
    """The imported videos' counts and the picker of them, on ``value``."""
    return {
        p.summary: summary_text(found, kept_without_video(ctx.database, found)),
        p.video: gr.Dropdown(choices=video_choices(found), value=value),
    }


def on_import(ctx: AppContext, p: CharadesPanel, typed: str, video_folder: str, request: gr.Request) -> dict:
    if not typed.strip():
        raise Mistake("Enter the folder of the Charades files, inside the import folder.")
    me = caller(ctx, request)
    report = import_charades_folder(ctx.database, ctx.settings, me, typed.strip(), video_folder.strip() or None)
    found = admin_preview(ctx.database, ctx.settings, me, None, ctx.embeddings)
    first = found.items[0][0].id if found.items else None
    notes = report["left_out"]
    left_out = f"; {report['actions_left_out']} actions left out ({esc(notes[0])} ...)" if notes else ""
    return {
        p.message: f"Imported {report['videos']} videos ({report['new_videos']} new, {report['actions']} actions"
        f"{left_out}).",
        **_listed(ctx, p, found, first),
    }


def on_preview(ctx: AppContext, p: CharadesPanel, video_id: str | None, request: gr.Request) -> dict:
    """One video's extraction; with none chosen (a page opened after an import by the command line), the
    imported videos' counts and list, and the first video."""
    me, listed = caller(ctx, request), {}
    if not video_id:
        everything = admin_preview(ctx.database, ctx.settings, me, None, ctx.embeddings)
        if not everything.items:
            raise Mistake("No Charades videos imported yet: import a folder first.")
        video_id = everything.items[0][0].id
        listed = _listed(ctx, p, everything, video_id)
    found = admin_preview(ctx.database, ctx.settings, me, [video_id], ctx.embeddings)
    item, extraction = found.items[0]
    return {
        **listed,
        p.timeline: timeline_html(extraction, found.extractor.names, item.length),
        p.decisions: decisions_frame(found, extraction),
        p.message: "",
    }


def on_accept(ctx: AppContext, p: CharadesPanel, allowed: bool, request: gr.Request) -> dict:
    report = admin_accept(ctx.database, ctx.settings, caller(ctx, request), None, ctx.embeddings, bool(allowed))
    return {
        p.message: f"Accepted {report['accepted']} sequences into the intent pool "
        f"({report['annotators_per_sequence']} annotators each); {report['already_there']} were already there; "
        f"{report['videos'] - report['kept']} videos left out."
    }


def on_export(ctx: AppContext, p: CharadesPanel, request: gr.Request) -> dict[Any, Any]:
    out = Path(tempfile.mkdtemp(prefix="compstudio-charades-")) / "charades_sequences.csv"
    done = admin_export(ctx.database, ctx.settings, caller(ctx, request), out, ctx.embeddings)
    return {p.file: gr.File(str(out), visible=True), p.message: f"Exported {done['rows']} sequences."}


def events(ctx: AppContext, p: CharadesPanel) -> list[Event]:
    previewed = [p.timeline, p.decisions, p.message, p.summary, p.video]
    return [
        Event(
            "admin_charades_import",
            "admin",
            shown(on_import, ctx, p),
            p.start.click,
            [p.folder, p.videos],
            [p.message, p.summary, p.video],
            QUIET,
        ),
        Event(
            "admin_charades_preview",
            "admin",
            shown(on_preview, ctx, p),
            [p.preview.click, p.video.input],
            [p.video],
            previewed,
            QUIET,
        ),
        Event(
            "admin_charades_accept", "admin", shown(on_accept, ctx, p), p.accept.click, [p.allow_missing], [p.message]
        ),
        Event("admin_charades_export", "admin", shown(on_export, ctx, p), p.export.click, None, [p.file, p.message]),
    ]


def build_charades_panel(ctx: AppContext) -> CharadesPanel:
    p = layout(ctx)
    wire(ctx, events(ctx, p))
    return p
