"""The VQA tab's named JSON endpoints for scripts: answering (never returns a key before the answer), verifying,
the leaderboard, a live model answer, a batch run, the difficulty vote, and the export of verified items.
Every backend function checks the caller's role."""

from __future__ import annotations

import tempfile
from pathlib import Path

import gradio as gr

from backend.context import AppContext
from backend.vqa import circular, compose, io, models, runs, service
from components.access import endpoint
from components.common import ConcurrencyOptions, caller, ui_errors

MODEL_QUEUE: ConcurrencyOptions = {"concurrency_id": "models", "concurrency_limit": 1}


def register(ctx: AppContext) -> None:
    db, settings = ctx.database, ctx.settings

    @ui_errors
    def vqa_next_answer(request: gr.Request) -> dict:
        """Your current item to answer (question, options, image paths; no key), or null when none is left."""
        return service.next_answer_task(db, settings, caller(ctx, request))

    @ui_errors
    def vqa_submit_answer(item_id: str, answer: list[str], request: gr.Request) -> dict:
        """Store your answer (letters) to the item you were handed; returns the key and your score."""
        return service.submit_answer(db, settings, caller(ctx, request), item_id, answer)

    @ui_errors
    def vqa_next_verification(request: gr.Request) -> dict:
        """Your current item to verify (with its key: verifiers judge it) or a new one; null when none is left.
        Needs the author permission; nobody verifies their own items."""
        return service.next_verification(db, settings, caller(ctx, request))

    @ui_errors
    def vqa_submit_verification(
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
            db,
            settings,
            caller(ctx, request),
            item_id,
            decision,
            compositional=bool(compositional),
            key_correct=bool(key_correct),
            note=note or "",
            changes=changes or None,
        )

    @ui_errors
    def vqa_leaderboard(request: gr.Request) -> list[dict]:
        """Leaderboard rows (percent): random choice, the runs of people (kind "people"), and every run, each
        with the items it covers (``questions``) and its 95% interval."""
        return runs.leaderboard(ctx, caller(ctx, request))

    @ui_errors
    def vqa_comparison(request: gr.Request) -> dict:
        """Paired comparisons: every pair of runs, and each model against each run of people, on the items both
        answered (``n``), with the discordant counts, exact McNemar and the bootstrap interval."""
        return runs.comparison(ctx, caller(ctx, request), samples=settings.bootstrap_samples)

    @ui_errors
    def vqa_position_bias(models: list[str] | None, request: gr.Request) -> dict:
        """What circular evaluation reveals per model (reviewers): flip rate under rotation, answers per position
        against uniform (chi-squared), generation vs likelihood disagreement; models null: every one with data."""
        return circular.position_report(ctx, caller(ctx, request), models or None)

    @ui_errors
    def vqa_levels(request: gr.Request) -> dict:
        """Verified items per difficulty level (and unrated)."""
        return compose.difficulty_overview(db, caller(ctx, request))

    @ui_errors
    def vqa_export(fmt: str, request: gr.Request) -> dict:
        """Export the verified items (reviewers) in the "released" or "jsonl" layout; returns the zip's path."""
        out_dir = Path(tempfile.mkdtemp(prefix="vqa-export-"))
        return {"path": io.export_download(db, settings, caller(ctx, request), out_dir, fmt or "released")}

    @ui_errors
    def vqa_model_answer(model: str, item_id: str, image_mode: str | None, blind: bool, request: gr.Request) -> dict:
        """One model's live answer to one item (reviewers); image_mode null: the vqa_image_mode setting."""
        return models.ask_model(
            ctx, caller(ctx, request), model, item_id, blind=bool(blind), image_mode=image_mode or None
        )

    @ui_errors
    def vqa_model_run(model: str, image_mode: str | None, blind: bool, request: gr.Request) -> dict:
        """Answer every verified item with one model (reviewers); returns the run's summary."""
        return models.run_model(ctx, caller(ctx, request), model, blind=bool(blind), image_mode=image_mode or None)

    @ui_errors
    def vqa_vote(panel: list[str] | None, request: gr.Request) -> dict:
        """The difficulty vote (paper section 3.1): every panel model answers every verified item (reviewers);
        panel null: the vqa_panel setting."""
        return models.vote_difficulty(ctx, caller(ctx, request), panel or None)

    for name, fn in {
        "vqa_next_answer": vqa_next_answer,
        "vqa_submit_answer": vqa_submit_answer,
        "vqa_next_verification": vqa_next_verification,
        "vqa_submit_verification": vqa_submit_verification,
        "vqa_leaderboard": vqa_leaderboard,
        "vqa_levels": vqa_levels,
    }.items():
        endpoint(ctx, fn, api_name=name, queue=False)
    endpoint(ctx, vqa_export, api_name="vqa_export")
    endpoint(ctx, vqa_comparison, api_name="vqa_comparison")
    endpoint(ctx, vqa_position_bias, api_name="vqa_position_bias")
    for name, fn in {
        "vqa_model_answer": vqa_model_answer,
        "vqa_model_run": vqa_model_run,
        "vqa_vote": vqa_vote,
    }.items():
        endpoint(ctx, fn, api_name=name, **MODEL_QUEUE)
