"""The intent-annotation tab's named JSON endpoints for scripts, the load tests and the page's own script:
intent_next, intent_submit, intent_skip, intent_viewed, intent_draft, intent_played. Registered with ``gr.api`` on
the scripts mount (:func:`register`) and served, the very same :class:`Event` rows, on the lean ``POST /api/<name>``
routes (web/scripts.py). Every backend function checks the caller's role again."""

from __future__ import annotations

import gradio as gr

from backend.context import AppContext
from backend.intents import service
from components.common import caller
from components.events import Event, bind, wire


def intent_next(ctx: AppContext, request: gr.Request) -> dict:
    """Your current task (the same one until you submit or skip it) or a new one; task is null when done."""
    return service.next_intent_task(ctx.database, ctx.settings, caller(ctx, request))


def intent_submit(
    ctx: AppContext, sequence_id: str, concrete_intent: str, high_level_intent: str, request: gr.Request
) -> dict:
    """Store your two intents for the sequence you were handed; returns the stored row and your next task.
    With require_full_view on, report the share you watched with intent_viewed first."""
    name = caller(ctx, request)
    return service.submit_intents(ctx.database, ctx.settings, name, sequence_id, concrete_intent, high_level_intent)


def intent_skip(ctx: AppContext, sequence_id: str, reason: str, request: gr.Request) -> dict:
    """Give the sequence back with a reason; you will not get it again. Returns your next task."""
    return service.skip_intent_task(ctx.database, ctx.settings, caller(ctx, request), sequence_id, reason)


def intent_draft(
    ctx: AppContext,
    sequence_id: str,
    concrete_intent: str,
    high_level_intent: str,
    typed_ms: float | None,
    request: gr.Request,
) -> dict:
    """Keep unfinished text for the sequence you hold (the page sends it as it closes). typed_ms: your
    clock when it was typed (ms), or null; an older save never overwrites a newer one. saved_at is null
    when nothing was kept (already submitted or skipped, or a newer draft is stored)."""
    name = caller(ctx, request)
    saved = service.save_draft(ctx.database, name, sequence_id, concrete_intent, high_level_intent, typed_ms)
    return {"sequence_id": sequence_id, "saved_at": saved}


def intent_played(ctx: AppContext, sequence_id: str, ranges: list[list[float]], request: gr.Request) -> dict:
    """Keep the parts of the video you have played ([[start, end], ...] in seconds; the page's player sends
    them as it plays), joined with those kept before: a reload or a crash restores them. played is null
    when the sequence is no longer yours."""
    return {"played": service.save_played(ctx.database, ctx.settings, caller(ctx, request), sequence_id, ranges)}


def intent_viewed(ctx: AppContext, sequence_id: str, watched_share: float, request: gr.Request) -> dict:
    """Report the share of the video you played (0–1, from the player's played ranges; seeking ahead covers
    nothing): at least full_view_share lets you submit when require_full_view is on."""
    service.mark_viewed(ctx.database, ctx.settings, caller(ctx, request), sequence_id, watched_share)
    return {"sequence_id": sequence_id, "viewed": True}


def endpoints(ctx: AppContext) -> list[Event]:
    """The named endpoints (``trigger=None``), each with the least identity that may call it; light database
    work, so they skip Gradio's queue."""
    fast = {"queue": False}
    return [
        Event("intent_next", "annotator", bind(intent_next, ctx), options=fast),
        Event("intent_submit", "annotator", bind(intent_submit, ctx), options=fast),
        Event("intent_skip", "annotator", bind(intent_skip, ctx), options=fast),
        Event("intent_viewed", "annotator", bind(intent_viewed, ctx), options=fast),
        Event("intent_draft", "annotator", bind(intent_draft, ctx), options=fast),
        Event("intent_played", "annotator", bind(intent_played, ctx), options=fast),
    ]


def register(ctx: AppContext) -> None:
    wire(ctx, endpoints(ctx))
