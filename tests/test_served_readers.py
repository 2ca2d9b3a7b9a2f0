"""What the views show of a served model whose server is down (backend/inference/reading.py): its last run's
results, said in one sentence, on the VQA and planning leaderboards, the report, the paired comparisons and the
in-context breakdown; a reachable server serving other weights under the same name and URL never gets the old
results. Against the fake OpenAI-compatible server (tests/fake_openai_server.py), on the demo content."""

from __future__ import annotations

import pytest
from fake_openai_server import FakeOpenAIServer

from backend.accounts import auth
from backend.context import build_context
from backend.inference.benchmarks import get_benchmark
from backend.inference.reading import read_key
from backend.inference.registry import ModelSpec, get_spec, write_models
from backend.inference.runner import answer_item, run_eval, store_key
from backend.settings import Settings

PLANNING = {"mode": "text"}
RANDOM = ModelSpec("random", "random", options={"seed": 0})  # the registry file replaces the defaults: keep it
ICL = {"n": 2}

pytestmark = pytest.mark.slow  # the demo content and runs on three benchmarks: about half a minute


def _served(base_url: str | list[str], name: str = "served", **changes) -> ModelSpec:
    # a server that is down fails a run after 1 s, not the default 30 s (transport_options.py)
    options = {"base_url": base_url, "timeout_s": 2, "retries": 0, "backoff_s": 0.01, "unavailable_after_s": 1}
    options |= changes.pop("options", {})
    return ModelSpec(name, "openai", "fake-vlm", concurrency=4, options=options, **changes)


def _views(ctx) -> dict:
    """What a researcher opens: every view that shows the served model, as the views compute it."""
    from backend.icl.evaluation import category_breakdown
    from backend.inference.paired import compare_stored
    from backend.planning.leaderboard import compare, leaderboard
    from backend.reporting.report import build_report
    from backend.vqa import runs

    samples = 50
    try:
        icl = category_breakdown(ctx, "served", ICL, 6)
    except KeyError:  # no answer under the key read now (as the report's in-context section skips it)
        icl = None
    return {
        "vqa": {row["name"]: row for row in runs.leaderboard(ctx, "rev")},
        "vqa_unranked": {row["name"]: row for row in runs.unranked_runs(ctx, "rev")},
        "vqa_compared": runs.comparison(ctx, "rev", ["served", "random"], samples=samples),
        "planning": leaderboard(ctx.database, "bigram-prior", False, samples, ctx),
        "planning_compared": compare(ctx.database, ["served", "random"], False, samples, ctx),
        "report": build_report(ctx, "rev", ["served", "random"]),
        "paired": compare_stored(ctx, "toy-colors", ["served", "random"], samples=samples),
        "icl": icl,
    }


def _run_everything(ctx) -> None:
    from backend.icl.evaluation import evaluate_by_category
    from backend.vqa.models import run_model

    for model in ("served", "random"):
        run_eval(ctx, "vilpact-planning", model, limit=12, load_options=PLANNING)
        run_model(ctx, "rev", model)
        run_eval(ctx, "toy-colors", model, limit=12)
    evaluate_by_category(ctx, "served", ICL, limit=6)


@pytest.fixture
def lab(tmp_path):
    """The demo content, a served model run on planning, VQA, toy-colors and in-context, and its server."""
    from backend.icl.demo import ensure_icl_demo
    from backend.vilpact.demo import ensure_vilpact_demo
    from backend.vqa.demo import ensure_vqa_demo

    settings = Settings(data_dir=tmp_path / "data", demo_content=False)
    ctx = build_context(settings)
    ensure_vilpact_demo(ctx)
    ensure_vqa_demo(ctx)
    ensure_icl_demo(ctx)
    auth.add_user(ctx.database, "rev", "reviewer", "password1")
    with FakeOpenAIServer() as server:
        write_models(ctx.settings, [RANDOM, _served(server.base_url)])
        _run_everything(ctx)
        yield ctx, server, _views(ctx)


def _figures(views: dict) -> dict:
    """The served model's figures in every view (to compare before and after its server went down)."""
    report = views["report"]
    return {
        "vqa": views["vqa"]["served"]["overall"],
        "vqa_compared": views["vqa_compared"]["comparison"]["models"],
        "planning": {k: views["planning"]["runs"]["served"][k] for k in ("accuracy", "ci95", "n", "run")},
        "planning_compared": views["planning_compared"]["runs"]["served"],
        "paired": views["paired"]["runs"]["served"],
        "icl": views["icl"]["exact_match_by_category"],
        "report_planning": next(r for r in report.table("planning").rows if r["model"] == "served")["accuracy (%)"],
        "report_vqa": next(r for r in report.table("vqa").rows if r["run"] == "served")["overall (%)"],
        "report_icl": sorted((r["category"], r["exact match (%)"]) for r in report.table("icl").rows),
    }


