"""People as runs (issue 41): answers of a VQA study's three workers and of a reviewer answering as an expert
become runs scored by the models' own partial credit, with manifests that count people and never name them;
each model is paired with them on the items both answered; the VQA paired comparison counts each pair's items
as the Samples view does; the only good run is never "[earlier settings]"; circular evaluation's figures.

The figures below are worked by hand on the demo VQA items (assets/vqa/items.jsonl): keys obj-p A, count-p C,
vis-sim C (3 options), prob-1 A+D (indefinite).
"""

from __future__ import annotations

import json

import pytest

from backend.accounts import auth
from backend.campaigns import studies, workers
from backend.campaigns.links import Visit
from backend.context import build_context
from backend.inference.registry import ModelSpec, write_models
from backend.settings import Settings
from backend.storage import utcnow
from backend.vqa import runs
from backend.vqa.demo import ensure_vqa_demo
from backend.vqa.models import run_model

ECHO = ModelSpec("echo", "python", "inference_helpers:echo_factory")  # always answers "A"
RANDOM = ModelSpec("random", "random", options={"seed": 0})
CROWD = {  # worker -> item -> letters
    "w1": {"demo-obj-p": "A", "demo-count-p": "C", "demo-vis-sim": "C", "demo-prob-1": "A"},
    "w2": {"demo-obj-p": "A", "demo-count-p": "C", "demo-vis-sim": "A", "demo-prob-1": "AD"},
    "w3": {"demo-obj-p": "A", "demo-count-p": "B", "demo-vis-sim": "B", "demo-prob-1": "AD"},
}


class Unreachable:
    """A model whose every call fails (as a mistyped server URL does)."""

    def __init__(self, spec) -> None:
        self.spec = spec

    def generate(self, requests, params):
        raise ConnectionError("connection refused (simulated)")

    def unload(self) -> None:
        return None


def _answer(ctx, person: str, item_id: str, letters: str) -> None:
    with ctx.database.write() as db:
        db.conn.execute(
            "INSERT INTO vqa_answers (item_id, annotator, answer, submitted_at) VALUES (?, ?, ?, ?)",
            (item_id, person, json.dumps(list(letters)), utcnow()),
        )


@pytest.fixture
def lab(tmp_path):
    """The demo VQA items, a VQA study whose three workers answered four items, and a reviewer who answered two
    as an expert; ``echo`` (always "A") and ``random`` registered."""
    ctx = build_context(Settings(data_dir=tmp_path / "data", demo_content=False, human_best_min_items=4))
    ensure_vqa_demo(ctx)
    auth.add_user(ctx.database, "boss", "admin", "password1")
    auth.add_user(ctx.database, "rev", "reviewer", "password1")
    write_models(ctx.settings, [RANDOM, ECHO])
    study = studies.create_study(
        ctx.database, "boss", name="VQA pilot", kind="vqa", tasks_per_worker=4, qualification_size=0,
        completion_code="DONE1",
    )  # fmt: skip
    names = {}
    for worker in CROWD:
        arrival = workers.arrive(ctx.database, ctx.settings, study, Visit(worker, {}), "127.0.0.1")
        names[worker] = arrival.worker.username
        for item_id, letters in CROWD[worker].items():
            _answer(ctx, arrival.worker.username, item_id, letters)
    _answer(ctx, "rev", "demo-obj-p", "A")
    _answer(ctx, "rev", "demo-count-p", "B")
    return ctx, study, names


