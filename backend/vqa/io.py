"""Import and export of VQA items, in two layouts. Imports are all-or-nothing.

**released** — the layout of MMComposition's released inference script, extended: a folder with
``questions.json`` (a list of ``{"question", "options": {"A": ..., "B": ...}}``) and ``images/`` holding one
image per question, paired by order (files directly in ``images/``, sorted by name). We add ``answer``
(letters: ``"A"``, ``"AC"`` or ``["A", "C"]``) and ``category`` (full or short name), and optionally ``id``,
``choice_type`` (default: single when one letter is correct, else indefinite), ``provenance``, ``status``,
``difficulty_level`` and ``source_images`` (file names under ``images/sources/`` for multi-image items,
whose paired image is then their composite).

**jsonl** — one item per line: ``{"id", "category", "question", "options": {...} or [...], "answer",
"choice_type", "images": [paths], "composite": path or null, ...}``; relative paths are relative to the
JSONL file's folder. Export writes ``items.jsonl`` and copies the images into ``images/`` beside it.

Every problem found in a file is reported (file, line or question number, what is wrong) and nothing is
imported: files are fully checked before any image is copied or any row is written, and rows are written
in one transaction.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend import assignment
from backend.errors import CompStudioError, ImportFileError, MediaError, ValidationError
from backend.settings import Settings
from backend.storage import Database, audit
from backend.storage.jsonl import read_jsonl
from backend.vqa.images import build_composite, image_format, media_path, store_image
from backend.vqa.items import LETTERS, VqaItem, insert_item, list_items, make_item, parse_letters

FORMATS = ("released", "jsonl")
VERIFY_KIND = "vqa_verify"
ANSWER_KIND = "vqa_answer"


@dataclass
class _Pending:
    where: str
    line: int | None
    fields: dict[str, Any]
    image_files: list[Path]
    composite_file: Path | None
    item: VqaItem | None = None
    problems: list[str] = field(default_factory=list)


def _natural_key(path: Path) -> list[Any]:
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", path.name)]


def _options_list(value: Any) -> tuple[list[str], list[str]]:
    """Options as texts in letter order from ``{"A": ..}`` or ``[...]``; returns (texts, problems)."""
    if isinstance(value, list):
        return [str(v) for v in value], []
    if isinstance(value, dict):
        letters = sorted(value)
        expected = list(LETTERS[: len(letters)])
        if letters != expected:
            return [], [f"option letters must run A, B, C ... without gaps; found {', '.join(letters)}"]
        return [str(value[k]) if value[k] is not None else "" for k in letters], []
    return [], ['options must be an object {"A": text, ...} or a list of texts']


def _item_from(record: Any, images: list[str], composite: str | None, author: str) -> tuple[VqaItem | None, list[str]]:
    if not isinstance(record, dict):
        return None, ["each entry must be a JSON object"]
    options, problems = _options_list(record.get("options"))
    raw_answer = record.get("answer")
    if raw_answer is None:
        problems.append("the answer is missing")
    answer = parse_letters(raw_answer)
    choice_type = record.get("choice_type") or ("single" if len(answer) == 1 else "indefinite")
    if problems:
        return None, problems
    try:
        item = make_item(
            category=str(record.get("category") or ""),
            question=str(record.get("question") or ""),
            options=options,
            answer=answer,
            choice_type=choice_type,
            images=images,
            composite=composite,
            provenance=record.get("provenance") or "imported",
            author=record.get("author") or author,
            item_id=record.get("id") or None,
            status=record.get("status") or "draft",
            difficulty_level=record.get("difficulty_level") or None,
        )
    except ValidationError as exc:
        return None, exc.problems
    return item, []


def _check_images(pending: _Pending) -> None:
    for path in [*pending.image_files, *([pending.composite_file] if pending.composite_file else [])]:
        if not path.is_file():
            pending.problems.append(f"image {path.name} is missing ({path})")
            continue
        try:
            image_format(path)
        except MediaError as exc:
            pending.problems.append(str(exc))


def _read_released(folder: Path) -> tuple[Path, list[_Pending]]:
    questions_path = folder / "questions.json"
    if not questions_path.is_file():
        raise ImportFileError(str(folder), None, "no questions.json in this folder")
    try:
        records = json.loads(questions_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ImportFileError(str(questions_path), getattr(exc, "lineno", None), f"not valid JSON ({exc})") from None
    if not isinstance(records, list):
        raise ImportFileError(str(questions_path), None, "questions.json must hold a list of questions")
    image_dir = folder / "images"
    paired = sorted((p for p in image_dir.iterdir() if p.is_file()), key=_natural_key) if image_dir.is_dir() else []
    if len(paired) != len(records):
        raise ImportFileError(
            str(image_dir),
            None,
            f"{len(records)} questions but {len(paired)} images in images/ (they are paired by order)",
        )
    pending = []
    for index, (record, image) in enumerate(zip(records, paired, strict=True), start=1):
        sources = record.get("source_images") if isinstance(record, dict) else None
        if sources:
            files, composite = [image_dir / "sources" / str(s) for s in sources], image
        else:
            files, composite = [image], None
        pending.append(_Pending(f"question {index}", None, record, files, composite))
    return questions_path, pending


def _read_jsonl(path: Path) -> tuple[Path, list[_Pending]]:
    pending = []
    for number, record in read_jsonl(path):
        images = record.get("images") if isinstance(record, dict) else None
        if isinstance(images, str):
            images = [images]
        files = [(path.parent / str(p)) for p in (images or [])]
        composite = record.get("composite") if isinstance(record, dict) else None
        pending.append(
            _Pending(f"line {number}", number, record, files, path.parent / composite if composite else None)
        )
    return path, pending


def _check_pending(database: Database, pending: list[_Pending], actor: str, file_path: Path) -> None:
    """Every entry's fields, images and id checked before any file is copied; all problems at once."""
    seen: dict[str, str] = {}
    existing = {row["id"] for row in database.query("SELECT id FROM vqa_items")}
    for entry in pending:
        _check_images(entry)
        # Placeholder paths let the fields be validated before any file is copied.
        pending_paths = [f"pending/{i}" for i in range(len(entry.image_files))]
        item, problems = _item_from(entry.fields, pending_paths, None, actor)
        entry.item, entry.problems = item, entry.problems + problems
        if item is not None and isinstance(entry.fields, dict) and entry.fields.get("id"):
            if item.id in seen:
                entry.problems.append(f"duplicate id {item.id!r} (also {seen[item.id]})")
            elif item.id in existing:
                entry.problems.append(f"an item with id {item.id!r} already exists")
            seen[item.id] = entry.where
    bad = [e for e in pending if e.problems]
    if bad:
        listed = "; ".join(f"{e.where}: {', '.join(e.problems)}" for e in bad[:10])
        more = f" (and {len(bad) - 10} more items with problems)" if len(bad) > 10 else ""
        line = bad[0].line if len(bad) == 1 else None
        raise ImportFileError(str(file_path), line, listed + more)


