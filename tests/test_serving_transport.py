"""Replicas, failover, 429 storms, Retry-After and adaptive concurrency, against fake OpenAI-compatible servers.

The fake servers (tests/fake_openai_server.py) count the 200 replies each prompt got (``answered``), so
"no item answered twice or lost" is checked where it happens. No assertion here is about speed; the few about
time are lower bounds the client cannot beat (it waited at least what the server asked).
"""

from __future__ import annotations

import time
from contextlib import ExitStack

import pytest
from fake_openai_server import FakeOpenAIServer

from backend.errors import InferenceError, ValidationError
from backend.inference.backends.transport import TransportOptions, retry_after_seconds
from backend.inference.benchmarks import BenchmarkSpec, EvalItem
from backend.inference.registry import ModelSpec, build_backend, write_models
from backend.inference.request import GenerationParams, text
from backend.inference.runner import run_eval

PARAMS = GenerationParams(max_new_tokens=8)


def _items(count: int):
    def load(ctx=None) -> list[EvalItem]:
        return [EvalItem(f"q{i}", [text(f"question {i}")], ("yes", "no"), frozenset("A")) for i in range(count)]

    return load


def _spec(urls, *, concurrency=4, name="fake", **options) -> ModelSpec:
    merged = {
        "base_url": urls if len(urls) > 1 else urls[0],
        "timeout_s": 5,
        "retries": 2,
        "backoff_s": 0.01,
        "health_interval_s": 0.05,
        **options,
    }
    return ModelSpec(name, "openai", "fake-vlm", concurrency=concurrency, options=merged)


def _servers(stack: ExitStack, count: int, **kwargs) -> list[FakeOpenAIServer]:
    return [stack.enter_context(FakeOpenAIServer(**kwargs)) for _ in range(count)]


def _answered(servers) -> dict[str, int]:
    total: dict[str, int] = {}
    for server in servers:
        for prompt, count in server.answered.items():
            total[prompt.splitlines()[0]] = total.get(prompt.splitlines()[0], 0) + count
    return total


def _wait_until(predicate, what: str, limit_s: float = 20.0) -> None:
    deadline = time.monotonic() + limit_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.02)


def test_options_take_a_list_of_replicas_and_check_the_limits():
    spec = _spec(["http://a:1/v1/", "http://b:1/v1"], adaptive_concurrency=True)
    options = TransportOptions.from_spec(spec)
    assert options.urls == ("http://a:1/v1", "http://b:1/v1")
    assert (options.min_concurrency, options.concurrency, options.max_concurrency) == (1, 4, 16)
    fixed = TransportOptions.from_spec(_spec(["http://a:1/v1"]))
    assert (fixed.adaptive, fixed.min_concurrency, fixed.max_concurrency) == (False, 4, 4)
    with pytest.raises(ValidationError, match="min_concurrency"):
        TransportOptions.from_spec(_spec(["http://a:1/v1"], adaptive_concurrency=True, min_concurrency=9))
    with pytest.raises(ValidationError, match="base_url"):
        TransportOptions.from_spec(ModelSpec("x", "openai", "m", options={}))
    with pytest.raises(ValidationError, match="twice"):
        TransportOptions.from_spec(_spec(["http://a:1/v1", "http://a:1/v1/"]))


def test_transport_options_do_not_change_the_prediction_key():
    plain = _spec(["http://a:1/v1"])
    tuned = _spec(["http://a:1/v1"], adaptive_concurrency=True, max_concurrency=32, timeout_s=9, retries=7)
    assert plain.fingerprint() == tuned.fingerprint()
    assert plain.fingerprint() != _spec(["http://a:1/v1"], native_video=True).fingerprint()


def test_retry_after_in_seconds_and_as_a_date():
    assert retry_after_seconds("2") == 2.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412490.0) == 0.0  # already past


