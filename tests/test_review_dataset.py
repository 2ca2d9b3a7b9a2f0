"""Final dataset: export formats, dataset card, import round trip, the released file, publishing offline."""

from __future__ import annotations

import csv
import json
from types import SimpleNamespace

import pytest
from huggingface_hub import CommitOperationAdd, HfApi

from backend.cli import main as cli_main
from backend.context import build_context
from backend.errors import ImportFileError
from backend.review import dataset, publish
from backend.review import service as review
from backend.storage import utcnow
from backend.vilpact.importer import import_vilpact
from tests.review_helpers import add_people, add_sequences, annotate_all, judge_all


@pytest.fixture
def reviewed(database, settings):
    """S1 accepted (edited selection + one more reasonable), S2 discarded, S3 only released intents."""
    settings = settings.replace(review_max_rounds=1)
    add_people(database, annotators=["a1", "a2", "a3"], reviewers=["rev"], admins=["boss"])
    add_sequences(database, ["S1", "S2"])
    add_sequences(database, ["S3"], split="train", pool=False)
    with database.write() as db:
        for n, (concrete, high) in enumerate([("eat breakfast", "S/He is hungry"), ("have a meal", "S/He is hungry")]):
            db.conn.execute(
                """INSERT INTO annotations (sequence_id, annotator, concrete_intent, high_level_intent, round, source,
                       submitted_at) VALUES ('S3', ?, ?, ?, 1, 'imported', ?)""",
                (f"vilpact-crowd-{n + 1}", concrete, high, utcnow()),
            )
    annotate_all(database, settings, ["a1", "a2", "a3"])
    for _ in range(2):
        item = review.next_review(database, settings, "rev")["item"]
        ids = [a["annotation_id"] for a in item["annotations"]]
        if item["sequence_id"] == "S1":
            choice = review.FinalChoice(ids[1], ids[1], high_level_intent="S/He is very thirsty")
            review.submit_review(database, settings, "rev", "S1", 1, judge_all(item, [True, True, False]), choice)
        else:
            review.submit_review(database, settings, "rev", "S2", 1, judge_all(item, [False] * 3, "vague"))
    return settings


def _export_all(database, folder):
    for fmt in dataset.FORMATS:
        dataset.export_dataset(database, fmt, folder)
    return {name: (folder / name).read_bytes() for name in dataset.DATA_FILES.values()}


def test_export_contents_and_card(database, reviewed, tmp_path):
    files = _export_all(database, tmp_path / "out")
    records = [json.loads(line) for line in files["dataset.jsonl"].decode().splitlines()]
    assert [r["id"] for r in records] == ["S1", "S3"]  # S2 discarded
    s1, s3 = records
    assert s1["origin"] == "review" and s1["review_round"] == 1 and len(s1["intents"]) == 2
    assert s1["intents"][0]["edited"] and s1["intents"][0]["high_level_intent"] == "S/He is very thirsty"
    assert s1["intents"][0]["original_high_level_intent"] == "S/He is tired"
    assert s3["origin"] == "released" and s3["review_round"] is None and s3["split"] == "train"
    # ob_end_frame 60 -> 2.5 s: only "Opening a door" (start 0) starts before it
    assert s1["ob_act_seq"] == ["Opening a door"] and len(s1["future_act_seq"]) == 2
    rows = list(csv.DictReader(files["all_gt_seq.csv"].decode().splitlines()))
    assert rows[0]["intention_1"] == "S/He wants to take a break in the kitchen;S/He is very thirsty"
    assert rows[0]["intention_2"] == "S/He wants to have a glass of water;S/He is thirsty"
    assert rows[1]["intention_1"] == "eat breakfast;S/He is hungry" and rows[0]["act_seq_end"] == "12"
    assert rows[0]["action_flow_id"].startswith("c006 0.00 2.50;c106 3.00 9.00")
    card = (tmp_path / "out" / "README.md").read_text()
    assert "| sequences | 2 |" in card and "| 1 | 2 | 1 (50.0%) | 6 | 2 (33.3%) |" in card
    assert "sequences discarded after the last round (not included) | 1 |" in card
    assert "data_files: dataset.jsonl" in card


