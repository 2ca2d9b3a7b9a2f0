"""Read model of ViLPAct action sequences (shared by intent annotation, review and planning)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from backend.errors import NotFound
from backend.storage import Database


@dataclass(frozen=True)
class Action:
    class_id: str
    name: str
    start: float
    end: float


@dataclass(frozen=True)
class Sequence:
    id: str
    video_id: str
    actions: tuple[Action, ...]
    scene: str | None
    split: str | None
    source: str
    video_path: str | None
    ob_start_frame: int | None
    ob_end_frame: int | None

    @property
    def action_names(self) -> list[str]:
        return [a.name for a in self.actions]

    def timeline(self) -> list[str]:
        """``action (start–end s)`` lines, in the order of the sequence."""
        return [f"{a.name} ({a.start:g}–{a.end:g} s)" for a in self.actions]


def _from_row(row: dict) -> Sequence:
    actions = tuple(
        Action(a["class_id"], a["name"], float(a["start"]), float(a["end"])) for a in json.loads(row["actions"])
    )
    return Sequence(
        row["id"],
        row["video_id"],
        actions,
        row["scene"],
        row["split"],
        row["source"],
        row["video_path"],
        row["ob_start_frame"],
        row["ob_end_frame"],
    )


def get_sequence(database: Database, sequence_id: str) -> Sequence:
    row = database.query_one("SELECT * FROM sequences WHERE id = ?", (sequence_id,))
    if row is None:
        raise NotFound(f"there is no action sequence {sequence_id!r}")
    return _from_row(row)


def count_sequences(database: Database) -> dict[str, int]:
    return {r["source"]: r["n"] for r in database.query("SELECT source, count(*) AS n FROM sequences GROUP BY source")}


STORED_COLUMNS = (
    "id",
    "video_id",
    "actions",
    "scene",
    "split",
    "act_seq_start",
    "act_seq_end",
    "ob_start_frame",
    "ob_end_frame",
    "video_path",
    "source",
    "imported_at",
)


def insert_sequences(conn: sqlite3.Connection, rows: Iterable[Mapping[str, Any]]) -> int:
    """Store action sequences inside the caller's write transaction (every importer and the demo use this one
    rule); returns how many ids were new.

    A row carries :data:`STORED_COLUMNS` (``actions`` as JSON text; ``video_path`` may be missing or None). The
    id is the sequence's identity: storing a known id again replaces its content (actions, scene, split, the
    sequence span and the observed window), keeps the video path it had when the new row has none, and never
    changes its ``source`` or ``imported_at``.
    """
    before = conn.execute("SELECT count(*) FROM sequences").fetchone()[0]
    conn.executemany(
        f"""INSERT INTO sequences ({", ".join(STORED_COLUMNS)})
           VALUES ({", ".join(":" + c for c in STORED_COLUMNS)})
           ON CONFLICT (id) DO UPDATE SET actions = excluded.actions, scene = excluded.scene,
               split = excluded.split, act_seq_start = excluded.act_seq_start, act_seq_end = excluded.act_seq_end,
               ob_start_frame = excluded.ob_start_frame, ob_end_frame = excluded.ob_end_frame,
               video_path = coalesce(excluded.video_path, sequences.video_path)""",
        [{"video_path": None, **row} for row in rows],
    )
    return conn.execute("SELECT count(*) FROM sequences").fetchone()[0] - before
