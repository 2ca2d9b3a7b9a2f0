"""Which video files the web server may serve, and how they get there.

Only files inside ``settings.media_dir`` are served (it is the one path given to Gradio's
``allowed_paths``; the database and backups live outside it). A sequence imported with ``--videos``
remembers where its ``<id>.mp4`` lies; the first time it is shown, the file is hard-linked (or copied,
across file systems) into ``media/videos/`` so that nothing outside the media folder is ever exposed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from backend.settings import Settings


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
