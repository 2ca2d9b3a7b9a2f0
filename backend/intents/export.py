"""Export submitted intent annotations: one row per annotation, as JSONL, CSV or Parquet."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from backend.accounts import auth
from backend.errors import ValidationError
from backend.settings import Settings
from backend.storage import Database, utcnow

FORMATS = ("jsonl", "csv", "parquet")
COLUMNS = [
    "sequence_id",
    "annotator",
    "concrete_intent",
    "high_level_intent",
    "round",
    "submitted_at",
    "source",
    "seconds_spent",
    "scene",
    "split",
]


def intents_frame(database: Database, source: str | None = None) -> pd.DataFrame:
    sql = """SELECT a.sequence_id, a.annotator, a.concrete_intent, a.high_level_intent, a.round, a.submitted_at,
                    a.source, a.seconds_spent, s.scene, s.split
             FROM annotations a JOIN sequences s ON s.id = a.sequence_id"""
    params: tuple = ()
    if source:
        sql += " WHERE a.source = ?"
        params = (source,)
    rows = database.query(sql + " ORDER BY a.sequence_id, a.source, a.submitted_at, a.annotator", params)
    return pd.DataFrame(rows, columns=COLUMNS)


def export_intents(database: Database, fmt: str, out: Path | str, source: str | None = None) -> dict:
    if fmt not in FORMATS:
        raise ValidationError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    frame = intents_frame(database, source)
    tmp = out.with_name(out.name + ".part")
    if fmt == "jsonl":
        frame.to_json(tmp, orient="records", lines=True, force_ascii=False)
    elif fmt == "csv":
        frame.to_csv(tmp, index=False)
    else:
        frame.to_parquet(tmp, index=False)
    tmp.replace(out)
    return {"path": str(out), "rows": len(frame), "format": fmt}


def export_for_download(database: Database, settings: Settings, username: str | None, fmt: str) -> dict:
    """An admin's export from the web app, into ``<data>/exports/`` (never a path the caller chooses, never
    inside the served media folder)."""
    auth.require_role(database, username, "admin")
    stamp = utcnow().replace(":", "").replace("-", "")[:15]
    return export_intents(database, fmt, settings.data_dir / "exports" / f"intents-{stamp}.{fmt}")
