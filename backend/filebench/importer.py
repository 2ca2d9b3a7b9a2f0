"""Importing a multiple-choice benchmark from a file (all or nothing).

Sources: a ``.jsonl`` file (one item per line), a ``.json`` list, a ``.parquet`` file (pandas + pyarrow), or
``hf:owner/dataset[:split]`` (a Hugging Face dataset repository, downloaded with ``huggingface_hub``; its
``.parquet``/``.jsonl`` files, those of ``split`` when given, read as above). Each row has ``question``,
``options`` (a list of texts; or columns ``A``, ``B``, ... as MMBench's files have), ``answer`` (letters: ``"B"``,
``"A,C"``, ``["A", "C"]``, or the text of one option); optionally ``id`` (else the row number), ``images``
(a list, or one), ``video`` and ``category``. A row with more than one answer letter is indefinite choice.

Media are paths relative to the file (inside its folder) or, in Parquet, images as bytes (the ``datasets``
Image feature's ``{"bytes": ..., "path": ...}``). Every image must open and every video must exist; all are
copied into the benchmark's ``media/`` folder, so the benchmark no longer depends on the file. Every problem in
the file is reported at once with its line; nothing is written unless every row is fine, and the benchmark
appears in one rename.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
import shutil
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from backend.errors import ImportFileError, ValidationError
from backend.inference.parsing import LETTERS
from backend.storage import utcnow
from backend.storage.jsonl import read_jsonl

FORMAT_VERSION = 1
NAME_RULE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
METRICS = ("accuracy", "partial_credit")
MAX_PROBLEMS = 8
Download = Callable[[str, str | None], Path]  # (repo id, revision) -> local folder


def benchmarks_dir(data_dir: Path) -> Path:
    return Path(data_dir) / "benchmarks"


def _hub_download(repo: str, revision: str | None) -> Path:
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(repo_id=repo, repo_type="dataset", revision=revision))


def resolve_source(source: str, download: Download = _hub_download) -> tuple[list[Path], Path]:
    """The data files of ``source`` and the folder media paths are relative to."""
    if source.startswith("hf:"):
        spec = source[3:]
        repo_rev, _, split = spec.partition(":")
        repo, _, revision = repo_rev.partition("@")
        if repo.count("/") != 1:
            raise ValidationError(f"hf: source must be hf:owner/dataset[@revision][:split], not {source!r}")
        try:
            folder = download(repo, revision or None)
        except Exception as exc:  # the Hub's errors are many; the message says what happened
            raise ValidationError(f"could not download the dataset {repo}: {type(exc).__name__}: {exc}") from exc
        files = sorted(p for p in folder.rglob("*") if p.suffix in (".parquet", ".jsonl") and p.is_file())
        if split:
            files = [p for p in files if split in p.relative_to(folder).as_posix()]
        if not files:
            raise ValidationError(f"{source}: no .parquet or .jsonl files{' for split ' + split if split else ''}")
        return files, folder
    path = Path(source)
    if not path.is_file():
        raise ImportFileError(str(path), None, "file not found")
    if path.suffix not in (".jsonl", ".json", ".parquet"):
        raise ImportFileError(str(path), None, "expected a .jsonl, .json or .parquet file, or hf:owner/dataset")
    return [path], path.parent


def read_records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """``(row number, record)`` of a data file (line numbers for JSONL, 1-based rows otherwise)."""
    if path.suffix == ".jsonl":
        records: list[tuple[int, Any]] = read_jsonl(path)
    elif path.suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ImportFileError(str(path), None, f"not valid JSON ({exc})") from None
        if not isinstance(data, list):
            raise ImportFileError(str(path), None, "expected a JSON list of items")
        records = list(enumerate(data, start=1))
    else:
        import pandas as pd

        try:
            frame = pd.read_parquet(path)
        except (OSError, ValueError) as exc:
            raise ImportFileError(str(path), None, f"not a readable Parquet file ({exc})") from None
        records = [(i, {k: _plain(v) for k, v in row.items()}) for i, row in enumerate(frame.to_dict("records"), 1)]
    for number, record in records:
        if not isinstance(record, dict):
            raise ImportFileError(str(path), number, "each item must be a JSON object")
    return records


def _plain(value: Any) -> Any:
    """Parquet cells as plain Python (numpy arrays as lists, NaN as None)."""
    if hasattr(value, "tolist") and not isinstance(value, (bytes, str)):
        return _plain(value.tolist())
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _options(record: dict[str, Any]) -> list[str] | str:
    options = record.get("options", record.get("choices"))
    if options is None:  # MMBench-style letter columns
        options = []
        for letter in LETTERS:
            value = record.get(letter)
            if value is None or not str(value).strip():
                break
            options.append(value)
    if isinstance(options, str):
        try:
            options = json.loads(options)
        except ValueError:
            return "options must be a list of texts"
    if not isinstance(options, list) or not all(isinstance(o, (str, int, float)) for o in options):
        return "options must be a list of texts"
    texts = [str(o).strip() for o in options]
    if not 2 <= len(texts) <= len(LETTERS) or any(not t for t in texts):
        return f"options must be 2 to {len(LETTERS)} non-empty texts"
    if len(set(texts)) != len(texts):
        return "two options have the same text"
    return texts


def _answer(value: Any, options: list[str]) -> list[str] | str:
    letters = LETTERS[: len(options)]
    if (
        isinstance(value, str)
        and value.strip() in options
        and not (len(value.strip()) == 1 and value.strip() in letters)
    ):
        return [letters[options.index(value.strip())]]
    parts = value if isinstance(value, list) else re.split(r"[,\s;]+", str(value or ""))
    found = sorted({str(p).strip().strip("()").upper() for p in parts if str(p).strip()})
    if not found:
        return 'answer is missing (letters like "B" or "A,C", or one option\'s text)'
    wrong = [f for f in found if f not in letters]
    if wrong:
        return f"answer {', '.join(wrong)} is not one of the options' letters {letters[0]}-{letters[-1]}"
    return found


class _Media:
    """Copies of media into the benchmark's folder, each checked once."""

    def __init__(self, base: Path, folder: Path) -> None:
        self.base, self.folder = base.resolve(), folder
        self.copied: dict[str, str] = {}

    def add_path(self, value: str, kind: str) -> str:
        relative = Path(value)
        source = (self.base / relative).resolve()
        if relative.is_absolute() or not source.is_relative_to(self.base):
            raise ValueError(f"{kind} {value!r} must be a path relative to the file, inside its folder")
        if not source.is_file():
            raise ValueError(f"{kind} {value!r} not found (looked for {source})")
        key = source.as_posix()
        if key not in self.copied:
            if kind == "image":
                _check_image(source.read_bytes())
            else:
                _check_video(source)
            target = Path("media") / source.relative_to(self.base)
            (self.folder / target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, self.folder / target)
            self.copied[key] = target.as_posix()
        return self.copied[key]

    def add_bytes(self, data: bytes) -> str:
        kind = _check_image(data)
        name = f"{hashlib.sha256(data).hexdigest()[:16]}.{kind}"
        target = Path("media") / "embedded" / name
        (self.folder / target).parent.mkdir(parents=True, exist_ok=True)
        (self.folder / target).write_bytes(data)
        return target.as_posix()


