"""One report across the three benchmarks (issue 14, part 6) on the demo content, with the random and blind
baselines run for real, and every export read back: CSV with pandas, JSON, LaTeX (booktabs), Markdown, SVG as
XML (one bar per category and series), PNG with Pillow."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
import zipfile

import pandas as pd
import pytest
from PIL import Image

from backend.accounts import auth
from backend.context import build_context
from backend.errors import NotFound, PermissionDenied, ValidationError
from backend.reporting.below_chance import below_chance_report
from backend.reporting.exports import write_report
from backend.reporting.plots import PNG_SCALE
from backend.reporting.report import build_report
from backend.settings import Settings

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo's planning questions, VQA items and in-context sets, with real runs of the baselines."""
    from backend.icl.demo import ensure_icl_demo
    from backend.icl.evaluation import evaluate_by_category
    from backend.inference.runner import run_eval
    from backend.vilpact.demo import ensure_vilpact_demo
    from backend.vqa.demo import ensure_vqa_demo
    from backend.vqa.models import run_model

    ctx = build_context(Settings(data_dir=tmp_path_factory.mktemp("report") / "data", demo_content=False))
    ensure_vilpact_demo(ctx)
    ensure_vqa_demo(ctx)
    ensure_icl_demo(ctx)
    auth.add_user(ctx.database, "rev", "reviewer", "password1")
    for model in ("random", "bigram-prior"):
        run_eval(ctx, "vilpact-planning", model, limit=40, load_options={"mode": "text"})
    run_eval(ctx, "vilpact-planning", "random", limit=30, load_options={"mode": "text", "circular": True})  # 5 x 6
    run_model(ctx, "rev", "random")
    run_model(ctx, "rev", "random", blind=True)
    evaluate_by_category(ctx, "random", {"n": 2}, limit=6)
    evaluate_by_category(ctx, "random", {"n": "2", "order": "structure_closer"}, limit=6)  # the same setting, named so
    return ctx


@pytest.fixture(scope="module")
def report(demo):
    return build_report(demo, "rev", "random")


def test_the_report_reads_each_benchmark_s_own_results(demo, report):
    from backend.icl.evaluation import category_breakdown
    from backend.planning.leaderboard import leaderboard
    from backend.vqa.runs import leaderboard as vqa_leaderboard

    planning = {row["model"]: row for row in report.table("planning").rows}
    assert list(planning) == ["chance", "random", "bigram-prior"]  # the blind prior always beside the models
    board = leaderboard(demo.database, "bigram-prior", False, demo.settings.bootstrap_samples, demo)["runs"]
    assert planning["random"]["accuracy (%)"] == round(100 * board["random"]["accuracy"], 1)
    assert planning["random"]["ci95 low"] == round(100 * board["random"]["ci95"][0], 1)
    assert planning["random"]["run"] == "40 of 510" and planning["bigram-prior"]["kind"] == "blind baseline"
    assert planning["random"]["circular n"] == 5  # the five questions asked under all six rotations
    assert {r["length"] for r in report.table("planning_by_length").rows} <= {"1", "2", "3", "4+"}

    vqa = {row["run"]: row for row in report.table("vqa").rows}
    assert list(vqa) == ["Random choice", "random", "random [blind]"]
    expected = {r["name"]: r for r in vqa_leaderboard(demo, "rev")}
    assert vqa["random"]["overall (%)"] == expected["random"]["overall"]
    assert vqa["Random choice"]["Perception"] == expected["Random choice"]["Perception"]
    assert report.table("vqa_categories").columns[:3] == ["run", "Attr-P", "Obj-P"]

    icl = report.table("icl").rows
    found = category_breakdown(demo, "random", {"n": 2}, 6)
    assert {(r["category"], r["exact match (%)"]) for r in icl} == {
        (c, round(100 * v, 1)) for c, v in found["exact_match_by_category"].items() if c != "all"
    }
    assert sum(r["n"] for r in icl) == 6 and icl[0]["setting"] == "full_similarity · n=2 · structure_closer"

    outcomes = {(r["benchmark"], r["model"]) for r in report.table("outcomes").rows}
    assert {("planning", "random"), ("planning", "bigram-prior"), ("vqa", "random [blind]")} <= outcomes
    assert report.sections["manifest"]["models"]["random"]["settings_hash"]["mmcomposition"]
    assert set(report.charts) >= {"planning_accuracy", "vqa_categories", "icl_categories", "vqa_option_counts"}