def import_items(
    database: Database,
    settings: Settings,
    source: Path | str,
    fmt: str,
    *,
    actor: str = "cli",
) -> dict[str, Any]:
    """Import every item of ``source`` (a folder for ``released``, a file for ``jsonl``) or none.

    Items with status ``draft`` enter the verification pool; ``verified`` ones the answering pool.
    """
    if fmt not in FORMATS:
        raise ValidationError(f"unknown VQA format {fmt!r}; use {' or '.join(FORMATS)}")
    source = Path(source)
    file_path, pending = _read_released(source) if fmt == "released" else _read_jsonl(source)
    if not pending:
        raise ImportFileError(str(file_path), None, "no items in the file")
    _check_pending(database, pending, actor, file_path)
    items = []
    for entry in pending:
        assert entry.item is not None
        stored = [store_image(settings, p) for p in entry.image_files]
        composite = store_image(settings, entry.composite_file) if entry.composite_file else None
        if composite is None and len(stored) > 1:
            composite = build_composite(settings, stored)
        items.append(_with_images(entry.item, stored, composite))
    with database.write() as db:
        for item in items:
            insert_item(db, item)
        drafts = [i.id for i in items if i.status == "draft"]
        assignment.add_tasks(db, VERIFY_KIND, drafts, settings.vqa_verifiers)
        assignment.add_tasks(
            db, ANSWER_KIND, [i.id for i in items if i.status == "verified"], settings.vqa_answers_per_item
        )
        audit(db, actor, "vqa.import", str(source), {"format": fmt, "items": len(items)})
    return {"imported": len(items), "to_verify": len(drafts), "ids": [i.id for i in items]}


def _with_images(item: VqaItem, images: list[str], composite: str | None) -> VqaItem:
    from dataclasses import replace

    return replace(item, images=tuple(images), composite=composite)


