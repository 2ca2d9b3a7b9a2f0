"""Charades-format annotations: the import (checked rows, one transaction), the extraction's way into the intent
pool (exact N, as imported sequences), the export, the admin's calls and the command line."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

from backend import assignment
from backend.accounts.auth import add_user
from backend.cli import main as cli_main
from backend.errors import ImportFileError, NotFound, PermissionDenied
from backend.vilpact.charades import CharadesFiles, CharadesRowsError, import_charades, import_charades_folder
from backend.vilpact.charades_pool import (
    MissingVideos,
    accept_stored,
    admin_accept,
    admin_export,
    admin_preview,
    export_stored,
    kept_without_video,
)
from backend.vilpact.importer import import_vilpact

pytestmark = pytest.mark.slow  # over ~10 s a file: out of the quick loop (scripts/test.sh --quick)

FIXTURE = ROOT / "tests" / "data" / "charades"
HEADER = "id,subject,scene,quality,relevance,verified,script,objects,descriptions,actions,length\n"
GOOD = "V0001,s1,Kitchen,6,7,Yes,,food;dish,,c061 0.00 5.20;c063 1.10 6.00;c118 2.00 8.50;c119 7.00 9.00,12.00\n"


def folder(tmp_path, rows: str = GOOD):
    """A Charades folder: the fixture's class, object, verb and mapping files and one small video CSV."""
    target = tmp_path / "charades"
    target.mkdir(parents=True)
    for name in ("classes", "objectclasses", "verbclasses", "mapping"):
        shutil.copy(FIXTURE / f"Charades_v1_{name}.txt", target)
    (target / "Charades_v1_train.csv").write_text(HEADER + rows, encoding="utf-8")
    return target


def counts(database) -> dict[str, int]:
    return {t: database.scalar(f"SELECT count(*) FROM {t}") for t in ("charades_videos", "sequences", "tasks")}


def test_the_check_set_imports_once_and_again_changes_nothing(database):
    files = CharadesFiles.in_folder(FIXTURE)
    report = import_charades(database, files)
    assert (report.videos, report.new_videos, report.classes) == (292, 292, 157)
    with (FIXTURE / "Charades_v1_fixture.csv").open(encoding="utf-8") as handle:
        assert report.actions == sum(len(r["actions"].split(";")) for r in csv.DictReader(handle))
    stored = database.query_one("SELECT object, verb FROM action_classes WHERE id = 'c027'")
    assert stored == {"object": "book", "verb": "open"}
    before = counts(database)
    again = import_charades(database, files)
    assert again.new_videos == 0 and counts(database) == before
    row = database.query_one("SELECT scene, actions, length FROM charades_videos WHERE id = '2NZ5C'")
    assert row["scene"] == "Stairs" and json.loads(row["actions"])[2] == ["c148", "11.10", "33.0"]


def test_a_charades_import_keeps_the_vilpact_knowledge_base(database, vilpact_dir):
    import_vilpact(database, vilpact_dir, add_to_pool=False)
    import_charades(database, CharadesFiles.in_folder(FIXTURE))
    row = database.query_one("SELECT name, pre, post_add, object FROM action_classes WHERE id = 'c001'")
    assert row["pre"] == "InHand(P,x)&Person(P)&Place(to)" and row["object"] == "clothes"


BAD_ROWS = (
    GOOD
    + "V0002,s1,Kitchen,,,,,,,c999 0.00 5.00,10\n"  # line 3: unknown class
    + "V0003,s1,Kitchen,,,,,,,c061 zero 5.00,10\n"  # line 4: not a time
    + "V0004,s1,Kitchen,,,,,,,c061 6.00 5.00,10x\n"  # line 5: bad length (an action ending before it starts is left out)
    + "V0001,s1,Kitchen,,,,,,,c061 0.00 5.00,10\n"  # line 6: duplicate id
    + ",s1,Kitchen,,,,,,,c061 0.00 5.00,10\n"  # line 7: empty id
    + "V0005,s1,Kitchen,,,,,,,c061 0.00 5.00,ten\n"  # line 8: bad length
    + "V0006,s1,Kitchen,,,,,,,c061 0.00,10\n"  # line 9: not a triplet
)


