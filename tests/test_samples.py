"""Issue 28: the samples of stored runs, read from the prediction store as the leaderboards read it.

Per benchmark (planning, MMComposition, in-context): the mean of ``score`` over a run's samples is the run's
reported score, and two runs item by item give the discordant counts of that benchmark's paired comparison
(McNemar). Then the filters, paging and search over every outcome, one sample as the model saw it (prompt, the
frames with their times, the parse trace, the key, the manifest), and runs made before runs kept their items.
"""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest

from backend.accounts import auth
from backend.icl.demo import ensure_icl_demo
from backend.icl.evaluation import evaluate_by_category
from backend.inference import samples
from backend.inference.circular import circular_outcome, circular_summary
from backend.inference.paired import compare_stored
from backend.inference.registry import ModelSpec
from backend.inference.runner import run_eval
from backend.inference.samples import SampleQuery, find_run, iter_samples
from backend.inference.samples_detail import compare_runs, detail
from backend.inference.seen import seen_dir
from backend.planning import leaderboard
from backend.planning.evaluation import BENCHMARK as PLANNING
from backend.planning.media import write_synthetic_video
from backend.vqa.demo import ensure_vqa_demo
from backend.vqa.models import run_model
from backend.vqa.runs import comparison as vqa_comparison
from tests.conftest import VILPACT_DATA
from tests.planning_helpers import planning_context
from tests.samples_helpers import OUTPUTS, XSS

VIDEO_QUESTIONS = 2  # planning questions given a (synthetic) video: their items carry frames


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """ViLPAct's 510 questions (two with a video), the demo VQA items and in-context sets, a reviewer, and
    seeded random models beside the baselines."""
    tmp = tmp_path_factory.mktemp("samples")
    ctx = planning_context(tmp, VILPACT_DATA)
    ensure_vqa_demo(ctx)
    ensure_icl_demo(ctx)
    auth.add_user(ctx.database, "rev", "reviewer", "password123")
    questions = ctx.database.query(
        "SELECT id, sequence_id FROM planning_questions ORDER BY id LIMIT ?", (VIDEO_QUESTIONS,)
    )
    with ctx.database.write() as db:
        for q in questions:
            video = write_synthetic_video(tmp / "videos" / f"{q['sequence_id']}.mp4", 12, (96, 64))
            db.conn.execute("UPDATE sequences SET video_path = ? WHERE id = ?", (str(video), q["sequence_id"]))
    for spec in (
        ModelSpec("random-2", "random", options={"seed": 2}),
        ModelSpec("random-circular", "random", options={"seed": 5}),
        ModelSpec("scripted", "python", "samples_helpers:scripted_factory", batch_size=4),
    ):
        ctx.models.register_model(spec)
    return ctx


def _mean_score(ctx, run_id: int) -> tuple[int, float]:
    """How many samples the run has, and the mean of ``score`` over those with one (a failed call has none: it
    is left out of the run's score too, issue 24)."""
    rows = list(iter_samples(ctx, run_id))
    scored = [r.score for r in rows if r.score is not None]
    return len(rows), sum(scored) / len(scored)


# -- the mean of score is the run's reported score, per benchmark ---------------------------------------------


@pytest.fixture(scope="module")
def planning_runs(lab):
    return {
        model: run_eval(lab, PLANNING, model, load_options={"mode": "frames"}) for model in ("random", "bigram-prior")
    }


def test_planning_mean_score_is_the_reported_score(lab, planning_runs):
    for summary in planning_runs.values():
        count, mean = _mean_score(lab, summary.run_id)
        assert count == summary.items == 510
        assert mean == pytest.approx(summary.score, abs=1e-12)


def test_vqa_mean_score_is_the_reported_partial_credit(lab):
    reported = run_model(lab, "rev", "random")
    run = find_run(lab.database, "random", "mmcomposition")
    count, mean = _mean_score(lab, run.run_id)
    assert count == reported["items"] == 15
    assert mean == pytest.approx(reported["score"], abs=1e-12)
    scores = {r.score for r in iter_samples(lab, run.run_id)}
    assert any(0 < s < 1 for s in scores), "indefinite-choice items get partial credit"


def test_in_context_mean_score_is_the_reported_exact_match(lab):
    reported = evaluate_by_category(lab, "random")
    run = samples.get_run(lab.database, reported["run_id"])
    count, mean = _mean_score(lab, run.run_id)
    assert count == reported["items"] == 30
    assert mean == pytest.approx(reported["score"], abs=1e-12)
    for category, accuracy in reported["exact_match_by_category"].items():
        if category == "all":
            continue
        rows = list(iter_samples(lab, run.run_id, SampleQuery(category=category)))
        assert rows and sum(r.score or 0 for r in rows) / len(rows) == pytest.approx(accuracy)
        assert all(r.facets["setting"] == "full_similarity" for r in rows)


