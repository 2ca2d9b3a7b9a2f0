"""From Charades-format videos to the intent-annotation pool: run Algorithm 1 (backend/vilpact/extraction.py) on
files (``compstudio vilpact extract``) or on imported videos (the Admin tab's preview), write the released layout
(backend/vilpact/layout.py), and accept the kept sequences into the pool with exactly N annotators each, as an
imported ViLPAct sequence is (``annotators_per_sequence``; backend/assignment).

A sequence id is its video id, as in the release. Accepting never replaces a sequence that is already stored
(a ViLPAct sequence of the same video, or one accepted before, perhaps already annotated): it is reported as
already there and left as it is.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend import assignment
from backend.accounts import auth
from backend.errors import NotFound, ValidationError
from backend.settings import Settings
from backend.storage import Database, audit, utcnow
from backend.vilpact.charades import CharadesFiles, CharadesVideo, read_charades
from backend.vilpact.extraction import Extraction, ExtractionConfig, Relevance, TimedAction, build_relevance
from backend.vilpact.layout import LAYOUT_COLUMNS, layout_row
from backend.vilpact.sequences import insert_sequences
from backend.vilpact.tasks import load_task_map

SOURCE = "charades"
MAX_NAMED = 5


class MissingVideos(ValidationError):
    """Kept sequences whose video file is missing, refused until the admin accepts them knowingly."""

    def __init__(self, missing: Sequence[str], total: int):
        self.missing = list(missing)
        named = ", ".join(self.missing[:MAX_NAMED]) + (" ..." if len(self.missing) > MAX_NAMED else "")
        super().__init__(
            f"{len(self.missing)} of the {total} sequences to accept have no video file ({named}): annotators would "
            "write intents from the action names alone. Import the video folder first, or tick 'Accept sequences "
            "without a video file' to accept them anyway."
        )


def kept_without_video(database: Database, preview: Preview) -> list[str]:
    """The kept videos of ``preview`` that have no video file (none was found when they were imported)."""
    with_file = {r["id"] for r in database.query("SELECT id FROM charades_videos WHERE video_path IS NOT NULL")}
    return [v.id for v, e in preview.items if e.kept and v.id not in with_file]


@dataclass(frozen=True)
class Extractor:
    """Algorithm 1 set up for one class list and the current settings."""

    names: dict[str, str]
    relevance: Relevance
    config: ExtractionConfig
    observed_rule: str

    def run(self, video: CharadesVideo) -> Extraction:
        from backend.vilpact.extraction import extract_sequence

        return extract_sequence(video.id, list(video.actions), self.relevance, self.config)

    def row(self, extraction: Extraction, scene: str) -> dict[str, str]:
        return layout_row(extraction.video_id, scene, extraction.chosen, self.names, self.observed_rule)

    def task(self, class_id: str) -> str:
        return self.relevance.task_of.get(class_id, class_id)


def build_extractor(
    settings: Settings, names: dict[str, str], objects: dict[str, str | None] | None = None, embeddings: Any = None
) -> Extractor:
    """The extractor for classes ``names`` under ``settings`` (task map and word vectors from the settings)."""
    tasks = load_task_map(settings.extract_task_map or None)
    relevance = build_relevance(names, tasks, objects, settings.extract_word_vectors, embeddings)
    return Extractor(names, relevance, ExtractionConfig.from_settings(settings), settings.extract_observed_rule)


def layout_csv(rows: Iterable[dict[str, str]]) -> str:
    """Rows in the released layout's columns, as CSV text."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(LAYOUT_COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def decision_record(extraction: Extraction, extractor: Extractor) -> dict[str, Any]:
    """One video's extraction as JSON: every action with its scores and the reason it is in or out."""
    return {
        "video_id": extraction.video_id,
        "kept": extraction.kept,
        "verdict": extraction.verdict,
        "actions": [
            {
                "item": d.action.item,
                "name": extractor.names.get(d.action.class_id, d.action.class_id),
                "task": extractor.task(d.action.class_id),
                "chosen": d.chosen,
                "scores": d.scores.as_dict() if d.scores else None,
                "reason": d.reason,
                "decided_by": d.term,
            }
            for d in extraction.decisions
        ],
    }