def _sentences(views: dict) -> list[str | None]:
    """The sentence each view shows beside the served model's current results (None where it says nothing)."""
    coverage = {r["model"]: r for r in views["report"].table("coverage").rows}
    return [
        views["vqa"].get("served", {}).get("note"),
        views["vqa_compared"]["notes"].get("served"),
        views["planning"]["runs"].get("served", {}).get("note"),
        views["planning_compared"]["notes"].get("served"),
        coverage["served"].get("note") or None,
        views["paired"]["notes"].get("served"),
        (views["icl"] or {}).get("note"),
    ]


def _answers(ctx, benchmark: str, shash: str) -> dict[str, str]:
    rows = ctx.database.query(
        "SELECT item_id, raw_output FROM predictions WHERE model = 'served' AND benchmark = ? AND settings_hash = ?",
        (benchmark, shash),
    )
    return {r["item_id"]: r["raw_output"] for r in rows}


def test_a_served_model_s_results_stay_in_every_view_while_its_server_is_down_and_each_says_so(lab):
    from backend.vqa.models import run_model
    from components.planning.results import _leaderboard_frames

    ctx, server, before = lab
    assert _sentences(before) == [None] * 7  # reachable: nothing to say, no note column
    assert "note" not in before["report"].table("coverage").columns and "note" not in before["vqa"]["served"]
    first_key = before["report"].sections["manifest"]["models"]["served"]["settings_hash"]
    server.kill()
    try:
        ctx.pool.unload("served")  # as when the app starts again: the backend's first call finds no server
        down = _views(ctx)
        assert _figures(down) == _figures(before)  # the same results: neither vanished nor "earlier settings"
        assert not [name for name in down["planning"]["runs"] if name.startswith("served [")]
        sentences = _sentences(down)
        said = f"served's server ({server.base_url}) is unreachable, so these are the results of its last run"
        assert all(s is not None and s.startswith(said) for s in sentences), sentences
        assert all("revision served:/models/fake-vlm-a|len=4096|server=0.0.fake|url=" in s for s in sentences)
        coverage = {r["model"]: r for r in down["report"].table("coverage").rows}
        assert coverage["random"]["note"] == ""  # the column is there for every model; only the served one speaks
        manifest = down["report"].sections["manifest"]["models"]["served"]
        assert manifest["settings_hash"] == first_key  # the report names the key it read: the last run's
        assert set(manifest["served_unreachable"]) == {"vilpact-planning", "mmcomposition", "icl"}
        shown, _lengths, _scenes = _leaderboard_frames(down["planning"])  # the Planning tab's table
        assert shown.loc[shown["Run"] == "served", "Note"].iloc[0] == down["planning"]["runs"]["served"]["note"]

        # runs started while the server is down fail under a key of their own; the views keep the last results
        failed = run_eval(ctx, "vilpact-planning", "served", limit=12, load_options=PLANNING)
        assert failed.status == run_model(ctx, "rev", "served")["status"] == "failed"
        again = _views(ctx)
        assert _figures(again) == _figures(before) and _sentences(again) == sentences
        assert (
            [n for n in again["vqa_unranked"] if n.startswith("served")]
            == [n for n in again["vqa_unranked"] if n.startswith("served [earlier settings")]
            != []
        )  # the failed run, named apart and never ranked
    finally:
        server.swap("/models/fake-vlm-b", shift=1)  # other weights under the same name, at the same URL
        server.revive()

    # reachable again, serving other weights: the old results are never shown as the model's current ones
    ctx.pool.unload("served")  # started again (a run would ask the server anew as well)
    views = _views(ctx)
    assert _sentences(views) == [None] * 7
    assert "served" not in views["planning"]["runs"] and "served" not in views["paired"]["runs"]
    assert [n for n in views["planning"]["runs"] if n.startswith("served")] == [
        f"served [earlier settings {first_key['vilpact-planning'][:6]}]"
    ]
    assert views["icl"] is None and views["paired"]["not_ranked"] == ["served"]
    recomputed = run_eval(ctx, "toy-colors", "served", limit=12)
    assert recomputed.newly_computed == 12 and recomputed.from_store == 0
    old_key = _first_key(ctx, "toy-colors")
    old, new = _answers(ctx, "toy-colors", old_key), _answers(ctx, "toy-colors", str(recomputed.settings_hash))
    assert len(new) == 12 and sum(old[i] != new[i] for i in new) == 12
    assert _views(ctx)["paired"]["runs"]["served"]["n"] == 12  # the new answers, without a sentence