def test_circular_planning_mean_score_and_the_inconsistent_items(lab):
    summary = run_eval(lab, PLANNING, "random-circular", load_options={"mode": "text", "circular": True}, limit=60)
    count, mean = _mean_score(lab, summary.run_id)
    assert count == 60 and mean == pytest.approx(summary.score)
    rows = list(iter_samples(lab, summary.run_id))
    by_question: dict[str, dict[int, int | None]] = {}
    for row in rows:
        pick = row.rotations[row.rotation].original
        by_question.setdefault(row.base_id, {})[row.rotation] = "ABCDEF".index(pick) if pick else None
        assert len(row.rotations) == 6 and [r.rotation for r in row.rotations] == list(range(6))
    outcomes = [circular_outcome(picks, 0, 6) for picks in by_question.values()]  # the key does not matter here
    inconsistent = sum(o.complete and not o.consistent for o in outcomes)
    assert circular_summary(outcomes)["complete"] == 10
    shown = list(iter_samples(lab, summary.run_id, SampleQuery(filter="inconsistent")))
    assert len(shown) == 6 * inconsistent and {r.agree for r in shown} == {False}
    consistent = [r for r in rows if r.base_id not in {s.base_id for s in shown}]
    assert all(r.agree for r in consistent)
    assert samples.page(lab, summary.run_id).counts["inconsistent"] == 6 * inconsistent


# -- two runs item by item: the discordant pairs of the paired comparison ---------------------------------------


def test_planning_vs_rows_are_mcnemars_discordant_pairs(lab, planning_runs):
    a, b = planning_runs["random"], planning_runs["bigram-prior"]
    result = compare_runs(lab, a.run_id, b.run_id, everything=True)
    pair = leaderboard.compare(lab.database, ["random"], ctx=lab, samples=50)["comparison"]["pairs"][0]
    assert (pair["model_a"], pair["model_b"]) == ("random", "bigram-prior")
    assert (result.common, result.a_only_right, result.b_only_right) == (
        pair["n"],
        pair["a_only_right"],
        pair["b_only_right"],
    )
    assert len(result.rows) == pair["a_only_right"] + pair["b_only_right"]
    assert all((r.a.score == 1) != (r.b.score == 1) for r in result.rows)


def test_vqa_vs_rows_are_mcnemars_discordant_pairs(lab):
    run_model(lab, "rev", "random")
    run_model(lab, "rev", "random-2")
    a, b = find_run(lab.database, "random", "mmcomposition"), find_run(lab.database, "random-2", "mmcomposition")
    result = compare_runs(lab, a.run_id, b.run_id, everything=True)
    pair = vqa_comparison(lab, "rev", ["random", "random-2"], samples=50)["comparison"]["pairs"][0]
    assert (result.common, result.a_only_right, result.b_only_right) == (
        pair["n"],
        pair["a_only_right"],
        pair["b_only_right"],
    )


def test_in_context_vs_rows_are_mcnemars_discordant_pairs(lab):
    first = run_eval(lab, "icl", "random")
    second = run_eval(lab, "icl", "scripted")
    result = compare_runs(lab, first.run_id, second.run_id, everything=True)
    pair = compare_stored(lab, "icl", ["random", "scripted"], samples=50)["comparison"]["pairs"][0]
    assert (result.common, result.a_only_right, result.b_only_right) == (
        pair["n"],
        pair["a_only_right"],
        pair["b_only_right"],
    )
    assert result.common < 30, "the scripted model's failed calls are left out of the pairs"


def test_vs_pairs_two_settings_of_one_model_by_test_case(lab):
    """A grid of settings stores each case under its own item id; the view pairs them by the case."""
    similar = run_eval(lab, "icl", "random")
    diverse = run_eval(lab, "icl", "random", load_options={"setting": "random"})
    result = compare_runs(lab, similar.run_id, diverse.run_id, everything=True)
    assert result.common == 30
    keyed = {"key": lambda item: f"{item.meta['tests']}:{item.meta['line']}"}
    from backend.inference.comparison import mcnemar_exact
    from backend.inference.paired import stored_outcomes

    one = stored_outcomes(lab, "icl", "random", None, **keyed)
    two = stored_outcomes(lab, "icl", "random", {"setting": "random"}, **keyed)
    common = sorted(set(one) & set(two))
    only_a, only_b, _ = mcnemar_exact([one[c] for c in common], [two[c] for c in common])
    assert (result.a_only_right, result.b_only_right) == (only_a, only_b)