def extract_files(
    files: CharadesFiles, out: Path, settings: Settings, *, explain: Path | None = None, embeddings: Any = None
) -> dict[str, Any]:
    """``compstudio vilpact extract``: the kept sequences of the videos in ``files`` written to ``out`` in the
    released layout (and, with ``explain``, every decision as JSON lines); nothing goes into the database."""
    data = read_charades(files)
    extractor = build_extractor(settings, data.classes.names, data.classes.objects, embeddings)
    extractions = [(video, extractor.run(video)) for video in data.videos]
    kept = [(video, e) for video, e in extractions if e.kept]
    _write_atomically(out, layout_csv(extractor.row(e, video.scene) for video, e in kept))
    if explain is not None:
        _write_atomically(
            explain, "".join(json.dumps(decision_record(e, extractor)) + "\n" for _video, e in extractions)
        )
    return {
        "videos": len(extractions),
        "kept": len(kept),
        "left_out": len(extractions) - len(kept),
        "actions_chosen": sum(len(e.chosen) for _v, e in kept),
        "actions_left_out_of_the_file": [note for video in data.videos for note in video.left_out][:10],
        "out": str(out),
        **({"explain": str(explain)} if explain else {}),
    }


# -- imported videos ------------------------------------------------------------------------------------------------
def _stored_video(row: dict[str, Any]) -> CharadesVideo:
    actions = tuple(TimedAction(c, float(s), float(e), s, e) for c, s, e in json.loads(row["actions"]))
    return CharadesVideo(row["id"], actions, row["scene"] or "", row["length"], {}, 0, row["source_file"])


def stored_videos(database: Database, video_ids: Sequence[str] | None = None) -> list[CharadesVideo]:
    """Imported videos (all, or ``video_ids``), in the order they were first imported."""
    if video_ids is None:
        rows = database.query("SELECT * FROM charades_videos ORDER BY rowid")  # the order they were imported in
    else:
        marks = ",".join("?" for _ in video_ids)
        rows = database.query(f"SELECT * FROM charades_videos WHERE id IN ({marks}) ORDER BY rowid", list(video_ids))
    return [_stored_video(r) for r in rows]


def database_extractor(database: Database, settings: Settings, embeddings: Any = None) -> Extractor:
    classes = database.query("SELECT id, name, object FROM action_classes ORDER BY id")
    if not classes:
        raise NotFound("no action classes yet: import Charades annotations first (compstudio import charades)")
    names = {c["id"]: c["name"] for c in classes}
    return build_extractor(settings, names, {c["id"]: c["object"] for c in classes}, embeddings)


@dataclass(frozen=True)
class Preview:
    """The extraction of every imported video: counts, and the extractions themselves (with their videos)."""

    extractor: Extractor
    items: list[tuple[CharadesVideo, Extraction]]

    @property
    def summary(self) -> dict[str, int]:
        kept = sum(1 for _v, e in self.items if e.kept)
        return {"videos": len(self.items), "kept": kept, "left_out": len(self.items) - kept}


def extract_stored(
    database: Database, settings: Settings, video_ids: Sequence[str] | None = None, embeddings: Any = None
) -> Preview:
    """Algorithm 1 on the imported videos (all, or ``video_ids``); nothing is written."""
    extractor = database_extractor(database, settings, embeddings)
    videos = stored_videos(database, video_ids)
    if video_ids is not None and not videos:
        raise NotFound(f"no imported Charades video {', '.join(video_ids)[:80]!r}")
    return Preview(extractor, [(v, extractor.run(v)) for v in videos])


