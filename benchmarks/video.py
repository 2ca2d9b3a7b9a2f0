"""Frame sampling for planning questions: decord vs a sequential PyAV decode vs the disk cache.

For a 30 s 640x480 H.264 video with sparse keyframes (one every 250 frames, x264's default) and with
frequent ones (one a second), time sampling 8 frames uniformly from the observed window (the first 20%)
and from the whole video, with decord and with PyAV, then the same request served from the cache
(``backend.planning.media.sample_frames``). Each figure is the median of REPEATS runs.

    .venv/bin/python benchmarks/video.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.planning import media  # noqa: E402
from backend.settings import Settings  # noqa: E402

REPEATS = 5
FRAMES = 8


def timed(fn, *args) -> float:
    times = []
    for _ in range(REPEATS):
        began = time.perf_counter()
        fn(*args)
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="video-bench-"))
    settings = Settings(data_dir=folder / "data")
    print(
        f"{'video':<28}{'window':<10}{'decord ms':>10}{'pyav ms':>10}{'cached ms':>10}{'pyav/decord':>12}"
        f"{'decode/cached':>14}"
    )
    for label, every in (("sparse keyframes (250)", 250), ("frequent keyframes (24)", 24)):
        path = media.write_synthetic_video(folder / f"{every}.mp4", 30, (640, 480), keyframe_every=every)
        for window, (start, end) in (("first 20%", (0.0, 6.0)), ("whole", (0.0, None))):
            decord_ms = timed(media.decode_decord, path, start, end, FRAMES)
            pyav_ms = timed(media.decode_pyav, path, start, end, FRAMES)
            media.sample_frames(settings, path, start, end, FRAMES)  # fill the cache
            cached_ms = timed(media.sample_frames, settings, path, start, end, FRAMES)
            best = min(decord_ms, pyav_ms)
            print(
                f"{label:<28}{window:<10}{decord_ms:>10.1f}{pyav_ms:>10.1f}{cached_ms:>10.2f}"
                f"{pyav_ms / decord_ms:>12.2f}{best / cached_ms:>14.0f}"
            )
    print("Measured on a shared 2-core machine under contention: compare ratios, not absolute times.")


if __name__ == "__main__":
    main()
