"""The transformers backend on tiny random LLaVA, Qwen2-VL and a text-only LM (built once per session):
images, several images, video as frames and as native video input, option scoring, and batching."""

from __future__ import annotations

import pytest
from tiny_models import tiny_spec

from backend.errors import ValidationError
from backend.inference.registry import build_backend, write_models
from backend.inference.request import GenerationParams, image, text, video
from backend.inference.runner import run_eval
from backend.inference.toy import TOY, _square

pytestmark = pytest.mark.slow  # over ~10 s a file: out of the quick loop (scripts/test.sh --quick)

PARAMS = GenerationParams(max_new_tokens=5)


@pytest.fixture(scope="module")
def llava():
    backend = build_backend(tiny_spec("llava"))
    yield backend
    backend.unload()


@pytest.fixture(scope="module")
def qwen():
    backend = build_backend(tiny_spec("qwen2vl"))
    yield backend
    backend.unload()


@pytest.fixture(scope="module")
def causal():
    backend = build_backend(tiny_spec("causal"))
    yield backend
    backend.unload()


@pytest.fixture(scope="module")
def toy_requests():
    bench = TOY
    return [bench.build_request(item) for item in bench.load_items(None, count=8)]


def test_llava_image_several_images_and_frames(llava):
    one = [image(_square("red")), text("What colour?")]
    two = [text("First:"), image(_square("red")), text("Second:"), image(_square("blue")), text("Same?")]
    frames = [video(frames=[_square("red"), _square("green"), _square("blue")]), text("What changes?")]
    outputs = llava.generate([one, two, frames], PARAMS)
    assert len(outputs) == 3 and all(isinstance(o, str) for o in outputs)
    assert llava.generate([one], PARAMS) == llava.generate([one], PARAMS)  # greedy is deterministic


def test_llava_counts_image_tokens_per_image(llava):
    content, images, videos = llava._convert([image(_square("red")), video(frames=[_square("red")] * 3)])
    assert len(images) == 4 and videos == [] and [p["type"] for p in content] == ["image"] * 4
    inputs = llava._inputs([[image(_square("red")), image(_square("blue")), text("?")]])
    image_token = llava.model.config.image_token_index
    assert int((inputs["input_ids"] == image_token).sum()) == 2 * 16


def test_qwen_native_video_from_frames_and_from_a_file(qwen, tmp_path):
    from backend.vilpact.demo_video import write_demo_video

    clip = write_demo_video(tmp_path / "clip.mp4", [("Opening a door", 0.0, 1.0)], 1.0, 120)
    frames = [video(frames=[_square("red"), _square("red"), _square("blue"), _square("blue")]), text("What?")]
    from_file = [video(path=clip, start=0.0, end=1.0, num_frames=4), text("What happens?")]
    inputs = qwen._inputs([frames])
    assert "pixel_values_videos" in inputs and "pixel_values" not in inputs
    outputs = qwen.generate([frames, from_file, [image(_square("green")), text("Colour?")]], PARAMS)
    assert len(outputs) == 3


def test_batched_answers_equal_one_by_one(llava, qwen, toy_requests):
    for backend in (llava, qwen):
        one_by_one = [backend.generate([request], PARAMS)[0] for request in toy_requests]
        assert backend.generate(toy_requests, PARAMS) == one_by_one


def test_option_scores_are_log_likelihoods(llava, qwen, causal):
    request = [image(_square("red")), text("What colour is the square? Answer:")]
    for backend, req in ((llava, request), (qwen, request), (causal, [text("What colour? Answer:")])):
        scores = backend.score_options(req, ["red", "green blue yellow"])
        assert len(scores) == 2
        for score in scores:
            assert score.sum_logprob < 0 and score.num_tokens >= 1
            assert score.mean_logprob == pytest.approx(score.sum_logprob / score.num_tokens)


def test_text_only_model(causal):
    assert len(causal.generate([[text("Write the word red in capitals.")], [text("Hi")]], PARAMS)) == 2
    with pytest.raises(ValidationError, match="text-only"):
        causal.generate([[image(_square("red")), text("?")]], PARAMS)


def test_runner_batch_1_and_batch_8_store_identical_answers(ctx):
    specs = [
        tiny_spec(kind, name=f"{kind}-b{size}", batch_size=size) for kind in ("llava", "qwen2vl") for size in (1, 8)
    ]
    write_models(ctx.settings, specs)
    for kind in ("llava", "qwen2vl"):
        for size in (1, 8):
            summary = run_eval(ctx, "toy-colors", f"{kind}-b{size}", limit=16)
            assert summary.newly_computed == 16 and summary.errors == 0
        answers = {
            size: [
                r["raw_output"]
                for r in ctx.database.query(
                    "SELECT raw_output FROM predictions WHERE model = ? ORDER BY item_id", (f"{kind}-b{size}",)
                )
            ]
            for size in (1, 8)
        }
        assert answers[1] == answers[8] and len(answers[1]) == 16


def test_a_model_that_cannot_load_gets_a_readable_message(tmp_path):
    from backend.errors import InferenceError
    from backend.inference.backends.hf import TransformersBackend
    from backend.inference.registry import ModelSpec

    spec = ModelSpec("missing", "transformers", str(tmp_path / "no-such-model"))
    with pytest.raises(InferenceError, match="Could not load model 'missing'.*Check the Hub id or local folder"):
        TransformersBackend(spec)
