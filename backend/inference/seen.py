"""What a model saw: each request recorded by its prompt hash, its images and frames kept content-addressed.

A prediction is keyed by its prompt hash, a hash of the request's fingerprint
(:func:`backend.inference.request.request_fingerprint`: texts, media digests, a video's window, frames and
sampling). :func:`record_prompts` stores that fingerprint with the prompt's text (``prompt_records``) and the
fingerprint's full SHA-256 (``prompt_sha256``; the prompt hash is its first 16 hex digits), so a record proves
itself: its fingerprint hashes to its key. The pixels are kept beside it, under
``<media>/seen/``, named by the digest the fingerprint holds:

* an in-memory image or a sampled video frame (planning's observed window, decoded once through the frame
  cache of :mod:`backend.planning.media`) as ``<digest>.png``: PNG is lossless, so the file decodes to exactly the
  pixels the model got, which :func:`read_prompt` checks against the digest;
* an image file (a VQA item, its composite) as ``<digest><suffix>``, a copy (a hard link would share the bytes an
  in-place rewrite changes), so editing, replacing or deleting the item's image later leaves what the model saw;
* a video given by path (sampled inside the backend) is not copied: its file and window are named, and the view
  says so.

A file is written once per digest: the same frames asked of ten models, or in six rotations, are kept once.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.inference.digests import file_digest
from backend.inference.request import (
    fingerprint_hash,
    fingerprint_sha256,
    pixels_sha,
    request_fingerprint,
    request_text,
)
from backend.storage import Database, utcnow

if TYPE_CHECKING:
    from backend.context import AppContext
    from backend.inference.prepared import Prepared
    from backend.settings import Settings

CHUNK = 500  # prompt hashes per ``IN (...)`` query
_DIGEST = re.compile(r"[0-9a-f]{16}")


def seen_dir(settings: Settings) -> Path:
    """Where the images and frames models saw are kept (under the media folder, which the app serves)."""
    return settings.media_dir / "seen"


def recorded(database: Database, hashes: Sequence[str]) -> set[str]:
    """The prompt hashes among ``hashes`` that have a record."""
    found: set[str] = set()
    unique = sorted(set(hashes))
    for start in range(0, len(unique), CHUNK):
        chunk = unique[start : start + CHUNK]
        marks = ",".join("?" * len(chunk))
        found |= {
            r["prompt_hash"]
            for r in database.query(f"SELECT prompt_hash FROM prompt_records WHERE prompt_hash IN ({marks})", chunk)
        }
    return found


def _keep_pixels(folder: Path, sha: str, image: Any) -> str:
    name = f"{sha}.png"
    target = folder / name
    if not target.is_file():
        tmp = folder / f".{sha}.part.png"
        image.save(tmp, format="PNG", compress_level=1)
        tmp.replace(target)
    return name


def _keep_file(folder: Path, sha: str, source: Path) -> str | None:
    if not _DIGEST.fullmatch(sha) or not source.is_file():
        return None  # the file is gone: the call failed too (MediaError), and the record names it
    name = f"{sha}{source.suffix.lower()}"
    target = folder / name
    if target.is_file():
        return name
    tmp = folder / f".{name}.part"
    try:  # a copy, not a hard link: a link shares the bytes an in-place rewrite of the item's file would change
        shutil.copyfile(source, tmp)
        tmp.replace(target)
    except OSError:
        tmp.unlink(missing_ok=True)
        return None
    return name


def _keep(folder: Path, part: dict[str, Any], printed: dict[str, Any]) -> dict[str, Any]:
    """Keep one part's media; return what is shown of it but not hashed (file names, frame times)."""
    if part["type"] == "image":
        value = part["image"]
        if isinstance(value, (str, Path)):
            return {"file": str(value), "kept": _keep_file(folder, printed["sha"], Path(value))}
        return {"kept": _keep_pixels(folder, printed["sha"], value)}
    if part["type"] == "video" and "frames" in part:
        frames = part["frames"]
        kept = []
        for sha, frame in zip(printed["frames"], frames, strict=True):
            kept.append(
                _keep_file(folder, sha, Path(frame))
                if isinstance(frame, (str, Path))
                else _keep_pixels(folder, sha, frame)
            )
        return {"kept": kept, "timestamps": part.get("timestamps")}
    if part["type"] == "video":
        return {"file": str(part["path"])}
    return {}