def _first_key(ctx, benchmark: str) -> str:
    """The settings hash of the served model's first run on ``benchmark``."""
    return str(
        ctx.database.scalar(
            "SELECT settings_hash FROM eval_runs WHERE model = 'served' AND benchmark = ? ORDER BY id LIMIT 1",
            (benchmark,),
        )
    )


def test_a_reader_falls_back_to_the_newest_finished_run_whose_settings_match_and_runs_stay_strict(ctx):
    bench = get_benchmark(ctx, "toy-colors")
    with FakeOpenAIServer() as server:
        plain, longer = _served(server.base_url), _served(server.base_url, options={"extra_body": {"top_k": 5}})
        write_models(ctx.settings, [RANDOM, plain])
        first = run_eval(ctx, "toy-colors", "served", limit=6)
        live = answer_item(ctx, "toy-colors", "served", bench.load_items(ctx)[10])  # a run of one item
        assert not live.from_store and live.error is None
        write_models(ctx.settings, [RANDOM, longer])
        third = run_eval(ctx, "toy-colors", "served", limit=6)
        server.kill()
        runs = [r["id"] for r in ctx.database.query("SELECT id FROM eval_runs ORDER BY id")]
        assert len(runs) == 3 and first.run_id == runs[0] and third.run_id == runs[2]

        now = build_context(ctx.settings)  # started again, its server gone
        key = read_key(now, bench, get_spec(now, "served"))
        assert key.last_run is not None and key.last_run.run_id == third.run_id
        assert key.settings_hash == third.settings_hash != store_key(now, bench, get_spec(now, "served"))
        write_models(ctx.settings, [RANDOM, plain])  # back to the first settings: their newest run is the live answer
        key = read_key(build_context(ctx.settings), bench, plain)
        assert key.last_run is not None and key.last_run.run_id == runs[1]
        assert key.settings_hash == first.settings_hash and key.last_run.revision.startswith(
            "served:/models/fake-vlm-a"
        )
        other = _served(server.base_url, prompt_style="plain")  # settings never run: nothing to fall back to
        write_models(ctx.settings, [RANDOM, other])
        later = build_context(ctx.settings)
        key = read_key(later, bench, other)
        assert key.last_run is None and key.settings_hash == store_key(later, bench, other)
        assert key.note == (
            f"served's server ({server.base_url}) is unreachable, and no finished run of it on toy-colors matches "
            "its current settings, so it has no results to show."
        )
        assert run_eval(later, "toy-colors", "served", limit=6).status == "failed"  # runs stay strict
        assert read_key(later, bench, other).last_run is None  # a failed run is never fallen back to


def test_replicas_key_alike_in_any_order_and_while_one_of_them_is_down(ctx):
    bench = get_benchmark(ctx, "toy-colors")
    with FakeOpenAIServer() as a, FakeOpenAIServer() as b:
        write_models(ctx.settings, [RANDOM, _served([a.base_url, b.base_url])])
        first = run_eval(ctx, "toy-colors", "served", limit=6)
        assert first.newly_computed == 6
        urls = ",".join(sorted([a.base_url, b.base_url]))
        assert first.manifest["model"]["revision"].endswith(f"|url={urls}")
        write_models(ctx.settings, [RANDOM, _served([b.base_url + "/", a.base_url])])  # listed the other way round
        again = build_context(ctx.settings)
        assert store_key(again, bench, get_spec(again, "served")) == first.settings_hash
        assert run_eval(again, "toy-colors", "served", limit=6).newly_computed == 0
        a.kill()  # one replica down: the other says what is served, the key is the same
        one_left = build_context(ctx.settings)
        assert store_key(one_left, bench, get_spec(one_left, "served")) == first.settings_hash
        b.kill()
        none_left = build_context(ctx.settings)
        key = read_key(none_left, bench, get_spec(none_left, "served"))
        assert key.settings_hash == first.settings_hash and key.url == urls
        assert key.note is not None and key.note.startswith(f"served's server ({urls}) is unreachable, so these")


def test_views_read_the_backend_s_identity_and_never_probe_the_server_themselves(ctx):
    from backend.inference.paired import compare_stored

    with FakeOpenAIServer() as server:
        write_models(ctx.settings, [RANDOM, _served(server.base_url)])
        run_eval(ctx, "toy-colors", "served", limit=6)
        run_eval(ctx, "toy-colors", "random", limit=6)
        reads = server.gets["/v1/models"]
        for _ in range(5):
            shown = compare_stored(ctx, "toy-colors", ["served", "random"], samples=20)
        assert server.gets["/v1/models"] == reads and shown["runs"]["served"]["n"] == 6
        server.kill()  # not known to this app until a run asks again: its results are shown as they are keyed
        shown = compare_stored(ctx, "toy-colors", ["served", "random"], samples=20)
        assert shown["runs"]["served"]["n"] == 6 and shown["notes"] == {}