def test_every_export_reads_back(report, tmp_path):
    files = write_report(report, tmp_path / "out")
    for table in report.tables:
        frame = pd.read_csv(tmp_path / "out" / "tables" / f"{table.name}.csv")
        assert list(frame.columns) == table.columns and len(frame) == len(table.rows)
    planning = pd.read_csv(tmp_path / "out" / "tables" / "planning.csv")
    assert (
        planning.loc[planning["model"] == "random", "accuracy (%)"].item()
        == report.table("planning").rows[1]["accuracy (%)"]
    )

    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert data["tables"]["vqa"]["rows"] == json.loads(json.dumps(report.table("vqa").rows))
    assert "random" in data["planning"]["runs"] and data["manifest"]["models"]["random"]["fingerprint"]

    latex = (tmp_path / "out" / "report.tex").read_text()
    assert latex.count(r"\begin{tabular}") == len([t for t in report.tables if t.rows])
    for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert latex.count(rule) == latex.count(r"\begin{tabular}")
    assert r"accuracy (\%)" in latex

    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "| model | kind | run | accuracy (%) |" in markdown and "| random [blind] |" in markdown

    root = ET.parse(tmp_path / "out" / "plots" / "vqa_categories.svg").getroot()
    bars = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "bar"]
    categories = report.table("vqa_categories").columns[1:]
    for series in ("Random choice", "random", "random [blind]"):
        mine = [b for b in bars if b.get("data-series") == series]
        assert [b.get("data-category") for b in mine] == categories  # one bar per category
    random_row = report.table("vqa_categories").rows[0]
    assert {
        b.get("data-category"): float(b.get("data-value")) for b in bars if b.get("data-series") == "Random choice"
    } == {c: random_row[c] for c in categories}
    intervals = ET.parse(tmp_path / "out" / "plots" / "planning_accuracy.svg").getroot()
    assert {g.get("data-label") for g in intervals.iter(f"{SVG}g") if g.get("class") == "interval"} == {
        "random",
        "bigram-prior",
    }

    for svg_path in files["svg"]:
        svg = ET.parse(svg_path).getroot()
        with Image.open(svg_path.replace(".svg", ".png")) as png:
            assert png.size == (int(svg.get("width")) * PNG_SCALE, int(svg.get("height")) * PNG_SCALE)
    with zipfile.ZipFile(files["zip"]) as archive:
        assert {"report.json", "report.md", "report.tex", "tables/planning.csv", "plots/vqa_categories.png"} <= set(
            archive.namelist()
        )


def test_the_report_refuses_what_it_cannot_do(demo):
    auth.add_user(demo.database, "ann", "annotator", "password1")
    with pytest.raises(ValidationError, match="choose at least one model"):
        build_report(demo, "rev", " , ")
    with pytest.raises(NotFound, match="valid models"):
        build_report(demo, "rev", "no-such-model")
    with pytest.raises(PermissionDenied):
        build_report(demo, "ann", "random")


def test_below_chance_tables_and_charts_by_hand():
    """Appendix A.4: three questions, two below their category's random score."""
    per_question = [
        {
            "id": "a",
            "category": "Object Perception",
            "options": 4,
            "difficulty_level": None,
            "cpv": 0.0,
            "category_random": 0.25,
        },
        {
            "id": "b",
            "category": "Object Perception",
            "options": 2,
            "difficulty_level": "hard",
            "cpv": 0.5,
            "category_random": 0.25,
        },
        {
            "id": "c",
            "category": "VL Composition Probing",
            "options": 4,
            "difficulty_level": None,
            "cpv": 0.1,
            "category_random": 0.2,
        },
    ]
    analysis = {
        "per_question": per_question,
        "below_chance": [per_question[0], per_question[2]],
        "option_counts": {2: 1, 4: 2},
        "option_counts_below": {4: 2},
    }
    tables, charts = below_chance_report(analysis)
    options, categories, questions = tables
    assert options.rows == [
        {"options": 2, "questions": 1, "below chance": 0, "share below (%)": 0.0},
        {"options": 4, "questions": 2, "below chance": 2, "share below (%)": 100.0},
    ]
    assert categories.rows == [
        {"category": "Obj-P", "questions": 2, "below chance": 1, "models' mean CPV (%)": 25.0, "random (%)": 25.0},
        {"category": "Prob", "questions": 1, "below chance": 1, "models' mean CPV (%)": 10.0, "random (%)": 20.0},
    ]
    assert [row["id"] for row in questions.rows] == ["a", "c"]
    assert charts["vqa_option_counts"].series[1] == ("below chance", [0.0, 2.0])
    assert charts["vqa_below_chance"].categories == ["Obj-P", "Prob"]


def test_report_command_writes_every_export(demo, tmp_path, capsys):
    from backend.cli import main

    auth.add_user(demo.database, "boss", "admin", "password1")  # the CLI acts as the first admin
    assert (
        main(["report", "--data-dir", str(demo.settings.data_dir), "--models", "random", "--out", str(tmp_path / "r")])
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert (
        printed["files"]["md"].endswith("report.md") and (tmp_path / "r" / "plots" / "planning_accuracy.svg").exists()
    )
    assert main(["report", "--data-dir", str(demo.settings.data_dir), "--models", "nobody"]) == 2
    assert "unknown model" in capsys.readouterr().err
