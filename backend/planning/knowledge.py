"""The knowledge base of the planning baselines: ViLPAct's train and validation sequences (paper §3,
"Multimodal knowledge base"), each with its observed/future split and its crowd intents."""

from __future__ import annotations

import json
from dataclasses import dataclass

from backend.errors import NotFound
from backend.storage import Database

FPS = 24.0


@dataclass(frozen=True)
class KBEntry:
    sequence_id: str
    actions: tuple[str, ...]
    observed_count: int
    intents: tuple[str, ...]

    @property
    def future(self) -> tuple[str, ...]:
        return self.actions[self.observed_count :]


def observed_count(starts: list[float], ob_end_frame: int | None) -> int:
    """Actions that start inside the observed window (``start <= ob_end_frame / 24``); the paper: "an action
    of a sequence [is initial if it] starts before the end time of the initial state". This rule reproduces
    the released ``ob_act_seq`` of 2,902 of the 2,912 sequences.

    >>> observed_count([0.0, 1.4, 6.3, 23.8], 168)   # window ends at 7.0 s
    3
    """
    if ob_end_frame is None:
        return 0
    end = ob_end_frame / FPS
    return sum(1 for s in starts if s <= end)


def build_knowledge_base(
    database: Database, splits: tuple[str, ...] = ("train", "val"), exclude: set[str] | None = None
) -> list[KBEntry]:
    """Sequences of ``splits`` with their imported and live intents (concrete and high-level)."""
    marks = ",".join("?" for _ in splits)
    rows = database.query(
        f"SELECT id, actions, ob_end_frame FROM sequences WHERE split IN ({marks}) ORDER BY id", splits
    )
    if not rows:
        raise NotFound("the knowledge base is empty: import ViLPAct first (python -m backend import vilpact DIR)")
    intents: dict[str, list[str]] = {}
    for row in database.query(
        "SELECT sequence_id, concrete_intent, high_level_intent FROM annotations ORDER BY sequence_id, id"
    ):
        for text in (row["concrete_intent"], row["high_level_intent"]):
            if text and text not in intents.setdefault(row["sequence_id"], []):
                intents[row["sequence_id"]].append(text)
    entries = []
    for row in rows:
        if exclude and row["id"] in exclude:
            continue
        actions = json.loads(row["actions"])
        ids = tuple(a["class_id"] for a in actions)
        count = observed_count([float(a["start"]) for a in actions], row["ob_end_frame"])
        entries.append(KBEntry(row["id"], ids, count, tuple(intents.get(row["id"], ()))))
    return entries
