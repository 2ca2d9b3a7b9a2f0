"""The Models tab (reviewers and admins): the model registry, batch runs with progress, recent runs.

Also :func:`build_ask_model`, the "Ask a model" panel other benchmark tabs put under their current item.
Model events run on this page's queue ``concurrency_id="models"``; the limit across pages, routes and commands is
the model pool's (``ctx.pool.slot()``, setting ``model_concurrency``), which every model call takes in ``backend/``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.errors import CompStudioError, PermissionDenied
from backend.inference import service
from backend.inference.benchmarks import EvalItem
from backend.inference.runner import status_label
from components.access import endpoint, listen
from components.common import ConcurrencyOptions, EventOptions, TabHandle, caller, esc, ui_errors
from components.feedback import QUIET, Mistake, mistake_text, shown_in
from components.model_form import layout_model_form, wire_model_form
from components.readable import BROWSER_ZONE_JS, local_time, paper_score
from components.served_replicas import build_served_replicas

#: the models table's columns in words (issue 44 §11): what tells models apart first; the generation settings after
MODEL_COLUMNS = {
    "name": "Name",
    "backend": "Backend",
    "state": "State",
    "description": "Description",
    "path": "Path, Hub id or served name",
    "batch_size": "Batch size",
    "concurrency": "Concurrency",
    "max_new_tokens": "Max new tokens",
    "frames_per_video": "Frames per video",
    "max_image_side": "Longest image side",
    "prompt_style": "Prompt style",
    "scoring": "Multiple choice by",
    "dtype": "Dtype",
    "device": "Device",
    "builtin": "Built in",
}
#: the recent runs' columns in words; the score as the papers print it, the start in the person's time zone
RUN_COLUMNS = {
    "id": "Run",
    "benchmark": "Benchmark",
    "model": "Model",
    "status": "Status",
    "started_by": "Started by",
    "started_at": "Started",
    "score": "Score (%)",
    "answered": "Answered",
    "refusals": "Refusals",
    "parse_failures": "Unparsed",
    "errors": "Errors",
    "newly_computed": "Newly computed",
    "from_store": "From the store",
}
SUMMARY_COUNTS = ("answered", "refusals", "parse_failures", "errors", "newly_computed", "from_store")
JUDGE_OFF = "(no judge)"
MODEL_QUEUE: ConcurrencyOptions = {"concurrency_id": "models", "concurrency_limit": 1}


def model_state(row: dict[str, Any]) -> str:
    """What the State column says: a served model's server holds its weights, not this process.

    >>> model_state({"backend": "openai", "loaded": False}), model_state({"backend": "random", "loaded": True})
    ('served by its server', 'loaded')
    """
    if row.get("backend") == "openai":
        return "served by its server"
    return "loaded" if row.get("loaded") else "not loaded"


def models_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    flat = []
    for row in rows:
        entry = {label: row.get(key) for key, label in MODEL_COLUMNS.items()}
        entry[MODEL_COLUMNS["state"]] = model_state(row)
        entry[MODEL_COLUMNS["builtin"]] = "yes" if row.get("builtin") else "no"
        flat.append(entry)
    return pd.DataFrame(flat, columns=list(MODEL_COLUMNS.values()))


def models_count(models: list[dict[str, Any]], runs: list[dict[str, Any]]) -> str:
    """The counts above the models table, e.g. "**7 models**, 2 loaded (bigram-prior, nsplan-lite) · 3 recent runs".

    >>> models_count([{"name": "a", "loaded": True}, {"name": "b", "loaded": False}], [])
    '**2 models**, 1 loaded (a) · no runs yet'
    """
    loaded = [m["name"] for m in models if m.get("loaded")]
    text = f"**{len(models)} model{'' if len(models) == 1 else 's'}**, {len(loaded)} loaded"
    text += f" ({', '.join(esc(n) for n in loaded)})" if loaded else ""
    return text + (f" · {len(runs)} recent run{'' if len(runs) == 1 else 's'}" if runs else " · no runs yet")


def runs_frame(rows: list[dict[str, Any]], zone: str | None = None) -> pd.DataFrame:
    """The recent runs as a person reads them: headers in words, the score as a percentage with two decimals (as
    the papers print it), the start in the time zone ``zone`` (the browser's)."""
    flat = []
    for row in rows:
        summary = row.get("summary") or {}
        entry = {key: row.get(key) for key in RUN_COLUMNS}
        entry |= {key: summary.get(key) for key in SUMMARY_COUNTS}
        errors = row.get("errors") if row.get("errors") is not None else summary.get("errors")
        entry["status"] = status_label(row.get("status") or "", errors)  # "finished with 3 errors", "failed (5 errors)"
        entry["score"] = paper_score(summary.get("score"))
        entry["started_at"] = local_time(row.get("started_at"), zone)
        flat.append({RUN_COLUMNS[key]: value for key, value in entry.items()})
    return pd.DataFrame(flat, columns=list(RUN_COLUMNS.values()))


def run_message(model: str, bench: str, done: dict[str, Any]) -> str:
    """What the run's status line says: finished, finished with N errors (and an example), or failed."""
    label = status_label(done["status"], done["errors"])
    text = f"{label.capitalize()}: {esc(model)} on {esc(bench)}"
    if done["score"] is not None:
        text += f", score {paper_score(done['score'])} over {done['scored']} of {done['items']} items"
    else:
        text += ": no item has an answer, so there is no score and the run is not ranked"
    if done["errors"] and done.get("error_examples"):
        text += f". First error: {esc(done['error_examples'][0][:300])}"
    return text + "."


def run_summary_markdown(done: dict[str, Any]) -> str:
    """A finished run as a person reads it (the Models and Planning tabs): the status line, then its counts and
    time in one line that wraps on a phone, and the warnings (issue 44 §11: the summary was a JSON dump).

    >>> print(run_summary_markdown({"model": "m", "benchmark": "b", "status": "finished", "errors": 0, "score": 0.5,
    ...     "scored": 2, "items": 2, "answered": 2, "refusals": 0, "parse_failures": 0, "newly_computed": 2,
    ...     "from_store": 0, "seconds": 0.25, "run_id": 7}))
    Finished: m on b, score 50.00 over 2 of 2 items.
    <BLANKLINE>
    Run 7 · Answered **2** · Refusals **0** · Unparsed **0** · Errors **0** · Newly computed **2** · From the store **0** · Time **0.2 s**
    """
    counts = [f"{RUN_COLUMNS[key]} **{done.get(key)}**" for key in SUMMARY_COUNTS]
    line = " · ".join([f"Run {done.get('run_id')}", *counts, f"Time **{done.get('seconds') or 0:.1f} s**"])
    lines = [run_message(done["model"], done["benchmark"], done), line]
    lines += [f"> ⚠️ {esc(w)}" for w in done.get("warnings") or []]
    return "\n\n".join(lines)


@dataclass
class ModelsView:
    """The Models tab's components; ``view`` are the ones every refresh fills (see :func:`_view`)."""

    count: gr.Markdown
    table: gr.Dataframe
    refresh: gr.Button
    unload: gr.Button
    benchmark: gr.Dropdown
    model: gr.Dropdown
    limit: gr.Number
    retry: gr.Checkbox
    judge: gr.Dropdown
    run: gr.Button
    run_message: gr.Markdown
    runs: gr.Dataframe
    zone: gr.Textbox  # the browser's time zone, read when the tab opens (components/readable.py)
    start_from: gr.Dropdown | None = None  # the registry editor's "Start from a registered model"

    @property
    def view(self) -> list[Any]:
        shown = [self.count, self.table, self.benchmark, self.model, self.judge, self.runs]
        return shown + ([self.start_from] if self.start_from is not None else [])


def _layout() -> ModelsView:
    gr.Markdown(
        "Registered models (`models.json` in the data folder) and batch runs. Answers are stored: "
        "a re-run computes only what is missing. Admins can edit the registry."
    )
    count = gr.Markdown(elem_id="models-count")
    table = gr.Dataframe(
        headers=list(MODEL_COLUMNS.values()), interactive=False, label="Models", elem_id="models-table"
    )
    with gr.Row():
        refresh = gr.Button("Refresh", elem_id="models-refresh")
        unload = gr.Button("Unload all models", elem_id="models-unload")
    zone = gr.Textbox(visible=False, elem_id="models-zone")
    with gr.Accordion("Run a benchmark", open=True):
        with gr.Row():
            benchmark = gr.Dropdown([], label="Benchmark", elem_id="run-benchmark", allow_custom_value=True)
            model = gr.Dropdown([], label="Model", elem_id="run-model", allow_custom_value=True)
            limit = gr.Number(value=0, precision=0, label="Limit (first N items; 0 = all)", elem_id="run-limit")
        with gr.Row():
            retry = gr.Checkbox(label="Retry items that failed before")
            judge = gr.Dropdown(
                [JUDGE_OFF], value=JUDGE_OFF, label="Judge for unparsed answers (labelled)", allow_custom_value=True
            )
        run = gr.Button("Run", variant="primary", elem_id="run-button")
        run_message = gr.Markdown(elem_id="run-message")  # after a run: its status line and counts
        runs = gr.Dataframe(
            headers=list(RUN_COLUMNS.values()), interactive=False, label="Recent runs", elem_id="runs-table"
        )
    return ModelsView(
        count, table, refresh, unload, benchmark, model, limit, retry, judge, run, run_message, runs, zone
    )


def _view(ctx: AppContext, v: ModelsView, name: str | None, zone: str | None = None) -> dict:
    """The registry, the benchmark and model choices, and the recent runs, by component."""
    rows = service.model_table(ctx, name)
    names = [r["name"] for r in rows]
    runs = service.recent_runs(ctx, name)
    return {
        v.count: models_count(rows, runs),
        v.table: models_frame(rows),
        v.benchmark: gr.Dropdown(choices=service.benchmark_names(ctx, name)),
        v.model: gr.Dropdown(choices=names),
        v.judge: gr.Dropdown(choices=[JUDGE_OFF, *names]),
        v.runs: runs_frame(runs, zone),
        **({v.start_from: gr.Dropdown(choices=names)} if v.start_from is not None else {}),
    }


def _run(ctx: AppContext, v: ModelsView, data: dict, name: str | None, progress: Any) -> dict:
    bench, chosen, count, judge_name = data[v.benchmark], data[v.model], data[v.limit], data[v.judge]
    if not bench or not chosen:
        raise Mistake("Choose a benchmark and a model.")
    result = service.start_run(
        ctx,
        name,
        bench,
        chosen,
        limit=int(count) if count else None,
        retry_failed=data[v.retry],
        judge=None if judge_name in (None, JUDGE_OFF) else judge_name,
        progress=lambda done, total: progress((done, total), desc=f"{chosen} on {bench}", unit="items"),
    )
    return {v.run_message: run_summary_markdown(result.as_dict()), **_view(ctx, v, name, data[v.zone])}


def build_models_tab(ctx: AppContext) -> TabHandle:
    with gr.Tab("Models", id="models", visible=False) as tab:
        v = _layout()
        form = layout_model_form(ctx)
        v.start_from = form.start_from
        build_served_replicas(ctx, tab)  # compstudio serve's replicas and their state (components/served_replicas.py)
    wire_model_form(ctx, form, lambda name, zone: _view(ctx, v, name, zone), v.view, v.zone)

    def fill(name: str | None, zone: str | None) -> dict:
        try:
            return _view(ctx, v, name, zone)
        except PermissionDenied:  # annotators never see this tab; leave it empty (one unchanged output: an
            return {v.count: gr.update()}  # empty dict would read as a single value and log a traceback)
        except CompStudioError as exc:  # e.g. a models.json edited by hand that does not parse
            return {v.count: mistake_text(str(exc))}

    def on_load(request: gr.Request) -> dict:
        return fill(caller(ctx, request), None)

    def on_open(zone: str | None, request: gr.Request) -> dict:
        """The tab opened: its tables, with times in the browser's time zone (``zone``, read by the event's js)."""
        return {**fill(caller(ctx, request), zone), v.zone: zone}

    @ui_errors
    def on_refresh(zone: str | None, request: gr.Request) -> dict:
        return _view(ctx, v, caller(ctx, request), zone)

    @shown_in(v.run_message)
    def on_run(data: dict, request: gr.Request, progress=gr.Progress(track_tqdm=True)) -> dict:
        return _run(ctx, v, data, caller(ctx, request), progress)

    @ui_errors
    def on_unload(zone: str | None, request: gr.Request) -> dict:
        service.unload_model(ctx, caller(ctx, request), None)
        return _view(ctx, v, caller(ctx, request), zone)

    private: EventOptions = {"api_visibility": "private"}
    run_outputs = [v.run_message, *v.view]
    listen(ctx, tab.select, on_open, [v.zone], [*v.view, v.zone], js=BROWSER_ZONE_JS,
           show_progress="hidden", **private, api_name="models_ui_open")  # fmt: skip
    listen(ctx, v.refresh.click, on_refresh, [v.zone], v.view, **QUIET, **private, api_name="models_ui_refresh")
    listen(
        ctx,
        v.run.click,
        on_run,
        {v.benchmark, v.model, v.limit, v.retry, v.judge, v.zone},
        run_outputs,
        **MODEL_QUEUE,
        **private,
        api_name="models_ui_run",
    )
    listen(ctx, v.unload.click, on_unload, [v.zone], v.view, **MODEL_QUEUE, **QUIET, **private,
           api_name="models_ui_unload")  # fmt: skip
    return TabHandle(tab, on_load=(on_load, v.view), filled_on_select=True)


def _register_api(ctx: AppContext) -> None:
    """Named JSON endpoints: model_list, model_runs, model_answer, model_run, model_unload, model_save,
    model_delete. Model calls share the one ``models`` queue."""

    @ui_errors
    def model_list(request: gr.Request) -> list[dict]:
        """The registered models (reviewers)."""
        return service.model_table(ctx, caller(ctx, request))

    @ui_errors
    def model_runs(request: gr.Request) -> list[dict]:
        """The 20 most recent batch runs (reviewers)."""
        return service.recent_runs(ctx, caller(ctx, request))

    @ui_errors
    def model_answer(benchmark: str, model: str, item_id: str, request: gr.Request) -> dict:
        """A live answer to one item of a benchmark (reviewers): prompt, raw output, parsed answer, score."""
        return service.answer_by_id(ctx, caller(ctx, request), benchmark, model, item_id)

    @ui_errors
    def model_run(
        benchmark: str, model: str, limit: int | None, retry_failed: bool, judge: str | None, request: gr.Request
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

    @ui_errors
    def model_unload(request: gr.Request) -> dict:
        """Free every loaded model (reviewers); returns the names unloaded."""
        return {"unloaded": service.unload_model(ctx, caller(ctx, request), None)}

    @ui_errors
    def model_save(entry: dict, request: gr.Request) -> dict:
        """Add or replace a registry entry (admins), e.g. {"name": "m", "backend": "random"}."""
        return service.save_model(ctx, caller(ctx, request), entry).as_dict()

    @ui_errors
    def model_delete(name: str, request: gr.Request) -> dict:
        """Remove a registry entry (admins); returns the names left."""
        return {"models": service.delete_model(ctx, caller(ctx, request), (name or "").strip())}

    for name, fn in {
        "model_list": model_list,
        "model_runs": model_runs,
        "model_save": model_save,
        "model_delete": model_delete,
    }.items():
        endpoint(ctx, fn, api_name=name, queue=False)
    for name, fn in {"model_answer": model_answer, "model_run": model_run, "model_unload": model_unload}.items():
        endpoint(ctx, fn, api_name=name, **MODEL_QUEUE)


def format_answer(answer) -> str:
    """Markdown for an "Ask a model" result (model text escaped)."""
    verdict = {1.0: "correct", 0.0: "wrong"}.get(answer.score, "n/a" if answer.score is None else f"{answer.score:.2f}")
    latency = f"{answer.latency_ms:.0f} ms" if answer.latency_ms is not None else "n/a"
    lines = [
        f"**Parsed answer:** {esc(answer.parsed)} · **expected:** {esc(answer.correct_answer)} · **{verdict}** · "
        f"latency {latency}{' (from the store)' if answer.from_store else ''}",
        f"**Raw output:**\n\n<pre>{esc(answer.raw_output) if answer.raw_output is not None else ''}</pre>",
    ]
    if answer.error:
        lines.append(f"**Error:** {esc(answer.error)}")
    lines.append(f"<details><summary>Prompt</summary><pre>{esc(answer.prompt)}</pre></details>")
    return "\n\n".join(lines)


def build_ask_model(
    ctx: AppContext,
    benchmark: str,
    item_of: Callable[[Any], EvalItem],
    item_input: Any,
    api_name: str,
    elem_id: str | None = None,
) -> gr.Dropdown:
    """An "Ask a model" panel for the current item of a benchmark tab.

    ``item_of(value_of_item_input)`` returns the :class:`EvalItem` on screen (e.g. from a ``gr.State`` or
    hidden textbox holding the item id). The call runs on the shared
    ``models`` queue; the backend checks the caller's role. Returns the model dropdown (fill its choices
    on load with the registry's names).
    """
    with gr.Row():
        chosen = gr.Dropdown([], label="Model", scale=3, allow_custom_value=True, elem_id=elem_id)
        ask = gr.Button("Ask a model", scale=1)
    shown = gr.Markdown()

    @shown_in(shown)  # a mistake (no model, an unknown one) is said where the answer would be
    def on_ask(name: str, value: Any, request: gr.Request) -> dict:
        if not name:
            raise Mistake("Choose a model.")
        return {shown: format_answer(service.ask_model(ctx, caller(ctx, request), benchmark, name, item_of(value)))}

    listen(
        ctx,
        ask.click,
        on_ask,
        [chosen, item_input],
        [shown],
        api_name=api_name,
        api_visibility="private",
        **MODEL_QUEUE,
    )
    return chosen
