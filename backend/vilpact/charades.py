"""Import Charades-format annotations: ``Charades_v1_{train,test}.csv`` (or Charades-Ego's, or one's own recordings
annotated the same way) with the class, object, verb and mapping files (issue 30).

* videos: a CSV with at least ``id`` and ``actions`` (Charades has ``id,subject,scene,quality,relevance,verified,
  script,objects,descriptions,actions,length``); ``actions`` is ``cNNN start end`` triplets joined by ``;``
  (empty: no actions), times in seconds;
* ``Charades_v1_classes.txt``: ``cNNN name`` per line; ``Charades_v1_objectclasses.txt`` / ``_verbclasses.txt``:
  ``oNNN name`` / ``vNNN name``; ``Charades_v1_mapping.txt``: ``cNNN oNNN vNNN`` (each class's object and verb).

Everything is read and checked before anything is written. A bad row raises :class:`CharadesRowsError` naming the
file and, for every bad row, its line and what is wrong (an unknown class, a time that is not a number, an action
ending before it starts, a duplicate id...); nothing is imported then. The import itself is one ``BEGIN
IMMEDIATE`` transaction: classes (names, and objects/verbs when the mapping is given, keeping ViLPAct's STRIPS
columns) and videos are upserted, so importing the same files again changes nothing.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.accounts import auth
from backend.errors import ImportFileError
from backend.import_paths import inside_import_dir
from backend.settings import Settings
from backend.storage import Database, audit, utcnow
from backend.vilpact.extraction import TimedAction
from backend.vilpact.importer import _csv_records, _read_text

CHARADES_COLUMNS = (
    "id",
    "subject",
    "scene",
    "quality",
    "relevance",
    "verified",
    "script",
    "objects",
    "descriptions",
    "actions",
    "length",
)
REQUIRED_COLUMNS = ("id", "actions")
STANDARD_NAMES = {
    "classes": "Charades_v1_classes.txt",
    "objects": "Charades_v1_objectclasses.txt",
    "verbs": "Charades_v1_verbclasses.txt",
    "mapping": "Charades_v1_mapping.txt",
}
_ITEM = re.compile(r"^(\S+) (\S+) (\S+)$")
_INDEXED = re.compile(r"^(\S+)\s+(\S.*)$")
MAX_LISTED = 10


class CharadesRowsError(ImportFileError):
    """Rows of a Charades-format file that cannot be imported: each one's line and problem."""

    def __init__(self, path: str, problems: Sequence[tuple[int, str]]):
        self.problems = list(problems)
        listed = "; ".join(f"line {line}: {problem}" for line, problem in self.problems[:MAX_LISTED])
        more = len(self.problems) - MAX_LISTED
        count = f"{len(self.problems)} bad row{'s' if len(self.problems) != 1 else ''}"
        super().__init__(path, None, f"{count}: {listed}" + (f"; and {more} more" if more > 0 else ""))


@dataclass(frozen=True)
class CharadesFiles:
    """The files of one import. ``videos``: one or more Charades-format CSVs."""

    videos: tuple[Path, ...]
    classes: Path
    objects: Path | None = None
    verbs: Path | None = None
    mapping: Path | None = None

    @classmethod
    def in_folder(cls, folder: Path) -> CharadesFiles:
        """Charades' own file names in ``folder``: every ``*.csv`` is a video file."""
        if not folder.is_dir():
            raise ImportFileError(str(folder), None, "not a folder")
        videos = tuple(sorted(folder.glob("*.csv")))
        if not videos:
            raise ImportFileError(str(folder), None, "no Charades-format CSV (such as Charades_v1_train.csv) in it")
        optional = {k: folder / n for k, n in STANDARD_NAMES.items() if k != "classes" and (folder / n).is_file()}
        return cls(videos, folder / STANDARD_NAMES["classes"], **optional)


@dataclass(frozen=True)
class CharadesClasses:
    names: dict[str, str]
    objects: dict[str, str | None] = field(default_factory=dict)
    verbs: dict[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True)
class CharadesVideo:
    id: str
    actions: tuple[TimedAction, ...]
    scene: str
    length: float | None
    columns: dict[str, str]  # every Charades column the file has, as written
    line: int
    source: str = ""  # the file it came from
    left_out: tuple[str, ...] = ()  # actions of the row that were left out, each named (line, video, why)


