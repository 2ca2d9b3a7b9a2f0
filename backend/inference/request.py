"""The one request format every backend takes, and the generation settings.

A request is an interleaved list of parts (VLMEvalKit / lmms-eval style), in reading order::

    [{"type": "text", "text": "What happens next?"},
     {"type": "image", "image": PIL.Image.Image or "path/to/file.jpg"},
     {"type": "video", "frames": [PIL.Image.Image, ...], "fps": 2.0},            # already sampled frames
     {"type": "video", "path": "clip.mp4", "start": 0.0, "end": 4.0, "num_frames": 8}]   # sampled on use

``start``/``end`` (seconds) and ``num_frames`` are optional for a video path: the whole video and the
model's ``frames_per_video`` are used when absent. ``fps`` (optional, frames given) is the rate the frames were
sampled at, frames per second of the clip they cover: models that place frames in time (Qwen2.5-VL) need it
(:func:`sampled_fps`). Frames sampled before the request is built may carry ``sampling`` (how: ``frames``,
``decoder``, ``window``), which the prediction key binds beside their pixels. Backends turn a path into frames with
:func:`video_frames` (uniform sampling through decord) unless they can pass the file natively.

A request carries no chat roles: it is one user turn. The backend wraps it in the model's chat template.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.errors import MediaError, ValidationError
from backend.inference.digests import FileDigests

if TYPE_CHECKING:
    from PIL import Image

Part = dict[str, Any]
Request = list[Part]

PART_TYPES = ("text", "image", "video")
VIDEO_DECODER = "decord"  # what :func:`video_frames` decodes a video path with (bound in the prediction key)


@dataclass(frozen=True)
class GenerationParams:
    """How to decode. Greedy by default (``temperature == 0``), so results are reproducible.

    ``max_new_tokens=None`` means: the model's ``max_new_tokens`` from the registry.
    """

    max_new_tokens: int | None = None
    temperature: float = 0.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()
    seed: int = 0

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def text(value: str) -> Part:
    return {"type": "text", "text": value}


def image(value: Any) -> Part:
    return {"type": "image", "image": value}


def video(
    *,
    frames: Sequence[Any] | None = None,
    path: str | Path | None = None,
    start: float | None = None,
    end: float | None = None,
    num_frames: int | None = None,
    fps: float | None = None,
    sampling: dict[str, Any] | None = None,
    timestamps: Sequence[float] | None = None,
) -> Part:
    """A video part: give ``frames`` (PIL images, optionally with the ``fps`` they were sampled at, the
    ``sampling`` that chose them and each frame's time in the video, ``timestamps``, in seconds: shown, not
    hashed, since the frames and their sampling already are) or a ``path`` (optionally with start/end/num_frames)."""
    if (frames is None) == (path is None):
        raise ValidationError("a video part needs either frames or a path, not both")
    if frames is not None:
        extra: Part = {"fps": float(fps)} if fps is not None else {}
        if sampling:
            extra["sampling"] = dict(sampling)
        if timestamps is not None:
            extra["timestamps"] = [float(t) for t in timestamps]
        return {"type": "video", "frames": list(frames), **extra}
    part: Part = {"type": "video", "path": str(path)}
    for key, value in (("start", start), ("end", end), ("num_frames", num_frames)):
        if value is not None:
            part[key] = value
    return part


def validate_request(request: Request) -> None:
    """Raise ``ValidationError`` listing every malformed part."""
    problems: list[str] = []
    if not isinstance(request, list) or not request:
        raise ValidationError("a request is a non-empty list of parts")
    for index, part in enumerate(request):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in PART_TYPES:
            problems.append(f"part {index}: type must be one of {', '.join(PART_TYPES)}, not {kind!r}")
        elif kind == "text" and not isinstance(part.get("text"), str):
            problems.append(f"part {index}: a text part needs a string 'text'")
        elif kind == "image" and part.get("image") is None:
            problems.append(f"part {index}: an image part needs 'image' (a PIL image or a path)")
        elif kind == "video" and ("frames" in part) == ("path" in part):
            problems.append(f"part {index}: a video part needs either 'frames' or 'path'")
        elif kind == "video" and "fps" in part and not _positive(part["fps"]):
            problems.append(f"part {index}: a video part's 'fps' must be a positive number, not {part['fps']!r}")
    if problems:
        raise ValidationError(problems)


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def sampled_fps(part: Part, num_frames: int) -> float | None:
    """Frames per second of a video part's sampled frames: the part's ``fps``, or ``num_frames`` over the
    ``start``-``end`` window of a path; ``None`` when unknown (a whole video file, frames without ``fps``).

    >>> sampled_fps({"type": "video", "path": "a.mp4", "start": 1.0, "end": 5.0}, 8)
    2.0
    >>> sampled_fps({"type": "video", "frames": [], "fps": 0.5}, 4), sampled_fps({"type": "video", "path": "a.mp4"}, 8)
    (0.5, None)
    """
    if "fps" in part:
        return float(part["fps"])
    start, end = part.get("start"), part.get("end")
    if "path" in part and start is not None and end is not None and float(end) > float(start):
        return num_frames / (float(end) - float(start))
    return None


def request_text(request: Request, image_marker: str = "<image>", video_marker: str = "<video>") -> str:
    """The request as one string, media replaced by markers (for display and text-only models).

    >>> request_text([text("Look:"), {"type": "image", "image": "a.png"}, text("What is it?")])
    'Look:\\n<image>\\nWhat is it?'
    """
    pieces = []
    for part in request:
        if part["type"] == "text":
            pieces.append(part["text"])
        else:
            pieces.append(image_marker if part["type"] == "image" else video_marker)
    return "\n".join(pieces)


def load_image(value: Any, max_side: int | None = None) -> Image.Image:
    """A PIL RGB image from a PIL image or a path, shrunk so its longer side is at most ``max_side``."""
    from PIL import Image

    if isinstance(value, (str, Path)):
        try:
            with Image.open(value) as opened:
                img = opened.convert("RGB")
        except (OSError, ValueError) as exc:
            raise MediaError(f"cannot read image {value}: {exc}") from exc
    else:
        img = value.convert("RGB") if value.mode != "RGB" else value
    if max_side and max(img.size) > max_side:
        img = img.copy()
        img.thumbnail((max_side, max_side))
    return img


def video_frames(part: Part, default_num_frames: int, max_side: int | None = None) -> list:
    """The frames of a video part as PIL images: given frames, or ``num_frames`` sampled uniformly.

    Sampling takes the centre of ``num_frames`` equal segments of [start, end] (the TSN convention).
    """
    if "frames" in part:
        return [load_image(frame, max_side) for frame in part["frames"]]
    from PIL import Image

    path = part["path"]
    num = int(part.get("num_frames") or default_num_frames)
    try:
        import decord

        reader = decord.VideoReader(str(path))
    except (RuntimeError, OSError) as exc:
        raise MediaError(f"cannot read video {path}: {exc}") from exc
    try:
        fps = reader.get_avg_fps() or 24.0
        total = len(reader)
        first = int(round(float(part.get("start") or 0.0) * fps))
        last = int(round(float(part["end"]) * fps)) if part.get("end") is not None else total
        first, last = max(0, min(first, total - 1)), max(1, min(last, total))
        span = max(1, last - first)
        indices = [min(total - 1, first + int((i + 0.5) * span / num)) for i in range(num)]
        arrays = reader.get_batch(indices).asnumpy()
    finally:
        del reader
    return [load_image(Image.fromarray(array), max_side) for array in arrays]


def _part_fingerprint(part: Part, digests: FileDigests) -> Any:
    """What of a part decides an answer: text; image content; video content, window, frames and decoder."""
    kind = part["type"]
    if kind == "text":
        return {"type": "text", "text": part["text"]}
    if kind == "image":
        return {"type": "image", "sha": _media_sha(part["image"], digests)}
    if "frames" in part:
        frames = [_media_sha(f, digests) for f in part["frames"]]
        fps = {"fps": part["fps"]} if "fps" in part else {}
        return {"type": "video", "frames": frames, "sampling": part.get("sampling"), **fps}
    window = {k: str(part[k]) for k in ("start", "end", "num_frames") if k in part}
    return {"type": "video", "sha": _media_sha(part["path"], digests), "decoder": VIDEO_DECODER, **window}


def _media_sha(value: Any, digests: FileDigests) -> str:
    if isinstance(value, (str, Path)):
        try:
            return digests.digest(value)
        except OSError:
            return "missing:" + str(value)  # the call fails with MediaError; the key still names the file
    return pixels_sha(value)


def pixels_sha(image: Image.Image) -> str:
    """The digest of an in-memory image as prompt hashes bind it: its mode, size and raw pixels (no encoding, so
    hashing costs microseconds; a PNG of it decodes to the same digest)."""
    digest = hashlib.sha256(f"{image.mode}:{image.size}:".encode())
    digest.update(image.tobytes())
    return digest.hexdigest()[:16]


def request_hash(request: Request, digests: FileDigests | None = None) -> str:
    """A stable hash of what the model sees: texts, and media content (not object identity or file name).

    Files are hashed through ``digests`` (``AppContext.digests``: once per file version); without it, anew.

    >>> request_hash([text("hi")]) == request_hash([text("hi")])
    True
    >>> request_hash([text("hi")]) == request_hash([text("hi!")])
    False
    """
    return fingerprint_hash(request_fingerprint(request, digests))


def request_fingerprint(request: Request, digests: FileDigests | None = None) -> list[Any]:
    """What of each part decides an answer (texts; media digests; a video's window, frames and sampling): the
    JSON-able list :func:`request_hash` hashes, kept as the record of what a model saw (backend/inference/seen.py)."""
    digests = digests if digests is not None else FileDigests()
    return [_part_fingerprint(p, digests) for p in request]


def fingerprint_sha256(fingerprint: list[Any]) -> str:
    """The SHA-256 (64 hex digits) of a :func:`request_fingerprint`'s canonical JSON."""
    canonical = json.dumps(fingerprint, sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def fingerprint_hash(fingerprint: list[Any]) -> str:
    """The prompt hash of a :func:`request_fingerprint`: the first 16 hex digits of :func:`fingerprint_sha256`."""
    return fingerprint_sha256(fingerprint)[:16]
