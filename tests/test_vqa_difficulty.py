"""Difficulty levels from panel votes (paper section 3.1), their scaling to other panel sizes, and
composing a benchmark from a target mix of levels and categories."""

from __future__ import annotations

import zipfile
from dataclasses import replace

import pytest

from backend.accounts import auth
from backend.errors import PermissionDenied, ValidationError
from backend.vqa.compose import compose_and_export
from backend.vqa.demo import ensure_vqa_demo
from backend.vqa.difficulty import compose_benchmark, difficulty_level, level_thresholds
from backend.vqa.items import list_items, make_item


def test_six_model_bands_follow_the_paper_and_other_sizes_scale():
    assert level_thresholds(6) == {"super_hard": [0], "hard": [1, 2], "medium": [3, 4], "easy": [5, 6]}
    assert level_thresholds(3) == {"super_hard": [0], "hard": [1], "medium": [2], "easy": [3]}
    assert level_thresholds(12) == {
        "super_hard": [0],
        "hard": [1, 2, 3, 4],
        "medium": [5, 6, 7, 8],
        "easy": [9, 10, 11, 12],
    }
    assert difficulty_level(1, 1) == "easy"
    with pytest.raises(ValidationError):
        difficulty_level(7, 6)


def _pool():
    items = []
    for level, count in (("easy", 6), ("medium", 4), ("hard", 3), ("super_hard", 1)):
        for k in range(count):
            category = "Object Perception" if k % 2 == 0 else "Relation Reasoning"
            item = make_item(
                category=category,
                question="q",
                options=["a", "b"],
                answer="A",
                choice_type="single",
                images=["x.png"],
                item_id=f"{level}-{k}",
            )
            items.append(replace(item, difficulty_level=level))
    return items


def test_compose_matches_the_target_mix():
    composition = compose_benchmark(
        _pool(), 6, {"hard": 1, "medium": 1, "easy": 1}, {"Object Perception": 1, "Relation Reasoning": 1}
    )
    assert composition.shortfall == 0 and len(composition.item_ids) == 6
    levels = [i.split("-")[0] for i in composition.item_ids]
    assert levels.count("hard") == levels.count("medium") == levels.count("easy") == 2
    assert composition.achieved["hard"]["Object Perception"] == 1


def test_compose_tops_up_within_a_level_and_reports_what_is_missing():
    composition = compose_benchmark(_pool(), 4, {"super_hard": 1}, {"Relation Reasoning": 1})
    # One super-hard item exists, in Object Perception: it is taken to top up; 3 are missing.
    assert composition.item_ids == ["super_hard-0"] and composition.shortfall == 3
    with pytest.raises(ValidationError, match="unknown level"):
        compose_benchmark(_pool(), 4, {"trivial": 1})


def test_compose_and_export_writes_an_importable_zip(ctx, tmp_path):
    ensure_vqa_demo(ctx)
    auth.add_user(ctx.database, "rev", "reviewer", "password123")
    auth.add_user(ctx.database, "ann", "annotator", "password123")
    with ctx.database.write() as db:
        db.conn.execute("UPDATE vqa_items SET difficulty_level = 'easy' WHERE id LIKE 'demo-%'")
    result = compose_and_export(ctx.database, ctx.settings, "rev", tmp_path, total=5, level_mix={"easy": 1})
    assert result["items"] == 5 and result["shortfall"] == 0
    names = zipfile.ZipFile(result["zip"]).namelist()
    assert "questions.json" in names and sum(n.startswith("images/0") for n in names) == 5
    with pytest.raises(PermissionDenied):
        compose_and_export(ctx.database, ctx.settings, "ann", tmp_path, total=5, level_mix={"easy": 1})
    assert len(list_items(ctx.database)) == 17