def _sequence_row(video: CharadesVideo, extraction: Extraction, extractor: Extractor, now: str) -> dict[str, Any]:
    row = extractor.row(extraction, video.scene)
    return {
        "id": video.id,
        "video_id": video.id,
        "actions": json.dumps(
            [
                {"class_id": a.class_id, "name": extractor.names[a.class_id], "start": a.start, "end": a.end}
                for a in extraction.chosen
            ]
        ),
        "scene": video.scene or None,
        "split": None,
        "act_seq_start": float(row["act_seq_start"]),
        "act_seq_end": float(row["act_seq_end"]),
        "ob_start_frame": int(row["ob_start_frame"]),
        "ob_end_frame": int(row["ob_end_frame"]),
        "source": SOURCE,
        "imported_at": now,
    }


def accept_stored(
    database: Database,
    settings: Settings,
    actor: str,
    video_ids: Sequence[str] | None = None,
    embeddings: Any = None,
    allow_missing_videos: bool = True,
) -> dict[str, Any]:
    """Put the kept sequences of the imported videos (all, or ``video_ids``) into the intent pool, N annotators
    each, in one transaction. Sequences already stored are left as they are. Without ``allow_missing_videos``,
    sequences whose video file is missing raise :class:`MissingVideos` and nothing is accepted."""
    found = extract_stored(database, settings, video_ids, embeddings)
    kept = [(v, e) for v, e in found.items if e.kept]
    now = utcnow()
    with database.write() as db:
        known = {r[0] for r in db.conn.execute("SELECT id FROM sequences")}
        new = [(v, e) for v, e in kept if v.id not in known]
        paths = {
            r[0]: r[1]
            for r in db.conn.execute("SELECT id, video_path FROM charades_videos WHERE video_path IS NOT NULL")
        }
        rows = [{**_sequence_row(v, e, found.extractor, now), "video_path": paths.get(v.id)} for v, e in new]
        missing = [r["id"] for r in rows if not r["video_path"]]
        if missing and not allow_missing_videos:
            raise MissingVideos(missing, len(rows))
        insert_sequences(db.conn, rows)
        added = assignment.add_tasks(db, "intent", [r["id"] for r in rows], settings.annotators_per_sequence)
        report = {
            "videos": len(found.items),
            "kept": len(kept),
            "accepted": len(rows),
            "already_there": len(kept) - len(new),
            "added_to_pool": added,
            "annotators_per_sequence": settings.annotators_per_sequence,
        }
        audit(db, actor, "charades.accept", f"{len(rows)} sequences", report)
    return report


def export_stored(database: Database, settings: Settings, out: Path, embeddings: Any = None) -> dict[str, Any]:
    """The kept sequences of the imported videos written to ``out`` in the released layout."""
    found = extract_stored(database, settings, None, embeddings)
    rows = [found.extractor.row(e, v.scene) for v, e in found.items if e.kept]
    _write_atomically(out, layout_csv(rows))
    return {"rows": len(rows), "path": str(out)}


# -- the admin's calls (the Admin tab): the same, behind the admin role ---------------------------------------------
def admin_preview(
    database: Database,
    settings: Settings,
    username: str | None,
    video_ids: Sequence[str] | None = None,
    embeddings: Any = None,
) -> Preview:
    auth.require_role(database, username, "admin")
    return extract_stored(database, settings, video_ids, embeddings)


def admin_accept(
    database: Database,
    settings: Settings,
    username: str | None,
    video_ids: Sequence[str] | None = None,
    embeddings: Any = None,
    allow_missing_videos: bool = False,
) -> dict[str, Any]:
    """The admin's accept: sequences without a video file are refused unless ``allow_missing_videos``."""
    admin = auth.require_role(database, username, "admin")
    return accept_stored(database, settings, admin.username, video_ids, embeddings, allow_missing_videos)


def admin_export(
    database: Database, settings: Settings, username: str | None, out: Path, embeddings: Any = None
) -> dict[str, Any]:
    auth.require_role(database, username, "admin")
    return export_stored(database, settings, out, embeddings)
