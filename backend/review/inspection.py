"""Action-sequence quality inspection (ViLPAct, section "Action sequence extraction"): a reviewer checks a
random sample of sequences against three criteria. The paper sampled 100 test videos and found that
94 have every action in the video, 92 have the actions in the video's order, and 85 miss no action
between the first and the last.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from backend.accounts import auth
from backend.errors import NotFound, ValidationError
from backend.settings import Settings
from backend.storage import Database, audit, utcnow

CRITERIA = {
    "all_occur": "every action of the sequence occurs in the video",
    "in_order": "the actions occur in the video in this order",
    "none_missing": "no action is missing between the first and the last",
}


#: the marks a reviewer sets on the player's timeline (issue 27 §5), and the criterion each one answers "no"
MARKS = {"not_in_video": "all_occur", "out_of_order": "in_order", "missing_between": "none_missing"}


@dataclass(frozen=True)
class InspectionMarks:
    """Marks from the timeline: actions (positions in the sequence, from 0) not in the video, actions out of
    order, and whether an action is missing between the first and the last."""

    not_in_video: tuple[int, ...] = ()
    out_of_order: tuple[int, ...] = ()
    missing_between: bool = False

    @classmethod
    def parse(cls, raw: str | dict | None, n_actions: int) -> InspectionMarks:
        """The player's JSON (``{"not_in_video": [..], "out_of_order": [..], "missing_between": bool}``).

        >>> InspectionMarks.parse('{"not_in_video": [2, 0], "missing_between": true}', 3)
        InspectionMarks(not_in_video=(0, 2), out_of_order=(), missing_between=True)
        >>> InspectionMarks.parse(None, 3)
        InspectionMarks(not_in_video=(), out_of_order=(), missing_between=False)
        """
        try:
            data = json.loads(raw) if isinstance(raw, str) else (raw or {})
            if not isinstance(data, dict):
                raise TypeError
            lists = {
                key: tuple(sorted({int(i) for i in data.get(key) or ()})) for key in ("not_in_video", "out_of_order")
            }
        except (ValueError, TypeError):
            raise ValidationError("The timeline's marks could not be read; reload the page and mark again.") from None
        if any(not 0 <= i < n_actions for positions in lists.values() for i in positions):
            raise ValidationError("A mark names an action the sequence does not have; reload the page.")
        return cls(lists["not_in_video"], lists["out_of_order"], bool(data.get("missing_between")))

    def answers_no(self, criterion: str) -> bool:
        """Whether the marks answer ``criterion`` with "no"."""
        return {
            "all_occur": bool(self.not_in_video),
            "in_order": bool(self.out_of_order),
            "none_missing": self.missing_between,
        }[criterion]

    def as_dict(self) -> dict[str, Any]:
        return {
            "not_in_video": list(self.not_in_video),
            "out_of_order": list(self.out_of_order),
            "missing_between": self.missing_between,
        }


@dataclass(frozen=True)
class InspectionJudgment:
    all_occur: bool
    in_order: bool
    none_missing: bool
    comment: str = ""
    marks: InspectionMarks = field(default_factory=InspectionMarks)


def judgment_from_answers(
    answers: dict[str, str | None], marks: InspectionMarks, comment: str = ""
) -> InspectionJudgment:
    """The judgment from the reviewer's explicit answers ("yes" / "no" per criterion) and the timeline's marks.
    A mark answers its criterion "no"; every other criterion needs an answer (nothing unanswered is stored as a
    fail), and a "yes" that a mark contradicts is refused.

    >>> judgment_from_answers({"all_occur": "yes", "in_order": None, "none_missing": "no"},
    ...                       InspectionMarks(out_of_order=(1,)))
    InspectionJudgment(all_occur=True, in_order=False, none_missing=False, comment='', marks=InspectionMarks(not_in_video=(), out_of_order=(1,), missing_between=False))
    >>> judgment_from_answers({"all_occur": None, "in_order": "yes", "none_missing": "yes"}, InspectionMarks())
    Traceback (most recent call last):
    ...
    backend.errors.ValidationError: Answer yes or no: every action of the sequence occurs in the video.
    """
    values: dict[str, bool] = {}
    for criterion, text in CRITERIA.items():
        answer = answers.get(criterion)
        if marks.answers_no(criterion):
            if answer == "yes":
                raise ValidationError(f"You marked the timeline against “{text}”: answer no, or remove the mark.")
            values[criterion] = False
        elif answer in ("yes", "no"):
            values[criterion] = answer == "yes"
        else:
            raise ValidationError(f"Answer yes or no: {text}.")
    return InspectionJudgment(values["all_occur"], values["in_order"], values["none_missing"], comment, marks)


def draw_sample(ids: list[str], size: int, seed: int) -> list[str]:
    """A reproducible simple random sample without replacement (all ids when there are fewer).

    >>> draw_sample(["a", "b", "c", "d"], 2, seed=0) == draw_sample(["d", "c", "b", "a"], 2, seed=0)
    True
    >>> sorted(draw_sample(["a", "b"], 5, seed=1))
    ['a', 'b']
    """
    population = sorted(ids)
    return random.Random(seed).sample(population, min(size, len(population)))


def start_inspection(
    database: Database,
    settings: Settings,
    username: str | None,
    size: int | None = None,
    split: str | None = None,
    seed: int | None = None,
) -> dict[str, Any]:
    """Draw and store a sample (size and split default to the settings)."""
    username = auth.require_role(database, username, "reviewer").username
    size = settings.inspection_sample_size if size is None else int(size)
    split = settings.inspection_split if split is None else split
    seed = random.SystemRandom().randrange(2**31) if seed is None else int(seed)
    if size < 1:
        raise ValidationError("the sample size must be at least 1")
    where, params = ("WHERE split = ?", (split,)) if split else ("", ())
    ids = [r["id"] for r in database.query(f"SELECT id FROM sequences {where}", params)]
    if not ids:
        raise ValidationError(f"there are no sequences in split {split!r}; import them or choose another split")
    sample = draw_sample(ids, size, seed)
    with database.write() as db:
        inspection_id = db.conn.execute(
            "INSERT INTO inspections (split, size, seed, created_by, created_at) VALUES (?, ?, ?, ?, ?)",
            (split or None, len(sample), seed, username, utcnow()),
        ).lastrowid
        db.conn.executemany(
            "INSERT INTO inspection_items (inspection_id, position, sequence_id) VALUES (?, ?, ?)",
            [(inspection_id, position, sid) for position, sid in enumerate(sample, start=1)],
        )
        audit(db, username, "inspection.start", str(inspection_id), {"size": len(sample), "split": split, "seed": seed})
    return {"inspection_id": inspection_id, "size": len(sample), "split": split or None, "seed": seed}


def list_inspections(database: Database, username: str | None) -> list[dict[str, Any]]:
    auth.require_role(database, username, "reviewer")
    return database.query("SELECT * FROM inspections ORDER BY id DESC")


def next_item(database: Database, username: str | None, inspection_id: int) -> dict[str, Any] | None:
    """The first sequence of the sample the caller has not judged yet (None when all are done)."""
    auth.require_role(database, username, "reviewer")
    if database.query_one("SELECT 1 FROM inspections WHERE id = ?", (inspection_id,)) is None:
        raise NotFound(f"there is no inspection {inspection_id}")
    row = database.query_one(
        """SELECT i.position, i.sequence_id FROM inspection_items i WHERE i.inspection_id = ?
             AND NOT EXISTS (SELECT 1 FROM inspection_judgments j WHERE j.inspection_id = i.inspection_id
                             AND j.sequence_id = i.sequence_id AND j.reviewer = ?)
           ORDER BY i.position LIMIT 1""",
        (inspection_id, username),
    )
    return row


def judge(
    database: Database, username: str | None, inspection_id: int, sequence_id: str, judgment: InspectionJudgment
) -> None:
    """Record (or correct) the caller's judgment of one sampled sequence."""
    username = auth.require_role(database, username, "reviewer").username
    with database.write() as db:
        if not db.conn.execute(
            "SELECT 1 FROM inspection_items WHERE inspection_id = ? AND sequence_id = ?", (inspection_id, sequence_id)
        ).fetchone():
            raise NotFound(f"sequence {sequence_id!r} is not in inspection {inspection_id}")
        db.conn.execute(
            """INSERT INTO inspection_judgments (inspection_id, sequence_id, reviewer, all_occur, in_order,
                   none_missing, comment, judged_at, marks) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT (inspection_id, sequence_id, reviewer) DO UPDATE SET all_occur = excluded.all_occur,
                   in_order = excluded.in_order, none_missing = excluded.none_missing, comment = excluded.comment,
                   judged_at = excluded.judged_at, marks = excluded.marks""",
            (
                inspection_id,
                sequence_id,
                username,
                int(judgment.all_occur),
                int(judgment.in_order),
                int(judgment.none_missing),
                judgment.comment.strip()[:2000] or None,
                utcnow(),
                json.dumps(judgment.marks.as_dict()),
            ),
        )
        detail = {**judgment.__dict__, "marks": judgment.marks.as_dict()}
        audit(db, username, "inspection.judge", f"{inspection_id}/{sequence_id}", detail)


