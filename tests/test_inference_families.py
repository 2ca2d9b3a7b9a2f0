"""The transformers backend on tiny random Qwen2.5-VL, LLaVA-OneVision, Idefics3, SmolVLM and Gemma 3
(tests/tiny_models.py ``RECENT``, built offline once per session), loaded as the app loads a local model: a registry
file naming the folder, then ``get_model`` through the app's pool. One image, several images, video (native
``videos=`` for Qwen2.5-VL and LLaVA-OneVision, frames as images for the others), option scoring, and batch 8
storing the same greedy answers as batch 1 through the runner.

The image-token counts are worked out by hand from each family's processor in transformers 5.24 (one 48 px
toy square per image, four frames per video):

* Qwen2.5-VL: 48 px rounds to 56 px (multiple of 28) = 4 x 4 patches of 14 px, merged 2 x 2: 4 tokens. A
  4-frame video: 2 temporal patches x 4 = 8 video tokens.
* LLaVA-OneVision, one image: the best grid for 48 x 48 among 32/64 px pinpoints is 64 x 64 = 2 x 2 tiles of
  4 x 4 patches: 8 x 8 = 64 unpadded features + 8 newlines + 16 for the base tile = 88. Two images in one
  request: one tile each, 16 + 1 newline = 17 per image. A 4-frame video: 4 frames x (2 x 2 pooled) + 1 = 17.
* Idefics3 / SmolVLM: 48 px is resized to 64 px, split into 2 x 2 tiles of 32 px plus a global view, each
  (32 / 8)^2 / 2^2 = 4 tokens: 20 per image. Frames go in as images: 4 x 20 = 80.
* Gemma 3: 4 x 4 patches average-pooled to 2 x 2 = 4 soft tokens per image; frames as images: 16.
"""

from __future__ import annotations

import pytest
from tiny_models import RECENT, tiny_spec

from backend.context import build_context
from backend.inference.registry import get_model, write_models
from backend.inference.request import GenerationParams, image, text, video
from backend.inference.runner import run_eval
from backend.inference.toy import _square
from backend.settings import Settings

pytestmark = pytest.mark.slow  # over ~10 s a file: out of the quick loop (scripts/test.sh --quick)

PARAMS = GenerationParams(max_new_tokens=5)
IMAGE_TOKEN = {
    "qwen2_5_vl": "<|image_pad|>",
    "llava_onevision": "<image>",
    "idefics3": "<image>",
    "smolvlm": "<image>",
    "gemma3": "<image_soft_token>",
}
VIDEO_TOKEN = {"qwen2_5_vl": "<|video_pad|>", "llava_onevision": "<video>"}  # the families that take videos=
#: image tokens for one image, for two images in one request, and (video token, count) for a 4-frame video
EXPECTED = {
    "qwen2_5_vl": (4, 8, ("<|video_pad|>", 8)),
    "llava_onevision": (88, 34, ("<video>", 17)),
    "idefics3": (20, 40, ("<image>", 80)),
    "smolvlm": (20, 40, ("<image>", 80)),
    "gemma3": (4, 8, ("<image_soft_token>", 16)),
}
ONE = [image(_square("red")), text("What colour is the square?")]
TWO = [text("First:"), image(_square("red")), text("Second:"), image(_square("blue")), text("Same colour?")]
FRAMES = [video(frames=[_square(c) for c in ("red", "green", "blue", "blue")]), text("What changes?")]


def _name(family: str, batch: int) -> str:
    return f"tiny-{family.replace('_', '-')}-b{batch}"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """The app's context with a registry file naming each tiny family's local folder, at batch 1 and 8."""
    settings = Settings(data_dir=tmp_path_factory.mktemp("families") / "data", demo_content=False)
    ctx = build_context(settings)
    write_models(
        settings,
        [tiny_spec(family, name=_name(family, size), batch_size=size) for family in RECENT for size in (1, 8)],
    )
    yield ctx
    ctx.pool.unload()


@pytest.fixture(params=list(RECENT))
def family(request, app):
    return request.param, get_model(app, _name(request.param, 8))


def _counts(backend, inputs, token: str) -> list[int]:
    """How many times ``token`` occurs in each row of the batch's input ids."""
    return [int(n) for n in (inputs["input_ids"] == backend.tokenizer.convert_tokens_to_ids(token)).sum(1)]


