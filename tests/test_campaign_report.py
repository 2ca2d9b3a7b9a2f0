"""The worker report for payment: counts, gold accuracy, active time, flags; CSV; per study by user name."""

from __future__ import annotations

import csv
import io

import pytest
from campaign_helpers import add_people, context_from_template, last_sequences, release_as_reference, template_database

from backend.campaigns import gold, report, studies
from backend.errors import NotFound, PermissionDenied
from backend.intents import service
from tests.conftest import VILPACT_DATA

GOOD = ("S/He wants to have a drink", "S/He is thirsty")


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return template_database(tmp_path_factory.mktemp("report-template"), VILPACT_DATA, annotators_per_sequence=2)


def test_report_counts_real_tasks_gold_apart_and_exports_csv(template, tmp_path):
    ctx = context_from_template(template, tmp_path / "data", gold_rate=0.5, speed_floor_share=0.0)
    db, settings = ctx.database, ctx.settings
    add_people(db, ["w1", "w2", "=evil"[1:]])
    ids = last_sequences(db, 3)
    release_as_reference(db, ids)
    gold.add_gold(db, "rev", "intent", ids)
    for _ in range(4):
        task = service.next_intent_task(db, settings, "w1")["task"]
        service.submit_intents(db, settings, "w1", task["sequence_id"], *GOOD)
    service.next_intent_task(db, settings, "w2")  # holds a lease, submitted nothing
    with pytest.raises(PermissionDenied):
        report.worker_report(db, "rev")
    rows = {r["username"]: r for r in report.worker_report(db, "boss")}
    w1 = rows["w1"]
    assert w1["submitted"] == 2 and w1["gold_pending"] + w1["gold_judged"] == 2  # 4 tasks: 2 real, 2 gold
    assert (
        (w1["state"], w1["quality"], w1["tasks_done"]) == ("working", "active", 4)
        and w1["flags_total"] == 0
        and w1["active_minutes"] >= 0
    )
    assert rows["w2"]["submitted"] == 0 and rows["w2"]["first_at"]
    text = report.report_csv(list(rows.values()))
    parsed = list(csv.DictReader(io.StringIO(text)))
    assert list(parsed[0]) == list(report.COLUMNS) and {p["username"] for p in parsed} >= {"w1", "w2"}


def test_report_per_study_joins_study_workers_by_user_name(template, tmp_path):
    ctx = context_from_template(template, tmp_path / "data")
    add_people(ctx.database, ["p1", "p2"])
    with pytest.raises(NotFound, match="no study 1"):
        report.worker_report(ctx.database, "boss", "1")
    study = studies.create_study(
        ctx.database,
        "boss",
        name="Pilot",
        kind="intents",
        tasks_per_worker=2,
        completion_code="C1",
        screenout_code="S1",
    )
    with ctx.database.write() as db:  # p1 arrived by the study link (backend/campaigns/workers.py writes this row)
        db.conn.execute(
            "INSERT INTO study_workers (study_id, platform_worker_id, username, status, started_at) "
            "VALUES (?, 'PID1', 'p1', 'started', '2026-11-30T10:00:00+00:00')",
            (study.id,),
        )
    assert [r["username"] for r in report.worker_report(ctx.database, "boss", str(study.id))] == ["p1"]


def test_cli_gold_and_workers_commands(template, tmp_path, capsys):
    import json

    from backend.cli import main

    ctx = context_from_template(template, tmp_path / "data")
    add_people(ctx.database, ["c1"])
    release_as_reference(ctx.database, last_sequences(ctx.database, 2))
    data = ["--data-dir", str(ctx.settings.data_dir)]
    assert main(["gold", "candidates", "intent", *data]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2
    assert main(["gold", "add", "intent", "--auto", "2", *data]) == 0
    assert json.loads(capsys.readouterr().out)["gold_items"] == 2
    assert main(["workers", "block", "c1", "--reason", "test", *data]) == 0
    assert json.loads(capsys.readouterr().out)["state"] == "blocked"
    assert main(["workers", "report", "--csv", str(tmp_path / "pay.csv"), *data]) == 0
    capsys.readouterr()
    rows = list(csv.DictReader((tmp_path / "pay.csv").open()))
    assert {r["username"]: r["state"] for r in rows}["c1"] == "blocked"
    assert main(["workers", "resume", "c1", *data]) == 2  # blocked: an admin unblocks
    assert "unblocks" in capsys.readouterr().err
