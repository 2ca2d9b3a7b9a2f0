"""Observed-window clips and frame sampling on small synthetic H.264 videos (sparse and frequent keyframes)."""

from __future__ import annotations

import numpy as np
import pytest

import backend.planning.media as media
from backend.errors import MediaError
from backend.settings import Settings


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    folder = tmp_path_factory.mktemp("videos")
    return {
        "sparse": media.write_synthetic_video(folder / "sparse.mp4", 4, (96, 64), keyframe_every=250),
        "frequent": media.write_synthetic_video(folder / "frequent.mp4", 4, (96, 64), keyframe_every=12),
    }


@pytest.mark.parametrize("kind", ["sparse", "frequent"])
def test_decord_and_pyav_sample_the_same_frames(videos, kind):
    for start, end in ((0.0, 0.8), (1.5, 3.0), (0.0, None)):
        a = media.decode_decord(videos[kind], start, end, 4)
        b = media.decode_pyav(videos[kind], start, end, 4)
        assert a.shape == (4, 64, 96, 3) and np.array_equal(a, b)


def test_frames_are_cached_and_never_decoded_twice(videos, tmp_path, monkeypatch):
    settings = Settings(data_dir=tmp_path / "data")
    first = media.sample_frames(settings, videos["sparse"], 0.0, 0.8, 4)
    for name in ("decode_decord", "decode_pyav"):
        monkeypatch.setattr(media, name, lambda *a, **k: pytest.fail("decoded a cached window again"))
    assert np.array_equal(media.sample_frames(settings, videos["sparse"], 0.0, 0.8, 4), first)
    assert len(list((settings.media_dir / "planning" / "frames").glob("*.npy"))) == 1


def test_clip_is_browser_playable_h264_and_cached(videos, tmp_path):
    import av

    settings = Settings(data_dir=tmp_path / "data")
    clip = media.observed_window_clip(settings, videos["frequent"], 1.0, 2.0)
    assert clip.is_relative_to(settings.media_dir)
    with av.open(str(clip)) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264" and stream.codec_context.pix_fmt == "yuv420p"
        assert 23 <= sum(1 for _ in container.decode(stream)) <= 26  # one second at 24 fps
    mtime = clip.stat().st_mtime_ns
    assert media.observed_window_clip(settings, videos["frequent"], 1.0, 2.0) == clip
    assert clip.stat().st_mtime_ns == mtime


def test_a_missing_video_is_a_media_error(tmp_path):
    with pytest.raises(MediaError, match="text only"):
        media.sample_frames(Settings(data_dir=tmp_path), tmp_path / "nope.mp4", 0, 1, 4)


def test_auto_reads_the_keyframe_spacing_from_the_container_and_picks_by_it(videos):
    frames, interval, fps = media.keyframe_layout(videos["frequent"])
    assert (frames, interval, fps) == (96, 12.0, 24.0)  # 4 s at 24 fps, a keyframe every 12 frames
    frames, interval, _ = media.keyframe_layout(videos["sparse"])
    assert frames == 96 and interval == 96.0  # one keyframe: the whole video is one group of pictures
    # a late window of the whole video: decord's short seeks win with frequent keyframes, PyAV's single pass
    # wins when every random access would decode from the only keyframe
    assert media.auto_decoder(videos["frequent"], 1.0, None, 2) == "decord"
    assert media.auto_decoder(videos["sparse"], 1.0, None, 8) == "pyav"
    assert media.auto_decoder(videos["frequent"], 0.0, 0.8, 4) == "pyav"  # the observed window at the start


@pytest.mark.parametrize("decoder", ["decord", "pyav", "auto"])
def test_each_sampled_frame_comes_with_its_time(videos, tmp_path, decoder):
    """The synthetic video writes each frame's index into its top-left pixels: the time kept beside the cached
    frames is the time of the frame that was decoded (issue 28: the Samples view shows it)."""
    settings = Settings(data_dir=tmp_path / "data")
    frames, times = media.sample_frames_timed(settings, videos["frequent"], 1.0, 3.0, 4, decoder)
    assert len(times) == len(frames) == 4 and times == sorted(times) and 1.0 <= times[0] and times[-1] < 3.0
    for frame, at in zip(frames, times, strict=True):
        # H.264 in yuv420p is lossy: within a few levels, while the four samples lie 12 frames apart
        assert abs(int(frame[:8, :8, 0].mean()) - round(at * 24)) <= 4
    assert media.frame_times(videos["frequent"], 1.0, 3.0, 4, "decord") == media.frame_times(
        videos["frequent"], 1.0, 3.0, 4, "pyav"
    )
    again = media.sample_frames_timed(settings, videos["frequent"], 1.0, 3.0, 4, decoder)
    assert again[1] == times and np.array_equal(again[0], frames)
