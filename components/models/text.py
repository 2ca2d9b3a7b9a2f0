"""The Models tab's tables and lines as a person reads them: the registered models, the recent runs (headers in
words, scores as the papers print them, times in the person's time zone) and a finished run's summary (also shown
by the Planning tab). Pure functions."""

from __future__ import annotations

from typing import Any

import pandas as pd

from backend.inference.runner import status_label
from components.common import esc
from components.readable import local_time, paper_score

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
