"""nsplan-lite, bigram-prior and random: the algorithms on a hand-made knowledge base, then as models of
the inference layer on released questions (through the shared runner and prediction store)."""

from __future__ import annotations

import pytest

from backend.planning.baselines import BigramPrior, NSPlanLite, pick, random_choice
from backend.planning.knowledge import KBEntry
from backend.planning.results import bootstrap_accuracy, mcnemar_exact, report
from tests.conftest import VILPACT_DATA
from tests.planning_helpers import hashing_embed, planning_context

KB = [
    KBEntry("k1", ("c030", "c027", "c032", "c025"), 1, ("read a book", "S/He wants to learn")),
    KBEntry("k2", ("c030", "c027", "c032", "c028"), 1, ("read a book",)),
    KBEntry("k3", ("c110", "c108", "c106"), 1, ("S/He is thirsty", "drink water")),
    KBEntry("k4", ("c110", "c106", "c109"), 1, ("S/He is thirsty",)),
]


def test_nsplan_lite_retrieves_by_actions_and_intent():
    planner = NSPlanLite(KB, hashing_embed, intent_weight=0.5, top_k=2)
    retrieved = planner.retrieve(["c030"], "S/He wants to read a book")
    assert {entry.sequence_id for entry, _ in retrieved} == {"k1", "k2"}
    # intent only (no observed action): the thirsty sequences come first
    assert {e.sequence_id for e, _ in planner.retrieve([], "S/He is thirsty")} == {"k3", "k4"}


def test_nsplan_lite_scores_the_true_future_highest():
    planner = NSPlanLite(KB, hashing_embed, top_k=2)
    choices = [("c027", "c032"), ("c027", "c106"), ("c108", "c032"), ("c027", "c065"), ("c031",), ("c027", "c000")]
    scores = planner.score_choices(["c030"], "read a book", choices)
    assert pick(scores, "q") == 0
    assert sum(scores) == pytest.approx(1.0)


def test_bigram_prior_is_blind_and_prefers_seen_transitions():
    model = BigramPrior([e.actions for e in KB])
    assert model.score(["c110"], ["c108", "c106"]) > model.score(["c110"], ["c032", "c106"])


def test_ties_are_broken_reproducibly_and_random_is_uniform():
    assert pick([0.5, 0.5, 0.1], "q1") == pick([0.5, 0.5, 0.1], "q1")
    draws = [random_choice(f"q{i}") for i in range(600)]
    assert all(60 < draws.count(k) < 140 for k in range(6))


def test_bootstrap_and_mcnemar_on_a_small_example():
    acc = bootstrap_accuracy([True, False, True, True], samples=500)
    assert acc.value == 0.75 and 0 <= acc.low <= 0.75 <= acc.high <= 1
    # 8 discordant pairs all favouring the model: p = 2 * 0.5^8
    result = mcnemar_exact([True] * 8 + [True, False], [False] * 8 + [True, False])
    assert result["model_only"] == 8 and result["p_value"] == pytest.approx(2 * 0.5**8)


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    return planning_context(tmp_path_factory.mktemp("baselines"), VILPACT_DATA)


def test_baselines_run_through_the_shared_runner(ctx, monkeypatch):
    from backend.inference.runner import run_eval
    from backend.planning.leaderboard import leaderboard

    monkeypatch.setattr(ctx.embeddings, "embed", lambda texts, model=None: hashing_embed(list(texts)))
    ctx.pool.unload()
    for model in ("nsplan-lite", "bigram-prior", "random"):
        summary = run_eval(ctx, "vilpact-planning", model, limit=40)
        assert summary.items == 40 and summary.errors == 0 and summary.parse_failures == 0
    again = run_eval(ctx, "vilpact-planning", "bigram-prior", limit=40)
    assert again.newly_computed == 0  # answers come from the prediction store
    board = leaderboard(ctx.database, baseline="bigram-prior", samples=200)
    assert set(board["runs"]) == {"nsplan-lite", "bigram-prior", "random"}
    assert board["runs"]["nsplan-lite"]["answered"] == 40
    assert board["runs"]["random"]["refusals"] == 0 and board["runs"]["random"]["parse_failures"] == 0
    assert "mcnemar_vs_bigram-prior" in board["runs"]["random"]
    assert set(board["runs"]["random"]["by_length"]) <= {"1", "2", "3", "4+"}
    ctx.pool.unload()