def _indexed(path: Path, what: str) -> dict[str, str]:
    """``ID name`` lines (classes, objects, verbs); a named error for any other line."""
    found: dict[str, str] = {}
    problems = []
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        match = _INDEXED.match(line.strip())
        if not match:
            problems.append((number, f"expected '{what} name', found {line[:60]!r}"))
        elif match.group(1) in found:
            problems.append((number, f"{what} {match.group(1)} is listed twice"))
        else:
            found[match.group(1)] = match.group(2).strip()
    if problems:
        raise CharadesRowsError(str(path), problems)
    if not found:
        raise ImportFileError(str(path), None, "the file lists nothing")
    return found


def read_class_names(path: Path | str) -> dict[str, str]:
    """``Charades_v1_classes.txt``: class id -> action name."""
    source = Path(path)
    if not source.is_file():
        raise ImportFileError(str(source), None, "the class file was not found")
    return _indexed(source, "cNNN")


def read_classes(files: CharadesFiles) -> CharadesClasses:
    """The classes, with each one's object and verb names when the mapping file is given."""
    names = read_class_names(files.classes)
    if files.mapping is None:
        return CharadesClasses(names)
    objects = _indexed(files.objects, "oNNN") if files.objects else {}
    verbs = _indexed(files.verbs, "vNNN") if files.verbs else {}
    object_of: dict[str, str | None] = {}
    verb_of: dict[str, str | None] = {}
    problems = []
    for number, line in enumerate(_read_text(files.mapping).splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 3:
            problems.append((number, f"expected 'cNNN oNNN vNNN', found {line[:60]!r}"))
            continue
        class_id, object_id, verb_id = parts
        unknown = [f"class {class_id}"] if class_id not in names else []
        unknown += [f"object {object_id}"] if objects and object_id not in objects else []
        unknown += [f"verb {verb_id}"] if verbs and verb_id not in verbs else []
        if unknown:
            problems.append((number, "unknown " + ", ".join(unknown)))
            continue
        object_of[class_id] = objects.get(object_id, object_id)
        verb_of[class_id] = verbs.get(verb_id, verb_id)
    if problems:
        raise CharadesRowsError(str(files.mapping), problems)
    return CharadesClasses(names, object_of, verb_of)


def _time(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def parse_actions(value: str, names: dict[str, str]) -> tuple[list[TimedAction], str | None, list[str]]:
    """The actions of one row, or the problem with them, and the actions left out of it.

    An action that ends before it starts is left out and named, not refused: Charades' own annotations have seven,
    in four videos (00SL4, AKKWU, IOL8Q, LEOL6), and the file must be read as it is (issue 39).

    >>> parse_actions("c001 10.80 16.60;c002 1.5 2", {"c001": "a", "c002": "b"})[0][0]
    TimedAction(class_id='c001', start=10.8, end=16.6, start_text='10.80', end_text='16.60')
    >>> parse_actions("c001 5 3;c001 1 2", {"c001": "a"})
    ([TimedAction(class_id='c001', start=1.0, end=2.0, start_text='1', end_text='2')], None, ['action c001 ends (3) before it starts (5): left out'])
    >>> parse_actions("c009 1 2", {"c001": "a"})[1]
    "unknown action class 'c009' (not in the class file)"
    """
    actions = []
    left_out = []
    for item in value.split(";"):
        if not item.strip():
            continue
        match = _ITEM.match(item.strip())
        if not match:
            return [], f"action {item.strip()[:40]!r} is not 'cNNN start end'", []
        class_id, start_text, end_text = match.groups()
        if class_id not in names:
            return [], f"unknown action class {class_id!r} (not in the class file)", []
        start, end = _time(start_text), _time(end_text)
        if start is None or end is None:
            return [], f"action {class_id}: the times {start_text!r} {end_text!r} must be seconds (0 or more)", []
        if end < start:
            left_out.append(f"action {class_id} ends ({end_text}) before it starts ({start_text}): left out")
            continue
        actions.append(TimedAction(class_id, start, end, start_text, end_text))
    return actions, None, left_out


def _video(
    line: int, row: dict[str, str], names: dict[str, str], source: str
) -> tuple[CharadesVideo | None, str | None]:
    video_id = row["id"].strip()
    if not video_id:
        return None, "empty id"
    actions, problem, left_out = parse_actions(row["actions"], names)
    if problem:
        return None, f"video {video_id}: {problem}"
    length_text = row.get("length", "").strip()
    length = _time(length_text) if length_text else None
    if length_text and length is None:
        return None, f"video {video_id}: length {length_text!r} is not a number of seconds"
    columns = {c: row[c] for c in CHARADES_COLUMNS if c in row}
    notes = tuple(f"line {line}: video {video_id}: {note}" for note in left_out)
    video = CharadesVideo(video_id, tuple(actions), row.get("scene", "").strip(), length, columns, line, source, notes)
    return video, None


def read_videos(paths: Sequence[Path], names: dict[str, str]) -> list[CharadesVideo]:
    """Every video of ``paths``, checked; the first file with bad rows raises :class:`CharadesRowsError`."""
    videos: list[CharadesVideo] = []
    first_seen: dict[str, str] = {}
    for path in paths:
        problems = []
        for line, row, _raw in _csv_records(path, REQUIRED_COLUMNS)[1]:
            video, problem = _video(line, row, names, str(path.resolve()))
            if video is not None and video.id in first_seen:
                problem, video = f"duplicate id {video.id!r} (first in {first_seen[video.id]})", None
            if problem:
                problems.append((line, problem))
            elif video is not None:
                first_seen[video.id] = f"{path.name}, line {line}"
                videos.append(video)
        if problems:
            raise CharadesRowsError(str(path), problems)
    return videos


@dataclass(frozen=True)
class CharadesData:
    classes: CharadesClasses
    videos: list[CharadesVideo]


def read_charades(files: CharadesFiles) -> CharadesData:
    """Parse and check every file without touching the database."""
    classes = read_classes(files)
    return CharadesData(classes, read_videos(files.videos, classes.names))


@dataclass(frozen=True)
class CharadesImportReport:
    classes: int
    videos: int
    actions: int
    with_video: int
    new_videos: int
    left_out: tuple[str, ...] = ()  # actions left out (an end before the start), each named

    def as_dict(self) -> dict[str, Any]:
        found = {k: v for k, v in self.__dict__.items() if k != "left_out"}
        return {**found, "actions_left_out": len(self.left_out), "left_out": list(self.left_out[:MAX_LISTED])}


def import_charades(
    database: Database, files: CharadesFiles, *, videos_dir: Path | None = None, actor: str = "cli"
) -> CharadesImportReport:
    """Check everything, then write classes and videos in one transaction (idempotent)."""
    data = read_charades(files)
    if videos_dir is not None and not videos_dir.is_dir():
        raise ImportFileError(str(videos_dir), None, "the video folder does not exist")
    now = utcnow()
    rows = []
    for video in data.videos:
        path = videos_dir / f"{video.id}.mp4" if videos_dir else None
        rows.append(
            {
                **{c: video.columns.get(c) for c in CHARADES_COLUMNS if c not in ("id", "actions", "length")},
                "id": video.id,
                "scene": video.scene or None,
                "actions": json.dumps([[a.class_id, a.start_text, a.end_text] for a in video.actions]),
                "length": video.length,
                "video_path": str(path.resolve()) if path is not None and path.is_file() else None,
                "source_file": video.source,
                "imported_at": now,
            }
        )
    columns = list(rows[0]) if rows else []
    with database.write() as db:
        db.conn.executemany(
            """INSERT INTO action_classes (id, name, verb, object) VALUES (:id, :name, :verb, :object)
               ON CONFLICT (id) DO UPDATE SET name = excluded.name, verb = coalesce(excluded.verb, verb),
                   object = coalesce(excluded.object, object)""",
            [
                {"id": c, "name": n, "verb": data.classes.verbs.get(c), "object": data.classes.objects.get(c)}
                for c, n in data.classes.names.items()
            ],
        )
        before = db.conn.execute("SELECT count(*) FROM charades_videos").fetchone()[0]
        if rows:
            updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in ("id", "imported_at", "video_path"))
            db.conn.executemany(
                f"""INSERT INTO charades_videos ({", ".join(columns)}) VALUES ({", ".join(":" + c for c in columns)})
                    ON CONFLICT (id) DO UPDATE SET {updates},
                        video_path = coalesce(excluded.video_path, charades_videos.video_path)""",
                rows,
            )
        new = db.conn.execute("SELECT count(*) FROM charades_videos").fetchone()[0] - before
        report = CharadesImportReport(
            classes=len(data.classes.names),
            videos=len(data.videos),
            actions=sum(len(v.actions) for v in data.videos),
            with_video=sum(1 for r in rows if r["video_path"]),
            new_videos=new,
            left_out=tuple(note for v in data.videos for note in v.left_out),
        )
        audit(db, actor, "import.charades", ", ".join(str(p) for p in files.videos), report.as_dict())
    return report


def import_charades_folder(
    database: Database, settings: Settings, username: str | None, folder: str, videos: str | None = None
) -> dict[str, Any]:
    """An admin's import from the web app: Charades' file names in ``folder``, below the import folder only."""
    admin = auth.require_role(database, username, "admin")
    files = CharadesFiles.in_folder(inside_import_dir(settings, folder))
    videos_dir = inside_import_dir(settings, videos) if videos else None
    return import_charades(database, files, videos_dir=videos_dir, actor=admin.username).as_dict()