def _check_image(data: bytes) -> str:
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as img:
            img.verify()
            return (img.format or "png").lower()
    except Exception as exc:  # PIL raises many kinds for a bad file
        raise ValueError(f"image does not open ({type(exc).__name__})") from None


def _check_video(path: Path) -> None:
    try:
        import decord
    except ImportError:
        return
    try:
        reader = decord.VideoReader(str(path))
        frames = len(reader)
        del reader
    except (RuntimeError, OSError) as exc:
        raise ValueError(f"video {path.name} does not open ({exc})") from None
    if frames < 1:
        raise ValueError(f"video {path.name} has no frames")


def _media_list(value: Any) -> list[Any]:
    if value is None or value == "":
        return []
    return list(value) if isinstance(value, list) else [value]


def _image(entry: Any, media: _Media) -> str:
    """One image of a row, copied into the benchmark's media: bytes (``{"bytes": ...}`` or raw) or a path."""
    if isinstance(entry, dict) and entry.get("bytes"):
        return media.add_bytes(entry["bytes"])
    if isinstance(entry, (bytes, bytearray)):
        return media.add_bytes(bytes(entry))
    if isinstance(entry, dict) and entry.get("path"):
        return media.add_path(str(entry["path"]), "image")
    return media.add_path(str(entry), "image")


def _images(record: dict[str, Any], media: _Media, problems: list[str]) -> list[str]:
    """Every image of a row copied; each one that cannot be is added to ``problems``."""
    images = []
    for entry in _media_list(record.get("images", record.get("image"))):
        try:
            images.append(_image(entry, media))
        except ValueError as exc:
            problems.append(str(exc))
    return images