def test_people_become_runs_scored_like_models_counted_never_named(lab):
    ctx, study, names = lab
    rows = {r["name"]: r for r in runs.leaderboard(ctx, "rev")}
    people = [n for n, r in rows.items() if r["kind"] == "people"]
    assert people == [
        "Humans (majority of 3)",
        "Humans (one annotator, mean)",
        "Best annotator",
        "Experts (majority of 1)",
        "Experts (one annotator, mean)",
    ]  # fmt: skip  (the expert answered 2 items: fewer than 4, no "Best expert")
    # majority: obj-p A right, count-p C right, vis-sim a tie (no answer: 0), prob-1 AD right: 3/4
    assert rows["Humans (majority of 3)"]["overall"] == 75.0
    # one annotator's mean: 1, 2/3, 1/3, (1/2 + 1 + 1)/3 = 5/6 -> 17/24 = 70.83%
    assert rows["Humans (one annotator, mean)"]["overall"] == 70.83
    # best annotator (4+ answers): w1 1, 1, 1, 1/2 = 87.5% beats w2 (75%) and w3 (50%)
    assert rows["Best annotator"]["overall"] == 87.5
    assert rows["Experts (majority of 1)"]["overall"] == 50.0 and rows["Experts (majority of 1)"]["questions"] == 2
    assert all(rows[n]["questions"] == 4 for n in people[:3])  # every row states the items it covers
    assert all(rows[n]["ci95_low"] <= rows[n]["overall"] <= rows[n]["ci95_high"] for n in people)
    assert rows["Humans (majority of 3)"]["status"] is None and rows["Humans (majority of 3)"]["errors"] is None
    manifests = runs.run_manifests(ctx)
    crowd = manifests["Humans (majority of 3)"]
    assert (crowd["kind"], crowd["group"], crowd["people"], crowd["answers"], crowd["studies"]) == (
        "people", "crowd", 3, 12, [study.id])  # fmt: skip
    assert crowd["answers_per_item"] == {"min": 3, "median": 3.0, "max": 3}
    # Krippendorff's α by hand: coincidences of A A A | C C B | C A B | A AD AD give D_o = 7/12 and
    # D_e = (144 - (25 + 9 + 4 + 4)) / 132 = 102/132, α = 1 - (7/12) / (102/132) = 0.2451
    assert crowd["krippendorff_alpha"] == 0.2451
    assert manifests["Best annotator"]["people"] == 1 and manifests["Best annotator"]["ranked_people"] == 3
    assert manifests["Experts (majority of 1)"]["group"] == "expert"
    shown = json.dumps([rows, manifests, runs.leaderboard_csv(list(rows.values()), manifests)])
    assert not [name for name in [*names.values(), "rev"] if name in shown]  # counted, never named


def test_each_model_is_paired_with_people_on_the_items_both_answered(lab):
    ctx, _study, _names = lab
    run_model(ctx, "rev", "echo")
    compared = runs.comparison(ctx, "rev", samples=200)
    pairs = {(p["model"], p["people"]): p for p in compared["people_vs_models"]}
    # echo answers A: right on obj-p only of the four. Majority right on obj-p, count-p, prob-1.
    majority = pairs[("echo", "Humans (majority of 3)")]
    assert (majority["n"], majority["model_only_right"], majority["people_only_right"]) == (4, 0, 2)
    assert majority["p_value"] == 0.5  # exact McNemar: 2 * P[X <= 0], X ~ Bin(2, 1/2) = 2 * 1/4
    best = pairs[("echo", "Best annotator")]  # w1: right on obj-p, count-p and vis-sim
    assert (best["n"], best["model_only_right"], best["people_only_right"]) == (4, 0, 2)
    experts = pairs[("echo", "Experts (majority of 1)")]  # rev: obj-p A (right), count-p B (wrong)
    assert (experts["n"], experts["model_only_right"], experts["people_only_right"]) == (2, 0, 0)
    assert "Humans (one annotator, mean)" in compared["not_paired"]
    assert not [p for p in compared["people_vs_models"] if p["model"].startswith("Humans")]


def test_a_pair_is_compared_on_the_items_both_answered_as_the_samples_view_counts_them(lab):
    from backend.inference import samples_api
    from backend.inference.run_items import list_runs

    ctx, _study, _names = lab
    run_model(ctx, "rev", "echo")
    run_model(ctx, "rev", "random")
    run_model(ctx, "rev", "echo", blind=True, limit=10)  # a blind run of 10 items always joins the comparison
    compared = runs.comparison(ctx, "rev", samples=200)
    pair = next(p for p in compared["comparison"]["pairs"] if {p["model_a"], p["model_b"]} == {"echo", "random"})
    # every run answered only the blind run's 10; the pair is on the 15 both answered (people are paired with
    # each model apart, in people_vs_models)
    assert compared["comparison"]["common_items"] == 10 and pair["n"] == 15
    assert not [p for p in compared["comparison"]["pairs"] if "Humans" in p["model_a"] + p["model_b"]]
    ids = {r.model: r.run_id for r in list_runs(ctx.database) if r.benchmark == "mmcomposition"}
    vs = samples_api.samples_vs(ctx, "rev", ids["echo"], ids["random"])
    assert vs["common"] == pair["n"]
    assert (vs["a_only_right"], vs["b_only_right"]) == (
        (pair["a_only_right"], pair["b_only_right"])
        if pair["model_a"] == "echo"
        else (pair["b_only_right"], pair["a_only_right"])
    )


