"""The OpenAI-compatible backend against a fake server on 127.0.0.1 that speaks the real protocol."""

from __future__ import annotations

import pytest
from fake_openai_server import FakeOpenAIServer

from backend.errors import InferenceError
from backend.inference.benchmarks import BenchmarkSpec, EvalItem
from backend.inference.registry import ModelSpec, build_backend, write_models
from backend.inference.request import GenerationParams, image, text, video
from backend.inference.runner import run_eval
from backend.inference.toy import _square

PARAMS = GenerationParams(max_new_tokens=8)


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer(delay_s=0.02, slow_s=1.0) as fake:
        yield fake


def _spec(server, name="fake", concurrency=4, **options) -> ModelSpec:
    merged = {"base_url": server.base_url, "timeout_s": 0.5, "retries": 2, "backoff_s": 0.01, **options}
    return ModelSpec(name, "openai", server.model, concurrency=concurrency, options=merged)


def _flaky_items(ctx=None) -> list[EvalItem]:
    prompts = ["plain one", "FLAKY once", "FAIL500 always", "SLOW reply", "plain two", "plain three"]
    return [EvalItem(f"f{i}", [text(p)], ("yes", "no"), frozenset("A")) for i, p in enumerate(prompts)]


def test_answers_round_trip_with_images_as_data_urls(server):
    backend = build_backend(_spec(server))
    server.reset()
    request = [image(_square("blue")), text("What colour?\nA. red\nB. blue\nC. green")]
    frames = [video(frames=[_square("green")] * 3), text("Colour?\nA. green\nB. red")]
    assert backend.generate([request, frames], PARAMS) == ["The answer is (B).", "The answer is (A)."]
    assert server.images_seen == 4  # one image, three frames
    backend.unload()


def test_unknown_served_model_is_an_error_not_a_retry(server):
    backend = build_backend(ModelSpec("x", "openai", "no-such-model", options={"base_url": server.base_url}))
    with pytest.raises(InferenceError, match="404"):
        backend.generate([[text("hi")]], PARAMS)


def test_failures_are_retried_then_recorded_without_stopping_the_run(ctx, server):
    ctx.benchmarks.register(BenchmarkSpec("test-flaky", "server failures", _flaky_items))
    write_models(ctx.settings, [_spec(server)])
    server.reset()
    summary = run_eval(ctx, "test-flaky", "fake")
    # failed is failed: the two failed calls are neither answers nor wrong answers
    assert summary.items == 6 and summary.errors == 2 and summary.scored == 4 and summary.score == 1.0
    assert summary.status == "finished with errors"
    attempts = {prompt.splitlines()[0]: count for prompt, count in server.attempts.items()}
    assert attempts["FLAKY once"] == 2  # a 500, then success
    assert attempts["FAIL500 always"] == 3 and attempts["SLOW reply"] == 3  # 1 + 2 retries
    assert attempts["plain one"] == 1
    errors = {r["item_id"]: r["error"] for r in ctx.database.query("SELECT * FROM predictions WHERE status='error'")}
    assert "HTTP 500" in errors["f2"] and "Timeout" in errors["f3"]


def test_concurrency_is_respected(ctx, server):
    for concurrency in (1, 3):
        backend = build_backend(_spec(server, concurrency=concurrency))
        server.reset()
        server.hold_until = concurrency  # each request waits until `concurrency` are in flight
        try:
            answers = backend.generate_each([[text(f"question {i}")] for i in range(9)], PARAMS)
        finally:
            server.hold_until = 0
        assert all(isinstance(a, str) for a in answers) and server.max_in_flight == concurrency
        backend.unload()


def test_option_scores_from_server_logprobs(server):
    backend = build_backend(_spec(server))
    scores = backend.score_options([image(_square("red")), text("What colour?")], ["blue", "red", "green"])
    # each option's own tokens after the prompt (the fake scores a word naming the colour seen -0.1)
    assert [s.sum_logprob for s in scores] == [-3.0, -0.1, -3.0] and [s.num_tokens for s in scores] == [1, 1, 1]
    backend.unload()


def test_api_key_is_sent_from_the_named_environment_variable(server, monkeypatch):
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    backend = build_backend(_spec(server, api_key_env="FAKE_KEY"))
    assert backend.client.headers["Authorization"] == "Bearer sk-test"
    backend.unload()