def test_two_replicas_one_dying_mid_run_loses_nothing_and_answers_nothing_twice(ctx):
    with ExitStack() as stack:
        first, second = _servers(stack, 2, delay_s=0.02)
        second.die_after = 6  # its sixth request kills it, with others in flight
        ctx.benchmarks.register(BenchmarkSpec("test-replicas", "two replicas", _items(40)))
        write_models(ctx.settings, [_spec([first.base_url, second.base_url], concurrency=4)])
        summary = run_eval(ctx, "test-replicas", "fake")
        assert summary.items == 40 and summary.errors == 0 and summary.score == 1.0
        assert _answered([first, second]) == {f"question {i}": 1 for i in range(40)}
        rows = ctx.database.query("SELECT item_id, status FROM predictions WHERE benchmark = 'test-replicas'")
        assert len(rows) == 40 and {r["status"] for r in rows} == {"ok"}
        serving = summary.serving
        assert serving is not None and serving["failovers"] >= 1
        by_url = {r["url"]: r for r in serving["replicas"]}
        assert by_url[second.base_url]["taken_out"] == 1 and by_url[second.base_url]["answered"] <= 5
        assert by_url[first.base_url]["answered"] == 40 - by_url[second.base_url]["answered"]

        # the replica comes back: a health check puts it back, and it is sent requests again
        backend = ctx.pool.get(ctx.models.get_spec(ctx.settings, "fake"))
        second.revive()
        _wait_until(lambda: all(r.up for r in backend.transport.replicas), "the revived replica put back")
        before = second.calls
        assert backend.generate([[text(f"after {i}")] for i in range(4)], PARAMS) == ["The answer is (A)."] * 4
        assert second.calls > before
        assert backend.serving_report()["replicas"][1]["put_back"] == 1


def test_every_replica_down_ends_the_run_quickly_and_a_rerun_resumes(ctx):
    with ExitStack() as stack:
        first, second = _servers(stack, 2, delay_s=0.01)
        first.die_after, second.die_after = 5, 5
        ctx.benchmarks.register(BenchmarkSpec("test-outage", "outage", _items(30)))
        write_models(ctx.settings, [_spec([first.base_url, second.base_url], concurrency=2, unavailable_after_s=0.2)])
        broken = run_eval(ctx, "test-outage", "fake")
        assert broken.items == 30 and 0 < broken.errors < 30
        assert "no replica of model fake is reachable" in broken.error_examples[0]
        ok_before = _answered([first, second])
        first.revive()
        second.revive()
        backend = ctx.pool.get(ctx.models.get_spec(ctx.settings, "fake"))
        _wait_until(lambda: all(r.up for r in backend.transport.replicas), "both replicas put back")
        again = run_eval(ctx, "test-outage", "fake", retry_failed=True)
        assert again.errors == 0 and again.newly_computed == broken.errors and again.from_store == 30 - broken.errors
        answered = _answered([first, second])
        assert answered == {f"question {i}": 1 for i in range(30)}  # none asked twice, none lost
        assert set(ok_before) <= set(answered)


def test_a_429_storm_backs_off_and_every_item_is_answered_once(ctx):
    with FakeOpenAIServer(delay_s=0.01) as server:
        server.throttle_next(30)  # the next 30 requests, whoever sends them, get 429 without Retry-After
        ctx.benchmarks.register(BenchmarkSpec("test-storm", "storm", _items(40)))
        spec = _spec([server.base_url], concurrency=8, adaptive_concurrency=True, max_concurrency=16)
        write_models(ctx.settings, [spec])
        summary = run_eval(ctx, "test-storm", "fake")
        assert summary.errors == 0 and summary.items == 40
        assert _answered([server]) == {f"question {i}": 1 for i in range(40)}
        serving = summary.serving
        assert serving["throttled"] == 30 and serving["retry_after_waits"] == 0
        concurrency = serving["concurrency"]
        assert concurrency["adaptive"] and concurrency["start"] == 8 and concurrency["decreases"] >= 1
        assert concurrency["lowest"] < 8 and 1 <= concurrency["settled"] <= 16
        stored = ctx.database.query_one("SELECT summary FROM eval_runs WHERE id = ?", (summary.run_id,))
        assert '"settled"' in stored["summary"]  # the run record keeps the concurrency it settled at


def test_a_server_with_less_capacity_than_the_limit_is_met_by_backing_off(ctx):
    with FakeOpenAIServer(delay_s=0.02) as server:
        server.capacity = 2  # a third request in flight is answered 429
        backend = build_backend(_spec([server.base_url], concurrency=8, adaptive_concurrency=True))
        answers = list(backend.generate_each([[text(f"cap {i}")] for i in range(24)], PARAMS))
        assert answers == ["The answer is (A)."] * 24
        assert _answered([server]) == {f"cap {i}": 1 for i in range(24)}
        report = backend.serving_report()
        assert report["throttled"] >= 1 and report["concurrency"]["lowest"] <= 4
        backend.unload()