def normalise(record: dict[str, Any], number: int, media: _Media) -> dict[str, Any]:
    """One checked, normalised item (media copied); ``ValueError`` naming every problem with the row."""
    problems = []
    question = str(record.get("question") or "").strip()
    if not question:
        problems.append("question is missing")
    options = _options(record)
    if isinstance(options, str):
        problems.append(options)
        answer: list[str] | str = []
    else:
        answer = _answer(record.get("answer"), options)
        if isinstance(answer, str):
            problems.append(answer)
    images = _images(record, media, problems)
    video = None
    if record.get("video"):
        try:
            video = media.add_path(str(record["video"]), "video")
        except ValueError as exc:
            problems.append(str(exc))
    if problems:
        raise ValueError("; ".join(problems))
    assert isinstance(options, list) and isinstance(answer, list)
    category = record.get("category")
    return {
        "id": str(record.get("id") if record.get("id") not in (None, "") else number),
        "question": question,
        "options": options,
        "answer": answer,
        "images": images,
        "video": video,
        "category": str(category).strip() if category not in (None, "") else None,
    }


def check_name(name: str, taken: set[str]) -> None:
    if not NAME_RULE.match(name):
        raise ValidationError(f"benchmark name {name!r}: letters, digits, '.', '_' or '-' (at most 64)")
    if name in taken:
        raise ValidationError(f"{name!r} is a built-in benchmark; choose another name")


def import_benchmark(
    data_dir: Path,
    name: str,
    source: str,
    *,
    builtin: set[str],
    description: str = "",
    metric: str = "accuracy",
    replace: bool = False,
    download: Download = _hub_download,
) -> dict[str, Any]:
    """Import ``source`` as benchmark ``name`` (see the module docstring); returns what ``benchmark.json`` holds."""
    check_name(name, builtin)
    if metric not in METRICS:
        raise ValidationError(f"metric must be one of {', '.join(METRICS)}")
    root = benchmarks_dir(data_dir)
    final = root / name
    if final.exists() and not replace:
        raise ValidationError(f"benchmark {name!r} exists; pass --replace to import it again")
    files, base = resolve_source(source, download)
    staging = root / f".import-{name}-{uuid.uuid4().hex[:8]}"
    staging.mkdir(parents=True)
    try:
        meta = _build(staging, files, base, name, source, description, metric)
        _swap_in(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return meta


def _build(
    folder: Path, files: Sequence[Path], base: Path, name: str, source: str, description: str, metric: str
) -> dict[str, Any]:
    media = _Media(base, folder)
    items, problems = [], []
    seen: set[str] = set()
    for path in files:
        for number, record in read_records(path):
            try:
                item = normalise(record, number, media)
                if item["id"] in seen:
                    raise ValueError(f"duplicate id {item['id']!r}")
            except ValueError as exc:
                where = f"{path.name}:{number}" if len(files) > 1 else f"line {number}"
                problems.append(f"{where}: {exc}")
                continue
            seen.add(item["id"])
            items.append(item)
    if problems:
        more = f" (and {len(problems) - MAX_PROBLEMS} more)" if len(problems) > MAX_PROBLEMS else ""
        raise ImportFileError(str(files[0]), None, "; ".join(problems[:MAX_PROBLEMS]) + more)
    if not items:
        raise ImportFileError(str(files[0]), None, "no items")
    lines = "".join(json.dumps(item, ensure_ascii=False, sort_keys=True) + "\n" for item in items)
    (folder / "items.jsonl").write_text(lines, encoding="utf-8")
    categories = Counter(item["category"] or "(none)" for item in items)
    meta = {
        "format_version": FORMAT_VERSION,
        "name": name,
        "description": description or f"multiple-choice items from {source}",
        "source": source,
        "imported_at": utcnow(),
        "metric": metric,
        "items": len(items),
        "single_choice": sum(1 for item in items if len(item["answer"]) == 1),
        "with_images": sum(1 for item in items if item["images"]),
        "with_video": sum(1 for item in items if item["video"]),
        "categories": dict(sorted(categories.items())),
        "content_sha256": hashlib.sha256(lines.encode()).hexdigest(),
    }
    (folder / "benchmark.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return meta


def _swap_in(staging: Path, final: Path) -> None:
    """Put the new folder in place in one rename; an old one goes after it is out of the way."""
    old = final.with_name(f".old-{final.name}-{uuid.uuid4().hex[:8]}")
    if final.exists():
        final.rename(old)
    staging.rename(final)
    shutil.rmtree(old, ignore_errors=True)


def remove_benchmark(data_dir: Path, name: str) -> None:
    folder = benchmarks_dir(data_dir) / name
    if not NAME_RULE.match(name) or not (folder / "benchmark.json").is_file():
        raise ValidationError(f"no benchmark {name!r} imported from a file")
    gone = folder.with_name(f".removed-{name}-{uuid.uuid4().hex[:8]}")
    folder.rename(gone)
    shutil.rmtree(gone, ignore_errors=True)
