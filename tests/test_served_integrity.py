"""Served models bound to what they serve, likelihood that is likelihood, plain prompts, failed runs — against
the fake OpenAI-compatible server (tests/fake_openai_server.py), which speaks vLLM's dialect (issue 24)."""

from __future__ import annotations

import socket

import pytest
from fake_openai_server import FakeOpenAIServer, TransformersScorer
from tiny_models import tiny_causal_lm, tiny_spec

from backend.errors import InferenceError
from backend.inference.benchmarks import BenchmarkSpec, EvalItem
from backend.inference.registry import ModelSpec, write_models
from backend.inference.request import text
from backend.inference.revision import UNKNOWN_WARNING, UNVERIFIABLE_WARNING
from backend.inference.runner import run_eval

pytestmark = pytest.mark.slow  # over ~10 s a file: out of the quick loop (scripts/test.sh --quick)


def _spec(server: FakeOpenAIServer, name: str = "served", concurrency: int = 4, **changes) -> ModelSpec:
    options = {"base_url": server.base_url, "timeout_s": 2, "retries": 1, "backoff_s": 0.01}
    options |= changes.pop("options", {})
    return ModelSpec(name, "openai", server.model, concurrency=concurrency, options=options, **changes)


def _words(ctx=None) -> list[EvalItem]:
    """Text-only choice items (the tiny text model's tokenizer knows these words)."""
    colours = ("red", "green", "blue", "yellow", "black", "white")
    return [
        EvalItem(
            f"w{i}",
            [text(f"What colour is the square? {colours[i % 6]} {colours[(i * 5) % 6]}.")],
            tuple(colours[(i + k) % 6] for k in range(3 + i % 3)),
            frozenset("A"),
        )
        for i in range(40)
    ]


def test_served_identity_is_bound_and_other_weights_recompute(ctx):
    with FakeOpenAIServer() as server:
        write_models(ctx.settings, [_spec(server)])
        first = run_eval(ctx, "toy-colors", "served", limit=12)
        manifest = first.manifest["model"]
        assert manifest["served"]["root"] == "/models/fake-vlm-a" and manifest["served"]["max_model_len"] == 4096
        assert manifest["served"]["server_version"] == "0.0.fake" and manifest["served"]["base_url"] == server.base_url
        assert manifest["revision"].startswith("served:/models/fake-vlm-a|len=4096|server=0.0.fake")
        assert first.warnings == [UNVERIFIABLE_WARNING] and first.newly_computed == 12  # not started by us
        again = run_eval(ctx, "toy-colors", "served", limit=12)
        assert again.newly_computed == 0  # same weights: the store answers
        server.swap("/models/fake-vlm-b", shift=1)  # other weights under the same served name
        swapped = run_eval(ctx, "toy-colors", "served", limit=12)
        assert swapped.newly_computed == 12 and swapped.manifest["key"] != first.manifest["key"]
        old = {r["item_id"]: r["raw_output"] for r in _rows(ctx, first.manifest["key"]["settings_hash"])}
        new = {r["item_id"]: r["raw_output"] for r in _rows(ctx, swapped.manifest["key"]["settings_hash"])}
        changed = sum(old[i] != new[i] for i in old)
        print(f"swap test: {changed}/{len(old)} answers changed after the swap, all {len(new)} recomputed")
        assert changed == len(old) == 12


def _rows(ctx, shash: str) -> list[dict]:
    return ctx.database.query("SELECT * FROM predictions WHERE settings_hash = ? ORDER BY item_id", (shash,))


def test_a_server_that_names_nothing_is_warned_about_in_the_run_and_manifest(ctx):
    with FakeOpenAIServer(root=None, version=None) as server:
        write_models(ctx.settings, [_spec(server), _spec(server, "pinned", options={"revision": "v7"})])
        summary = run_eval(ctx, "toy-colors", "served", limit=4)
        assert summary.warnings == [UNKNOWN_WARNING] and summary.manifest["warnings"] == [UNKNOWN_WARNING]
        assert summary.manifest["model"]["revision"] == f"served:unknown@{server.base_url}"
        pinned = run_eval(ctx, "toy-colors", "pinned", limit=4)
        assert pinned.warnings == [] and pinned.manifest["model"]["revision"].startswith("v7|served:unknown")


def test_a_server_that_is_down_makes_a_failed_run_never_ranked(ctx):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens on it once closed
    spec = ModelSpec(
        "down",
        "openai",
        "m",
        options={"base_url": f"http://127.0.0.1:{port}/v1", "retries": 0, "unavailable_after_s": 1},
    )
    write_models(ctx.settings, [spec])
    summary = run_eval(ctx, "toy-colors", "down", limit=5)
    assert summary.status == "failed" and summary.errors == 5 and summary.score is None and summary.scored == 0
    row = ctx.database.query_one("SELECT status, errors FROM eval_runs WHERE id = ?", (summary.run_id,))
    assert row == {"status": "failed", "errors": 5}
    assert "unreachable" in summary.warnings[0]
    from backend.inference.paired import compare_stored

    compared = compare_stored(ctx, "toy-colors", ["down"], samples=50)
    assert compared["not_ranked"] == ["down"] and compared["comparison"]["models"] == []


def test_likelihood_is_refused_where_the_server_returns_no_prompt_logprobs(ctx):
    with FakeOpenAIServer() as server:
        server.supports_prompt_logprobs = False
        write_models(ctx.settings, [_spec(server, scoring="likelihood")])
        with pytest.raises(InferenceError, match="prompt_logprobs"):
            run_eval(ctx, "toy-colors", "served", limit=6)
        assert ctx.database.scalar("SELECT count(*) FROM predictions") == 0  # nothing stood in for a likelihood
        run = ctx.database.query("SELECT status FROM eval_runs")
        assert [r["status"] for r in run] == ["failed"]


