"""Controlled comparisons (issue 14, part 5): one model over a grid of one setting, with paired tests checked
against a worked example by hand."""

from __future__ import annotations

import math

import pytest

from backend.accounts import auth
from backend.errors import ValidationError
from backend.inference.registry import ModelSpec
from backend.reporting.exports import write_report
from backend.reporting.grids import grid_report, run_grid


@pytest.fixture
def reviewer(ctx):
    auth.add_user(ctx.database, "rev", "reviewer", "password1")
    ctx.models.register_model(ModelSpec("sighted", "python", "report_helpers:sighted_factory", max_image_side=32))
    return "rev"


def test_image_size_grid_matches_the_worked_example(ctx, reviewer, tmp_path):
    result = run_grid(ctx, reviewer, "sighted", "toy-colors", "image_size", "32,64,128", limit=16)
    runs = result["runs"]
    # by hand, items 0..15: 32 px right on the 8 even ones, 64 px on items 0..11, 128 px on all 16
    assert [runs[v]["correct"] for v in result["values"]] == [8, 12, 16]
    assert [runs[v]["accuracy"] for v in result["values"]] == [0.5, 0.75, 1.0]
    pairs = {(p["model_a"], p["model_b"]): p for p in result["comparison"]["pairs"]}
    assert result["comparison"]["common_items"] == 16
    a = pairs[("max_image_side=32", "max_image_side=64")]
    # 32 only right on items 12 and 14; 64 only right on the odd items below 12 (6 of them):
    # n = 8, P[X <= 2] = (1 + 8 + 28) / 256, p = 74/256
    assert (a["a_only_right"], a["b_only_right"]) == (2, 6)
    assert a["p_value"] == pytest.approx(74 / 256, abs=1e-6)
    assert a["difference"] == -0.25
    assert a["cohens_h"] == pytest.approx(2 * math.asin(math.sqrt(0.5)) - 2 * math.asin(math.sqrt(0.75)), abs=1e-4)
    b = pairs[("max_image_side=32", "max_image_side=128")]  # 0 vs 8: p = 2 / 256
    c = pairs[("max_image_side=64", "max_image_side=128")]  # 0 vs 4: p = 2 / 16
    assert (b["a_only_right"], b["b_only_right"], c["a_only_right"], c["b_only_right"]) == (0, 8, 0, 4)
    assert (b["p_value"], c["p_value"]) == pytest.approx((2 / 256, 2 / 16), abs=1e-6)  # p-values kept to 6 places
    # Holm: 0.0078125 * 3 = 0.0234375, 0.125 * 2 = 0.25, 0.2890625 * 1 -> running maximum 0.2890625
    assert (b["p_holm"], c["p_holm"], a["p_holm"]) == pytest.approx((0.0234375, 0.25, 0.2890625), abs=1e-6)
    # each value is its own prediction in the store: a second grid computes nothing
    again = run_grid(ctx, reviewer, "sighted", "toy-colors", "image_size", "32,64,128", limit=16)
    assert [r["newly_computed"] for r in again["runs"].values()] == [0, 0, 0]
    smaller = run_grid(ctx, reviewer, "sighted", "toy-colors", "image_size", "32,64", limit=8)
    assert smaller["comparison"]["common_items"] == 8  # the first 8 items only, though 16 are stored
    assert [r["correct"] for r in smaller["runs"].values()] == [4, 8]
    hashes = ctx.database.query("SELECT DISTINCT settings_hash FROM predictions WHERE model = 'sighted'")
    assert len(hashes) == 3
    report = grid_report(result)
    assert [row["fully right (%)"] for row in report.table("grid").rows] == [50.0, 75.0, 100.0]
    assert report.table("grid_pairs").rows[0]["value A"] == "max_image_side=32"
    files = write_report(report, tmp_path / "grid")
    assert any(path.endswith("grid_pairs.csv") for path in files["csv"])


def test_planning_input_grid_pairs_text_and_frames_on_the_same_questions(ctx, reviewer):
    from backend.vilpact.demo import ensure_vilpact_demo

    ensure_vilpact_demo(ctx)
    result = run_grid(ctx, reviewer, "random", "planning", "input", "frames,text", limit=12)
    assert result["runs"]["input=text"]["n"] == 12
    assert result["comparison"]["common_items"] == 12  # q and q#text-r0 are the same question


@pytest.mark.parametrize(
    ("benchmark", "setting", "values", "message"),
    [
        ("toy-colors", "image_size", "64", "at least two different values"),
        ("toy-colors", "image_size", "64,big", "whole numbers"),
        ("vqa", "icl_order", "random,atom_closer", "applies to the icl benchmark"),
        ("toy-colors", "input", "frames,text", "applies to planning and VQA"),
        ("toy-colors", "resolution", "1,2", "unknown grid setting"),
    ],
)
def test_grid_mistakes_say_what_to_do(ctx, reviewer, benchmark, setting, values, message):
    with pytest.raises(ValidationError, match=message):
        run_grid(ctx, reviewer, "sighted", benchmark, setting, values)


def test_grid_needs_a_reviewer(ctx, reviewer):
    from backend.errors import PermissionDenied

    auth.add_user(ctx.database, "ann", "annotator", "password1")
    with pytest.raises(PermissionDenied):
        run_grid(ctx, "ann", "sighted", "toy-colors", "image_size", "32,64")


def test_frames_and_image_size_reach_the_run_settings_not_the_app_s(ctx, reviewer):
    from backend.inference.registry import get_spec
    from backend.reporting.grids import grid_point

    point = grid_point(ctx, "sighted", "vilpact-planning", "frames", "4", {})
    assert point.ctx.settings.planning_frames == 4 and get_spec(point.ctx, "sighted").frames_per_video == 4
    sized = grid_point(ctx, "sighted", "toy-colors", "image_size", "96", {})
    assert get_spec(sized.ctx, "sighted").max_image_side == 96
    assert get_spec(ctx, "sighted").max_image_side == 32 and ctx.settings.planning_frames == 8  # untouched
    assert get_spec(point.ctx, "sighted").fingerprint() != get_spec(ctx, "sighted").fingerprint()