def test_runs_of_two_benchmarks_are_not_compared(lab, planning_runs):
    icl = find_run(lab.database, "random", "icl")
    with pytest.raises(Exception, match="pick two runs of one benchmark"):
        compare_runs(lab, planning_runs["random"].run_id, icl.run_id)


# -- every outcome, the filters, paging and search --------------------------------------------------------------


@pytest.fixture(scope="module")
def scripted(lab):
    return run_eval(lab, "toy-colors", "scripted")


def test_failed_calls_are_out_of_the_mean_as_out_of_the_reported_score(lab, scripted):
    count, mean = _mean_score(lab, scripted.run_id)
    assert count == scripted.items == 24 and scripted.errors > 0
    assert scripted.scored == count - scripted.errors
    assert mean == pytest.approx(scripted.score, abs=1e-12)


def test_filters_keep_each_outcome_apart(lab, scripted):
    rows = list(iter_samples(lab, scripted.run_id))
    by_status: dict[str | None, int] = {}
    for row in rows:
        by_status[row.status] = by_status.get(row.status, 0) + 1
    counts = samples.page(lab, scripted.run_id).counts
    assert counts["all"] == len(rows) == 24
    assert counts["unparsed"] == by_status.get("unparsed", 0) > 0
    assert counts["refused"] == by_status.get("refusal", 0) > 0
    assert counts["failed"] == by_status.get("error", 0) == scripted.errors > 0
    assert counts["right"] + counts["wrong"] + counts["failed"] == counts["all"]
    wrong = list(iter_samples(lab, scripted.run_id, SampleQuery(filter="wrong")))
    assert {r.outcome for r in wrong} <= {"wrong", "partly right", "refused", "unparsed"}
    assert all(r.score is None and r.outcome == "failed" for r in rows if r.status == "error")
    assert {r.parsed for r in rows if r.status == "refusal"} == {"refused"}
    assert {r.parsed for r in rows if r.status == "unparsed"} == {"unparsed"}


def test_json_answers_are_read_and_traced(lab, scripted):
    rows = [r for r in iter_samples(lab, scripted.run_id) if (r.raw_output or "").startswith(("{", "```"))]
    assert rows and all(r.status == "ok" and r.how.startswith("JSON") for r in rows)
    shown = detail(lab, scripted.run_id, rows[0].item_id)
    assert shown.trace is not None and shown.trace.result.how == rows[0].how and not shown.reread_differs
    assert [s.rule for s in shown.trace.steps][-1] == "JSON and answer markers"


def test_search_and_paging(lab, scripted):
    found = list(iter_samples(lab, scripted.run_id, SampleQuery(search="CANNOT tell")))
    assert found and all("cannot tell" in r.raw_output.lower() for r in found)
    assert list(iter_samples(lab, scripted.run_id, SampleQuery(search="100%_\\"))) == []
    pages = [samples.page(lab, scripted.run_id, SampleQuery(page=n, page_size=5)) for n in range(1, 6)]
    assert {p.pages for p in pages} == {5} and {p.total for p in pages} == {24}
    assert [r.item_id for p in pages for r in p.rows] == [r.item_id for r in iter_samples(lab, scripted.run_id)]
    assert samples.page(lab, scripted.run_id, SampleQuery(page=9, page_size=5)).rows == []
    with pytest.raises(Exception, match="filter must be one of"):
        samples.page(lab, scripted.run_id, SampleQuery(filter="bogus"))


def test_export_rows_have_the_issues_fields(lab, scripted):
    row = next(iter_samples(lab, scripted.run_id)).export_row()
    assert list(row) == [
        "item_id", "category", "answer", "raw_output", "parsed", "outcome", "score", "rotation", "prompt_sha256", "key",
    ]  # fmt: skip
    assert row["key"]["prompt_hash"] == row["prompt_sha256"][:16]
    assert set(row["key"]) == {"model", "benchmark", "item_id", "prompt_hash", "settings_hash"}


# -- one item as the model saw it ---------------------------------------------------------------------------------