def test_a_chunk_of_choice_and_free_text_items_is_split_never_switched(ctx):
    """toy-colors: 18 choice items and 6 free-text ones; at concurrency 1 and 8 the choice items are scored
    and the free-text ones generated."""
    with FakeOpenAIServer() as server:
        for concurrency in (1, 8):
            name = f"lik-c{concurrency}"
            write_models(ctx.settings, [_spec(server, name, concurrency, scoring="likelihood")])
            run_eval(ctx, "toy-colors", name)
            rows = ctx.database.query("SELECT item_id, raw_output FROM predictions WHERE model = ?", (name,))
            scored = [r for r in rows if r["raw_output"] in set("ABCDEF")]
            generated = [r for r in rows if r["raw_output"].startswith("The answer is")]
            assert (len(scored), len(generated)) == (18, 6), concurrency


def test_likelihood_honours_concurrency(ctx):
    with FakeOpenAIServer() as server:
        # the client waits longer than the server holds a request (2 s): the lone first call (the likelihood
        # check) is held the whole 2 s, which a loaded machine must not turn into a client timeout
        backend_spec = _spec(server, concurrency=4, scoring="likelihood", options={"timeout_s": 10})
        write_models(ctx.settings, [backend_spec])
        server.hold_until = 4  # each request waits until 4 are in flight (no thread-timing luck)
        try:
            run_eval(ctx, "toy-colors", "served", limit=8)
        finally:
            server.hold_until = 0
        assert server.max_in_flight == 4 and server.scored_requests > 0


def test_plain_prompt_style_uses_completions_with_the_plain_template(ctx):
    with FakeOpenAIServer() as server:
        write_models(ctx.settings, [_spec(server, prompt_style="plain")])
        summary = run_eval(ctx, "toy-colors", "served")
        assert server.endpoints["/v1/completions"] == 6 and server.endpoints["/v1/chat/completions"] == 0
        assert summary.errors == 18  # image and video items cannot go to /v1/completions: said per item
        rows = ctx.database.query("SELECT error FROM predictions WHERE status = 'error'")
        assert all("prompt_style 'plain'" in r["error"] for r in rows)


@pytest.mark.parametrize("style", ["chat", "plain"])
def test_both_backends_rank_options_the_same_on_the_same_weights(ctx, style):
    """The fake server computes real prompt log-probabilities with the tiny transformers model; the openai
    backend's likelihood choices equal the transformers backend's on every item (chat: the server renders the
    chat template and continues the assistant message; plain: /v1/completions)."""
    path = str(tiny_causal_lm())
    with FakeOpenAIServer(model="tiny-lm", scorer=TransformersScorer(path)) as server:
        ctx.benchmarks.register(BenchmarkSpec("test-words", "text choice items", _words))
        local = tiny_spec("causal", name="local-lm", scoring="likelihood", prompt_style=style)
        remote = _spec(server, "served-lm", 4, scoring="likelihood", prompt_style=style)
        write_models(ctx.settings, [remote, local])
        served = run_eval(ctx, "test-words", "served-lm")
        here = run_eval(ctx, "test-words", "local-lm")
        assert served.errors == here.errors == 0
        a = {
            r["item_id"]: r["raw_output"]
            for r in ctx.database.query("SELECT * FROM predictions WHERE model='served-lm'")
        }
        b = {
            r["item_id"]: r["raw_output"]
            for r in ctx.database.query("SELECT * FROM predictions WHERE model='local-lm'")
        }
        agree = sum(a[i] == b[i] for i in a)
        print(f"likelihood agreement ({style}): {agree}/{len(a)} items choose the same option on both backends")
        assert agree == len(a) == 40
        assert "prompt_logprobs" in served.manifest["model"]["scoring_method"]
        request, options = [text("What colour is the square? red blue."), text("Answer:")], ["red", "blue", "green"]
        far = ctx.pool.get(remote).score_options(request, options)
        near = ctx.pool.get(local).score_options(request, options)
        assert [s.num_tokens for s in far] == [s.num_tokens for s in near]
        assert [s.sum_logprob for s in far] == pytest.approx([s.sum_logprob for s in near], abs=1e-4)


def test_failed_calls_stay_failed_until_a_run_asks_to_retry_them(ctx):
    """A failed call is stored as failed: a later run reuses it (and says so in its errors), ``retry_failed``
    (``eval --retry-failed``) asks the server again for exactly those items."""
    with FakeOpenAIServer() as server:
        write_models(ctx.settings, [_spec(server, concurrency=1, options={"retries": 0})])
        server.throttle_next(3, status=500)  # the server errs on its next three calls
        first = run_eval(ctx, "toy-colors", "served", limit=8)
        assert (first.status, first.errors, first.scored, first.newly_computed) == ("finished with errors", 3, 5, 8)
        again = run_eval(ctx, "toy-colors", "served", limit=8)
        assert (again.status, again.errors, again.newly_computed, again.from_store) == (
            "finished with errors",
            3,
            0,
            8,
        )
        calls = server.calls
        retried = run_eval(ctx, "toy-colors", "served", limit=8, retry_failed=True)
        assert (retried.status, retried.errors, retried.scored, retried.newly_computed) == ("finished", 0, 8, 3)
        assert server.calls - calls == 3  # only the failed items were asked again
        assert ctx.database.scalar("SELECT count(*) FROM predictions WHERE error IS NOT NULL") == 0