def test_every_bad_row_is_named_and_nothing_is_imported(database, tmp_path):
    files = CharadesFiles.in_folder(folder(tmp_path, BAD_ROWS))
    before = counts(database)
    with pytest.raises(CharadesRowsError) as caught:
        import_charades(database, files)
    assert [line for line, _problem in caught.value.problems] == [3, 4, 5, 6, 7, 8, 9]
    message = str(caught.value)
    for expected in (
        "7 bad rows",
        "line 3: video V0002: unknown action class 'c999'",
        "line 4: video V0003: action c061: the times 'zero' '5.00' must be seconds",
        "line 5: video V0004: length '10x' is not a number of seconds",
        "line 6: duplicate id 'V0001' (first in Charades_v1_train.csv, line 2)",
        "line 7: empty id",
        "line 8: video V0005: length 'ten' is not a number of seconds",
        "line 9: video V0006: action 'c061 0.00' is not 'cNNN start end'",
        "Nothing was imported",
    ):
        assert expected in message
    assert counts(database) == before
    assert database.scalar("SELECT count(*) FROM action_classes") == 0


def test_bad_class_and_mapping_files_are_named(database, tmp_path):
    target = folder(tmp_path)
    (target / "Charades_v1_mapping.txt").write_text("c000 o009 v008\nc001 o999 v016\nc002 o009\n")
    with pytest.raises(CharadesRowsError, match=r"line 2: unknown object o999; line 3: expected 'cNNN oNNN vNNN'"):
        import_charades(database, CharadesFiles.in_folder(target))
    (target / "Charades_v1_classes.txt").write_text("c000 Holding some clothes\nc000 Again\nnonsense\n")
    with pytest.raises(CharadesRowsError, match="line 2: cNNN c000 is listed twice; line 3: expected 'cNNN name'"):
        import_charades(database, CharadesFiles.in_folder(target))
    (target / "Charades_v1_train.csv").write_text("id,scene\nV1,Kitchen\n")
    with pytest.raises(ImportFileError, match="wrong columns: missing actions"):
        import_charades(
            database, CharadesFiles((target / "Charades_v1_train.csv",), FIXTURE / "Charades_v1_classes.txt")
        )
    with pytest.raises(ImportFileError, match="no Charades-format CSV"):
        CharadesFiles.in_folder(FIXTURE.parent)
    assert counts(database)["charades_videos"] == 0


def test_accepted_sequences_enter_the_pool_with_exactly_n_annotators(ctx, tmp_path):
    database, settings = ctx.database, ctx.settings.replace(annotators_per_sequence=2)
    import_charades(database, CharadesFiles.in_folder(folder(tmp_path)))
    report = accept_stored(database, settings, "tester")
    assert report | {"videos": 1} == {
        "videos": 1,
        "kept": 1,
        "accepted": 1,
        "already_there": 0,
        "added_to_pool": 1,
        "annotators_per_sequence": 2,
    }
    sequence = database.query_one("SELECT * FROM sequences WHERE id = 'V0001'")
    assert sequence["source"] == "charades" and sequence["ob_start_frame"] == 1 and sequence["ob_end_frame"] == 43
    assert [a["class_id"] for a in json.loads(sequence["actions"])] == ["c061", "c063", "c118", "c119"]
    handed = []
    for name in ("ann1", "ann2", "ann3"):
        with database.write() as db:
            lease = assignment.next_task(db, "intent", name, 20)
        handed.append(lease.item_id if lease else None)
    assert handed == ["V0001", "V0001", None]
    assert accept_stored(database, settings, "tester")["already_there"] == 1
    assert database.scalar("SELECT count(*) FROM tasks") == 1


def test_accepting_never_replaces_a_stored_sequence(ctx, vilpact_dir):
    import_vilpact(ctx.database, vilpact_dir, add_to_pool=False)
    released = ctx.database.query_one("SELECT actions, source FROM sequences WHERE id = '2NZ5C'")
    import_charades(ctx.database, CharadesFiles.in_folder(FIXTURE))
    report = accept_stored(ctx.database, ctx.settings, "tester", ["2NZ5C", "Q0IHP"])
    assert (report["accepted"], report["already_there"]) == (0, 2)
    assert ctx.database.query_one("SELECT actions, source FROM sequences WHERE id = '2NZ5C'") == released
    with pytest.raises(NotFound):
        accept_stored(ctx.database, ctx.settings, "tester", ["NOPE1"])


