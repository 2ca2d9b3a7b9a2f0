"""Models answering VQA items through the inference layer: batch and blind runs, a live answer, and
difficulty voting by a panel of six models (five seeded random baselines and a tiny LLaVA)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from tiny_models import tiny_spec

from backend.accounts import auth
from backend.errors import PermissionDenied
from backend.inference.registry import ModelSpec, write_models
from backend.vqa.demo import ensure_vqa_demo
from backend.vqa.difficulty import difficulty_level
from backend.vqa.items import list_items
from backend.vqa.models import BENCHMARK, ask_model, eval_item, run_model, vote_difficulty
from backend.vqa.runs import leaderboard

RANDOMS = [ModelSpec(f"rand-{k}", "random", options={"seed": k}) for k in range(5)]


@pytest.fixture
def lab(ctx):
    ensure_vqa_demo(ctx)
    write_models(ctx.settings, [*RANDOMS, tiny_spec("llava")])
    auth.add_user(ctx.database, "rev", "reviewer", "password123")
    auth.add_user(ctx.database, "ann", "annotator", "password123")
    return ctx


def test_eval_items_carry_composite_separate_or_no_images(lab):
    item = next(i for i in list_items(lab.database) if len(i.images) == 4)
    composite = eval_item(lab.settings, item, "composite")
    separate = eval_item(lab.settings, item, "separate")
    blind = eval_item(lab.settings, item, blind=True)
    kinds = [[p["type"] for p in e.request] for e in (composite, separate, blind)]
    assert kinds == [["image", "text"], ["text", "image"] * 4 + ["text"], ["text"]]
    assert separate.request[0]["text"] == "Image 1:"
    assert composite.answer == frozenset(item.answer) and not composite.multi


def test_batch_blind_and_live_answers_reach_the_leaderboard(lab):
    summary = run_model(lab, "rev", "rand-0")
    assert summary["items"] == 15 and summary["errors"] == 0
    run_model(lab, "rev", "rand-0", blind=True)
    live = ask_model(lab, "rev", "tiny-llava", "demo-diff-s")
    assert live["error"] is None and live["key"] == ["A"]
    names = [row["name"] for row in leaderboard(lab, "ann")]
    assert {"Random choice", "rand-0", "rand-0 [blind]", "tiny-llava"} <= set(names)
    with pytest.raises(PermissionDenied):
        run_model(lab, "ann", "rand-0")


def test_six_model_panel_sets_levels_from_the_votes(lab):
    panel = [s.name for s in RANDOMS] + ["tiny-llava"]
    with pytest.raises(PermissionDenied):
        vote_difficulty(lab, "ann", panel)
    seen = []
    result = vote_difficulty(lab, "rev", panel, progress=lambda done, total: seen.append((done, total)))
    assert result["items"] == 15 and seen[-1] == (90, 90)
    votes = {
        r["item_id"]: r["correct"]
        for r in lab.database.query(
            "SELECT item_id, sum(fully_correct) AS correct, count(*) AS n FROM vqa_votes GROUP BY item_id"
        )
    }
    for item in list_items(lab.database, status="verified"):
        assert item.difficulty_level == difficulty_level(votes[item.id], 6)
    assert sum(result["levels"].values()) == 15
    assert BENCHMARK == "mmcomposition"


def test_leaderboard_keeps_answered_refused_and_unparsed_apart(lab, monkeypatch):
    from backend.vqa.runs import leaderboard_csv

    echo = [ModelSpec(name, "python", "inference_helpers:echo_factory") for name in ("refuser", "hedger")]
    write_models(lab.settings, [*RANDOMS, *echo])
    monkeypatch.setenv("ECHO_ANSWER", "I cannot tell from this image.")
    refused = run_model(lab, "rev", "refuser")
    assert (refused["answered"], refused["refusals"], refused["parse_failures"]) == (0, 15, 0)
    assert refused["refusal_rate"] == 1.0 and refused["score"] == 0.0
    monkeypatch.setenv("ECHO_ANSWER", "It is either A or B.")
    live = ask_model(lab, "rev", "hedger", "demo-diff-s")
    assert live["status"] == "unparsed" and live["letters"] == []
    run_model(lab, "rev", "rand-0")
    rows = {row["name"]: row for row in leaderboard(lab, "ann")}
    assert (rows["refuser"]["refusals"], rows["refuser"]["parse_failures"], rows["refuser"]["answered"]) == (15, 0, 0)
    # a live answer is a run of one item: scored, and its rates taken, over the one item it was asked
    assert rows["hedger"]["parse_failures"] == 1 and rows["hedger"]["parse_failure_rate"] == 1.0
    assert rows["hedger"]["questions"] == 1 and rows["hedger"]["overall"] == 0.0
    assert rows["hedger"]["answered"] == 0 and rows["hedger"]["refusals"] == 0
    assert rows["rand-0"]["answered"] == 15 and rows["rand-0"]["answered_rate"] == 1.0
    assert rows["Random choice"]["refusals"] is None
    header = leaderboard_csv(list(rows.values())).splitlines()[0].split(",")
    assert {"answered", "refusals", "parse_failures", "refusal_rate", "parse_failure_rate"} <= set(header)


def test_paired_comparison_of_runs_always_holds_the_blind_run(lab, capsys):
    import json

    from backend.cli import main
    from backend.vqa.runs import comparison, run_outcomes

    for model in ("rand-0", "rand-1"):
        run_model(lab, "rev", model)
    run_model(lab, "rev", "rand-2", blind=True)
    table = comparison(lab, "ann", ["rand-0", "rand-1"], samples=100)
    comp = table["comparison"]
    assert comp["models"] == ["rand-0", "rand-1", "rand-2 [blind]"] and comp["common_items"] == 15
    assert len(comp["pairs"]) == 3 and all(p["p_holm"] >= p["p_value"] for p in comp["pairs"])
    items = list_items(lab.database, status="verified")
    from backend.vqa.runs import list_runs

    right = run_outcomes(next(r for r in list_runs(lab, items) if r.id == "rand-0"), items)
    assert comp["pairs"][0]["accuracy_a"] == round(sum(right.values()) / 15, 4)
    auth.add_user(lab.database, "boss", "admin", "password123")
    assert main(["compare", "--benchmark", "vqa", "--data-dir", str(lab.settings.data_dir)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["blind_runs"] == ["rand-2 [blind]"] and len(printed["comparison"]["pairs"]) == 3


def test_leaderboard_csv_names_each_runs_manifest(lab):
    import csv
    import io
    import json

    from backend.vqa.runs import leaderboard_csv, run_manifests

    write_models(lab.settings, RANDOMS)
    run_model(lab, "rev", "rand-0")
    ask_model(lab, "rev", "rand-0", "demo-diff-s")  # a live answer keeps the batch's manifest
    rows = leaderboard(lab, "ann")
    table = list(csv.DictReader(io.StringIO(leaderboard_csv(rows, run_manifests(lab)))))
    by_name = {row["name"]: row for row in table}
    manifest = json.loads(by_name["rand-0"]["manifest"])
    assert manifest["model"]["name"] == "rand-0" and manifest["dataset"]["benchmark"] == BENCHMARK
    assert manifest["dataset"]["items"] == 15 and manifest["image_size_limit"] == 768
    assert by_name["Random choice"]["manifest"] == ""


def test_a_retried_batch_run_is_one_leaderboard_row_resumed_from_the_store(lab):
    """A retry of ``vqa_model_run`` (the client lost the answer, or the run was cut short) is a second
    attempt in ``eval_runs`` (the Models tab's log of attempts), never a second run: the leaderboard row, the
    run and its answers stay one each, and the retry asks the model only for what the first did not store."""

    class Cut(Exception):
        pass

    def cut_after_five(done: int, _total: int) -> None:
        if done >= 5:
            raise Cut

    with pytest.raises(Cut):  # the first attempt stops after 5 of 15 answers, as a crash would
        run_model(lab, "rev", "rand-0", progress=cut_after_five)
    resumed = run_model(lab, "rev", "rand-0")  # the client's retry
    again = run_model(lab, "rev", "rand-0")  # and one more after it finished
    assert (resumed["newly_computed"], again["newly_computed"], again["items"]) == (10, 0, 15)
    assert again["score"] == resumed["score"]
    names = [row["name"] for row in leaderboard(lab, "ann")]
    assert names.count("rand-0") == 1
    stored = lab.database.scalar("SELECT count(*) FROM predictions WHERE model = 'rand-0'")
    attempts = [r["status"] for r in lab.database.query("SELECT status FROM eval_runs WHERE model = 'rand-0'")]
    assert stored == 15 and attempts == ["failed", "finished", "finished"]
    # two at once (the app's model queue runs them one after the other; a shell's run beside it would not)
    with ThreadPoolExecutor(2) as pool:
        both = list(pool.map(lambda _: run_model(lab, "rev", "rand-1"), range(2)))
    assert both[0]["score"] == both[1]["score"] and [r["items"] for r in both] == [15, 15]
    assert [row["name"] for row in leaderboard(lab, "ann")].count("rand-1") == 1
    assert lab.database.scalar("SELECT count(*) FROM predictions WHERE model = 'rand-1'") == 15
