"""Observed-window media for planning questions: a browser-playable clip and uniformly sampled frames,
both cached on disk under ``settings.media_dir / "planning"``.

* :func:`observed_window_clip` cuts ``ob_start_frame..ob_end_frame`` (24 fps frame numbers of the released data)
  out of the full video and re-encodes it as H.264 yuv420p with even sides (plays in every browser).
  The clip is written to a temporary name and renamed, so a half-written file is never served.
* :func:`sample_frames` returns ``n`` frames at the centres of ``n`` equal segments of the window (the
  TSN convention, as ``backend.inference.request.video_frames``). Frames are decoded once and kept as a
  raw ``.npy`` array keyed by the video's path, size and modification time and the request; a later
  request (same window, same count) is a file read, so a batch run never decodes the same window twice.
  Decoding uses decord (random access) or PyAV (one sequential pass from the nearest keyframe):
  ``benchmarks/video.py`` measures both; ``auto`` chooses by the cost model of :func:`choose_decoder`,
  with the keyframe spacing read from the container (packets demuxed, nothing decoded).
  :func:`sample_frames_timed` adds each frame's time in the video, kept in a ``.json`` beside the frames.
"""

from __future__ import annotations

import hashlib
import json
from fractions import Fraction
from pathlib import Path

import numpy as np

from backend.errors import MediaError
from backend.settings import Settings

FPS = 24.0
DECODERS = ("auto", "decord", "pyav")


def observed_window_seconds(ob_start_frame: int, ob_end_frame: int) -> tuple[float, float]:
    """The observed window in seconds.

    >>> observed_window_seconds(1, 168)
    (0.041666666666666664, 7.0)
    """
    return ob_start_frame / FPS, ob_end_frame / FPS


def _cache_dir(settings: Settings, kind: str) -> Path:
    path = settings.media_dir / "planning" / kind
    path.mkdir(parents=True, exist_ok=True)
    return path


def _key(video: Path, *parts: object) -> str:
    stat = video.stat()
    raw = "|".join(str(p) for p in (video.resolve(), stat.st_size, stat.st_mtime_ns, *parts))
    return hashlib.sha256(raw.encode()).hexdigest()[:20]


def _require(video: Path | str | None) -> Path:
    if not video or not Path(video).is_file():
        raise MediaError(f"no video file for this question ({video or 'none given'}): showing text only")
    return Path(video)


def uniform_indices(first: int, last: int, n: int) -> list[int]:
    """``n`` frame indices at the centres of equal segments of ``[first, last)``.

    >>> uniform_indices(0, 80, 4)
    [10, 30, 50, 70]
    >>> uniform_indices(0, 2, 4)
    [0, 0, 1, 1]
    """
    span = max(1, last - first)
    return [min(last - 1, first + int((i + 0.5) * span / n)) for i in range(n)]


def frame_range(total: int, fps: float, start_s: float, end_s: float | None) -> tuple[int, int]:
    first = max(0, min(int(round(start_s * fps)), total - 1))
    last = total if end_s is None else max(first + 1, min(int(round(end_s * fps)), total))
    return first, last


def decode_decord(video: Path, start_s: float, end_s: float | None, n: int) -> np.ndarray:
    """``n`` uniformly sampled RGB frames (N, H, W, 3) with decord's random access."""
    import decord

    try:
        reader = decord.VideoReader(str(video))
    except (RuntimeError, OSError) as exc:
        raise MediaError(f"cannot read video {video}: {exc}") from exc
    try:
        first, last = frame_range(len(reader), reader.get_avg_fps() or FPS, start_s, end_s)
        return reader.get_batch(uniform_indices(first, last, n)).asnumpy()
    finally:
        del reader


def decode_pyav(video: Path, start_s: float, end_s: float | None, n: int) -> np.ndarray:
    """The same frames with one sequential PyAV pass (seek to the keyframe before the window, decode on)."""
    import av

    try:
        container = av.open(str(video))
    except (OSError, av.error.FFmpegError) as exc:
        raise MediaError(f"cannot read video {video}: {exc}") from exc
    with container:
        stream = container.streams.video[0]
        assert stream.time_base is not None  # a decodable video stream has one
        fps = float(stream.average_rate or FPS)
        total = stream.frames or int(float(stream.duration * stream.time_base) * fps) if stream.duration else 0
        if not total:
            total = sum(1 for _ in container.decode(stream))
            container.seek(0)
        first, last = frame_range(total, fps, start_s, end_s)
        wanted = uniform_indices(first, last, n)
        if first > 0:
            container.seek(int(first / fps / stream.time_base), stream=stream, backward=True)
        frames: dict[int, np.ndarray] = {}
        for frame in container.decode(stream):
            index = int(round(float(frame.pts * stream.time_base) * fps)) if frame.pts is not None else 0
            if index in wanted and index not in frames:
                frames[index] = frame.to_ndarray(format="rgb24")
            if index >= wanted[-1]:
                break
    if not frames:
        raise MediaError(f"no frames decoded from {video}")
    fallback = frames[max(frames)]
    return np.stack([frames.get(i, fallback) for i in wanted])


