"""The In-context examples tab's named JSON endpoints for scripts: icl_sets, icl_cases, icl_select, icl_table,
icl_answer. Every backend function checks the caller's role again."""

from __future__ import annotations

from dataclasses import asdict

import gradio as gr

from backend.context import AppContext
from backend.icl import service
from backend.icl.evaluation import BENCHMARK
from backend.inference import service as inference
from components.common import caller
from components.events import Event, bind, wire
from components.icl.selection import item_of


def icl_sets(ctx: AppContext, request: gr.Request) -> dict:
    """The stored example banks and test sets: {"bank": [...], "tests": [...]}."""
    return service.sets(ctx, caller(ctx, request))


def icl_cases(ctx: AppContext, tests: str, category: str, query: str, request: gr.Request) -> list[dict]:
    """Test cases of a test set (``line``, ``category``, ``input``), filtered by category and text."""
    return service.search_cases(ctx, caller(ctx, request), tests, category or "", query or "")


def icl_select(ctx: AppContext, selection: dict, request: gr.Request) -> dict:
    """One selection: {bank, tests, line, setting?, n?, order?, seed?, fictional?, w_p?, w_s?, w_c?,
    diversity?, primitive_once?, matching?, mmr_lambda?, mmr_pool?}; returns the chosen examples,
    statistics, prompt, ground truth, and whether the matching variant keeps the test case."""
    return service.select_case_json(ctx, caller(ctx, request), selection)


def icl_table(ctx: AppContext, selection: dict, request: gr.Request) -> dict:
    """Table 2 over a whole test set: the fields of icl_select without ``line``; returns the table per
    category, its Markdown, and how many test cases the matching variant keeps."""
    return service.set_table_json(ctx, caller(ctx, request), selection)


def icl_answer(ctx: AppContext, selection: dict, model: str, request: gr.Request) -> dict:
    """A text model's live answer to the prompt of one selection (reviewers): exact match per the paper."""
    user = caller(ctx, request)
    service.check_answer_model(ctx, user, model)
    chosen = service.select_case_json(ctx, user, selection)
    variant = service.CaseRequest(**{**selection, "line": int(selection["line"])}).variant
    value = {
        "tests": selection["tests"],
        "line": int(selection["line"]),
        "setting": variant,
        "prompt": chosen["prompt"],
        "truth": chosen["ground_truth"],
        "category": chosen["test"]["category"],
    }
    return asdict(inference.ask_model(ctx, user, BENCHMARK, model, item_of(value)))


def endpoints(ctx: AppContext) -> list[Event]:
    """The named endpoints (``trigger=None``); icl_answer asks a model, on the shared model queue."""
    two, one = {"concurrency_limit": 2}, {"concurrency_limit": 1}
    return [
        Event("icl_sets", "annotator", bind(icl_sets, ctx), options=two),
        Event("icl_cases", "annotator", bind(icl_cases, ctx), options=two),
        Event("icl_select", "annotator", bind(icl_select, ctx), options=two),
        Event("icl_table", "annotator", bind(icl_table, ctx), options=one),
        Event("icl_answer", "reviewer", bind(icl_answer, ctx), model=True),
    ]


def register(ctx: AppContext) -> None:
    wire(ctx, endpoints(ctx))