def test_circular_items_rotate_the_choices(ctx):
    from backend.planning.evaluation import chosen_index, load_planning_items

    items = load_planning_items(ctx, mode="text", circular=True, limit=1)
    assert len(items) == 6 and len({i.item_id for i in items}) == 6
    answers = {chosen_index(i.meta, i.answer) for i in items}
    assert len(answers) == 1  # the key letter moves with the rotation, the key does not
    assert "Their intent" in items[0].request[-1]["text"] and items[0].meta["mode"] == "text"


def test_report_scores_humans_on_the_questions_they_checked(ctx):
    from backend.planning.questions import list_questions

    questions = list_questions(ctx.database)[:10]
    runs = {"model": {q.id: q.answer_index for q in questions}, "human": {questions[0].id: questions[0].answer_index}}
    out = report(questions, runs, baseline="model", samples=100)
    assert out["runs"]["human"]["n"] == 1 and out["runs"]["human"]["accuracy"] == 1.0
    assert out["runs"]["model"]["n"] == 10


def test_a_partial_run_is_reported_as_partial_and_compared_on_common_questions(ctx):
    """Issue 13 §6, by hand: 10 questions; the full run is right on the first 6 (6/10), the partial run was
    asked 4 (questions 0, 1, 6, 7: right on 0 and 6, an unread answer on 1, wrong on 7) -> 2/4 = 0.5, reported
    "4 of 10". Paired on its 4 questions: full right on 0, 1; partial right on 0, 6 -> one discordant pair
    each way, McNemar p = 1, difference 0.5 - 0.5 = 0."""
    from backend.planning.questions import list_questions

    questions = list_questions(ctx.database)[:10]
    wrong = {q.id: (q.answer_index + 1) % 6 for q in questions}
    full = {q.id: (q.answer_index if i < 6 else wrong[q.id]) for i, q in enumerate(questions)}
    q = questions
    partial = {q[0].id: q[0].answer_index, q[1].id: None, q[6].id: q[6].answer_index, q[7].id: wrong[q[7].id]}
    out = report(questions, {"full": full, "partial": partial}, baseline="full", samples=200)
    run = out["runs"]["partial"]
    assert (run["run"], run["partial"], run["n"], run["correct"], run["accuracy"]) == ("4 of 10", True, 4, 2, 0.5)
    assert run["answered"] == 3  # the unread answer is in the run, counted wrong, not answered
    assert out["runs"]["full"]["run"] == "10 of 10" and out["runs"]["full"]["partial"] is False
    versus = run["mcnemar_vs_full"]
    assert (versus["n"], versus["model_only"], versus["baseline_only"], versus["p_value"]) == (4, 1, 1, 1.0)
    pair = out["comparison"]["pairs"][0]
    assert out["comparison"]["common_items"] == 4
    assert (pair["accuracy_a"], pair["accuracy_b"], pair["difference"], pair["p_value"]) == (0.5, 0.5, 0.0, 1.0)