def test_export_then_import_into_a_fresh_database_reproduces_the_dataset(database, reviewed, settings, tmp_path):
    first = _export_all(database, tmp_path / "first")
    for source in ("dataset.jsonl", "dataset.parquet"):
        fresh = build_context(settings.replace(data_dir=tmp_path / f"fresh-{source}")).database
        folder = tmp_path / f"only-{source}"
        folder.mkdir()
        (folder / source).write_bytes(first[source])
        assert dataset.import_dataset(fresh, folder)["sequences"] == 2
        assert _export_all(fresh, tmp_path / f"again-{source}") == first
        dataset.import_dataset(fresh, folder)  # re-import changes nothing
        assert _export_all(fresh, tmp_path / f"again2-{source}") == first


def test_import_reports_the_bad_line(database, tmp_path):
    (tmp_path / "dataset.jsonl").write_text('{"id": "x"}\n')
    with pytest.raises(ImportFileError, match="line 1: missing fields"):
        dataset.import_dataset(database, tmp_path)
    (tmp_path / "dataset.jsonl").write_text("\nnot json\n")
    with pytest.raises(ImportFileError, match="line 2: not valid JSON"):
        dataset.import_dataset(database, tmp_path)
    assert database.scalar("SELECT count(*) FROM sequences") == 0


def test_vilpact_export_of_the_unchanged_release_is_byte_for_byte_the_release(database, vilpact_dir, tmp_path):
    """The release writes "33.0" beside "33.00", leaves spaces before commas (10 intents) and ends lines with
    CRLF; nothing changed, so the export is the file itself, header and line ends included."""
    import_vilpact(database, vilpact_dir, add_to_pool=False)
    dataset.export_dataset(database, "vilpact", tmp_path)
    released = (vilpact_dir / "gt_act_seq" / "all_gt_seq.csv").read_bytes()
    assert b" 33.0;" in released and b" ," in released and released.count(b"\r\n") == 2913
    assert (tmp_path / "all_gt_seq.csv").read_bytes() == released


def test_vilpact_export_rewrites_only_what_a_review_changed(database, vilpact_dir, tmp_path):
    import_vilpact(database, vilpact_dir, add_to_pool=False)
    with database.write() as db:  # the final intents a review decided for 2NZ5C: a new first pair
        db.conn.executemany(
            """INSERT INTO final_intents (sequence_id, position, concrete_intent, high_level_intent, origin,
                   review_round, decided_at) VALUES ('2NZ5C', ?, ?, ?, 'review', 1, ?)""",
            [
                (1, "swap shirts", "S/He wants to look smart", utcnow()),
                (2, "change the clothes", "S/He wants to get dressed", utcnow()),
            ],
        )
    dataset.export_dataset(database, "vilpact", tmp_path)
    released = (vilpact_dir / "gt_act_seq" / "all_gt_seq.csv").read_bytes().split(b"\r\n")
    exported = (tmp_path / "all_gt_seq.csv").read_bytes().split(b"\r\n")
    differing = [(old, new) for old, new in zip(released, exported, strict=True) if old != new]
    assert len(differing) == 1
    old, new = differing[0]
    old_fields, new_fields = next(csv.reader([old.decode()])), next(csv.reader([new.decode()]))
    assert [i for i, (a, b) in enumerate(zip(old_fields, new_fields, strict=True)) if a != b] == [3]
    assert new_fields[3] == "swap shirts;S/He wants to look smart"
    assert new.decode().replace(new_fields[3], old_fields[3]) == old.decode()  # "33.0" and the rest kept as is


def test_released_rows_follow_the_papers_observed_rule_on_2900_of_2912(database, vilpact_dir):
    """The paper's rule (an action is observed when it starts before ob_end_frame / 24 s) reproduces the
    released observed/future split on 2,900 of 2,912 rows; the 12 others differ by one boundary action (the
    export keeps the released columns, see test above)."""
    import_vilpact(database, vilpact_dir, add_to_pool=False)
    released = list(csv.DictReader((vilpact_dir / "gt_act_seq" / "all_gt_seq.csv").open(encoding="utf-8-sig")))
    records = {r["id"]: r for r in dataset.final_records(database)}
    boundary = sum(
        (";".join(records[row["id"]]["ob_act_seq"]), ";".join(records[row["id"]]["future_act_seq"]))
        != (row["ob_act_seq"], row["future_act_seq"])
        for row in released
    )
    assert len(records) == 2912 and boundary == 12


