"""Native video on an OpenAI-compatible server: the sampled clip as one ``video_url`` part (vLLM's JPEG-frames
form), its prompt tokens against the same frames as images, recorded in the run manifest."""

from __future__ import annotations

from fake_openai_server import FakeOpenAIServer

from backend.inference.benchmarks import BenchmarkSpec, EvalItem
from backend.inference.registry import ModelSpec, write_models
from backend.inference.request import text, video
from backend.inference.runner import run_eval
from backend.inference.toy import _square

COLOURS = ("red", "green", "blue")


def _clips(ctx=None) -> list[EvalItem]:
    return [
        EvalItem(
            f"v{i}",
            [video(frames=[_square(c)] * 4, fps=1.0), text("Which colour fills the clip?")],
            COLOURS,
            frozenset("ABC"[i]),
        )
        for i, c in enumerate(COLOURS)
    ]


def _spec(server, name: str, **options) -> ModelSpec:
    return ModelSpec(
        name,
        "openai",
        server.model,
        frames_per_video=4,
        concurrency=2,
        options={"base_url": server.base_url, "timeout_s": 5, **options},
    )


def test_native_video_sends_one_clip_and_the_manifest_counts_both_ways(ctx):
    ctx.benchmarks.register(BenchmarkSpec("test-clips", "colour clips", _clips))
    with FakeOpenAIServer() as server:
        server.media_tokens = 64  # prompt tokens per image and per pair of video frames
        write_models(ctx.settings, [_spec(server, "clip", native_video=True), _spec(server, "frames")])
        clip = run_eval(ctx, "test-clips", "clip")
        assert clip.score == 1.0 and clip.errors == 0  # the server read the clip's frames
        assert (
            server.videos_seen == 3 + 1 and server.images_seen == 4
        )  # 3 items and the probe as a clip; the probe as frames
        record = clip.manifest["frame_sampling"]["video_input"]
        words = len(
            "Which colour fills the clip? Options: A. red B. green C. blue Answer with the option's letter "
            "from the given choices directly.".split()
        )
        assert record == {
            "sent_as": "video",
            "frames_per_video": 4,
            "probe_item": "v0",
            "prompt_tokens": {"video": words + 2 * server.media_tokens, "frames": words + 4 * server.media_tokens},
        }
        assert clip.serving["video_input"] == "video"
        assert clip.serving["usage"]["prompt_tokens"] == 3 * record["prompt_tokens"]["video"]

        server.reset()
        frames = run_eval(ctx, "test-clips", "frames")
        assert frames.score == 1.0 and server.videos_seen == 0 and server.images_seen == 12
        assert frames.manifest["frame_sampling"]["video_input"] == {"sent_as": "frames", "frames_per_video": 4}
        assert frames.serving["usage"]["prompt_tokens"] == 3 * record["prompt_tokens"]["frames"]
        assert frames.manifest["key"]["settings_hash"] != clip.manifest["key"]["settings_hash"]

        server.reset()
        again = run_eval(ctx, "test-clips", "clip")  # all from the store: no call, the figures carried over
        assert again.newly_computed == 0 and server.calls == 0
        assert again.manifest["frame_sampling"]["video_input"] == record