def _record(item: VqaItem) -> dict[str, Any]:
    return {
        "id": item.id,
        "question": item.question,
        "options": {letter: text for letter, text in zip(item.letters, item.options, strict=True)},
        "answer": list(item.answer),
        "category": item.category,
        "choice_type": item.choice_type,
        "provenance": item.provenance,
        "status": item.status,
        "difficulty_level": item.difficulty_level,
    }


def export_items(
    database: Database,
    settings: Settings,
    out: Path | str,
    fmt: str,
    *,
    ids: Sequence[str] | None = None,
    status: str | None = None,
) -> dict[str, Any]:
    """Write items (all, those with ``status``, or the given ``ids`` in that order) to ``out`` (a folder)."""
    if fmt not in FORMATS:
        raise ValidationError(f"unknown VQA format {fmt!r}; use {' or '.join(FORMATS)}")
    items = list_items(database, status=status, ids=ids)
    out = Path(out)
    image_dir = out / "images"
    if fmt == "released" and image_dir.exists() and any(image_dir.iterdir()):
        raise CompStudioError(f"{image_dir} is not empty: export into a new folder (images are paired by order)")
    image_dir.mkdir(parents=True, exist_ok=True)
    width = max(5, len(str(len(items))))
    records = []
    for index, item in enumerate(items, start=1):
        record = _record(item)
        stem = f"{index:0{width}d}"
        model_image = media_path(settings, item.model_image)
        if fmt == "released":
            shutil.copyfile(model_image, image_dir / f"{stem}{model_image.suffix}")
            if item.composite:
                (image_dir / "sources").mkdir(exist_ok=True)
                record["source_images"] = []
                for k, rel in enumerate(item.images, start=1):
                    src = media_path(settings, rel)
                    shutil.copyfile(src, image_dir / "sources" / f"{stem}_{k}{src.suffix}")
                    record["source_images"].append(f"{stem}_{k}{src.suffix}")
        else:
            record["images"] = []
            for k, rel in enumerate(item.images, start=1):
                src = media_path(settings, rel)
                shutil.copyfile(src, image_dir / f"{stem}_{k}{src.suffix}")
                record["images"].append(f"images/{stem}_{k}{src.suffix}")
            if item.composite:
                shutil.copyfile(model_image, image_dir / f"{stem}_composite{model_image.suffix}")
                record["composite"] = f"images/{stem}_composite{model_image.suffix}"
        records.append(record)
    if fmt == "released":
        target = out / "questions.json"
        target.write_text(json.dumps(records, indent=1, ensure_ascii=False), encoding="utf-8")
    else:
        target = out / "items.jsonl"
        target.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return {"exported": len(items), "path": str(target)}


def import_upload(database: Database, settings: Settings, username: str | None, upload: Path | str) -> dict[str, Any]:
    """An admin's uploaded file: a ``.zip`` of the released layout (``questions.json`` at its root or in one
    folder) or an items ``.jsonl`` whose image paths are absolute or relative to it. All or nothing."""
    import tempfile
    import zipfile

    from backend.accounts import auth

    admin = auth.require_role(database, username, "admin")
    upload = Path(upload)
    if upload.suffix.lower() == ".jsonl":
        return import_items(database, settings, upload, "jsonl", actor=admin.username)
    if upload.suffix.lower() != ".zip":
        raise ValidationError("upload a .zip of questions.json + images/, or an items .jsonl")
    with tempfile.TemporaryDirectory(prefix="vqa-import-") as tmp:
        try:
            with zipfile.ZipFile(upload) as archive:
                archive.extractall(tmp)  # extractall drops absolute paths and '..' components
        except zipfile.BadZipFile as exc:
            raise ImportFileError(upload.name, None, f"not a valid zip file ({exc})") from None
        found = sorted(Path(tmp).glob("questions.json")) or sorted(Path(tmp).glob("*/questions.json"))
        if not found:
            raise ImportFileError(upload.name, None, "no questions.json at the top of the zip or in one folder")
        return import_items(database, settings, found[0].parent, "released", actor=admin.username)


def export_download(
    database: Database,
    settings: Settings,
    username: str | None,
    out_dir: Path | str,
    fmt: str = "released",
    status: str | None = "verified",
) -> str:
    """Export items (reviewers) into ``<out_dir>/vqa_items.zip``; returns the zip's path."""
    from backend.accounts import auth

    auth.require_role(database, username, "reviewer")
    folder = Path(out_dir) / "vqa_items"
    if folder.exists():
        shutil.rmtree(folder)
    export_items(database, settings, folder, fmt, status=status)
    return shutil.make_archive(str(folder), "zip", root_dir=folder)