def test_the_only_good_run_is_not_named_earlier_settings_after_a_failed_run_under_other_settings(lab):
    ctx, _study, _names = lab
    run_model(ctx, "rev", "echo")
    broken = ModelSpec("echo", "python", "test_people_runs:Unreachable")  # other settings, every call fails
    write_models(ctx.settings, [RANDOM, broken])
    ctx.pool.unload("echo")
    assert run_model(ctx, "rev", "echo")["status"] == "failed"
    write_models(ctx.settings, [RANDOM, ECHO])  # mended
    ctx.pool.unload("echo")
    names = [r["name"] for r in runs.leaderboard(ctx, "rev")]
    assert "echo" in names and not [n for n in names if n.startswith("echo [earlier settings")]
    unranked = [r["name"] for r in runs.unranked_runs(ctx, "rev")]
    assert [n for n in unranked if n.startswith("echo")] == [n for n in unranked if "[earlier settings" in n]


class Biased:
    """Generation always answers "A"; option likelihood always prefers the last option."""

    def __init__(self, spec) -> None:
        self.spec = spec

    def generate(self, requests, params):
        return ["The answer is (A)." for _ in requests]

    def score_options(self, request, options):
        from backend.inference.base import OptionScore

        return [OptionScore(float(i), float(i), 1) for i, _ in enumerate(options)]

    def unload(self) -> None:
        return None


def test_what_circular_evaluation_reveals_about_a_model_that_answers_by_position(lab):
    from backend.vqa.circular import position_bias

    ctx, _study, _names = lab
    generated = ModelSpec("biased", "python", "test_people_runs:Biased")
    scored = ModelSpec("biased-lik", "python", "test_people_runs:Biased", scoring="likelihood")
    write_models(ctx.settings, [RANDOM, ECHO, generated, scored])
    run_model(ctx, "rev", "biased", circular=True)
    run_model(ctx, "rev", "biased-lik")
    out = position_bias(ctx, "biased")
    # 13 single-choice items: ten with 4 options, two with 2, one with 3; "A" under every rotation flips on every
    # rotation after the first: 10*3 + 2*1 + 1*2 = 34 of 34
    assert out["flip"] == {"items": 13, "askings": 34, "flips": 34, "flip_rate": 1.0, "items_flipped": 13}
    # 47 answers, all at A; under uniform each item adds 1 to each of its positions: A 13, B 13, C 11, D 10
    positions = out["positions"]
    assert positions["observed"] == {"A": 47, "B": 0, "C": 0, "D": 0}
    assert positions["expected"] == {"A": 13.0, "B": 13.0, "C": 11.0, "D": 10.0}
    assert positions["chi2"] == round((47 - 13) ** 2 / 13 + 13 + 11 + 10, 4) and positions["dof"] == 3
    assert positions["p_value"] < 1e-6
    # run both ways: generation "A", likelihood the last option; they differ on every single-choice item
    both = out["both_ways"]
    print("BOTH", both)
    assert both["twin"] == "biased-lik" and both["items"] == 15 and both["disagree"] >= 13
    assert out["circular"]["consistency_rate"] == 0.0
    rows = {r["name"]: r for r in runs.leaderboard(ctx, "rev")}
    assert rows["biased"]["flip_rate"] == 100.0 and rows["biased-lik"]["flip_rate"] is None