def test_a_fixed_limit_stays_fixed_through_a_storm():
    with FakeOpenAIServer() as server:
        server.throttle_next(10)
        backend = build_backend(_spec([server.base_url], concurrency=3))
        assert backend.generate([[text(f"fixed {i}")] for i in range(9)], PARAMS) == ["The answer is (A)."] * 9
        concurrency = backend.serving_report()["concurrency"]
        assert (concurrency["lowest"], concurrency["highest"], concurrency["settled"]) == (3, 3, 3)
        backend.unload()


def test_retry_after_is_honoured_before_the_request_is_sent_again():
    with FakeOpenAIServer() as server:
        server.throttle_next(1, retry_after=1)
        backend = build_backend(_spec([server.base_url], concurrency=1))
        assert backend.generate([[text("wait for me")]], PARAMS) == ["The answer is (A)."]
        (t429, _, s429), (t200, _, s200) = server.log
        assert (s429, s200) == (429, 200) and t200 - t429 >= 1.0  # it waited what the server asked
        report = backend.serving_report()
        assert report["throttled"] == 1 and report["retry_after_waits"] == 1
        backend.unload()


def test_retry_after_on_one_replica_sends_the_retry_to_the_other():
    with ExitStack() as stack:
        first, second = _servers(stack, 2)
        first.throttle_next(1, retry_after=30)  # far longer than the test: nothing may wait for it
        backend = build_backend(_spec([first.base_url, second.base_url], concurrency=1))
        assert backend.generate([[text(f"r{i}")] for i in range(3)], PARAMS) == ["The answer is (A)."] * 3
        assert [status for _, _, status in first.log] == [429]  # cooling down: nothing more was sent to it
        assert sorted(second.answered) == ["r0", "r1", "r2"]
        backend.unload()


def test_an_absurd_retry_after_is_capped_and_a_refusal_is_not_retried():
    with FakeOpenAIServer() as server:
        server.throttle_next(1, retry_after=3600)
        backend = build_backend(_spec([server.base_url], concurrency=1, max_retry_after_s=0.05))
        assert backend.generate([[text("capped")]], PARAMS) == ["The answer is (A)."]
        server.throttle_next(1, status=400)
        with pytest.raises(InferenceError, match="HTTP 400"):
            backend.generate([[text("refused")]], PARAMS)
        assert server.attempts["refused"] == 0 and [s for _, p, s in server.log if p == "refused"] == [400]
        assert backend.transport.limit.in_flight == 0  # the refused request freed its slot
        backend.unload()


def test_a_throttle_budget_bounds_the_wait():
    with FakeOpenAIServer() as server:
        server.throttle_next(50, retry_after=0.02)
        backend = build_backend(_spec([server.base_url], concurrency=1, throttle_budget_s=0.1))
        (answer,) = backend.generate_each([[text("never")]], PARAMS)
        assert isinstance(answer, InferenceError) and "slow down" in str(answer)
        backend.unload()


def test_latency_holding_lets_the_limit_grow_to_its_maximum():
    with FakeOpenAIServer(delay_s=0.03) as server:
        backend = build_backend(_spec([server.base_url], concurrency=2, adaptive_concurrency=True, max_concurrency=6))
        assert len(backend.generate([[text(f"grow {i}")] for i in range(90)], PARAMS)) == 90
        concurrency = backend.serving_report()["concurrency"]
        assert concurrency["increases"] >= 1 and concurrency["highest"] > 2
        backend.unload()


def test_extra_body_fields_reach_the_server_and_are_part_of_the_key():
    with FakeOpenAIServer() as server:
        backend = build_backend(_spec([server.base_url], extra_body={"ignore_eos": True, "top_k": 5}))
        backend.generate([[text("extra")]], PARAMS)
        assert server.last_body["ignore_eos"] is True and server.last_body["top_k"] == 5
        backend.unload()
    assert _spec(["http://a:1/v1"]).fingerprint() != _spec(["http://a:1/v1"], extra_body={"top_k": 5}).fingerprint()
    with pytest.raises(ValidationError, match="extra_body"):
        build_backend(_spec(["http://a:1/v1"], extra_body="top_k=5"))