def test_the_admin_calls_check_the_role_and_the_import_folder(ctx, tmp_path):
    database, settings = ctx.database, ctx.settings
    add_user(database, "boss", "admin", "password1")
    add_user(database, "ann", "annotator", "password1")
    source = folder(tmp_path)
    shutil.copytree(source, settings.import_root / "mine")
    with pytest.raises(PermissionDenied):
        import_charades_folder(database, settings, "ann", "mine")
    with pytest.raises(PermissionDenied, match="imports only from"):
        import_charades_folder(database, settings, "boss", str(source))
    assert import_charades_folder(database, settings, "boss", "mine")["videos"] == 1
    for call in (
        lambda who: admin_preview(database, settings, who),
        lambda who: admin_accept(database, settings, who),
        lambda who: admin_export(database, settings, who, tmp_path / "out.csv"),
    ):
        with pytest.raises(PermissionDenied):
            call("ann")
        with pytest.raises(PermissionDenied):
            call(None)
    preview = admin_preview(database, settings, "boss")
    assert preview.summary == {"videos": 1, "kept": 1, "left_out": 0}
    with pytest.raises(MissingVideos, match="1 of the 1 sequences to accept have no video file"):
        admin_accept(database, settings, "boss")  # no video folder: refused until the admin accepts knowingly
    assert database.scalar("SELECT count(*) FROM sequences") == 0
    assert kept_without_video(database, preview) == [preview.items[0][0].id]
    assert admin_accept(database, settings, "boss", allow_missing_videos=True)["accepted"] == 1
    audit = database.query("SELECT actor, action FROM audit_log WHERE action LIKE '%charades%' ORDER BY id")
    assert audit == [{"actor": "boss", "action": "import.charades"}, {"actor": "boss", "action": "charades.accept"}]


def test_export_writes_what_extract_writes(ctx, tmp_path, capsys):
    import_charades(ctx.database, CharadesFiles.in_folder(FIXTURE))
    exported = export_stored(ctx.database, ctx.settings, tmp_path / "exported.csv")
    assert cli_main(["vilpact", "extract", str(FIXTURE), "--out", str(tmp_path / "extracted.csv")]) == 0
    assert json.loads(capsys.readouterr().out)["kept"] == exported["rows"]
    assert (tmp_path / "exported.csv").read_text() == (tmp_path / "extracted.csv").read_text()
    header = (tmp_path / "exported.csv").read_text().splitlines()[0]
    assert (
        header == "id,action_flow_id,action_flow_des,act_seq_start,act_seq_end,ob_start_frame,ob_end_frame,"
        "ob_act_seq,future_act_seq,scene"
    )


# -- the command line ------------------------------------------------------------------------------------------------
def test_cli_extract_from_csv_files_with_an_explanation(tmp_path, capsys):
    out, explain = tmp_path / "sequences.csv", tmp_path / "why.jsonl"
    code = cli_main(
        [
            "vilpact",
            "extract",
            str(FIXTURE / "Charades_v1_fixture.csv"),
            "--classes",
            str(FIXTURE / "Charades_v1_classes.txt"),
            "--mapping",
            str(FIXTURE / "Charades_v1_mapping.txt"),
            "--out",
            str(out),
            "--explain",
            str(explain),
        ]
    )
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["videos"] == 292 and summary["kept"] + summary["left_out"] == 292
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == summary["kept"] and rows[0]["id"] == "2NZ5C"
    first = json.loads(explain.read_text().splitlines()[0])
    held_out = [a for a in first["actions"] if not a["chosen"]]
    assert {"Holding a sandwich", "Laughing at a picture", "Tidying some clothes"} == {a["name"] for a in held_out}
    assert all(a["reason"] and a["scores"] for a in held_out)


def test_cli_import_accept_and_errors(tmp_path, capsys):
    data = tmp_path / "data"
    assert cli_main(["import", "charades", str(folder(tmp_path)), "--data-dir", str(data)]) == 0
    assert json.loads(capsys.readouterr().out)["videos"] == 1
    assert cli_main(["vilpact", "accept", "--data-dir", str(data)]) == 0
    assert json.loads(capsys.readouterr().out)["added_to_pool"] == 1
    assert cli_main(["vilpact", "extract", str(FIXTURE / "Charades_v1_fixture.csv"), "--out", "x.csv"]) == 2
    assert "--classes" in capsys.readouterr().err
    broken = folder(tmp_path / "broken", BAD_ROWS)
    assert cli_main(["import", "charades", str(broken), "--data-dir", str(data)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "line 3: video V0002: unknown action class 'c999'" in err


def test_the_installed_command_runs_the_extraction(tmp_path):
    out = tmp_path / "sequences.csv"
    done = subprocess.run(
        [sys.executable, "-m", "backend", "vilpact", "extract", str(FIXTURE), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["videos"] == 292 and out.is_file()