def paper_form(counts: dict[str, int], judged: int) -> str:
    """The counts as the paper writes them.

    >>> paper_form({"all_occur": 94, "in_order": 92, "none_missing": 85}, 100)
    '94 / 92 / 85 of 100'
    """
    return f"{counts['all_occur']} / {counts['in_order']} / {counts['none_missing']} of {judged}"


def report(database: Database, username: str | None, inspection_id: int) -> dict[str, Any]:
    """Per reviewer: how many sampled sequences meet each criterion, in the paper's form."""
    auth.require_role(database, username, "reviewer")
    inspection = database.query_one("SELECT * FROM inspections WHERE id = ?", (inspection_id,))
    if inspection is None:
        raise NotFound(f"there is no inspection {inspection_id}")
    rows = database.query(
        """SELECT reviewer, count(*) AS judged, sum(all_occur) AS all_occur, sum(in_order) AS in_order,
                  sum(none_missing) AS none_missing FROM inspection_judgments WHERE inspection_id = ?
           GROUP BY reviewer ORDER BY reviewer""",
        (inspection_id,),
    )
    marks = _mark_counts(database, inspection_id)
    reviewers = []
    for row in rows:
        counts = {key: int(row[key]) for key in CRITERIA}
        reviewers.append(
            {
                "reviewer": row["reviewer"],
                "judged": row["judged"],
                **counts,
                "paper_form": paper_form(counts, row["judged"]),
                "complete": row["judged"] == inspection["size"],
                "marks": marks.get(row["reviewer"], dict.fromkeys(MARKS, 0)),
            }
        )
    return {"inspection": inspection, "criteria": CRITERIA, "reviewers": reviewers}


def _mark_counts(database: Database, inspection_id: int) -> dict[str, dict[str, int]]:
    """Per reviewer, how many timeline marks of each kind: actions not in the video, actions out of order, and
    sequences with an action missing between the first and the last."""
    counts: dict[str, dict[str, int]] = {}
    for row in database.query(
        "SELECT reviewer, marks FROM inspection_judgments WHERE inspection_id = ? AND marks IS NOT NULL",
        (inspection_id,),
    ):
        mine = counts.setdefault(row["reviewer"], dict.fromkeys(MARKS, 0))
        marks = json.loads(row["marks"])
        mine["not_in_video"] += len(marks.get("not_in_video") or ())
        mine["out_of_order"] += len(marks.get("out_of_order") or ())
        mine["missing_between"] += int(bool(marks.get("missing_between")))
    return counts