SEEK_COST_FRAMES = 16  # decord's per-frame seek and decoder flush, in frames decoded (fitted below)


def choose_decoder(first: int, stop: int, n: int, keyframe_interval: float) -> str:
    """``pyav`` or ``decord`` for sampling ``n`` of the frames ``first .. stop - 1``, whichever decodes less.

    PyAV decodes every frame from the keyframe before the window to its end: the window's ``W`` frames plus,
    when the window does not start at frame 0, half a keyframe interval ``K`` on average. decord decodes,
    for each of the ``n`` frames, from the keyframe before it (``K / 2`` on average) plus a seek and flush
    worth about ``SEEK_COST_FRAMES``. PyAV is chosen when ``W + K/2·[first > 0] < n·(K/2 + 16)``.
    The constant was fitted to ``benchmarks/video.py`` (30 s, 24 fps, 8 frames); the rule picks the faster
    decoder in all four measured cases:

    >>> choose_decoder(0, 144, 8, 250), choose_decoder(0, 720, 8, 250)    # sparse keyframes: 20%, whole
    ('pyav', 'pyav')
    >>> choose_decoder(0, 144, 8, 24), choose_decoder(0, 720, 8, 24)      # a keyframe a second
    ('pyav', 'decord')
    >>> choose_decoder(500, 720, 8, 24)                                   # a late window, dense keyframes
    'decord'
    """
    half = keyframe_interval / 2
    pyav_frames = (stop - first) + (half if first > 0 else 0)
    return "pyav" if pyav_frames < n * (half + SEEK_COST_FRAMES) else "decord"


def keyframe_layout(video: Path) -> tuple[int, float, float]:
    """``(frames, keyframe interval in frames, fps)`` from the container's packets, without decoding."""
    import av

    try:
        container = av.open(str(video))
    except (OSError, av.error.FFmpegError) as exc:
        raise MediaError(f"cannot read video {video}: {exc}") from exc
    with container:
        stream = container.streams.video[0]
        fps = float(stream.average_rate or FPS)
        frames = keyframes = 0
        for packet in container.demux(stream):
            if packet.size:
                frames += 1
                keyframes += bool(packet.is_keyframe)
    return frames, frames / max(keyframes, 1), fps


def auto_decoder(video: Path, start_s: float, end_s: float | None, n: int) -> str:
    frames, interval, fps = keyframe_layout(video)
    first, stop = frame_range(frames, fps, start_s, end_s)
    return choose_decoder(first, stop, n, interval)


def _frames_cache(settings: Settings, path: Path, start_s: float, end_s: float | None, n: int, decoder: str) -> Path:
    forced = (decoder,) if decoder != "auto" else ()  # a chosen decoder's frames are cached apart
    return _cache_dir(settings, "frames") / f"{_key(path, start_s, end_s, n, *forced)}.npy"


def sample_frames(
    settings: Settings, video: Path | str | None, start_s: float, end_s: float | None, n: int, decoder: str = "auto"
) -> np.ndarray:
    """``n`` frames (N, H, W, 3 uint8) of ``[start_s, end_s]``, from the disk cache when present."""
    path = _require(video)
    if decoder not in DECODERS:
        raise MediaError(f"unknown decoder {decoder!r}; valid: {', '.join(DECODERS)}")
    cache = _frames_cache(settings, path, start_s, end_s, n, decoder)
    if cache.is_file():
        return np.load(cache)
    chosen = decoder if decoder != "auto" else auto_decoder(path, start_s, end_s, n)
    frames = (decode_pyav if chosen == "pyav" else decode_decord)(path, start_s, end_s, n)
    tmp = cache.with_suffix(".part.npy")
    np.save(tmp, frames)
    tmp.replace(cache)
    cache.with_suffix(".json").write_text(json.dumps({"decoder": chosen}))
    return frames


def frame_times(video: Path, start_s: float, end_s: float | None, n: int, decoder: str) -> list[float]:
    """The times (seconds) of the ``n`` frames :func:`sample_frames` takes with ``decoder`` (``decord`` or
    ``pyav``): the same frame indices, over the same frame count and rate, read from the container (no decoding).
    """
    if decoder == "pyav":
        import av

        with av.open(str(video)) as container:
            stream = container.streams.video[0]
            assert stream.time_base is not None  # a decodable video stream has one
            fps = float(stream.average_rate or FPS)
            total = stream.frames or (int(float(stream.duration * stream.time_base) * fps) if stream.duration else 0)
        total = total or keyframe_layout(video)[0]
    else:
        import decord

        reader = decord.VideoReader(str(video))
        try:
            total, fps = len(reader), reader.get_avg_fps() or FPS
        finally:
            del reader
    first, last = frame_range(total, fps, start_s, end_s)
    return [round(index / fps, 4) for index in uniform_indices(first, last, n)]


