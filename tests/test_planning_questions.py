"""Import of the 510 released planning questions, reading them back, and the export round trip."""

from __future__ import annotations

import json

import pytest

from backend.errors import ImportFileError, NotFound
from backend.planning.catalog import load_catalog
from backend.planning.questions import export_planning, get_question, import_planning, list_questions
from tests.conftest import VILPACT_DATA
from tests.planning_helpers import planning_context


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    return planning_context(tmp_path_factory.mktemp("questions"), VILPACT_DATA)


def test_all_510_released_questions_import(ctx):
    questions = list_questions(ctx.database)
    assert len(questions) == 510
    q = get_question(ctx.database, "ZH4JE")
    catalog = load_catalog(ctx.database)
    assert (q.ob_start_frame, q.ob_end_frame) == (1, 168)
    assert q.intent == "S/He wants to learn something"
    assert q.answer_index == 1 and catalog.names(q.answer) == ["Taking a book from somewhere", "Opening a book"]
    assert q.scene == "Kitchen" and q.status == "released"
    assert ctx.database.scalar("SELECT count(*) FROM tasks WHERE kind = 'planning'") == 510


def test_reimport_is_idempotent(ctx, vilpact_dir):
    report = import_planning(ctx.database, vilpact_dir)
    assert report["questions"] == 510 and report["added_to_pool"] == 0
    assert ctx.database.scalar("SELECT count(*) FROM planning_questions") == 510


def test_export_reproduces_the_released_layout(ctx, vilpact_dir, tmp_path):
    out = export_planning(ctx.database, tmp_path / "planning.json", source="vilpact")
    assert out["questions"] == 510
    exported = json.loads((tmp_path / "planning.json").read_text())
    released = json.loads((vilpact_dir / "qa_evaluation" / "planning_evaluate_data.json").read_text())
    assert exported == released


def test_import_needs_the_classes_first(tmp_path, vilpact_dir):
    from backend.context import build_context
    from backend.settings import Settings

    empty = build_context(Settings(data_dir=tmp_path / "d", demo_content=False))
    with pytest.raises(NotFound, match="import ViLPAct first"):
        import_planning(empty.database, vilpact_dir)


def test_a_malformed_release_names_the_file_and_question(ctx, tmp_path, vilpact_dir):
    folder = tmp_path / "bad" / "qa_evaluation"
    folder.mkdir(parents=True)
    data = json.loads((vilpact_dir / "qa_evaluation" / "planning_evaluate_data.json").read_text())
    first = next(iter(data))
    data[first]["choices"][2][1] = "Juggling knives,Opening a book"
    (folder / "planning_evaluate_data.json").write_text(json.dumps(data))
    with pytest.raises(ImportFileError, match=f"question {first} choice 2: unknown action 'Juggling knives'"):
        import_planning(ctx.database, tmp_path / "bad")
    (folder / "planning_evaluate_data.json").write_text("{not json")
    with pytest.raises(ImportFileError, match="line 1: not valid JSON"):
        import_planning(ctx.database, tmp_path / "bad")
