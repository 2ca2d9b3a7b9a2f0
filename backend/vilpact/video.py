"""Which video files the web server may serve, and how they get there.

Only files inside ``settings.media_dir`` are served (it is the one path given to Gradio's
``allowed_paths``; the database and backups live outside it). A sequence imported with ``--videos``
remembers where its ``<id>.mp4`` lies; the first time it is shown, the file is hard-linked (or copied,
across file systems) into ``media/videos/`` so that nothing outside the media folder is ever exposed.
"""

from __future__ import annotations

import functools
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from backend.settings import Settings

PLAYBACK_SPEEDS = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0)
"""The player's speeds (issue 27 §3). The fastest bounds how soon a video can have been watched (the server's
watch-time floor, backend/intents/service.py)."""


def servable_video(settings: Settings, video_id: str, source_path: str | None) -> Path | None:
    """A path under the media folder for this video, or None when no video file exists."""
    if not source_path:
        return None
    source = Path(source_path)
    if not source.is_file():
        return None
    media = settings.media_dir.resolve()
    try:
        source.resolve().relative_to(media)
        return source.resolve()
    except ValueError:
        pass
    target = media / "videos" / f"{Path(video_id).name}.mp4"
    if target.is_file() and target.stat().st_size == source.stat().st_size:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".part")
    try:
        os.link(source, tmp)
    except OSError:
        shutil.copyfile(source, tmp)
    os.replace(tmp, target)
    return target


@dataclass(frozen=True)
class VideoFacts:
    """What the player needs from the file itself: its frame rate (for one-frame steps) and duration."""

    fps: float | None
    duration: float | None


def video_facts(path: Path | str | None) -> VideoFacts:
    """The frame rate and duration read from the file's video stream (PyAV), not assumed; None for what cannot
    be read. Cached per file (path, size and modification time), so a task costs one open per video."""
    if not path:
        return VideoFacts(None, None)
    try:
        stat = os.stat(path)
    except OSError:
        return VideoFacts(None, None)
    return _read_facts(str(path), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=4096)
def _read_facts(path: str, _size: int, _mtime_ns: int) -> VideoFacts:
    import av  # lazily: importing backend must stay light

    try:
        with av.open(path) as container:
            stream = container.streams.video[0]
            rate = stream.average_rate or stream.guessed_rate
            fps = float(rate) if rate else None
            if stream.duration is not None and stream.time_base is not None:
                duration: float | None = float(stream.duration * stream.time_base)
            elif container.duration is not None:
                duration = container.duration / 1_000_000
            else:
                duration = None
    except (av.error.FFmpegError, IndexError, OSError):
        return VideoFacts(None, None)
    return VideoFacts(fps, duration)