def test_leaderboard_keeps_answered_refused_and_unparsed_apart(ctx):
    from backend.inference.parsing import ParsedAnswer
    from backend.inference.store import Prediction, save, start_run
    from backend.planning.evaluation import BENCHMARK
    from backend.planning.leaderboard import leaderboard
    from backend.planning.questions import list_questions

    questions = list_questions(ctx.database)
    first = questions[0]
    parsed = [
        ParsedAnswer("ok", frozenset("ABCDEF"[first.answer_index])),
        ParsedAnswer("refusal"),
        ParsedAnswer("unparsed"),
        ParsedAnswer("unparsed"),
    ]
    run_id = start_run(ctx.database, BENCHMARK, "hedging-model", "h1", "test", {})
    rows = [
        Prediction("hedging-model", BENCHMARK, q.id, "p", "h1", p.status, "raw", p, float(p.ok), 1.0)
        for q, p in zip(questions, parsed, strict=False)
    ]
    save(ctx.database, rows, run_id)
    run = leaderboard(ctx.database, baseline=None, samples=50)["runs"]["hedging-model"]
    assert (run["answered"], run["refusals"], run["parse_failures"], run["errors"]) == (1, 1, 2, 0)
    assert run["correct"] == 1 and run["n"] == 4 and run["run"] == f"4 of {len(questions)}"  # a partial run
    assert run["parse_failure_rate"] == 0.5
    assert run["refusal_rate"] == run["answered_rate"] == 0.25
    human = report(questions[:2], {"human": {first.id: first.answer_index}}, samples=10)
    assert human["runs"]["human"]["answered_rate"] == 1.0 and human["runs"]["human"]["refusals"] is None


def test_a_run_whose_calls_failed_shows_its_errors_and_status_on_the_leaderboard(ctx):
    """The bug of issue 42: a run that failed on most of its calls showed ``errors: 0`` (failed calls were dropped
    before they were counted)."""
    from backend.inference.parsing import ParsedAnswer
    from backend.inference.store import Prediction, save, start_run
    from backend.planning.evaluation import BENCHMARK
    from backend.planning.leaderboard import compare, leaderboard
    from backend.planning.questions import list_questions

    questions = list_questions(ctx.database)[:5]
    run_id = start_run(ctx.database, BENCHMARK, "flaky-model", "f1", "test", {})
    ok = ParsedAnswer("ok", frozenset("A"))
    rows = [Prediction("flaky-model", BENCHMARK, questions[0].id, "p", "f1", "ok", "A", ok, 1.0, 1.0)]
    rows += [
        Prediction("flaky-model", BENCHMARK, q.id, "p", "f1", "error", None, None, None, 1.0, error="timeout")
        for q in questions[1:]
    ]
    save(ctx.database, rows, run_id)
    run = leaderboard(ctx.database, baseline=None, samples=20)["runs"]["flaky-model"]
    assert (run["errors"], run["answered"], run["status"]) == (4, 1, "finished with errors")
    assert run["error_rate"] == 0.8 and run["n"] == 1  # scored on its one answer, its failures counted apart
    compared = compare(ctx.database, ["flaky-model"], samples=20)["runs"]["flaky-model"]
    assert (compared["errors"], compared["status"]) == (4, "finished with errors")


def test_the_transition_prior_adds_to_the_log_of_the_retrieval_score():
    import math

    prior = BigramPrior([e.actions for e in KB])
    choices = [("c108", "c106"), ("c106", "c108"), ("c032", "c106")]
    pure = NSPlanLite(KB, hashing_embed, top_k=2).score_choices(["c110"], "S/He is thirsty", choices)
    mixed = NSPlanLite(KB, hashing_embed, top_k=2, prior=prior, prior_weight=0.5)
    scores = mixed.score_choices(["c110"], "S/He is thirsty", choices)
    log_prior = [prior.score(["c110"], c) for c in choices]
    for a, b in ((0, 1), (0, 2)):
        expected = math.log(pure[a]) - math.log(pure[b]) + 0.5 * (log_prior[a] - log_prior[b])
        assert scores[a] - scores[b] == pytest.approx(expected)
    assert pick(scores, "q") == 0