def test_the_command_line_prints_people_beside_the_models_and_what_rotation_reveals(lab, capsys, monkeypatch):
    from backend.cli import main

    ctx, _study, names = lab
    monkeypatch.setenv("COMPSTUDIO_HUMAN_BEST_MIN_ITEMS", "4")  # as the fixture's settings
    write_models(ctx.settings, [RANDOM, ECHO, ModelSpec("biased", "python", "test_people_runs:Biased")])
    run_model(ctx, "rev", "echo")
    run_model(ctx, "rev", "biased", circular=True)
    data = str(ctx.settings.data_dir)
    assert main(["vqa", "people", "--json", "--data-dir", data]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in out["people"]][:3] == [
        "Humans (majority of 3)", "Humans (one annotator, mean)", "Best annotator"]  # fmt: skip
    assert out["manifests"]["Humans (majority of 3)"]["people"] == 3
    table = out["paper_table"]
    assert table[0]["Method"] == "Humans (majority of 3)" and table[0]["Overall"] == 75.0 and table[0]["Items"] == 4
    assert table[-1]["Method"] == "Random Choice" and table[-1]["Items"] == 15
    pair = next(p for p in out["people_vs_models"] if (p["model"], p["people"]) == ("echo", "Humans (majority of 3)"))
    assert (pair["n"], pair["model_only_right"], pair["people_only_right"]) == (4, 0, 2)
    assert not [n for n in names.values() if n in json.dumps(out)]
    assert main(["vqa", "people", "--table", "--data-dir", data]) == 0
    printed = capsys.readouterr().out
    assert "| Method" in printed and "Humans (majority of 3)" in printed and "only people right" in printed
    assert main(["vqa", "position-bias", "biased", "--json", "--data-dir", data]) == 0
    figures = json.loads(capsys.readouterr().out)["models"][0]
    assert figures["flip"]["flip_rate"] == 1.0 and figures["positions"]["observed"]["A"] == 47
    assert main(["vqa", "position-bias", "--table", "--data-dir", data]) == 0
    printed = capsys.readouterr().out
    assert "Flips under rotation (%)" in printed and "| biased" in printed and "| echo " not in printed
    assert main(["compare", "--benchmark", "vqa", "--models", "echo", "--data-dir", data]) == 0
    compared = json.loads(capsys.readouterr().out)  # people always join, as blind runs do
    pair = next(p for p in compared["people_vs_models"] if p["people"] == "Humans (majority of 3)")
    assert (pair["model"], pair["n"], pair["people_only_right"]) == ("echo", 4, 2)
    assert main(["vqa", "position-bias", "nobody", "--data-dir", data]) == 2
    assert "no registered model named nobody" in capsys.readouterr().err


@pytest.fixture(scope="module")
def app(served_app):
    """The real app on the demo content, with ``echo`` (always "A") registered and run on the VQA items."""
    running = served_app(
        {"boss": "admin", "rev": "reviewer", "ann": "annotator"}, password="password1", demo=True,
        vqa_answers_per_item=3, human_best_min_items=4,
    )  # fmt: skip
    write_models(running.ctx.settings, [RANDOM, ECHO])
    run_model(running.ctx, "rev", "echo")
    return running


def test_a_vqa_study_run_by_three_workers_through_the_scripting_api(app):
    from e2e_helpers import ApiClient, ApiError

    from backend.campaigns import links
    from backend.vqa.items import list_items

    db = app.ctx.database
    study = studies.create_study(
        db, "boss", name="VQA by script", kind="vqa", tasks_per_worker=4, qualification_size=0, completion_code="OK1"
    )
    keys = {item.id: item.answer for item in list_items(db, status="verified")}
    answered: dict[str, list[tuple[str, ...]]] = {}
    pids = [f"{0x5F00AA11BB22CC33DD440000 + i:024x}" for i in range(3)]  # Prolific ids: 24 hexadecimal digits
    for pid, right in zip(pids, (True, True, False), strict=True):  # the third always answers "A"
        worker = ApiClient.by_link(links.worker_link(db, study, app.url, pid, STUDY_ID="S", SESSION_ID=pid))
        for _ in range(4):
            task = worker.run("vqa_next_answer")["task"]
            letters = list(keys[task["id"]]) if right else ["A"]
            answered.setdefault(task["id"], []).append(tuple(letters))
            worker.run("vqa_submit_answer", task["id"], letters)
    assert len(answered) == 4 and all(len(v) == 3 for v in answered.values())
    ann, rev = ApiClient(app.url, "ann", "password1"), ApiClient(app.url, "rev", "password1")
    rows = {r["name"]: r for r in ann.run("vqa_leaderboard")}
    majority = rows["Humans (majority of 3)"]
    assert (majority["kind"], majority["overall"], majority["questions"]) == ("people", 100.0, 4)
    assert majority["ci95_low"] == majority["ci95_high"] == 100.0
    assert rows["Best annotator"]["overall"] == 100.0 and rows["Best annotator"]["questions"] == 4
    compared = ann.run("vqa_comparison")
    pair = next(p for p in compared["people_vs_models"] if (p["model"], p["people"]) == ("echo", majority["name"]))
    wrong_for_echo = sum(1 for item in answered if keys[item] != ("A",))  # echo answers "A"; people the key
    assert (pair["n"], pair["model_only_right"], pair["people_only_right"]) == (4, 0, wrong_for_echo)
    with pytest.raises(ApiError, match="reviewer role"):
        ann.call("vqa_position_bias", None)
    assert rev.call("vqa_position_bias", None)["models"] == []  # nothing run under rotation yet


