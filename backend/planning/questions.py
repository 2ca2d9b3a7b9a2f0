"""Planning questions: import of ViLPAct's 510 released questions, reading them back, JSON export.

The released layout (``qa_evaluation/planning_evaluate_data.json``) is one object per video id::

    {"ob_start_frame": 1, "ob_end_frame": 168, "ob_act_seq_gt": ["Watching/...", ...],
     "intention": "S/He wants to learn something", "answer": [1, "a,b"], "choices": [[0, "a,b"], ...]}

A choice is action names joined by ``,`` (no class name contains a comma). The planning csv
``gt_act_seq/test_planning_gt_seq.csv`` gives each question's scene. The export writes the same layout,
so authored questions drop into code written for the release.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_utils

from backend import assignment
from backend.errors import ImportFileError, NotFound, ValidationError
from backend.inference.parsing import letters_for
from backend.planning.catalog import Catalog, load_catalog
from backend.storage import Database, audit, utcnow

N_CHOICES = 6
CHOICE_LETTERS = letters_for(N_CHOICES)  # 'ABCDEF'
QUESTIONS_FILE = Path("qa_evaluation") / "planning_evaluate_data.json"
PLANNING_CSV = Path("gt_act_seq") / "test_planning_gt_seq.csv"
COUNTED_STATUSES = ("released", "validated")


@dataclass(frozen=True)
class PlanningQuestion:
    id: str
    video_id: str
    sequence_id: str | None
    ob_start_frame: int
    ob_end_frame: int
    observed: tuple[str, ...]
    intent: str
    choices: tuple[tuple[str, ...], ...]
    answer_index: int
    scene: str | None
    source: str = "vilpact"
    status: str = "released"

    @property
    def answer(self) -> tuple[str, ...]:
        return self.choices[self.answer_index]

    @property
    def future_length(self) -> int:
        return len(self.answer)


def _read_json(path: Path) -> dict:
    if not path.is_file():
        raise ImportFileError(str(path), None, "file not found")
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError:
        raise ImportFileError(str(path), None, "not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ImportFileError(str(path), exc.lineno, f"not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ImportFileError(str(path), 1, "expected an object keyed by video id")
    return data


def _scenes(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    reader = csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig")))
    if not reader.fieldnames or "id" not in reader.fieldnames or "scene" not in reader.fieldnames:
        raise ImportFileError(str(path), 1, "expected columns id and scene")
    return {row["id"].strip(): row["scene"] or "" for row in reader}


def _choices(choices_raw: object, catalog: Catalog, where: str) -> list[tuple[str, ...]]:
    """The six choices, each ``[position, "action,action"]``, as action ids."""
    if not isinstance(choices_raw, list) or len(choices_raw) != N_CHOICES:
        raise ValidationError(f"{where}: expected {N_CHOICES} choices")
    choices = []
    for position, item in enumerate(choices_raw):
        if not (isinstance(item, list) and len(item) == 2 and item[0] == position and isinstance(item[1], str)):
            raise ValidationError(f'{where}: choice {position} must be [{position}, "action,action"]')
        choices.append(catalog.ids(item[1].split(","), where=f"{where} choice {position}"))
    return choices


def _answer(answer: object, choices_raw: list, where: str) -> list:
    """``[index 0-5, "action,action"]``, its text that of the choice it names."""
    if not (
        isinstance(answer, list) and len(answer) == 2 and isinstance(answer[0], int) and 0 <= answer[0] < N_CHOICES
    ):
        raise ValidationError(f'{where}: answer must be [index 0-5, "action,action"]')
    if choices_raw[answer[0]][1] != answer[1]:
        raise ValidationError(f"{where}: the answer text differs from choice {answer[0]}")
    return answer


def parse_question(key: str, entry: object, catalog: Catalog, where: str) -> PlanningQuestion:
    """One entry of the released layout -> a question (every problem reported at once)."""
    problems: list[str] = []
    if not isinstance(entry, dict):
        raise ValidationError(f"{where}: expected an object")
    for name in ("ob_start_frame", "ob_end_frame", "ob_act_seq_gt", "intention", "answer", "choices"):
        if name not in entry:
            problems.append(f"{where}: missing {name}")
    if problems:
        raise ValidationError(problems)
    choices = _choices(entry["choices"], catalog, where)
    answer = _answer(entry["answer"], entry["choices"], where)
    start, end = entry["ob_start_frame"], entry["ob_end_frame"]
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end):
        raise ValidationError(f"{where}: the observed window {start!r}..{end!r} is not a frame range")
    intent = str(entry["intention"])  # kept as released (one has a trailing space) so the export round-trips
    if not intent.strip():
        raise ValidationError(f"{where}: empty intention")
    return PlanningQuestion(
        id=key,
        video_id=key,
        sequence_id=key,
        ob_start_frame=start,
        ob_end_frame=end,
        observed=catalog.ids(list(entry["ob_act_seq_gt"]), where=f"{where} observed"),
        intent=intent,
        choices=tuple(choices),
        answer_index=answer[0],
        scene=None,
    )


def read_release(root: Path | str, catalog: Catalog) -> list[PlanningQuestion]:
    """Parse and validate the released questions without touching the database."""
    root = Path(root)
    path = root / QUESTIONS_FILE
    data = _read_json(path)
    scenes = _scenes(root / PLANNING_CSV)
    questions = []
    for key, entry in data.items():
        try:
            question = parse_question(key, entry, catalog, f"question {key}")
        except ValidationError as exc:
            raise ImportFileError(str(path), None, "; ".join(exc.problems)) from None
        questions.append(_with(question, scene=scenes.get(key) or None))
    return questions


def _with(question: PlanningQuestion, **changes: Any) -> PlanningQuestion:
    return PlanningQuestion(**{**question.__dict__, **changes})


def _row(question: PlanningQuestion, actor: str, now: str) -> dict:
    return {
        "id": question.id,
        "sequence_id": question.sequence_id,
        "video_id": question.video_id,
        "ob_start_frame": question.ob_start_frame,
        "ob_end_frame": question.ob_end_frame,
        "observed": json.dumps(list(question.observed)),
        "intent": question.intent,
        "choices": json.dumps([list(c) for c in question.choices]),
        "answer_index": question.answer_index,
        "scene": question.scene,
        "source": question.source,
        "status": question.status,
        "created_by": actor,
        "created_at": now,
    }


def insert_questions(db: sqlite_utils.Database, questions: list[PlanningQuestion], actor: str) -> None:
    """Upsert questions inside ``write()`` (a re-import leaves statuses of authored questions alone)."""
    now = utcnow()
    db.conn.executemany(
        """INSERT INTO planning_questions (id, sequence_id, video_id, ob_start_frame, ob_end_frame, observed, intent,
               choices, answer_index, scene, source, status, created_by, created_at)
           VALUES (:id, :sequence_id, :video_id, :ob_start_frame, :ob_end_frame, :observed, :intent, :choices,
               :answer_index, :scene, :source, :status, :created_by, :created_at)
           ON CONFLICT (id) DO UPDATE SET ob_start_frame = excluded.ob_start_frame,
               ob_end_frame = excluded.ob_end_frame, observed = excluded.observed, intent = excluded.intent,
               choices = excluded.choices, answer_index = excluded.answer_index, scene = excluded.scene""",
        [_row(q, actor, now) for q in questions],
    )


def import_planning(
    database: Database,
    root: Path | str,
    *,
    actor: str = "cli",
    add_to_pool: bool = True,
    annotators_per_question: int = 3,
) -> dict:
    """Import the released questions (needs the ViLPAct classes imported first). Idempotent."""
    catalog = load_catalog(database)
    questions = read_release(root, catalog)
    with database.write() as db:
        insert_questions(db, questions, actor)
        added = 0
        if add_to_pool:
            added = assignment.add_tasks(db, "planning", [q.id for q in questions], annotators_per_question)
        report = {
            "questions": len(questions),
            "with_scene": sum(1 for q in questions if q.scene),
            "added_to_pool": added,
        }
        audit(db, actor, "import.planning", str(Path(root).resolve()), report)
    return report


def _from_row(row: dict) -> PlanningQuestion:
    return PlanningQuestion(
        id=row["id"],
        video_id=row["video_id"],
        sequence_id=row["sequence_id"],
        ob_start_frame=row["ob_start_frame"],
        ob_end_frame=row["ob_end_frame"],
        observed=tuple(json.loads(row["observed"])),
        intent=row["intent"],
        choices=tuple(tuple(c) for c in json.loads(row["choices"])),
        answer_index=row["answer_index"],
        scene=row["scene"],
        source=row["source"],
        status=row["status"],
    )


def get_question(database: Database, question_id: str) -> PlanningQuestion:
    row = database.query_one("SELECT * FROM planning_questions WHERE id = ?", (question_id,))
    if row is None:
        raise NotFound(f"there is no planning question {question_id!r}")
    return _from_row(row)


def list_questions(database: Database, statuses: tuple[str, ...] = COUNTED_STATUSES) -> list[PlanningQuestion]:
    """Questions in the given statuses (default: those that count: released and validated), by id."""
    marks = ",".join("?" for _ in statuses)
    rows = database.query(f"SELECT * FROM planning_questions WHERE status IN ({marks}) ORDER BY id", statuses)
    return [_from_row(r) for r in rows]


def list_question_ids(database: Database, statuses: tuple[str, ...] = COUNTED_STATUSES) -> list[str]:
    """The ids of :func:`list_questions`, without reading the questions (the Planning tab's list at page load)."""
    marks = ",".join("?" for _ in statuses)
    rows = database.query(f"SELECT id FROM planning_questions WHERE status IN ({marks}) ORDER BY id", statuses)
    return [r["id"] for r in rows]


def to_release_entry(question: PlanningQuestion, catalog: Catalog) -> dict:
    """The released JSON layout of one question."""
    texts = [",".join(catalog.names(c)) for c in question.choices]
    return {
        "ob_start_frame": question.ob_start_frame,
        "ob_end_frame": question.ob_end_frame,
        "ob_act_seq_gt": catalog.names(question.observed),
        "intention": question.intent,
        "answer": [question.answer_index, texts[question.answer_index]],
        "choices": [[i, text] for i, text in enumerate(texts)],
    }


def export_planning(
    database: Database,
    out: Path | str,
    *,
    statuses: tuple[str, ...] = COUNTED_STATUSES,
    source: str | None = None,
) -> dict:
    """Write questions in the released layout to ``out`` (written to a temporary file, then renamed)."""
    catalog = load_catalog(database)
    questions = [q for q in list_questions(database, statuses) if source is None or q.source == source]
    payload = {q.id: to_release_entry(q, catalog) for q in questions}
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".part")
    tmp.write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
    tmp.replace(out)
    return {"path": str(out), "questions": len(payload)}
