"""The VQA tab's named JSON endpoints for scripts: answering (never returns a key before the answer), verifying,
the leaderboard, a live model answer, a batch run, the difficulty vote, and the export of verified items.
Every backend function checks the caller's role."""

from __future__ import annotations

import tempfile
from pathlib import Path

import gradio as gr

from backend.context import AppContext
from backend.vqa import circular, compose, io, models, runs, service
from components.common import caller
from components.events import FAST, Event, bind, wire


def vqa_next_answer(ctx: AppContext, request: gr.Request) -> dict:
    """Your current item to answer (question, options, image paths; no key), or null when none is left."""
    return service.next_answer_task(ctx.database, ctx.settings, caller(ctx, request))


def vqa_submit_answer(ctx: AppContext, item_id: str, answer: list[str], request: gr.Request) -> dict:
    """Store your answer (letters) to the item you were handed; returns the key and your score."""
    return service.submit_answer(ctx.database, ctx.settings, caller(ctx, request), item_id, answer)


def vqa_next_verification(ctx: AppContext, request: gr.Request) -> dict:
    """Your current item to verify (with its key: verifiers judge it) or a new one; null when none is left.
    Needs the author permission; nobody verifies their own items."""
    return service.next_verification(ctx.database, ctx.settings, caller(ctx, request))


def vqa_submit_verification(
    ctx: AppContext,
    item_id: str,
    decision: str,
    compositional: bool,
    key_correct: bool,
    note: str,
    changes: dict | None,
    request: gr.Request,
) -> dict:
    """Accept, edit (with the corrected fields in ``changes``) or reject the item you were handed; a
    repeated submit returns the stored outcome."""
    return service.submit_verification(
        ctx.database,
        ctx.settings,
        caller(ctx, request),
        item_id,
        decision,
        compositional=bool(compositional),
        key_correct=bool(key_correct),
        note=note or "",
        changes=changes or None,
    )


def vqa_leaderboard(ctx: AppContext, request: gr.Request) -> list[dict]:
    """Leaderboard rows (percent): random choice, the runs of people (kind "people"), and every run, each
    with the items it covers (``questions``) and its 95% interval."""
    return runs.leaderboard(ctx, caller(ctx, request))


def vqa_comparison(ctx: AppContext, request: gr.Request) -> dict:
    """Paired comparisons: every pair of runs, and each model against each run of people, on the items both
    answered (``n``), with the discordant counts, exact McNemar and the bootstrap interval."""
    return runs.comparison(ctx, caller(ctx, request), samples=ctx.settings.bootstrap_samples)


def vqa_position_bias(ctx: AppContext, models: list[str] | None, request: gr.Request) -> dict:
    """What circular evaluation reveals per model (reviewers): flip rate under rotation, answers per position
    against uniform (chi-squared), generation vs likelihood disagreement; models null: every one with data."""
    return circular.position_report(ctx, caller(ctx, request), models or None)


def vqa_levels(ctx: AppContext, request: gr.Request) -> dict:
    """Verified items per difficulty level (and unrated)."""
    return compose.difficulty_overview(ctx.database, caller(ctx, request))


def vqa_export(ctx: AppContext, fmt: str, request: gr.Request) -> dict:
    """Export the verified items (reviewers) in the "released" or "jsonl" layout; returns the zip's path."""
    out_dir = Path(tempfile.mkdtemp(prefix="vqa-export-"))
    return {"path": io.export_download(ctx.database, ctx.settings, caller(ctx, request), out_dir, fmt or "released")}


def vqa_model_answer(
    ctx: AppContext, model: str, item_id: str, image_mode: str | None, blind: bool, request: gr.Request
) -> dict:
    """One model's live answer to one item (reviewers); image_mode null: the vqa_image_mode setting."""
    return models.ask_model(ctx, caller(ctx, request), model, item_id, blind=bool(blind), image_mode=image_mode or None)


def vqa_model_run(ctx: AppContext, model: str, image_mode: str | None, blind: bool, request: gr.Request) -> dict:
    """Answer every verified item with one model (reviewers); returns the run's summary."""
    return models.run_model(ctx, caller(ctx, request), model, blind=bool(blind), image_mode=image_mode or None)


def vqa_vote(ctx: AppContext, panel: list[str] | None, request: gr.Request) -> dict:
    """The difficulty vote (paper section 3.1): every panel model answers every verified item (reviewers);
    panel null: the vqa_panel setting."""
    return models.vote_difficulty(ctx, caller(ctx, request), panel or None)


def endpoints(ctx: AppContext) -> list[Event]:
    """Every named endpoint of the tab, with the least identity that may call it."""
    return [
        Event("vqa_next_answer", "annotator", bind(vqa_next_answer, ctx), options=FAST),
        Event("vqa_submit_answer", "annotator", bind(vqa_submit_answer, ctx), options=FAST),
        Event("vqa_next_verification", "author", bind(vqa_next_verification, ctx), options=FAST),
        Event("vqa_submit_verification", "author", bind(vqa_submit_verification, ctx), options=FAST),
        Event("vqa_leaderboard", "annotator", bind(vqa_leaderboard, ctx), options=FAST),
        Event("vqa_levels", "annotator", bind(vqa_levels, ctx), options=FAST),
        Event("vqa_export", "reviewer", bind(vqa_export, ctx)),
        Event("vqa_comparison", "annotator", bind(vqa_comparison, ctx)),
        Event("vqa_position_bias", "reviewer", bind(vqa_position_bias, ctx)),
        Event("vqa_model_answer", "reviewer", bind(vqa_model_answer, ctx), model=True),
        Event("vqa_model_run", "reviewer", bind(vqa_model_run, ctx), model=True),
        Event("vqa_vote", "reviewer", bind(vqa_vote, ctx), model=True),
    ]


def register(ctx: AppContext) -> None:
    wire(ctx, endpoints(ctx))
