"""Demo videos, generated locally: browser-playable H.264 (yuv420p, even size) written with PyAV.

Each video shows a labelled sequence of actions as a simple animation, with a "DEMO" banner, so that
nobody mistakes it for real data.
"""

from __future__ import annotations

from pathlib import Path

FPS = 12
SIZE = (320, 240)


def write_demo_video(path: Path, actions: list[tuple[str, float, float]], duration: float, hue: int) -> Path:
    """Write ``path`` (H.264 mp4). ``actions`` are (name, start s, end s) drawn as captions over time."""
    import av
    import numpy as np
    from PIL import Image, ImageDraw

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part.mp4")
    frames = int(duration * FPS)
    with av.open(str(tmp), mode="w") as container:
        stream = container.add_stream("libx264", rate=FPS)
        stream.width, stream.height = SIZE
        stream.pix_fmt = "yuv420p"
        stream.options = {"preset": "veryfast", "crf": "28", "g": str(FPS)}
        for index in range(frames):
            t = index / FPS
            image = Image.new("RGB", SIZE, (hue, 60, 255 - hue))
            draw = ImageDraw.Draw(image)
            x = int((SIZE[0] - 40) * (t / duration))
            draw.ellipse((x, 150, x + 40, 190), fill=(250, 220, 80))
            draw.rectangle((0, 0, SIZE[0], 22), fill=(20, 20, 20))
            draw.text((6, 5), f"DEMO video - not real data   t={t:4.1f}s", fill=(255, 255, 255))
            current = [name for name, start, end in actions if start <= t < end]
            for row, name in enumerate(current[:4]):
                draw.text((10, 40 + 18 * row), name, fill=(255, 255, 255))
            frame = av.VideoFrame.from_ndarray(np.asarray(image), format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    tmp.replace(path)
    return path