class OfflineHub(HfApi):
    """HfApi with the two network calls that publishing makes replaced by in-memory ones."""

    def __init__(self):
        super().__init__(token="fake-token")
        self.repos: dict[str, dict] = {}

    def create_repo(self, repo_id, *, private=None, repo_type=None, exist_ok=False, **kwargs):
        self.repos.setdefault(repo_id, {"private": private, "type": repo_type, "files": {}, "commits": []})
        return f"https://huggingface.co/datasets/{repo_id}"

    def create_commit(self, repo_id, operations, *, commit_message="", repo_type=None, **kwargs):
        repo = self.repos[repo_id]
        for op in operations:
            assert isinstance(op, CommitOperationAdd)
            with op.as_file() as handle:
                repo["files"][op.path_in_repo] = handle.read()
        import yaml  # the Hub validates the card's YAML header; here it must at least parse

        header = yaml.safe_load(repo["files"]["README.md"].decode().split("---")[1])
        assert header["configs"][0]["data_files"] == "dataset.jsonl"
        repo["commits"].append(commit_message)
        return SimpleNamespace(oid=f"commit-{len(repo['commits'])}")


def test_publish_uploads_the_export_with_a_card(database, reviewed, settings):
    hub = OfflineHub()
    result = publish.publish_dataset(database, settings, "boss", "team/vilpact-intents", private=True, api=hub)
    repo = hub.repos["team/vilpact-intents"]
    assert repo["private"] is True and repo["type"] == "dataset" and result["commit"] == "commit-1"
    assert sorted(repo["files"]) == ["README.md", "all_gt_seq.csv", "dataset.jsonl"]
    assert repo["files"]["dataset.jsonl"].count(b"\n") == 2 and b"| sequences | 2 |" in repo["files"]["README.md"]
    assert database.query_one("SELECT actor FROM audit_log WHERE action = 'dataset.publish'")["actor"] == "boss"
    with pytest.raises(Exception, match="OWNER/NAME"):
        publish.publish_dataset(database, settings, "boss", "not a repo", api=hub)


def test_cli_export_import_and_compare(database, reviewed, settings, tmp_path, capsys):
    data_dir = str(settings.data_dir)
    assert (
        cli_main(["export", "dataset", "--format", "jsonl", "--out", str(tmp_path / "x"), "--data-dir", data_dir]) == 0
    )
    assert json.loads(capsys.readouterr().out)["sequences"] == 2
    assert cli_main(["import", "dataset", str(tmp_path / "x"), "--data-dir", str(tmp_path / "fresh")]) == 0
    assert json.loads(capsys.readouterr().out)["intents"] == 4
    (tmp_path / "pairs.csv").write_text("a,b\n1,2\n3,1\n4,4\n6,2\n")
    assert cli_main(["review", "compare", str(tmp_path / "pairs.csv")]) == 0
    assert json.loads(capsys.readouterr().out)["n_zero"] == 1
    assert cli_main(["review", "dashboard", "--data-dir", data_dir]) == 0
    assert json.loads(capsys.readouterr().out)["totals"]["discarded"] == 1


def test_vilpact_round_trip_keeps_quotes_line_ends_and_a_missing_final_newline(database, vilpact_dir, tmp_path):
    """A hand-made release: LF line ends, a quoted intent with a comma and a line break inside, trailing
    spaces, "33.0" and "6.400" times, and no line end after the last row. Exported unchanged: the same bytes."""
    release = tmp_path / "release"
    (release / "gt_act_seq").mkdir(parents=True)
    (release / "Charades_v1_classes.txt").write_bytes((vilpact_dir / "Charades_v1_classes.txt").read_bytes())
    lines = (vilpact_dir / "gt_act_seq" / "all_gt_seq.csv").read_bytes().decode().split("\r\n")[:4]
    header, first, second, third = lines
    second = second.replace("eat a sandwich;S/He is hungry", '"eat a sandwich, slowly\nat noon ;S/He is hungry "')
    third = third.replace(" 0.40 6.40;", " 0.4 6.400;", 1)
    assert "eat a sandwich, slowly" in second and " 6.400;" in third and " 33.0;" in first
    text = "\n".join([header, first, second, third + "  "])  # the scene ends with two spaces
    (release / "gt_act_seq" / "all_gt_seq.csv").write_text(text, encoding="utf-8", newline="")
    import_vilpact(database, release, add_to_pool=False)
    intents = database.query("SELECT concrete_intent FROM annotations WHERE sequence_id = 'R00LO' ORDER BY annotator")
    assert intents[0]["concrete_intent"] == "eat a sandwich, slowly\nat noon"  # the importer strips each half
    dataset.export_dataset(database, "vilpact", tmp_path / "out")
    assert (tmp_path / "out" / "all_gt_seq.csv").read_bytes() == text.encode()