def test_frames_mode_samples_the_observed_window_once(ctx, tmp_path, monkeypatch):
    import backend.planning.media as media
    from backend.planning.evaluation import load_planning_items
    from backend.planning.questions import list_questions

    first = list_questions(ctx.database)[0]
    video = media.write_synthetic_video(tmp_path / f"{first.id}.mp4", 10, (96, 64))
    with ctx.database.write() as db:
        db.conn.execute("UPDATE sequences SET video_path = ? WHERE id = ?", (str(video), first.sequence_id))
    item = load_planning_items(ctx, mode="frames", limit=1)[0]
    assert item.request[0]["type"] == "video" and len(item.request[0]["frames"]) == ctx.settings.planning_frames
    assert item.meta["mode"] == "frames" and "frames above" in item.request[-1]["text"]
    start, end = media.observed_window_seconds(first.ob_start_frame, first.ob_end_frame)
    assert item.request[0]["fps"] == pytest.approx(ctx.settings.planning_frames / (end - start))
    for name in ("decode_decord", "decode_pyav"):
        monkeypatch.setattr(media, name, lambda *a, **k: pytest.fail("decoded the same window twice"))
    assert load_planning_items(ctx, mode="frames", limit=1)[0].meta["mode"] == "frames"
    assert load_planning_items(ctx, mode="text", limit=1)[0].meta["mode"] == "text"
    with ctx.database.write() as db:
        db.conn.execute("UPDATE sequences SET video_path = NULL WHERE id = ?", (first.sequence_id,))


def test_a_ten_question_batch_reads_ten_of_510_and_is_compared_on_its_ten(tmp_path):
    """Issue 13 §6 as seen: a 10-question bigram-prior batch read 'n 510, answered 10'. Now it is partial,
    scored on its 10, and the paired comparison with a 40-question run uses the 10 both answered."""
    from backend.inference.runner import run_eval
    from backend.planning.leaderboard import compare, leaderboard

    ctx = planning_context(tmp_path, VILPACT_DATA)
    run_eval(ctx, "vilpact-planning", "bigram-prior", limit=10, load_options={"mode": "text"})
    run_eval(ctx, "vilpact-planning", "random", limit=40, load_options={"mode": "text"})
    board = leaderboard(ctx.database, baseline="bigram-prior", samples=100)
    prior = board["runs"]["bigram-prior"]
    assert (prior["run"], prior["partial"], prior["n"], prior["answered"]) == ("10 of 510", True, 10, 10)
    assert prior["accuracy"] == round(prior["correct"] / 10, 4)
    assert board["runs"]["random"]["mcnemar_vs_bigram-prior"]["n"] == 10
    table = compare(ctx.database, ["random"], samples=100)
    assert set(table["runs"]) == {"random", "bigram-prior"}  # the blind baseline joins unasked
    assert table["comparison"]["common_items"] == 10 and len(table["comparison"]["pairs"]) == 1
    pair = table["comparison"]["pairs"][0]
    assert pair["n"] == 10 and pair["p_holm"] == pair["p_value"]  # one pair: Holm changes nothing


def test_circular_planning_reports_consistency_by_hand(tmp_path):
    """One question answered under all six rotations with the same wrong choice c (letter (c - r) mod 6 under
    rotation r): consistent, not circular-right; a second with three rotations only is incomplete, unscored."""
    from backend.inference.parsing import ParsedAnswer
    from backend.inference.store import Prediction, save, start_run
    from backend.planning.evaluation import BENCHMARK
    from backend.planning.leaderboard import leaderboard
    from backend.planning.questions import list_questions

    ctx = planning_context(tmp_path, VILPACT_DATA)
    first, second = list_questions(ctx.database)[:2]
    wrong = (first.answer_index + 1) % 6
    run_id = start_run(ctx.database, BENCHMARK, "steady", "s1", "test", {})

    def row(question, rotation, letter):
        parsed = ParsedAnswer("ok", frozenset(letter))
        return Prediction(
            "steady", BENCHMARK, f"{question.id}#text-r{rotation}", "p", "s1", "ok", letter, parsed, 0.0, 1.0
        )

    rows = [row(first, r, "ABCDEF"[(wrong - r) % 6]) for r in range(6)] + [row(second, r, "A") for r in range(3)]
    save(ctx.database, rows, run_id)
    run = leaderboard(ctx.database, baseline=None, circular=True, samples=50)["runs"]["steady"]
    assert (run["run"], run["correct"], run["consistency_rate"], run["incomplete"]) == ("1 of 510", 0, 1.0, 1)
