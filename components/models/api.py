"""The Models tab's named JSON endpoints for scripts: model_list, model_runs, model_answer, model_run, model_unload,
model_save, model_delete. Model calls share the one ``models`` queue; the backend checks the caller's role."""

from __future__ import annotations

import gradio as gr

from backend.context import AppContext
from backend.inference import service
from components.common import caller
from components.events import FAST, Event, bind, wire


def model_list(ctx: AppContext, request: gr.Request) -> list[dict]:
    """The registered models (reviewers)."""
    return service.model_table(ctx, caller(ctx, request))


def model_runs(ctx: AppContext, request: gr.Request) -> list[dict]:
    """The 20 most recent batch runs (reviewers)."""
    return service.recent_runs(ctx, caller(ctx, request))


def model_answer(ctx: AppContext, benchmark: str, model: str, item_id: str, request: gr.Request) -> dict:
    """A live answer to one item of a benchmark (reviewers): prompt, raw output, parsed answer, score."""
    return service.answer_by_id(ctx, caller(ctx, request), benchmark, model, item_id)


def model_run(
    ctx: AppContext,
    benchmark: str,
    model: str,
    limit: int | None,
    retry_failed: bool,
    judge: str | None,
    request: gr.Request,
) -> dict:
    """A batch run (reviewers); resumes from the prediction store. judge: a model name or null."""
    result = service.start_run(
        ctx,
        caller(ctx, request),
        benchmark,
        model,
        limit=int(limit) if limit else None,
        retry_failed=bool(retry_failed),
        judge=judge or None,
    )
    return result.as_dict()


def model_unload(ctx: AppContext, request: gr.Request) -> dict:
    """Free every loaded model (reviewers); returns the names unloaded."""
    return {"unloaded": service.unload_model(ctx, caller(ctx, request), None)}


def model_save(ctx: AppContext, entry: dict, request: gr.Request) -> dict:
    """Add or replace a registry entry (admins), e.g. {"name": "m", "backend": "random"}."""
    return service.save_model(ctx, caller(ctx, request), entry).as_dict()


def model_delete(ctx: AppContext, name: str, request: gr.Request) -> dict:
    """Remove a registry entry (admins); returns the names left."""
    return {"models": service.delete_model(ctx, caller(ctx, request), (name or "").strip())}


def endpoints(ctx: AppContext) -> list[Event]:
    return [
        Event("model_list", "reviewer", bind(model_list, ctx), options=FAST),
        Event("model_runs", "reviewer", bind(model_runs, ctx), options=FAST),
        Event("model_save", "admin", bind(model_save, ctx), options=FAST),
        Event("model_delete", "admin", bind(model_delete, ctx), options=FAST),
        Event("model_answer", "reviewer", bind(model_answer, ctx), model=True),
        Event("model_run", "reviewer", bind(model_run, ctx), model=True),
        Event("model_unload", "admin", bind(model_unload, ctx), model=True),
    ]


def register(ctx: AppContext) -> None:
    """Register the endpoints (on the scripts mount, web/scripts.py)."""
    wire(ctx, endpoints(ctx))