def record_prompts(ctx: AppContext, prepared: Sequence[Prepared]) -> int:
    """Record the requests of ``prepared`` not recorded yet, keeping their media; returns how many were new.

    Runs when a run starts (every item it will ask or read from the store), before any model call."""
    known = recorded(ctx.database, [p.prompt_hash for p in prepared])
    folder = seen_dir(ctx.settings)
    rows = []
    for item in prepared:
        if item.prompt_hash in known:
            continue
        known.add(item.prompt_hash)
        printed = request_fingerprint(item.request, ctx.digests)
        if any(part["type"] != "text" for part in item.request):
            folder.mkdir(parents=True, exist_ok=True)
        extras = [_keep(folder, part, fp) for part, fp in zip(item.request, printed, strict=True)]
        text = request_text(item.request)
        rows.append(
            (
                item.prompt_hash,
                text,
                fingerprint_sha256(printed),
                json.dumps(printed, default=str),
                json.dumps(extras),
                utcnow(),
            )
        )
    if rows:
        with ctx.database.write() as db:
            db.conn.executemany(
                "INSERT OR IGNORE INTO prompt_records (prompt_hash, prompt_text, prompt_sha256, fingerprint, extras, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
    return len(rows)


@dataclass(frozen=True)
class SeenImage:
    """One image or video frame as the model got it: ``path`` (a kept file; None when not kept), a caption,
    the digest the prompt hash binds, and ``exact``: the file's pixels (or bytes) have that digest."""

    path: str | None
    caption: str
    sha: str
    exact: bool
    time_s: float | None = None


@dataclass(frozen=True)
class SeenPrompt:
    """A recorded request: its text, its SHA-256, the media in order, and whether the record hashes to its key."""

    prompt_hash: str
    text: str
    sha256: str
    images: tuple[SeenImage, ...]
    parts: tuple[dict[str, Any], ...]
    proven: bool
    notes: tuple[str, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict[str, Any]:
        return {
            "prompt_hash": self.prompt_hash,
            "prompt_text": self.text,
            "prompt_sha256": self.sha256,
            "proven": self.proven,
            "parts": list(self.parts),
            "images": [vars(image) for image in self.images],
            "notes": list(self.notes),
        }


def _exact(path: Path, sha: str) -> bool:
    """Whether a kept file still has the digest ``sha``: a PNG's decoded pixels, any other file's bytes."""
    if path.suffix == ".png" and path.name == f"{sha}.png":
        from PIL import Image

        with Image.open(path) as opened:
            return pixels_sha(opened.convert(opened.mode)) == sha
    return file_digest(path) == sha


def _part_summary(printed: dict[str, Any], extras: dict[str, Any]) -> dict[str, Any]:
    """What the view lists of a part (the text itself is in the prompt text)."""
    if printed["type"] == "text":
        return {"type": "text", "characters": len(printed["text"])}
    summary = {k: v for k, v in printed.items() if k not in ("text", "frames")}
    if "frames" in printed:
        summary["frames"] = len(printed["frames"])
    if extras.get("file"):
        summary["file"] = Path(extras["file"]).name
    return summary


def read_prompt(settings: Settings, database: Database, prompt_hash: str) -> SeenPrompt | None:
    """The record of ``prompt_hash`` with its kept media, each checked against its digest; None when the
    prompt was never recorded (a prediction stored before runs recorded their prompts)."""
    row = database.query_one("SELECT * FROM prompt_records WHERE prompt_hash = ?", (prompt_hash,))
    if row is None:
        return None
    printed, extras = json.loads(row["fingerprint"]), json.loads(row["extras"])
    folder = seen_dir(settings)
    images: list[SeenImage] = []
    notes: list[str] = []
    counter = {"image": 0, "video": 0}
    for fp, extra in zip(printed, extras, strict=True):
        if fp["type"] == "image":
            counter["image"] += 1
            images.append(_seen(folder, extra.get("kept"), fp["sha"], f"image {counter['image']}"))
        elif fp["type"] == "video" and "frames" in fp:
            counter["video"] += 1
            times = extra.get("timestamps") or [None] * len(fp["frames"])
            for index, (sha, name, at) in enumerate(zip(fp["frames"], extra.get("kept") or [], times, strict=False)):
                when = f" · {at:.2f} s" if at is not None else ""
                video_no = f"video {counter['video']} " if counter["video"] > 1 else ""
                images.append(_seen(folder, name, sha, f"{video_no}frame {index + 1}{when}", at))
        elif fp["type"] == "video":
            counter["video"] += 1
            notes.append(
                f"video {counter['video']} was given as the file {Path(extra.get('file', '')).name} "
                f"({', '.join(f'{k} {fp[k]}' for k in ('start', 'end', 'num_frames') if k in fp) or 'whole'}); "
                "the backend sampled its frames itself, so they are not kept"
            )
    summaries = tuple(_part_summary(fp, extra) for fp, extra in zip(printed, extras, strict=True))
    if any(not image.exact for image in images):
        notes.append("some images are missing or changed since the run: shown only where their digest still matches")
    return SeenPrompt(
        prompt_hash,
        row["prompt_text"],
        row["prompt_sha256"],
        tuple(images),
        summaries,
        fingerprint_hash(printed) == prompt_hash,
        tuple(notes),
    )


def _seen(folder: Path, name: str | None, sha: str, caption: str, at: float | None = None) -> SeenImage:
    path = folder / name if name else None
    exact = bool(path and path.is_file() and _exact(path, sha))
    return SeenImage(str(path) if exact and path else None, caption, sha, exact, at)
