"""The prediction store: one row per (model, benchmark, item, prompt hash, generation settings).

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

from backend.inference.parsing import ParsedAnswer
from backend.inference.registry import ModelSpec
from backend.inference.request import GenerationParams
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


def settings_hash(spec: ModelSpec, params: GenerationParams) -> str:
    """What besides the prompt decides an answer: the model's fingerprint and the decoding settings."""
    blob = json.dumps({"model": spec.fingerprint(), "params": params.as_dict()}, sort_keys=True, default=str)
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
    with database.write() as db:
        db.conn.execute(
            "UPDATE eval_runs SET finished_at = ?, status = ?, summary = ? WHERE id = ?",
            (utcnow(), status, json.dumps(summary, default=str), run_id),
        )


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


def list_runs(database: Database, limit: int = 50) -> list[dict[str, Any]]:
    rows = database.query("SELECT * FROM eval_runs ORDER BY id DESC LIMIT ?", (limit,))
    for row in rows:
        row["summary"] = json.loads(row["summary"]) if row["summary"] else None
        row["options"] = json.loads(row["options"]) if row["options"] else None
    return rows


def export_predictions(database: Database, out: Path, model: str | None = None, benchmark: str | None = None) -> dict:
    """Write stored predictions (optionally of one model / benchmark) as JSON lines, one per row."""
    clauses, params = [], []
    for column, value in (("model", model), ("benchmark", benchmark)):
        if value:
            clauses.append(f"{column} = ?")
            params.append(value)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    rows = database.query(f"SELECT * FROM predictions {where} ORDER BY model, benchmark, item_id", params)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        for row in rows:
            row["parsed"] = json.loads(row["parsed"]) if row["parsed"] else None
            row["judge"] = json.loads(row["judge"]) if row["judge"] else None
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return {"path": str(out), "rows": len(rows)}
