"""The prediction store: one row per (model, benchmark, item, prompt hash, settings hash).

The key binds everything that decides an answer, so the store cannot serve a stale one:

* ``prompt_hash`` (:func:`backend.inference.request.request_hash`): the item as the model sees it, the
  prompt template's rendering of question and options, the bytes of every image and video (digests cached
  per file version), and for video its window (start, end), frame count and decoder, or the sampled
  frames' pixels with how they were sampled;
* ``settings_hash`` (:func:`settings_hash` over :func:`key_fields`): the model's fingerprint (backend, path,
  dtype, frames per video, image size limit, prompt style, scoring, options), its revision
  (:mod:`backend.inference.revision`), the generation settings, the video decoder and :data:`KEY_VERSION`.

A row holds the raw output, the parsed answer, the score, the latency and, for a failed call, the error.
A re-run reads what exists and computes only what is missing (and, when asked, what failed); the stored
rows alone reproduce every reported number.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_utils

from backend import webhooks
from backend.inference.parsing import ParsedAnswer
from backend.inference.registry import ModelSpec
from backend.inference.request import VIDEO_DECODER, GenerationParams
from backend.storage import Database, utcnow


@dataclass(frozen=True)
class Prediction:
    model: str
    benchmark: str
    item_id: str
    prompt_hash: str
    settings_hash: str
    status: str  # ok | unparsed | refusal | error
    raw_output: str | None
    parsed: ParsedAnswer | None
    score: float | None
    latency_ms: float | None
    error: str | None = None
    judge: dict[str, Any] | None = None

    @property
    def failed(self) -> bool:
        return self.status == "error"


#: 2: the key binds media bytes (video too), the decoder and the model revision. Rows of version 1 have
#: other settings hashes, so they are never served under a version-2 key (docs/decisions.md).
KEY_VERSION = 2


def key_fields(spec: ModelSpec, params: GenerationParams, revision: str) -> dict[str, Any]:
    """What besides the prompt decides an answer (hashed into ``settings_hash``, named in run manifests)."""
    return {
        "key_version": KEY_VERSION,
        "model": spec.fingerprint(),
        "revision": revision,
        "params": params.as_dict(),
        "video_decoder": VIDEO_DECODER,
    }


def settings_hash(spec: ModelSpec, params: GenerationParams, revision: str) -> str:
    blob = json.dumps(key_fields(spec, params, revision), sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _row_to_prediction(row: dict[str, Any]) -> Prediction:
    return Prediction(
        row["model"],
        row["benchmark"],
        row["item_id"],
        row["prompt_hash"],
        row["settings_hash"],
        row["status"],
        row["raw_output"],
        ParsedAnswer.from_dict(json.loads(row["parsed"])) if row["parsed"] else None,
        row["score"],
        row["latency_ms"],
        row["error"],
        json.loads(row["judge"]) if row["judge"] else None,
    )


def lookup(database: Database, model: str, benchmark: str, shash: str) -> dict[tuple[str, str], Prediction]:
    """Stored predictions of ``model`` on ``benchmark`` under ``shash``, by (item id, prompt hash)."""
    rows = database.query(
        "SELECT * FROM predictions WHERE model = ? AND benchmark = ? AND settings_hash = ?",
        (model, benchmark, shash),
    )
    return {(r["item_id"], r["prompt_hash"]): _row_to_prediction(r) for r in rows}


def save(database: Database, predictions: list[Prediction], run_id: int | None = None) -> None:
    """Insert or replace (a retried failure overwrites its error row) in one transaction."""
    with database.write() as db:
        db.conn.executemany(
            """INSERT INTO predictions (model, benchmark, item_id, prompt_hash, settings_hash, status, raw_output,
                   parsed, score, latency_ms, error, judge, run_id, created_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT (model, benchmark, item_id, prompt_hash, settings_hash) DO UPDATE SET
                   status = excluded.status, raw_output = excluded.raw_output, parsed = excluded.parsed,
                   score = excluded.score, latency_ms = excluded.latency_ms, error = excluded.error,
                   judge = excluded.judge, run_id = excluded.run_id, created_at = excluded.created_at""",
            [
                (
                    p.model,
                    p.benchmark,
                    p.item_id,
                    p.prompt_hash,
                    p.settings_hash,
                    p.status,
                    p.raw_output,
                    json.dumps(p.parsed.as_dict()) if p.parsed else None,
                    p.score,
                    p.latency_ms,
                    p.error,
                    json.dumps(p.judge) if p.judge else None,
                    run_id,
                    utcnow(),
                )
                for p in predictions
            ],
        )


def start_run(database: Database, benchmark: str, model: str, shash: str, actor: str, options: dict) -> int:
    with database.write() as db:
        cur = db.conn.execute(
            "INSERT INTO eval_runs (benchmark, model, settings_hash, started_by, started_at, status, options) "
            "VALUES (?, ?, ?, ?, ?, 'running', ?)",
            (benchmark, model, shash, actor, utcnow(), json.dumps(options, default=str)),
        )
        assert cur.lastrowid is not None  # set by every INSERT
        return int(cur.lastrowid)


def finish_run(database: Database, run_id: int, summary: dict, status: str = "finished") -> None:
    """End a run: ``finished``, ``finished with errors`` or ``failed`` (:func:`backend.inference.runner.run_status`),
    with its summary and its count of failed items (``errors``). Other systems hear it as the webhook event
    ``run.finished`` (backend/webhooks)."""
    with database.write() as db:
        db.conn.execute(
            "UPDATE eval_runs SET finished_at = ?, status = ?, summary = ?, errors = ? WHERE id = ?",
            (utcnow(), status, json.dumps(summary, default=str), summary.get("errors"), run_id),
        )
        webhooks.emit(db, "run.finished", lambda: _run_event(db, run_id))


def _run_event(db: sqlite_utils.Database, run_id: int) -> dict:
    row = db.conn.execute(
        "SELECT id, benchmark, model, status, errors, started_by, started_at, finished_at, summary FROM eval_runs "
        "WHERE id = ?",
        (run_id,),
    ).fetchone()
    return {
        "run_id": row["id"],
        **{k: row[k] for k in row.keys() if k not in ("id", "summary")},
        "summary": json.loads(row["summary"]),
    }


def close_interrupted_runs(database: Database) -> int:
    """Mark runs left ``running`` by a process that died (kill -9, power loss) as failed; returns how many.

    Call once at the app's start, before it serves: no run of this process can be in flight then. Their
    predictions are kept; the same run started again resumes from them. (A batch run started from the command
    line beside the starting app would be marked too, and then finish as usual.)"""
    with database.write() as db:
        cur = db.conn.execute(
            "UPDATE eval_runs SET status = 'failed', finished_at = ?, summary = ? WHERE status = 'running'",
            (utcnow(), json.dumps({"error": "interrupted: the server stopped during the run; run it again to resume"})),
        )
        return cur.rowcount


#: a live answer ("Ask a model") is stored as a run of one item (options ``live``) so that the leaderboards that
#: read runs count it; lists of runs a person reads leave it out (issue 44 §10)
NOT_LIVE = "COALESCE(json_extract(options, '$.live'), 0) = 0"


def list_runs(database: Database, limit: int = 50, include_live: bool = True) -> list[dict[str, Any]]:
    """Runs, newest first; ``include_live=False`` leaves out the one-item runs of live answers (:data:`NOT_LIVE`)."""
    where = "" if include_live else f"WHERE {NOT_LIVE} "
    rows = database.query(f"SELECT * FROM eval_runs {where}ORDER BY id DESC LIMIT ?", (limit,))
    for row in rows:
        row["summary"] = json.loads(row["summary"]) if row["summary"] else None
        row["options"] = json.loads(row["options"]) if row["options"] else None
    return rows


def _where(**equal: Any) -> tuple[str, list[Any]]:
    clauses = [f"{column} = ?" for column, value in equal.items() if value is not None]
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    return where, [value for value in equal.values() if value is not None]


def _write_jsonl(rows: list[dict[str, Any]], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        for row in rows:
            row["parsed"] = json.loads(row["parsed"]) if row["parsed"] else None
            row["judge"] = json.loads(row["judge"]) if row["judge"] else None
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def run_manifests(database: Database, keys: set[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """For each (model, benchmark, settings hash): the manifest of its latest finished run (None for rows
    stored before runs carried one)."""
    manifests = []
    for model, benchmark, shash in sorted(keys):
        run = database.query_one(
            "SELECT summary FROM eval_runs WHERE model = ? AND benchmark = ? AND settings_hash = ? "
            "AND status IN ('finished', 'finished with errors') ORDER BY id DESC LIMIT 1",
            (model, benchmark, shash),
        )
        summary = json.loads(run["summary"]) if run and run["summary"] else {}
        manifests.append(
            {"model": model, "benchmark": benchmark, "settings_hash": shash, "manifest": summary.get("manifest")}
        )
    return manifests


def export_predictions(database: Database, out: Path, model: str | None = None, benchmark: str | None = None) -> dict:
    """Write stored predictions (optionally of one model / benchmark) as JSON lines, one per row, and beside
    them ``<out>.manifest.json``: the run manifest of every (model, benchmark, settings hash) exported."""
    where, params = _where(model=model, benchmark=benchmark)
    rows = database.query(f"SELECT * FROM predictions {where} ORDER BY model, benchmark, item_id", params)
    _write_jsonl(rows, out)
    manifest = out.with_name(out.name + ".manifest.json")
    runs = run_manifests(database, {(r["model"], r["benchmark"], r["settings_hash"]) for r in rows})
    manifest.write_text(json.dumps({"exported_at": utcnow(), "runs": runs}, indent=1, ensure_ascii=False) + "\n")
    return {"path": str(out), "rows": len(rows), "manifest": str(manifest)}


def write_run_folder(
    database: Database, folder: Path, summary: dict[str, Any], item_keys: set[tuple[str, str]]
) -> dict[str, str]:
    """A run's export (``eval --out``): ``summary.json``, ``manifest.json`` and the rows of its items
    (``item_keys``: item id and prompt hash) as JSON lines."""
    folder.mkdir(parents=True, exist_ok=True)
    manifest = summary.get("manifest") or {}
    where, params = _where(
        model=summary["model"], benchmark=summary["benchmark"], settings_hash=manifest["key"]["settings_hash"]
    )
    rows = database.query(f"SELECT * FROM predictions {where} ORDER BY item_id", params)
    _write_jsonl([r for r in rows if (r["item_id"], r["prompt_hash"]) in item_keys], folder / "predictions.jsonl")
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    (folder / "summary.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False, default=str) + "\n")
    return {name: str(folder / name) for name in ("summary.json", "manifest.json", "predictions.jsonl")}