def test_one_image(family):
    name, backend = family
    inputs = backend._inputs([ONE])
    assert _counts(backend, inputs, IMAGE_TOKEN[name]) == [EXPECTED[name][0]]
    answer = backend.generate([ONE], PARAMS)
    assert len(answer) == 1 and isinstance(answer[0], str)
    assert backend.generate([ONE], PARAMS) == answer  # greedy is deterministic


def test_several_images_in_one_request(family):
    name, backend = family
    inputs = backend._inputs([TWO])
    assert _counts(backend, inputs, IMAGE_TOKEN[name]) == [EXPECTED[name][1]]
    # a batch mixing one-image and two-image requests keeps each request's images with its prompt
    mixed = backend._inputs([ONE, TWO])
    assert _counts(backend, mixed, IMAGE_TOKEN[name]) == [EXPECTED[name][0], EXPECTED[name][1]]
    assert backend.generate([ONE, TWO], PARAMS) == [backend.generate([r], PARAMS)[0] for r in (ONE, TWO)]


def test_video(family, tmp_path):
    from backend.vilpact.demo_video import write_demo_video

    name, backend = family
    assert backend.native_video == (name in VIDEO_TOKEN)
    inputs = backend._inputs([FRAMES])
    token, count = EXPECTED[name][2]
    assert _counts(backend, inputs, token) == [count]
    assert ("pixel_values_videos" in inputs) == (name in VIDEO_TOKEN)
    clip = write_demo_video(tmp_path / "clip.mp4", [("Opening a door", 0.0, 1.0)], 1.0, 120)
    from_file = [video(path=clip, start=0.0, end=1.0, num_frames=4), text("What happens?")]
    batch = [FRAMES, from_file, ONE]
    assert backend.generate(batch, PARAMS) == [backend.generate([r], PARAMS)[0] for r in batch]


def test_qwen2_5_vl_places_frames_in_time_at_their_sampled_rate(app, tmp_path):
    """Qwen2.5-VL's temporal positions step by ``second_per_grid_ts`` = temporal patch (2 frames) / fps: 4 frames
    sampled at 2 fps -> 1.0 s; 4 frames over a 1 s window of a file -> 0.5 s; no rate known -> 2 / 24 (the
    processor's default fps), under which a few seconds of frames share one temporal position."""
    from backend.inference.request import request_hash
    from backend.vilpact.demo_video import write_demo_video

    backend = get_model(app, _name("qwen2_5_vl", 8))
    clip = write_demo_video(tmp_path / "clip.mp4", [("Opening a door", 0.0, 1.0)], 1.0, 120)
    frames = [_square(c) for c in ("red", "green", "blue", "blue")]
    timed = [video(frames=frames, fps=2.0), text("What changes?")]
    from_file = [video(path=clip, start=0.0, end=1.0, num_frames=4), text("What happens?")]
    inputs = backend._inputs([timed, from_file, FRAMES])
    assert [round(float(s), 4) for s in inputs["second_per_grid_ts"]] == [1.0, 0.5, round(2 / 24, 4)]
    assert backend.generate([timed, FRAMES], PARAMS) == [backend.generate([r], PARAMS)[0] for r in (timed, FRAMES)]
    assert request_hash(timed) != request_hash(FRAMES)  # the rate decides the answer, so it is in the cache key


def test_option_scores(family):
    _, backend = family
    scores = backend.score_options(ONE, ["red", "green blue yellow"])
    assert [s.num_tokens >= 1 and s.sum_logprob < 0 for s in scores] == [True, True]


@pytest.mark.parametrize("name", list(RECENT))
def test_batch_8_stores_the_answers_of_batch_1(app, name):
    for size in (1, 8):
        summary = run_eval(app, "toy-colors", _name(name, size), limit=16)
        assert summary.newly_computed == 16 and summary.errors == 0
    answers = {
        size: [
            row["raw_output"]
            for row in app.database.query(
                "SELECT raw_output FROM predictions WHERE model = ? ORDER BY item_id", (_name(name, size),)
            )
        ]
        for size in (1, 8)
    }
    assert len(answers[1]) == 16 and answers[8] == answers[1]
