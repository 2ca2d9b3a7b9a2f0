"""ViLPAct import on the real release shipped in assets/vilpact, and malformed copies of it."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from backend.errors import ImportFileError
from backend.vilpact.importer import import_vilpact
from backend.vilpact.sequences import get_sequence, insert_sequences


def test_real_release_imports_and_reimport_is_idempotent(database, vilpact_dir):
    report = import_vilpact(database, vilpact_dir)
    assert (report.classes, report.sequences, report.imported_intents) == (157, 2912, 5824)
    assert report.split_counts == {"train": 1921, "val": 481, "test": 510}
    seq = get_sequence(database, "2NZ5C")
    assert seq.actions[0].class_id == "c155" and seq.actions[2].end == 33.0
    assert seq.timeline()[0] == "Someone is undressing (0–14.5 s)"
    strips = database.query_one("SELECT pre, post_add, args FROM action_classes WHERE id = 'c001'")
    assert strips == {
        "pre": "InHand(P,x)&Person(P)&Place(to)",
        "post_add": "At(x,to)&Reachable(P,x)",
        "args": "Clothes",
    }
    imported = database.query_one(
        "SELECT concrete_intent, high_level_intent FROM annotations WHERE sequence_id='2NZ5C' AND annotator='vilpact-crowd-1'"
    )
    assert imported == {
        "concrete_intent": "take off a shirt and wear another one",
        "high_level_intent": "S/He wants to change clothes",
    }
    counts = {
        t: database.scalar(f"SELECT count(*) FROM {t}") for t in ("sequences", "annotations", "tasks", "action_classes")
    }
    again = import_vilpact(database, vilpact_dir)
    assert again.added_to_pool == 0
    assert counts == {t: database.scalar(f"SELECT count(*) FROM {t}") for t in counts}
    # imported intents never count as live work
    assert database.scalar("SELECT count(*) FROM annotations WHERE source = 'live'") == 0


def _copy(vilpact_dir: Path, tmp_path: Path) -> Path:
    target = tmp_path / "release"
    shutil.copytree(vilpact_dir, target, ignore=shutil.ignore_patterns("prototype_feature", "qa_evaluation"))
    return target


def _rewrite_sequences(root: Path, edit) -> None:
    path = root / "gt_act_seq" / "all_gt_seq.csv"
    rows = list(csv.reader(path.open(encoding="utf-8")))
    edit(rows)
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)


def _truncate(rows):
    rows[5] = rows[5][:6]


def _bad_time(rows):
    rows[3][1] = "c063 21.2 15.7"


def _unknown_class(rows):
    rows[7][1] = "c999 0.0 3.0;" + rows[7][1]


def _wrong_columns(rows):
    rows[0][3] = "intent_one"


def _not_a_number(rows):
    rows[9][5] = "soon"


@pytest.mark.parametrize(
    ("edit", "line", "message"),
    [
        (_truncate, 6, "expected 12 fields, found 6"),
        (_bad_time, 4, "bad time: action c063 ends (15.7) before it starts (21.2)"),
        (_unknown_class, 8, "unknown action class id 'c999'"),
        (_wrong_columns, 1, "wrong columns: missing intention_1"),
        (_not_a_number, 10, "act_seq_start 'soon' is not a number"),
    ],
)
def test_malformed_sequences_name_file_line_problem_and_import_nothing(
    database, vilpact_dir, tmp_path, edit, line, message
):
    root = _copy(vilpact_dir, tmp_path)
    _rewrite_sequences(root, edit)
    with pytest.raises(ImportFileError) as caught:
        import_vilpact(database, root)
    text = str(caught.value)
    assert "all_gt_seq.csv" in text and message in text and text.endswith("Nothing was imported.")
    if line is not None:
        assert caught.value.line == line
    assert database.scalar("SELECT count(*) FROM sequences") == 0
    assert database.scalar("SELECT count(*) FROM action_classes") == 0


def test_non_utf8_bytes_are_reported_with_their_line(database, vilpact_dir, tmp_path):
    root = _copy(vilpact_dir, tmp_path)
    path = root / "gt_act_seq" / "all_gt_seq.csv"
    lines = path.read_bytes().split(b"\n")
    lines[11] = lines[11].replace(b"Kitchen", b"K\xe9itchen").replace(b"Bedroom", b"B\xe9droom")
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(ImportFileError, match=r"line 12: not UTF-8 text \(byte 0xe9\)"):
        import_vilpact(database, root)
    assert database.scalar("SELECT count(*) FROM sequences") == 0


def test_bad_class_file_and_missing_folder(database, vilpact_dir, tmp_path):
    root = _copy(vilpact_dir, tmp_path)
    with (root / "Charades_v1_classes.txt").open("a") as handle:
        handle.write("not a class line\n")
    with pytest.raises(ImportFileError, match="Charades_v1_classes.txt, line 158: expected 'cNNN name'"):
        import_vilpact(database, root)
    with pytest.raises(ImportFileError, match="not a folder"):
        import_vilpact(database, tmp_path / "nowhere")


def test_videos_are_found_by_charades_naming(database, vilpact_dir, tmp_path):
    videos = tmp_path / "videos"
    videos.mkdir()
    (videos / "2NZ5C.mp4").write_bytes(b"not really a video")
    report = import_vilpact(database, vilpact_dir, videos=videos)
    assert report.with_video == 1
    assert get_sequence(database, "2NZ5C").video_path == str((videos / "2NZ5C.mp4").resolve())


def test_one_rule_for_storing_a_known_sequence_id(database):
    """Every writer of sequences (importers, demo) goes through insert_sequences: new ids count, a known id gets
    the new content, keeps its video when the new row has none, and keeps its source."""
    row = {
        "id": "S1",
        "video_id": "S1",
        "actions": "[]",
        "scene": "Kitchen",
        "split": "train",
        "act_seq_start": 0,
        "act_seq_end": 10,
        "ob_start_frame": 0,
        "ob_end_frame": 48,
        "video_path": "/videos/S1.mp4",
        "source": "vilpact",
        "imported_at": "2026-01-01T00:00:00Z",
    }
    with database.write() as db:
        assert insert_sequences(db.conn, [row]) == 1
    with database.write() as db:
        again = {**row, "scene": "Bedroom", "video_path": None, "source": "dataset", "imported_at": "later"}
        assert insert_sequences(db.conn, [again, {**row, "id": "S2", "video_id": "S2"}]) == 1
    stored = database.query_one("SELECT scene, video_path, source, imported_at FROM sequences WHERE id = 'S1'")
    assert stored == {
        "scene": "Bedroom",
        "video_path": "/videos/S1.mp4",
        "source": "vilpact",
        "imported_at": "2026-01-01T00:00:00Z",
    }
