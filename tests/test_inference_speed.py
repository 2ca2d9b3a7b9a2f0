"""The transformers backend close to the hardware, proved on CPU with tiny models (no timing asserted): loaded with
``.to(device)`` and no dispatch hooks, a static KV cache whose greedy answers equal eager ones in float32, batches
prepared ahead on a second thread, similar lengths together, ``batch_size: auto`` (out of memory simulated), the
manifest's ``engine``, and a prediction key that ignores what cannot change an answer and binds what can."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence

import pytest
import torch
from tiny_models import tiny_spec

from backend.inference.backends.hf import placement
from backend.inference.registry import ModelSpec, build_backend, write_models
from backend.inference.request import GenerationParams, Request, image, request_text, text
from backend.inference.runner import run_eval
from backend.inference.toy import _square

pytestmark = pytest.mark.slow

PARAMS = GenerationParams(max_new_tokens=6)
STATIC_FAMILIES = ("llava", "qwen2vl", "causal", "qwen2_5_vl", "llava_onevision", "gemma3")


def _requests(text_only: bool) -> list[Request]:
    asks = [[text("What colour is the square? Answer with a letter.")], [text("Options: A. open a book B. drink")]]
    if not text_only:
        asks += [
            [image(_square("red")), text("What colour?")],
            [image(_square("blue")), image(_square("red")), text("?")],
        ]
    return asks


def test_one_device_loads_without_dispatch_hooks():
    backend = build_backend(tiny_spec("qwen2vl"))
    assert backend.device_map is None
    assert not hasattr(backend.model, "hf_device_map")
    assert not any(hasattr(module, "_hf_hook") for module in backend.model.modules())
    report = backend.usage_report()
    assert report["placement"] == ".to(cpu) (no dispatch hooks)" and report["dtype"] == "float32"


def test_device_map_only_where_the_model_needs_it(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"")
    with open(tmp_path / "model.safetensors", "r+b") as weights:
        weights.truncate(10_000)  # a sparse file: 10 kB of "weights"
    spec = ModelSpec("m", "transformers", str(tmp_path))
    assert placement(spec, "cuda", 1, 1_000) is None  # one GPU: never hooks, whatever the size
    assert placement(spec, "cuda", 2, 1_000_000) is None  # several GPUs, fits the first
    assert placement(spec, "cuda", 2, 5_000) == "auto"  # several GPUs, does not fit the first
    assert placement(dataclasses.replace(spec, device="cuda:1"), "cuda:1", 2, 5_000) is None  # a chosen device
    assert placement(dataclasses.replace(spec, options={"device_map": "balanced"}), "cuda", 1, 10**12) == "balanced"


@pytest.mark.parametrize("family", STATIC_FAMILIES)
def test_static_cache_greedy_answers_equal_eager_in_float32(family):
    spec = tiny_spec(family)
    eager = build_backend(spec)
    static = build_backend(dataclasses.replace(spec, options={**spec.options, "static_cache": True}))
    assert static.static_cache == "static"
    options = static._generation_options(PARAMS)
    assert options["cache_implementation"] == "static"
    assert options["disable_compile"] is True  # generate compiles on CUDA only; here the static cache runs eager
    asks = _requests(family == "causal")
    assert static.generate(asks, PARAMS) == eager.generate(asks, PARAMS)
    assert [static.generate([ask], PARAMS)[0] for ask in asks] == eager.generate(asks, PARAMS)
    assert static.usage_report()["static_cache"] == "static"


def test_a_family_that_cannot_compile_keeps_the_dynamic_cache_and_says_so():
    spec = tiny_spec("smolvlm")
    backend = build_backend(dataclasses.replace(spec, options={**spec.options, "static_cache": True}))
    assert backend.static_cache is None
    assert "cache_implementation" not in backend._generation_options(PARAMS)
    assert backend.usage_report()["static_cache"] is False


def test_visual_tokens_per_item_are_counted():
    backend = build_backend(tiny_spec("llava"))  # 16 image tokens per image (image_seq_length)
    mark = backend.usage_mark()
    backend.generate(
        [[image(_square("red")), text("?")], [image(_square("red")), image(_square("blue")), text("?")]], PARAMS
    )
    report = backend.usage_report(mark)
    assert report["items"] == 2 and report["batches"] == 1
    assert report["visual_tokens_per_item"] == pytest.approx((16 + 32) / 2, abs=2)


def test_the_manifest_of_every_run_names_the_engine(ctx):
    spec = tiny_spec("qwen2vl", name="q", batch_size=4, options={"native_video": True, "static_cache": True})
    write_models(ctx.settings, [spec])
    summary = run_eval(ctx, "toy-colors", "q", limit=6)
    engine = summary.manifest["engine"]
    assert engine["engine"].startswith("transformers ") and engine["batch_size"] == 4
    assert engine["batch_size_used"] == 4 and engine["items"] == 6
    assert engine["placement"] == ".to(cpu) (no dispatch hooks)" and engine["dtype"] == "float32"
    assert engine["attn_implementation"] == "sdpa" and engine["static_cache"] == "static"
    assert engine["compiled"] is False and engine["peak_memory_gib"] > 0
    assert engine["visual_tokens_per_item"] > 0 and engine["speed_options"] == {"static_cache": True}
    again = run_eval(ctx, "toy-colors", "q", limit=6)
    assert again.newly_computed == 0 and again.manifest["engine"]["note"].startswith("no model call")


def _rows(ctx, model: str) -> dict[str, str]:
    query = "SELECT item_id, raw_output FROM predictions WHERE model = ?"
    return {r["item_id"]: r["raw_output"] for r in ctx.database.query(query, (model,))}


def test_the_prediction_key_ignores_speed_and_binds_what_changes_answers(ctx):
    """Both directions: batch size and speed options reuse the stored answers; dtype, attention implementation
    and the generation length compute anew."""
    base = tiny_spec("llava", name="m", batch_size=1)
    write_models(ctx.settings, [base])
    first = run_eval(ctx, "toy-colors", "m", limit=6)
    assert first.newly_computed == 6
    for change in (
        {"batch_size": 8},
        {"batch_size": "auto"},
        {"options": {"static_cache": True}},
        {"options": {"static_cache": True, "compile": False, "max_batch_size": 4}},
    ):
        write_models(ctx.settings, [dataclasses.replace(base, **change)])
        summary = run_eval(ctx, "toy-colors", "m", limit=6)
        assert summary.newly_computed == 0 and summary.settings_hash == first.settings_hash, change
    for change in ({"dtype": "bfloat16"}, {"options": {"attn_implementation": "eager"}}, {"max_new_tokens": 3}):
        write_models(ctx.settings, [dataclasses.replace(base, **change)])
        summary = run_eval(ctx, "toy-colors", "m", limit=6)
        assert summary.newly_computed == 6 and summary.settings_hash != first.settings_hash, change


def test_static_cache_and_batches_store_the_eager_batch_1_answers(ctx):
    eager = tiny_spec("qwen2vl", name="eager", batch_size=1)
    fast = tiny_spec("qwen2vl", name="fast", batch_size="auto", options={"native_video": True, "static_cache": True})
    write_models(ctx.settings, [eager, fast])
    run_eval(ctx, "toy-colors", "eager", limit=12)
    summary = run_eval(ctx, "toy-colors", "fast", limit=12)
    assert summary.errors == 0 and summary.manifest["engine"]["batch_size_used"] > 1
    assert _rows(ctx, "fast") == _rows(ctx, "eager")


class LimitedMemory:
    """A backend whose "device" holds at most ``options.fits`` items per call: a larger batch raises torch's own
    out-of-memory error, as a GPU would. Records every batch size it was asked."""

    def __init__(self, spec: ModelSpec) -> None:
        self.fits = int(spec.options["fits"])
        self.asked: list[int] = []

    def generate(self, requests: Sequence[Request], params: GenerationParams) -> list[str]:
        self.asked.append(len(requests))
        if len(requests) > self.fits:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB (simulated)")
        return ["The answer is (A)." for _ in requests]

    def score_options(self, request, options):
        raise NotImplementedError

    def unload(self) -> None:
        return None


def test_batch_size_auto_doubles_until_out_of_memory_and_remembers(ctx):
    spec = ModelSpec("limited", "python", f"{__name__}:LimitedMemory", batch_size="auto", options={"fits": 5})
    write_models(ctx.settings, [spec])
    summary = run_eval(ctx, "toy-colors", "limited")
    backend = ctx.pool.get(spec)
    assert summary.errors == 0 and summary.newly_computed == 24
    assert backend.asked[:5] == [1, 2, 4, 8, 4]  # 8 did not fit: asked again at 4, which is the ceiling
    assert max(n for n in backend.asked[4:]) == 4
    assert summary.manifest["engine"]["batch_size_used"] == 4 and summary.manifest["engine"]["batch_size_ceiling"] == 4
    assert list(ctx.pool.batch_sizes.values()) == [(4, 4)]
    backend.asked.clear()
    run_eval(ctx, "toy-colors", "limited", load_options={"count": 32})  # 8 more items, same model and settings
    assert backend.asked == [4, 4]  # starts at what it found, and never tries 8 again


def test_batch_size_auto_stops_at_the_cap(ctx):
    spec = ModelSpec(
        "capped", "python", f"{__name__}:LimitedMemory", batch_size="auto", options={"fits": 100, "max_batch_size": 4}
    )
    write_models(ctx.settings, [spec])
    run_eval(ctx, "toy-colors", "capped", limit=15)
    assert ctx.pool.get(spec).asked == [1, 2, 4, 4, 4]


class Prepares:
    """A backend that prepares batches apart from generating them. Generating batch k waits until batch k+1 has
    been prepared: that only ends if preparing runs on another thread at the same time."""

    def __init__(self, spec: ModelSpec) -> None:
        self.prepared: list[tuple[str, ...]] = []
        self.generated: list[tuple[str, ...]] = []
        self.threads: set[int] = set()
        self.events: dict[int, threading.Event] = {}
        self.overlapped = 0
        self.batches = 3  # how many batches the test sends: the last one has no following batch to wait for

    def prepare_batch(self, requests: Sequence[Request]) -> tuple[str, ...]:
        self.threads.add(threading.get_ident())
        batch = tuple(request_text(r)[:40] for r in requests)
        self.prepared.append(batch)
        self.events.setdefault(len(self.prepared), threading.Event()).set()
        return batch

    def generate_prepared(self, batch: tuple[str, ...], params: GenerationParams) -> list[str]:
        self.generated.append(batch)
        number = len(self.generated)
        following = self.events.setdefault(number + 1, threading.Event())
        if number < self.batches and following.wait(timeout=30):
            self.overlapped += 1
        return ["The answer is (B)." for _ in batch]

    def generate(self, requests: Sequence[Request], params: GenerationParams) -> list[str]:
        return self.generate_prepared(self.prepare_batch(requests), params)

    def score_options(self, request, options):
        raise NotImplementedError

    def unload(self) -> None:
        return None


def test_the_next_batch_is_prepared_while_this_one_generates(ctx):
    spec = ModelSpec("prepares", "python", f"{__name__}:Prepares", batch_size=2)
    write_models(ctx.settings, [spec])
    summary = run_eval(ctx, "toy-colors", "prepares", limit=6)
    backend = ctx.pool.get(spec)
    assert summary.errors == 0 and backend.generated == backend.prepared and len(backend.generated) == 3
    assert backend.overlapped == 2  # batches 2 and 3 were prepared while 1 and 2 generated
    assert backend.threads - {threading.get_ident()}  # on another thread than the run's


def test_items_of_similar_length_are_batched_together(ctx):
    from backend.inference import runner
    from backend.inference.benchmarks import BenchmarkSpec, EvalItem

    questions = ["short", "long question " * 20]
    items = [EvalItem(f"i{n}", [text(questions[n % 2])], ("a", "b"), frozenset("A")) for n in range(6)]
    bench = BenchmarkSpec("lengths", "alternating lengths", lambda ctx, **_: items)
    spec = ModelSpec("prepares", "python", f"{__name__}:Prepares", batch_size=3)
    backend = Prepares(spec)
    backend.batches = 2  # six items in batches of three
    sizer = runner._batches(ctx, bench, spec, PARAMS, runner.prepare(bench, items), backend, lambda rows: None, "k")
    assert sizer.used == 3 and len(backend.generated) == 2
    assert [{"long" in prompt for prompt in batch} for batch in backend.generated] == [{False}, {True}]
