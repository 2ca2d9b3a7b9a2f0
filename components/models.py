"""The Models tab (reviewers and admins): the model registry, batch runs with progress, recent runs.

Also :func:`build_ask_model`, the "Ask a model" panel other benchmark tabs put under their current item.
Model events run on this page's queue ``concurrency_id="models"``; the limit across pages, routes and commands is
the model pool's (``ctx.pool.slot()``, setting ``model_concurrency``), which every model call takes in ``backend/``.
"""

from __future__ import annotations

import json
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
from components.served_replicas import build_served_replicas

MODEL_COLUMNS = [  # what tells models apart first; the generation settings after
    "name",
    "backend",
    "loaded",
    "description",
    "path",
    "dtype",
    "device",
    "batch_size",
    "max_new_tokens",
    "frames_per_video",
    "max_image_side",
    "prompt_style",
    "scoring",
    "concurrency",
    "builtin",
]
RUN_COLUMNS = [
    "id",
    "benchmark",
    "model",
    "status",
    "started_by",
    "started_at",
    "score",
    "answered",
    "refusals",
    "parse_failures",
    "errors",
    "newly_computed",
    "from_store",
]
JUDGE_OFF = "(no judge)"
MODEL_QUEUE: ConcurrencyOptions = {"concurrency_id": "models", "concurrency_limit": 1}
EXAMPLE_ENTRY = {
    "name": "my-vllm",
    "backend": "openai",
    "path": "Qwen/Qwen2-VL-7B-Instruct",
    "concurrency": 8,
    "options": {"base_url": "http://127.0.0.1:8000/v1", "api_key_env": "OPENAI_API_KEY"},
}


def models_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame([{c: r.get(c) for c in MODEL_COLUMNS} for r in rows], columns=MODEL_COLUMNS)


def models_count(models: list[dict[str, Any]], runs: list[dict[str, Any]]) -> str:
    """The counts above the models table, e.g. "**7 models**, 2 loaded (bigram-prior, nsplan-lite) · 3 recent runs".

    >>> models_count([{"name": "a", "loaded": True}, {"name": "b", "loaded": False}], [])
    '**2 models**, 1 loaded (a) · no runs yet'
    """
    loaded = [m["name"] for m in models if m.get("loaded")]
    text = f"**{len(models)} model{'' if len(models) == 1 else 's'}**, {len(loaded)} loaded"
    text += f" ({', '.join(esc(n) for n in loaded)})" if loaded else ""
    return text + (f" · {len(runs)} recent run{'' if len(runs) == 1 else 's'}" if runs else " · no runs yet")


def runs_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    flat = []
    for row in rows:
        summary = row.get("summary") or {}
        entry = {**{c: row.get(c) for c in RUN_COLUMNS}, **{k: summary.get(k) for k in RUN_COLUMNS[6:]}}
        errors = row.get("errors") if row.get("errors") is not None else summary.get("errors")
        entry["status"] = status_label(row.get("status") or "", errors)  # "finished with 3 errors", "failed (5 errors)"
        flat.append(entry)
    return pd.DataFrame(flat, columns=RUN_COLUMNS)


def run_message(model: str, bench: str, done: dict[str, Any]) -> str:
    """What the run's status line says: finished, finished with N errors (and an example), or failed."""
    label = status_label(done["status"], done["errors"])
    text = f"{label.capitalize()}: {esc(model)} on {esc(bench)}"
    if done["score"] is not None:
        text += f", score {done['score']:.3f} over {done['scored']} of {done['items']} items"
    else:
        text += ": no item has an answer, so there is no score and the run is not ranked"
    if done["errors"] and done.get("error_examples"):
        text += f". First error: {esc(done['error_examples'][0][:300])}"
    return text + "."


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
    summary: gr.JSON
    runs: gr.Dataframe
    entry: gr.Code
    save: gr.Button
    delete_name: gr.Textbox
    delete: gr.Button
    edit_result: gr.Markdown

    @property
    def view(self) -> list[Any]:
        return [self.count, self.table, self.benchmark, self.model, self.judge, self.runs]


def _layout() -> ModelsView:
    gr.Markdown(
        "Registered models (`models.json` in the data folder) and batch runs. Answers are stored: "
        "a re-run computes only what is missing. Admins can edit the registry."
    )
    count = gr.Markdown(elem_id="models-count")
    table = gr.Dataframe(headers=MODEL_COLUMNS, interactive=False, label="Models", elem_id="models-table")
    with gr.Row():
        refresh = gr.Button("Refresh", elem_id="models-refresh")
        unload = gr.Button("Unload all models", elem_id="models-unload")
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
        run_message = gr.Markdown(elem_id="run-message")
        summary = gr.JSON(label="Result", elem_id="run-summary", visible=False)  # shown after a run
        runs = gr.Dataframe(headers=RUN_COLUMNS, interactive=False, label="Recent runs", elem_id="runs-table")
    with gr.Accordion("Edit the registry (admins)", open=False):
        entry = gr.Code(json.dumps(EXAMPLE_ENTRY, indent=2), language="json", label="Model entry (JSON)")
        with gr.Row():
            save = gr.Button("Save model", elem_id="model-save")
            delete_name = gr.Textbox(label="Model name to delete", elem_id="model-delete-name")
            delete = gr.Button("Delete model", variant="stop", elem_id="model-delete")
        edit_result = gr.Markdown(elem_id="model-edit-message")
    return ModelsView(
        count,
        table,
        refresh,
        unload,
        benchmark,
        model,
        limit,
        retry,
        judge,
        run,
        run_message,
        summary,
        runs,
        entry,
        save,
        delete_name,
        delete,
        edit_result,
    )


