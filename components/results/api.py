"""The Results tab's named JSON endpoints for scripts (reviewers): the report and the controlled comparison, and the
samples of stored runs. Each calls the backend function the page calls; the backend checks the caller's role."""

from __future__ import annotations

import gradio as gr

from backend.context import AppContext
from backend.inference import samples_api
from backend.reporting.exports import report_json
from backend.reporting.grids import run_grid
from backend.reporting.report import build_report
from components.common import caller
from components.events import FAST, Event, bind, wire


def results_report(ctx: AppContext, models: list[str], request: gr.Request) -> dict:
    """The report of the named models across planning, VQA and in-context (reviewers), as JSON."""
    return report_json(build_report(ctx, caller(ctx, request), models))


def results_grid(
    ctx: AppContext, model: str, benchmark: str, setting: str, values: str, limit: int | None, request: gr.Request
) -> dict:
    """Run one model over a grid of one setting (reviewers); side-by-side results and paired tests."""
    return run_grid(ctx, caller(ctx, request), model, benchmark, setting, values, limit=int(limit) if limit else None)


def results_sample_runs(ctx: AppContext, model: str, benchmark: str, request: gr.Request) -> list:
    """The stored runs (optionally of one model and benchmark), newest first (reviewers)."""
    return samples_api.runs(ctx, caller(ctx, request), model or None, benchmark or None)


def results_samples(
    ctx: AppContext,
    run_id: str,
    model: str,
    benchmark: str,
    filter: str,  # noqa: A002 (the endpoint's parameter name)
    category: str,
    search: str,
    page: int,
    page_size: int,
    request: gr.Request,
) -> dict:
    """One page of a run's samples (a run id, or a model and benchmark: their newest finished run), with
    every filter's count and how people answered each item (``people``: counts per option; reviewers, never
    for the items they wrote or verified). Filters: all, wrong, right, unparsed, refused, failed, missing,
    inconsistent, people_split, people_agree_model_wrong."""
    return samples_api.samples_page(
        ctx, caller(ctx, request), run_id or None, model=model or None, benchmark=benchmark or None,
        filter=filter or "all", category=category or "", search=search or "", page=int(page or 1),
        page_size=int(page_size or 50),
    )  # fmt: skip


def results_sample(ctx: AppContext, run_id: str, item_id: str, request: gr.Request) -> dict:
    """One sample as the model saw it: prompt, media, raw output, parse trace, key, manifest (reviewers)."""
    return samples_api.sample(ctx, caller(ctx, request), run_id, item_id)


def results_samples_vs(
    ctx: AppContext, run_id: str, other_run_id: str, vs_model: str, page: int, request: gr.Request
) -> dict:
    """Two runs item by item: the items only one got right, and the discordant counts (reviewers)."""
    return samples_api.samples_vs(
        ctx, caller(ctx, request), run_id, other_run_id or None, vs_model=vs_model or None, page=int(page or 1)
    )


def endpoints(ctx: AppContext) -> list[Event]:
    return [
        Event("results_report", "reviewer", bind(results_report, ctx)),
        Event("results_grid", "reviewer", bind(results_grid, ctx), model=True),
        Event("results_sample_runs", "reviewer", bind(results_sample_runs, ctx), options=FAST),
        Event("results_samples", "reviewer", bind(results_samples, ctx), options=FAST),
        Event("results_sample", "reviewer", bind(results_sample, ctx), options=FAST),
        Event("results_samples_vs", "reviewer", bind(results_samples_vs, ctx), options=FAST),
    ]


def register(ctx: AppContext) -> None:
    """Register the endpoints (on the scripts mount, web/scripts.py)."""
    wire(ctx, endpoints(ctx))