def test_the_report_shows_people_beside_the_models_as_the_paper_prints_them(lab):
    from backend.reporting.report import build_report

    ctx, _study, names = lab
    run_model(ctx, "rev", "echo")
    report = build_report(ctx, "rev", ["echo"])
    vqa = {r["run"]: r for r in report.table("vqa").rows}
    assert vqa["Humans (majority of 3)"]["kind"] == "people" and vqa["Humans (majority of 3)"]["questions"] == 4
    assert vqa["Humans (majority of 3)"]["ci95 low"] <= 75.0 <= vqa["Humans (majority of 3)"]["ci95 high"]
    paper = report.table("vqa_paper").rows
    assert [r["Method"] for r in paper] == [
        "Humans (majority of 3)", "Humans (one annotator, mean)", "Best annotator", "Experts (majority of 1)",
        "Experts (one annotator, mean)", "echo", "Random Choice",
    ]  # fmt: skip
    # echo answers "A": ten single-choice keys are A, probing A+D gives 1/2 and A+C+D 1/3: (10 + 5/6) / 15
    assert paper[1]["Overall"] == 70.83 and paper[5]["Overall"] == 72.22 and paper[5]["Items"] == 15
    people = {(r["model"], r["people"]): r for r in report.table("vqa_people").rows}
    row = people[("echo", "Humans (majority of 3)")]
    assert (row["items both answered"], row["only the model right"], row["only people right"]) == (4, 0, 2)
    outcomes = {r["model"] for r in report.table("outcomes").rows}
    assert "echo" in outcomes and not [m for m in outcomes if m.startswith(("Humans", "Experts", "Best"))]
    assert not [n for n in names.values() if n in json.dumps(report.sections, default=str)]


def test_planning_checks_become_runs_of_people_paired_with_each_model(tmp_path):
    from backend.planning.leaderboard import leaderboard
    from backend.planning.questions import list_questions
    from tests.conftest import VILPACT_DATA
    from tests.planning_helpers import planning_context

    ctx = planning_context(tmp_path, VILPACT_DATA, planning_annotators_per_question=3, human_best_min_items=3)
    for name in ("ann1", "ann2", "ann3"):
        auth.add_user(ctx.database, name, "annotator", "password-123")
    auth.add_user(ctx.database, "rev", "reviewer", "password-123")
    questions = list_questions(ctx.database)[:3]
    key = {q.id: q.answer_index for q in questions}
    q1, q2, q3 = (q.id for q in questions)
    checks = {  # ann1 always right; ann2 wrong on q3; ann3 wrong on q2 and q3, "none is plausible" on q3
        "ann1": {q1: key[q1], q2: key[q2], q3: key[q3]},
        "ann2": {q1: key[q1], q2: key[q2], q3: (key[q3] + 1) % 6},
        "ann3": {q1: key[q1], q2: (key[q2] + 1) % 6, q3: -1},
        "rev": {q1: key[q1]},  # a reviewer's check: an expert's, kept apart
    }
    with ctx.database.write() as db:
        for person, answers in checks.items():
            for qid, choice in answers.items():
                db.conn.execute(
                    "INSERT INTO planning_checks (question_id, annotator, plausible_choice, submitted_at) "
                    "VALUES (?, ?, ?, ?)",
                    (qid, person, choice, utcnow()),
                )
    board = leaderboard(ctx.database, None, False, 200, ctx)
    runs_ = board["runs"]
    # majority: q1 right (3 of 3), q2 right (2 of 3), q3 a three-way tie (no answer): 2 of 3
    assert runs_["Humans (majority of 3)"]["accuracy"] == 0.6667 and runs_["Humans (majority of 3)"]["n"] == 3
    # one annotator's mean: 1, 2/3, 1/3 -> 2/3; best annotator: ann1, 3 of 3
    assert runs_["Humans (one annotator, mean)"]["accuracy"] == 0.6667
    assert runs_["Best annotator"]["accuracy"] == 1.0
    assert runs_["Experts (majority of 1)"]["n"] == 1 and runs_["Experts (majority of 1)"]["kind"] == "people"
    assert runs_["Humans (majority of 3)"]["manifest"]["people"] == 3
    assert board["people_vs_models"] == []  # no model run yet
    from backend.inference.runner import run_eval
    from backend.planning.leaderboard import stored_answers

    run_eval(ctx, "vilpact-planning", "random", load_options={"mode": "text"})
    chosen = stored_answers(ctx.database, ctx=ctx)["random"]
    model_right = {q: chosen.get(q) == key[q] for q in (q1, q2, q3)}
    people_right = {q1: True, q2: True, q3: False}  # the majority: q3 is a tie
    board = leaderboard(ctx.database, None, False, 200, ctx)
    pair = next(
        p for p in board["people_vs_models"] if (p["model"], p["people"]) == ("random", "Humans (majority of 3)")
    )
    assert pair["n"] == 3  # the three questions people checked, not the 510 the model answered
    assert pair["model_only_right"] == sum(model_right[q] and not people_right[q] for q in model_right)
    assert pair["people_only_right"] == sum(people_right[q] and not model_right[q] for q in model_right)
    assert board["runs"]["random"]["n"] == len(list_questions(ctx.database))
    from backend.planning.leaderboard import compare

    again = compare(ctx.database, ["random"], False, 200, ctx)["people_vs_models"]
    assert next(p for p in again if p["people"] == "Humans (majority of 3)") == pair