def _view(ctx: AppContext, v: ModelsView, name: str | None) -> dict:
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
        v.runs: runs_frame(runs),
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
    done = result.as_dict()
    return {
        v.summary: gr.JSON(done, visible=True),
        v.run_message: run_message(chosen, bench, done),
        **_view(ctx, v, name),
    }


def build_models_tab(ctx: AppContext) -> TabHandle:
    with gr.Tab("Models", id="models", visible=False) as tab:
        v = _layout()
        build_served_replicas(ctx, tab)  # compstudio serve's replicas and their state (components/served_replicas.py)

    def on_load(request: gr.Request) -> dict:
        try:
            return _view(ctx, v, caller(ctx, request))
        except PermissionDenied:  # annotators never see this tab; leave it empty (one unchanged output: an
            return {v.count: gr.update()}  # empty dict would read as a single value and log a traceback)
        except CompStudioError as exc:  # e.g. a models.json edited by hand that does not parse
            return {v.count: mistake_text(str(exc))}

    @ui_errors
    def on_refresh(request: gr.Request) -> dict:
        return _view(ctx, v, caller(ctx, request))

    @shown_in(v.run_message)
    def on_run(data: dict, request: gr.Request, progress=gr.Progress(track_tqdm=True)) -> dict:
        return _run(ctx, v, data, caller(ctx, request), progress)

    @shown_in(v.edit_result)
    def on_save(text: str, request: gr.Request) -> dict:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise Mistake(f"The entry is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise Mistake('The entry must be one JSON object, e.g. {"name": "m", "backend": "random"}.')
        spec = service.save_model(ctx, caller(ctx, request), data)
        return {v.edit_result: f"Saved **{esc(spec.name)}**.", **_view(ctx, v, caller(ctx, request))}

    @shown_in(v.edit_result)
    def on_delete(name_to_delete: str, request: gr.Request) -> dict:
        if not name_to_delete.strip():
            raise Mistake("Enter the name of the model to delete.")
        service.delete_model(ctx, caller(ctx, request), name_to_delete.strip())
        return {v.edit_result: f"Deleted **{esc(name_to_delete.strip())}**.", **_view(ctx, v, caller(ctx, request))}

    @ui_errors
    def on_unload(request: gr.Request) -> dict:
        service.unload_model(ctx, caller(ctx, request), None)
        return _view(ctx, v, caller(ctx, request))

    private: EventOptions = {"api_visibility": "private"}
    run_outputs = [v.run_message, v.summary, *v.view]
    listen(ctx, tab.select, on_load, None, v.view, show_progress="hidden", **private, api_name="models_ui_open")
    listen(ctx, v.refresh.click, on_refresh, None, v.view, **QUIET, **private, api_name="models_ui_refresh")
    listen(
        ctx,
        v.run.click,
        on_run,
        {v.benchmark, v.model, v.limit, v.retry, v.judge},
        run_outputs,
        **MODEL_QUEUE,
        **private,
        api_name="models_ui_run",
    )
    listen(
        ctx, v.save.click, on_save, [v.entry], [v.edit_result, *v.view], **QUIET, **private, api_name="models_ui_save"
    )
    listen(
        ctx,
        v.delete.click,
        on_delete,
        [v.delete_name],
        [v.edit_result, *v.view],
        **QUIET,
        **private,
        api_name="models_ui_delete",
    )
    listen(ctx, v.unload.click, on_unload, None, v.view, **MODEL_QUEUE, **QUIET, **private, api_name="models_ui_unload")
    return TabHandle(tab, "reviewer", on_load=(on_load, v.view), filled_on_select=True)


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
    ctx: AppContext, benchmark: str, item_of: Callable[[Any], EvalItem], item_input: Any, api_name: str
) -> gr.Dropdown:
    """An "Ask a model" panel for the current item of a benchmark tab.

    ``item_of(value_of_item_input)`` returns the :class:`EvalItem` on screen (e.g. from a ``gr.State`` or
    hidden textbox holding the item id). The call runs on the shared
    ``models`` queue; the backend checks the caller's role. Returns the model dropdown (fill its choices
    on load with the registry's names).
    """
    with gr.Row():
        chosen = gr.Dropdown([], label="Model", scale=3, allow_custom_value=True)
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
