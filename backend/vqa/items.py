"""VQA items: the record, its validation rules, and storage.

An item has a category (one of the 13), a question, two or more lettered options (A, B, ...), the set of
correct letters, single or indefinite choice, one or more source images and the composite image shown to
models (paper section 3.1), its provenance and status, and a difficulty level once the panel has voted.
Image paths are stored relative to ``settings.media_dir`` (the only folder the server serves).

Functions here take a ``sqlite_utils.Database`` inside a ``write()`` or a ``Database`` for reads; the
permission checks live in :mod:`backend.vqa.service`.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import sqlite_utils

from backend.errors import NotFound, ValidationError
from backend.inference.parsing import LETTERS
from backend.storage import Database, utcnow
from backend.vqa.categories import CATEGORIES, DIMENSION_OF, resolve_category

CHOICE_TYPES = ("single", "indefinite")
PROVENANCES = ("written", "synthesized", "imported")
STATUSES = ("draft", "verified", "rejected")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,79}$")


@dataclass(frozen=True)
class VqaItem:
    id: str
    category: str
    question: str
    options: tuple[str, ...]
    answer: tuple[str, ...]
    choice_type: str
    images: tuple[str, ...]
    composite: str | None
    provenance: str
    status: str = "draft"
    disputed: bool = False
    difficulty_level: str | None = None
    author: str = "unknown"
    created_at: str = ""
    updated_at: str = ""

    @property
    def letters(self) -> tuple[str, ...]:
        return tuple(LETTERS[: len(self.options)])

    @property
    def dimension(self) -> str:
        return DIMENSION_OF[self.category]

    @property
    def model_image(self) -> str:
        """The image a model sees in the paper's setting: the composite, or the only image."""
        return self.composite or self.images[0]

    def as_dict(self) -> dict:
        data = asdict(self)
        data["options"], data["answer"], data["images"] = list(self.options), list(self.answer), list(self.images)
        return data

    def question_view(self) -> dict:
        """Everything an answerer may see: no key, no verification state, no difficulty."""
        return {
            "id": self.id,
            "category": self.category,
            "question": self.question,
            "options": {letter: text for letter, text in zip(self.letters, self.options, strict=True)},
            "choice_type": self.choice_type,
            "images": list(self.images),
            "composite": self.composite,
        }


