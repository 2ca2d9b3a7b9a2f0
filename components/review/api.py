"""The review tab's named JSON endpoints for scripts: review_next, review_submit, review_skip,
review_dashboard, review_export, dataset_publish. Every backend function checks the caller's role."""

from __future__ import annotations

import gradio as gr

from backend.context import AppContext
from backend.review import dashboard, publish
from backend.review import service as review
from components.common import caller
from components.events import Event, wire


def endpoints(ctx: AppContext) -> list[Event]:
    db, settings = ctx.database, ctx.settings

    def review_next(request: gr.Request) -> dict:
        """Your current review item (annotator names hidden) or a new one; item is null when the queue is empty."""
        return review.next_review(db, settings, caller(ctx, request))

    def review_submit(
        sequence_id: str, round: int, judgments: list[dict], final: dict | None, note: str, request: gr.Request
    ) -> dict:
        """judgments: [{annotation_id, reasonable, comment}]; final: {concrete_from, high_level_from,
        concrete_intent?, high_level_intent?} when any annotation is reasonable."""
        parsed = [
            review.Judgment(int(j["annotation_id"]), bool(j["reasonable"]), j.get("comment") or "") for j in judgments
        ]
        choice = review.FinalChoice(**final) if final else None
        return review.submit_review(
            db, settings, caller(ctx, request), sequence_id, int(round), parsed, choice, note or ""
        )

    def review_skip(sequence_id: str, round: int, reason: str, request: gr.Request) -> dict:
        """Give the review item back with a reason; returns your next item."""
        return review.skip_review(db, settings, caller(ctx, request), sequence_id, int(round), reason or "")

    def review_dashboard(request: gr.Request) -> dict:
        """Per-round and per-annotator review figures."""
        return dashboard.dashboard(db, caller(ctx, request))

    def review_export(fmt: str, request: gr.Request) -> dict:
        """Export the final dataset (admins) in ``fmt`` (vilpact, jsonl or parquet); returns the paths written."""
        return publish.export_for_download(db, settings, caller(ctx, request), fmt)

    def dataset_publish(repo_id: str, private: bool, request: gr.Request) -> dict:
        """Push the final dataset to a Hugging Face dataset repo (admins)."""
        return publish.publish_dataset(db, settings, caller(ctx, request), repo_id, bool(private))

    fast = {"queue": False}
    return [
        Event("review_next", "reviewer", review_next, options=fast),
        Event("review_submit", "reviewer", review_submit, options=fast),
        Event("review_skip", "reviewer", review_skip, options=fast),
        Event("review_dashboard", "reviewer", review_dashboard, options=fast),
        Event("review_export", "admin", review_export, options=fast),
        Event("dataset_publish", "admin", dataset_publish, options=fast),
    ]


def register(ctx: AppContext) -> None:
    wire(ctx, endpoints(ctx))
