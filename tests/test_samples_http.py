"""The Samples endpoints over HTTP (issue 28 §4), as a script calls them: a page of a run's samples, one sample
as the model saw it (its image files served by the app), two runs' discordant items; refused to annotators."""

from __future__ import annotations

import pytest
from e2e_helpers import ApiClient, ApiError

from backend.inference.paired import compare_stored
from backend.inference.registry import ModelSpec
from backend.inference.runner import run_eval

PASSWORD = "password1"


@pytest.fixture(scope="module")
def app(served_app):
    running = served_app({"rev": "reviewer", "ann": "annotator"}, password=PASSWORD)
    ctx = running.ctx
    ctx.models.register_model(ModelSpec("random-2", "random", options={"seed": 2}))
    running.runs = {m: run_eval(ctx, "toy-colors", m) for m in ("random", "random-2")}
    return running


def test_a_page_of_samples_by_model_and_benchmark(app):
    client = ApiClient(app.url, "rev", PASSWORD)
    page = client.run("results_samples", "", "random", "toy-colors", "wrong", "", "", 1, 10)
    summary = app.runs["random"]
    assert page["run"]["run_id"] == summary.run_id and page["counts"]["all"] == 24
    assert page["total"] == page["counts"]["wrong"] and len(page["rows"]) == min(10, page["total"])
    assert {"item_id", "category", "answer", "raw_output", "parsed", "outcome", "score", "rotation",
            "prompt_sha256", "key"} <= set(page["rows"][0])  # fmt: skip
    everything = client.run("results_samples", str(summary.run_id), "", "", "all", "", "", 1, 500)
    assert sum(r["score"] for r in everything["rows"]) / 24 == pytest.approx(summary.score)


def test_one_sample_with_its_images_served(app):
    client = ApiClient(app.url, "rev", PASSWORD)
    run_id = str(app.runs["random"].run_id)
    shown = client.run("results_sample", run_id, "toy-001")
    assert shown["sample"]["item_id"] == "toy-001" and shown["prompt"]["proven"]
    assert "Which colours appear" in shown["prompt"]["prompt_text"]
    assert [s["rule"] for s in shown["trace"]["steps"]][-1] == "letter list"
    images = shown["prompt"]["images"]
    assert len(images) == 2 and all(i["exact"] for i in images)
    reply = client.http.get(f"/gradio_api/file={images[0]['path']}")
    assert reply.status_code == 200 and reply.content.startswith(b"\x89PNG")
    assert shown["key"]["settings_hash"] == shown["manifest"]["key"]["settings_hash"]


def test_two_runs_by_model_name(app):
    client = ApiClient(app.url, "rev", PASSWORD)
    result = client.run("results_samples_vs", str(app.runs["random"].run_id), "", "random-2", 1)
    pair = compare_stored(app.ctx, "toy-colors", ["random", "random-2"], samples=20)["comparison"]["pairs"][0]
    assert (result["a_only_right"], result["b_only_right"]) == (pair["a_only_right"], pair["b_only_right"])
    assert len(result["rows"]) == pair["a_only_right"] + pair["b_only_right"]
    runs = client.run("results_sample_runs", "", "toy-colors")
    assert [r["model"] for r in runs] == ["random-2", "random"]


def test_mistakes_and_annotators_are_refused_with_a_message(app):
    reviewer = ApiClient(app.url, "rev", PASSWORD)
    with pytest.raises(ApiError, match="there is no run 999"):
        reviewer.run("results_samples", "999", "", "", "all", "", "", 1, 10)
    with pytest.raises(ApiError, match="filter must be one of"):
        reviewer.run("results_samples", str(app.runs["random"].run_id), "", "", "nope", "", "", 1, 10)
    annotator = ApiClient(app.url, "ann", PASSWORD)
    for name, args in (
        ("results_samples", ("", "random", "toy-colors", "all", "", "", 1, 10)),
        ("results_sample", (str(app.runs["random"].run_id), "toy-001")),
        ("results_samples_vs", (str(app.runs["random"].run_id), "", "random-2", 1)),
        ("results_sample_runs", ("", "")),
    ):
        with pytest.raises(ApiError, match="This needs the reviewer role"):
            annotator.run(name, *args)