def test_samples_show_people_beside_the_model_with_their_two_filters_never_to_an_item_s_verifier(lab):
    from backend.inference import samples_api
    from backend.inference.run_items import list_runs

    ctx, _study, _names = lab
    run_model(ctx, "rev", "echo")
    auth.add_user(ctx.database, "ver", "reviewer", "password1")
    with ctx.database.write() as db:  # "ver" verified demo-prob-1: they set its key, so never see people's answers
        db.conn.execute(
            "INSERT INTO vqa_verifications (item_id, verifier, decision, submitted_at) VALUES (?, ?, 'accept', ?)",
            ("demo-prob-1", "ver", utcnow()),
        )
    run_id = next(r.run_id for r in list_runs(ctx.database) if r.model == "echo" and r.benchmark == "mmcomposition")

    def page(user: str, name: str) -> dict:
        return samples_api.samples_page(ctx, user, run_id, filter=name, page_size=50)

    # split: count-p (C, C from the crowd; B, B from w3 and the expert: 2 of 4 is no majority), vis-sim (C, A, B)
    split = page("rev", "people_split")
    assert [r["item_id"] for r in split["rows"]] == ["demo-count-p", "demo-vis-sim"]
    assert split["rows"][0]["people"] == {"counts": {"B": 2, "C": 2}, "key": "C", "answers": 4}
    # people agree on the key (2 of 3 or more) where echo is wrong: prob-1 (A+D twice; echo read A: 1/2)
    gap = page("rev", "people_agree_model_wrong")
    assert [r["item_id"] for r in gap["rows"]] == ["demo-prob-1"] and gap["rows"][0]["outcome"] == "partly right"
    assert gap["counts"]["people_split"] == 2 and gap["counts"]["people_agree_model_wrong"] == 1
    everything = {r["item_id"]: r["people"] for r in page("rev", "all")["rows"]}
    assert everything["demo-obj-p"]["counts"] == {"A": 4} and everything["demo-attr-p"] is None  # nobody answered
    detail = samples_api.sample(ctx, "rev", run_id, "demo-prob-1")
    assert detail["people"] == {"counts": {"A": 1, "A+D": 2}, "key": "A+D", "answers": 3}
    # the verifier of prob-1: not in their filter, no counts on its row or its detail
    assert page("ver", "people_agree_model_wrong")["rows"] == []
    assert {r["item_id"]: r["people"] for r in page("ver", "all")["rows"]}["demo-prob-1"] is None
    assert samples_api.sample(ctx, "ver", run_id, "demo-prob-1")["people"] is None
