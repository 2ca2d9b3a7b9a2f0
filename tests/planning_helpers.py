"""Shared set-up for the planning tests: a database with ViLPAct and its 510 planning questions."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from backend.context import AppContext, build_context
from backend.planning.questions import import_planning
from backend.settings import Settings
from backend.vilpact.importer import import_vilpact


def planning_context(tmp: Path, vilpact_dir: Path, **settings) -> AppContext:
    ctx = build_context(Settings(data_dir=tmp / "data", demo_content=False, **settings))
    import_vilpact(ctx.database, vilpact_dir, add_to_pool=False)
    import_planning(ctx.database, vilpact_dir, annotators_per_question=ctx.settings.planning_annotators_per_question)
    return ctx


def hashing_embed(texts: list[str], dim: int = 64) -> np.ndarray:
    """A deterministic bag-of-words embedding (no model download): unit rows, cosine = word overlap."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in text.lower().replace("/", " ").split():
            out[row, sum(map(ord, word)) % dim] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms == 0, 1, norms)
