"""Read model of ViLPAct action sequences (shared by intent annotation, review and planning)."""

from __future__ import annotations

import json
from dataclasses import dataclass

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
    actions = tuple(Action(a["class_id"], a["name"], float(a["start"]), float(a["end"])) for a in json.loads(row["actions"]))
    return Sequence(
        row["id"], row["video_id"], actions, row["scene"], row["split"], row["source"], row["video_path"],
        row["ob_start_frame"], row["ob_end_frame"],
    )


def get_sequence(database: Database, sequence_id: str) -> Sequence:
    row = database.query_one("SELECT * FROM sequences WHERE id = ?", (sequence_id,))
    if row is None:
        raise NotFound(f"there is no action sequence {sequence_id!r}")
    return _from_row(row)


def count_sequences(database: Database) -> dict[str, int]:
    return {r["source"]: r["n"] for r in database.query("SELECT source, count(*) AS n FROM sequences GROUP BY source")}
