"""Algorithm 1 on real Charades annotations (issue 39): 39 training videos of ViLPAct (tests/data/charades_real,
origin in its README) whose released rows must come back column for column under the default settings."""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import pytest

from backend.settings import Settings
from backend.vilpact.charades import CharadesFiles, import_charades, read_class_names, read_videos
from backend.vilpact.charades_pool import build_extractor
from backend.vilpact.release_check import measure, read_rows, released_videos

DATA = Path(__file__).parent / "data"
REAL = DATA / "charades_real"
CLASSES = DATA / "charades" / "Charades_v1_classes.txt"


@pytest.fixture(scope="module")
def extractor():
    return build_extractor(Settings(), read_class_names(CLASSES))


@pytest.fixture(scope="module")
def cut():
    videos = read_videos([REAL / "Charades_v1_actions_cut.csv"], read_class_names(CLASSES))
    return videos, released_videos(videos, read_rows(REAL / "all_gt_seq_cut.csv"))


def test_every_released_row_of_the_real_cut_comes_back_column_for_column(extractor, cut):
    videos, released = cut
    assert len(videos) == len(released) == 39
    by_id = {v.id: v for v in videos}
    for video in released:
        extraction = extractor.run(by_id[video.video_id])
        assert extraction.kept, video.video_id
        row = extractor.row(extraction, video.row["scene"])
        assert {c: row[c] for c in row} == {c: video.row[c] for c in row}, video.video_id


def test_the_measure_counts_the_cut_as_all_exact(extractor, cut):
    videos, released = cut
    by_id = {v.id: v for v in videos}
    found = measure(released, lambda vid, _acts: extractor.run(by_id[vid]).chosen)
    assert (found.exact, found.precision, found.recall) == (39, 1.0, 1.0)


def test_the_release_merges_two_overlapping_segments_of_one_class(extractor, cut):
    videos, _released = cut
    video = next(v for v in videos if v.id == "2NZ5C")
    assert sorted((a.start_text, a.end_text) for a in video.actions if a.class_id == "c148") == [
        ("11.10", "16.70"),
        ("15.90", "33.00"),
    ]
    chosen = extractor.run(video).chosen
    assert [a.item for a in chosen if a.class_id == "c148"] == ["c148 11.10 33.0"]  # the release's spelling


def test_a_short_task_is_topped_up_and_the_preview_says_why(extractor, cut):
    videos, _released = cut
    extraction = extractor.run(next(v for v in videos if v.id == "1NJOQ"))
    reasons = [d.reason for d in extraction.decisions if d.chosen]
    assert extraction.kept and len(extraction.chosen) >= 4
    assert any("extract_fill_min_coherence" in r for r in reasons)
    assert any("the same task" in r for r in reasons)


def test_a_class_annotated_twice_follows_the_sequence(extractor, cut):
    # 6QDZI, CUZND and SPDF6 come back only when a class annotated twice apart is held out of the search
    # (extract_repeated_class = follow): counted like any action, it makes another task the longest.
    videos, released = cut
    by_id = {v.id: v for v in videos}
    ids = ["6QDZI", "CUZND", "SPDF6"]
    wanted = [v for v in released if v.video_id in ids]
    counted = build_extractor(replace(Settings(), extract_repeated_class="count"), read_class_names(CLASSES))
    assert measure(wanted, lambda vid, _acts: extractor.run(by_id[vid]).chosen).exact == 3
    assert measure(wanted, lambda vid, _acts: counted.run(by_id[vid]).chosen).exact == 0
    terms = {d.term for vid in ids for d in extractor.run(by_id[vid]).decisions}
    assert "repeated class (extract_repeated_class)" in terms


def test_the_real_file_is_read_as_it_is(database, tmp_path):
    """Empty columns, a video without actions, an action ending after the video, one ending before it starts."""
    (tmp_path / "Charades_v1_classes.txt").write_text(CLASSES.read_text(encoding="utf-8"), encoding="utf-8")
    header = "id,subject,scene,quality,relevance,verified,script,objects,descriptions,actions,length\n"
    (tmp_path / "Charades_v1_actions.csv").write_text(
        header
        + "003WS,,,,,,,,,,45.75\n"  # no actions
        + "2NZ5C,,,,,,,,,c148 15.90 33.00;c148 11.10 16.70,31.96\n"  # ends after the video's 31.96 s
        + "00SL4,,,,,,,,,c071 18.00 10.00;c070 1.00 5.00,30.00\n",  # as in Charades: an end before the start
        encoding="utf-8",
    )
    report = import_charades(database, CharadesFiles.in_folder(tmp_path)).as_dict()
    assert (report["videos"], report["actions"], report["actions_left_out"]) == (3, 3, 1)
    assert report["left_out"] == ["line 4: video 00SL4: action c071 ends (10.00) before it starts (18.00): left out"]
    with (tmp_path / "Charades_v1_actions.csv").open(encoding="utf-8", newline="") as handle:
        assert [r["id"] for r in csv.DictReader(handle)] == ["003WS", "2NZ5C", "00SL4"]