def sample_frames_timed(
    settings: Settings, video: Path | str | None, start_s: float, end_s: float | None, n: int, decoder: str = "auto"
) -> tuple[np.ndarray, list[float]]:
    """:func:`sample_frames` with each frame's time in the video (seconds), kept beside the cached frames.

    The times are those of the decoder that decoded the cached frames (a cache written before times were kept
    gets them from ``decoder``, or decord for ``auto``)."""
    frames = sample_frames(settings, video, start_s, end_s, n, decoder)
    path = _require(video)
    sidecar = _frames_cache(settings, path, start_s, end_s, n, decoder).with_suffix(".json")
    try:
        kept = json.loads(sidecar.read_text())
    except (OSError, ValueError):
        kept = {}
    if "times" not in kept:
        chosen = kept.get("decoder") or (decoder if decoder != "auto" else "decord")
        try:
            kept = {"decoder": chosen, "times": frame_times(path, start_s, end_s, n, chosen)}
        except (RuntimeError, OSError) as exc:
            raise MediaError(f"cannot read video {path}: {exc}") from exc
        sidecar.write_text(json.dumps(kept))
    return frames, [float(t) for t in kept["times"]]


def observed_window_clip(settings: Settings, video: Path | str | None, start_s: float, end_s: float) -> Path:
    """The window as a browser-playable H.264 mp4 under the media folder (cut once, then cached)."""
    import av

    path = _require(video)
    target = _cache_dir(settings, "clips") / f"{path.stem}-{_key(path, start_s, end_s)}.mp4"
    if target.is_file():
        return target
    tmp = target.with_suffix(".part.mp4")
    try:
        with av.open(str(path)) as source, av.open(str(tmp), mode="w") as out:
            stream = source.streams.video[0]
            assert stream.time_base is not None  # a decodable video stream has one
            fps = stream.average_rate or 24
            encoder = out.add_stream("libx264", rate=fps)
            encoder.width = stream.codec_context.width // 2 * 2
            encoder.height = stream.codec_context.height // 2 * 2
            encoder.pix_fmt = "yuv420p"
            encoder.options = {"preset": "veryfast", "crf": "26", "movflags": "+faststart"}
            if start_s > 0:
                source.seek(int(start_s / stream.time_base), stream=stream, backward=True)
            written = 0
            for frame in source.decode(stream):
                t = float(frame.pts * stream.time_base) if frame.pts is not None else 0.0
                if t < start_s - 1e-6:
                    continue
                if t > end_s + 1e-6:
                    break
                image = frame.reformat(width=encoder.width, height=encoder.height, format="yuv420p")
                image.pts, image.time_base = written, Fraction(1, int(round(float(fps))))
                written += 1
                for packet in encoder.encode(image):
                    out.mux(packet)
            for packet in encoder.encode():
                out.mux(packet)
    except (OSError, av.error.FFmpegError) as exc:
        tmp.unlink(missing_ok=True)
        raise MediaError(f"cannot cut a clip from {path}: {exc}") from exc
    tmp.replace(target)
    return target


def write_synthetic_video(
    path: Path, seconds: float, size: tuple[int, int] = (320, 240), fps: int = 24, keyframe_every: int = 24
) -> Path:
    """A moving-gradient H.264 video for tests and benchmarks (``keyframe_every`` frames per GOP; a large
    value gives sparse keyframes). Each frame's index is written into its top-left pixels' red channel
    (index mod 256), so tests can check which frames were sampled."""
    import av

    path.parent.mkdir(parents=True, exist_ok=True)
    width, height = size
    xs = np.linspace(0, 255, width, dtype=np.float32)[None, :]
    ys = np.linspace(0, 255, height, dtype=np.float32)[:, None]
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {
            "preset": "ultrafast",
            "g": str(keyframe_every),
            "keyint_min": str(keyframe_every),
            "sc_threshold": "0",
            "bf": "0",
        }
        for index in range(int(seconds * fps)):
            rgb = np.empty((height, width, 3), dtype=np.uint8)
            rgb[..., 0] = ((xs + index * 4) % 256).astype(np.uint8)
            rgb[..., 1] = ((ys + index * 2) % 256).astype(np.uint8)
            rgb[..., 2] = 128
            rgb[:16, :16, :] = (index % 256, 0, 0)
            for packet in stream.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path