def parse_letters(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """A set of option letters from ``["A", "C"]``, ``"A,C"``, ``"AC"`` or ``"a c"``: sorted, unique, upper case.

    >>> parse_letters("c, a"), parse_letters(["B", "b"]), parse_letters(None)
    (('A', 'C'), ('B',), ())
    """
    if value is None:
        return ()
    if isinstance(value, str):
        value = re.findall(r"[A-Za-z]", value)
    return tuple(sorted({str(v).strip().upper() for v in value if str(v).strip()}))


def _option_problems(texts: list[str]) -> list[str]:
    """What is wrong with the options' texts: too few or too many, an empty one, the same text twice."""
    problems: list[str] = []
    if len(texts) < 2:
        problems.append(f"an item needs at least two options; it has {len(texts)}")
    if len(texts) > len(LETTERS):
        problems.append(f"at most {len(LETTERS)} options (A-Z); it has {len(texts)}")
    if any(not t for t in texts):
        problems.append("an option is empty: write its text or remove it")
    for text in sorted({t for t in texts if t and texts.count(t) > 1}):
        problems.append(f'option texts must be unique: "{text}" appears {texts.count(text)} times')
    return problems


def item_problems(
    category: str,
    question: str,
    options: Sequence[str],
    answer: Sequence[str],
    choice_type: str,
    images: Sequence[str] = ("x",),
) -> list[str]:
    """Every broken rule, one message each (an empty list means the item is valid).

    >>> item_problems("Object Perception", "What is it?", ["a cat", "a cat"], ["A", "B"], "single")
    ['option texts must be unique: "a cat" appears 2 times', 'a single-choice question has exactly one correct option; 2 are marked (A, B)']
    """
    problems: list[str] = []
    if category not in CATEGORIES:
        problems.append(f"unknown category {category!r}; choose one of: {', '.join(CATEGORIES)}")
    if not (question or "").strip():
        problems.append("the question is empty")
    texts = [(o or "").strip() for o in options]
    problems += _option_problems(texts)
    valid_letters = LETTERS[: len(texts)]
    unknown = [a for a in answer if a not in valid_letters]
    if unknown:
        problems.append(
            f"correct letter(s) {', '.join(unknown)} are not among the options ({', '.join(valid_letters) or 'none'})"
        )
    if not answer:
        problems.append("mark at least one option as correct")
    if choice_type not in CHOICE_TYPES:
        problems.append(f"choice type must be single or indefinite, not {choice_type!r}")
    elif choice_type == "single" and len(answer) > 1:
        problems.append(
            f"a single-choice question has exactly one correct option; {len(answer)} are marked ({', '.join(answer)})"
        )
    if not images:
        problems.append("an item needs at least one image")
    return problems


def make_item(
    *,
    category: str,
    question: str,
    options: Sequence[str],
    answer: str | Iterable[str],
    choice_type: str,
    images: Sequence[str],
    composite: str | None = None,
    provenance: str = "written",
    author: str = "unknown",
    item_id: str | None = None,
    status: str = "draft",
    difficulty_level: str | None = None,
) -> VqaItem:
    """A validated item (ValidationError listing every problem otherwise). Category accepts short names."""
    resolved = resolve_category(category) or category
    letters = parse_letters(answer)
    problems = item_problems(resolved, question, options, letters, choice_type, images)
    item_id = item_id or f"vqa-{secrets.token_hex(5)}"
    if not _ID.match(item_id):
        problems.append(f"item id {item_id!r} is not valid: use letters, digits, '_', '.', ':' or '-'")
    if provenance not in PROVENANCES:
        problems.append(f"provenance must be one of {', '.join(PROVENANCES)}, not {provenance!r}")
    if status not in STATUSES:
        problems.append(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
    if problems:
        raise ValidationError(problems)
    now = utcnow()
    return VqaItem(
        id=item_id,
        category=resolved,
        question=question.strip(),
        options=tuple(o.strip() for o in options),
        answer=letters,
        choice_type=choice_type,
        images=tuple(images),
        composite=composite,
        provenance=provenance,
        status=status,
        difficulty_level=difficulty_level,
        author=author,
        created_at=now,
        updated_at=now,
    )


def _row_to_item(row: dict) -> VqaItem:
    return VqaItem(
        id=row["id"],
        category=row["category"],
        question=row["question"],
        options=tuple(json.loads(row["options"])),
        answer=tuple(json.loads(row["answer"])),
        choice_type=row["choice_type"],
        images=tuple(json.loads(row["images"])),
        composite=row["composite"],
        provenance=row["provenance"],
        status=row["status"],
        disputed=bool(row["disputed"]),
        difficulty_level=row["difficulty_level"],
        author=row["author"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def _content(item: VqaItem) -> tuple:
    """The content columns as stored: category, question, options, answer, choice_type, images, composite."""
    return (
        item.category,
        item.question,
        json.dumps(list(item.options), ensure_ascii=False),
        json.dumps(list(item.answer)),
        item.choice_type,
        json.dumps(list(item.images)),
        item.composite,
    )


def insert_item(db: sqlite_utils.Database, item: VqaItem) -> None:
    """Store a new item (inside ``write()``); a duplicate id is a ValidationError."""
    if db.conn.execute("SELECT 1 FROM vqa_items WHERE id = ?", (item.id,)).fetchone():
        raise ValidationError(f"an item with id {item.id!r} already exists")
    db.conn.execute(
        """INSERT INTO vqa_items (id, category, question, options, answer, choice_type, images, composite,
               provenance, status, disputed, difficulty_level, author, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)""",
        (
            item.id,
            *_content(item),
            item.provenance,
            item.status,
            item.difficulty_level,
            item.author,
            item.created_at,
            item.updated_at,
        ),
    )


def replace_content(db: sqlite_utils.Database, item: VqaItem) -> None:
    """Overwrite an item's question, options, key, images and category (inside ``write()``)."""
    db.conn.execute(
        """UPDATE vqa_items SET category = ?, question = ?, options = ?, answer = ?, choice_type = ?, images = ?,
               composite = ?, updated_at = ? WHERE id = ?""",
        (*_content(item), utcnow(), item.id),
    )


def fetch_item(db: sqlite_utils.Database, item_id: str) -> VqaItem:
    row = db.conn.execute("SELECT * FROM vqa_items WHERE id = ?", (item_id,)).fetchone()
    if row is None:
        raise NotFound(f"no VQA item {item_id!r}")
    return _row_to_item(dict(row))


def get_item(database: Database, item_id: str) -> VqaItem:
    return fetch_item(database.db, item_id)


def list_items(
    database: Database, *, status: str | None = None, category: str | None = None, ids: Iterable[str] | None = None
) -> list[VqaItem]:
    """Items in creation order, optionally filtered."""
    sql, params = "SELECT * FROM vqa_items WHERE 1 = 1", []
    if status:
        sql += " AND status = ?"
        params.append(status)
    if category:
        sql += " AND category = ?"
        params.append(category)
    items = [_row_to_item(r) for r in database.query(sql + " ORDER BY rowid", params)]
    if ids is not None:
        wanted = list(ids)
        by_id = {i.id: i for i in items}
        return [by_id[i] for i in wanted if i in by_id]
    return items
