"""Compose a benchmark (a subset matching a target mix of difficulty levels and categories, paper
section 3.1: "the overall difficulty of the dataset is then controlled by adjusting the ratio of questions
at each difficulty level") and export it in either import layout, zipped for download."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from backend.accounts import auth
from backend.settings import Settings
from backend.storage import Database
from backend.vqa.difficulty import compose_benchmark, level_distribution
from backend.vqa.io import export_items
from backend.vqa.items import list_items


def difficulty_overview(database: Database, username: str | None, status: str = "verified") -> dict[str, int]:
    """Items per difficulty level (and ``unrated``), for the distribution chart."""
    auth.require_role(database, username, "annotator")
    return level_distribution(list_items(database, status=status))


def compose_and_export(
    database: Database,
    settings: Settings,
    username: str | None,
    out_dir: Path | str,
    *,
    total: int,
    level_mix: Mapping[str, float],
    category_mix: Mapping[str, float] | None = None,
    fmt: str = "released",
    seed: int = 0,
) -> dict[str, Any]:
    """Pick the subset from verified, rated items and write ``<out_dir>/benchmark.zip`` (reviewers)."""
    auth.require_role(database, username, "reviewer")
    composition = compose_benchmark(list_items(database, status="verified"), total, level_mix, category_mix, seed)
    out_dir = Path(out_dir)
    folder = out_dir / "benchmark"
    if folder.exists():
        shutil.rmtree(folder)
    export_items(database, settings, folder, fmt, ids=composition.item_ids)
    archive = shutil.make_archive(str(out_dir / "benchmark"), "zip", root_dir=folder)
    return {
        "zip": archive,
        "items": len(composition.item_ids),
        "shortfall": composition.shortfall,
        "achieved": composition.achieved,
        "targets": composition.targets,
    }