def test_a_planning_item_shows_the_frames_the_model_got_with_their_times(lab, planning_runs):
    from backend.inference.benchmarks import get_benchmark
    from backend.inference.request import pixels_sha

    run = planning_runs["random"]
    first = next(iter_samples(lab, run.run_id))
    shown = detail(lab, run.run_id, first.item_id)
    assert shown.prompt is not None and shown.prompt.proven
    frames = shown.prompt.images
    assert len(frames) == lab.settings.planning_frames and all(f.exact and f.path for f in frames)
    times = [f.time_s for f in frames]
    assert times == sorted(times) and 0 <= times[0] < times[-1] <= 12
    item = get_benchmark(lab, PLANNING).load_items(lab, mode="frames", limit=1)[0]
    assert [pixels_sha(f) for f in item.request[0]["frames"]] == [f.sha for f in frames]
    assert times == item.request[0]["timestamps"]
    assert "Their intent:" in shown.prompt.text and shown.prompt.text.startswith("<video>")
    assert shown.manifest and shown.manifest["key"]["settings_hash"] == first.key["settings_hash"]
    assert shown.sample.facets["scene"] and shown.sample.facets["future_length"] >= 1


def test_kept_frames_are_checked_against_their_digest(lab, planning_runs):
    run = planning_runs["random"]
    first = next(iter_samples(lab, run.run_id))
    frame = detail(lab, run.run_id, first.item_id).prompt.images[0]
    kept = seen_dir(lab.settings) / f"{frame.sha}.png"
    original = kept.read_bytes()
    try:
        from PIL import Image

        pixels = np.asarray(Image.open(kept)).copy()
        pixels[0, 0, 0] ^= 1
        Image.fromarray(pixels).save(kept)
        tampered = detail(lab, run.run_id, first.item_id).prompt.images[0]
        assert not tampered.exact and tampered.path is None
    finally:
        kept.write_bytes(original)
    assert detail(lab, run.run_id, first.item_id).prompt.images[0].exact


def test_a_vqa_item_keeps_its_image_after_the_file_is_replaced(lab):
    run = find_run(lab.database, "random", "mmcomposition")
    first = next(iter_samples(lab, run.run_id))
    shown = detail(lab, run.run_id, first.item_id)
    image = shown.prompt.images[0]
    assert image.exact and image.path.startswith(str(seen_dir(lab.settings)))
    source = next(p for p in json.loads(
        lab.database.scalar("SELECT extras FROM prompt_records WHERE prompt_hash = ?", (first.prompt_hash,))
    ) if p.get("file"))["file"]  # fmt: skip
    backup = source + ".bak"
    shutil.copyfile(source, backup)
    try:
        with open(source, "wb") as handle:  # the item's image is overwritten (a re-import, an edit)
            handle.write(b"not the same picture")
        again = detail(lab, run.run_id, first.item_id).prompt.images[0]
        assert again.exact and again.path == image.path
    finally:
        shutil.move(backup, source)


def test_a_run_made_before_runs_kept_their_items_is_rebuilt_once(lab, scripted):
    rows = [r.export_row() for r in iter_samples(lab, scripted.run_id)]
    with lab.database.write() as db:
        db.conn.execute("DELETE FROM run_items WHERE run_id = ?", (scripted.run_id,))
        db.conn.execute("DELETE FROM run_item_sets WHERE run_id = ?", (scripted.run_id,))
        db.conn.execute("DELETE FROM prompt_records")
    shown = samples.page(lab, scripted.run_id, SampleQuery(page_size=50))
    assert shown.source == "rebuilt"
    assert [r.export_row() for r in shown.rows] == rows
    assert detail(lab, scripted.run_id, rows[0]["item_id"]).prompt is not None


def test_the_model_outputs_are_kept_verbatim(lab, scripted):
    """What the model said is data: the view escapes it; the store and the JSON keep it as it was."""
    xss = [r for r in iter_samples(lab, scripted.run_id) if r.raw_output == XSS]
    assert xss and xss[0].parsed == "B"  # the bold letter, read; the tag is text
    assert len(OUTPUTS) == 8


def test_unknown_runs_and_items_are_named(lab):
    with pytest.raises(Exception, match="there is no run 9999"):
        samples.page(lab, 9999)
    run = find_run(lab.database, "random", "icl")
    with pytest.raises(Exception, match="has no item 'nope'"):
        detail(lab, run.run_id, "nope")
    with pytest.raises(Exception, match="no finished run of random on toy-colors"):
        find_run(lab.database, "random", "toy-colors")


def test_a_page_reads_only_its_rows(lab, planning_runs):
    """Paging is done in SQL: a page of a large run fetches page_size rows."""
    run = planning_runs["bigram-prior"]
    page = samples.page(lab, run.run_id, SampleQuery(page=3, page_size=20))
    assert len(page.rows) == 20 and page.pages == math.ceil(510 / 20)
    assert [r.position for r in page.rows] == list(range(40, 60))
