"""The task map of ViLPAct's sequence extraction: every action class assigned to one task (paper, Appendix 7.1:
"Each action is assigned to one of 22 tasks manually, for example, 'Opening a book' and 'Closing a book' are
assigned to the same task").

The paper does not publish its map; ``assets/charades/tasks.json`` is the one CompStudio authored from the 157
Charades classes (its ``_how_authored`` says how). A task may name *related* tasks (dressing and shoes), which
score ``extract_related_task_score`` instead of 1 in the task relevance. Relations are symmetric: naming one
side is enough. A user's own map (setting ``extract_task_map``) has the same shape.

A class the map does not list (a user's own recordings with new classes) falls back to a task of its own: the
task of its *object* when the Charades mapping file gave one (``object:<name>``), else ``class:<id>``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from backend.errors import ImportFileError

BUNDLED_TASKS = Path(__file__).resolve().parents[2] / "assets" / "charades" / "tasks.json"
#: The hand-authored map fitted to the release's training videos (backend/vilpact/task_fit.py): the default.
FITTED_TASKS = BUNDLED_TASKS.with_name("tasks_fitted.json")


@dataclass(frozen=True)
class TaskMap:
    """``task_of`` maps class id -> task name; ``related`` maps a task to the tasks related to it (symmetric)."""

    task_of: Mapping[str, str]
    related: Mapping[str, frozenset[str]] = field(default_factory=dict)
    descriptions: Mapping[str, str] = field(default_factory=dict)

    def task(self, class_id: str, object_name: str | None = None) -> str:
        """The task of ``class_id``; unlisted classes get their object's task, else one of their own.

        >>> m = TaskMap({"c025": "reading_a_book", "c027": "reading_a_book"})
        >>> m.task("c027"), m.task("c200", "ball"), m.task("c201")
        ('reading_a_book', 'object:ball', 'class:c201')
        """
        found = self.task_of.get(class_id)
        if found is not None:
            return found
        return f"object:{object_name}" if object_name else f"class:{class_id}"

    def relevance(self, task_a: str, task_b: str, related_score: float) -> float:
        """Task relevance of two tasks: 1 for the same task, ``related_score`` for related ones, else 0.

        >>> m = TaskMap({}, {"dressing": frozenset({"wearing_shoes"}), "wearing_shoes": frozenset({"dressing"})})
        >>> m.relevance("dressing", "dressing", 0.5), m.relevance("dressing", "wearing_shoes", 0.5)
        (1.0, 0.5)
        >>> m.relevance("dressing", "reading_a_book", 0.5)
        0.0
        """
        if task_a == task_b:
            return 1.0
        return related_score if task_b in self.related.get(task_a, frozenset()) else 0.0


def _fail(path: Path, problem: str) -> ImportFileError:
    return ImportFileError(str(path), None, problem)


def parse_task_map(data: object, path: Path) -> TaskMap:
    """A :class:`TaskMap` from the JSON shape of ``assets/charades/tasks.json``; a named error otherwise."""
    tasks = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(tasks, dict) or not tasks:
        raise _fail(path, 'expected {"tasks": {"<task>": {"classes": [...], "related": [...]}}}')
    task_of: dict[str, str] = {}
    related: dict[str, set[str]] = {name: set() for name in tasks}
    descriptions: dict[str, str] = {}
    for name, spec in tasks.items():
        if not isinstance(spec, dict) or not isinstance(spec.get("classes"), list):
            raise _fail(path, f"task {name!r} needs a list 'classes'")
        descriptions[name] = str(spec.get("description", ""))
        for class_id in spec["classes"]:
            if not isinstance(class_id, str):
                raise _fail(path, f"task {name!r}: class ids are strings such as 'c027', not {class_id!r}")
            if class_id in task_of:
                raise _fail(path, f"class {class_id} is in two tasks ({task_of[class_id]!r} and {name!r})")
            task_of[class_id] = name
        for other in spec.get("related", []):
            if other not in tasks:
                raise _fail(path, f"task {name!r} names an unknown related task {other!r}")
            if other != name:
                related[name].add(other)
                related[other].add(name)
    return TaskMap(task_of, {k: frozenset(v) for k, v in related.items()}, descriptions)


def load_task_map(path: Path | str | None = None) -> TaskMap:
    """The task map in ``path`` (default: ``assets/charades/tasks_fitted.json``, the bundled map fitted to the
    release; ``tasks.json`` is the hand-authored map it starts from)."""
    source = Path(path) if path else FITTED_TASKS
    if not source.is_file():
        raise _fail(source, "task map not found (setting extract_task_map)")
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _fail(source, f"not a JSON task map ({exc})") from None
    return parse_task_map(data, source)


def task_map_json(tasks: TaskMap, about: dict[str, str]) -> dict[str, object]:
    """``tasks`` in the JSON shape :func:`parse_task_map` reads (``about``: ``_``-prefixed notes written first).

    >>> m = TaskMap({"c1": "a", "c2": "b"}, {"a": frozenset({"b"}), "b": frozenset({"a"})}, {"a": "the a task"})
    >>> task_map_json(m, {})["tasks"]["a"]
    {'description': 'the a task', 'classes': ['c1'], 'related': ['b']}
    >>> parse_task_map(task_map_json(m, {}), Path("m.json")).relevance("a", "b", 0.5)
    0.5
    """
    names = sorted(set(tasks.task_of.values()))
    return {
        **about,
        "tasks": {
            name: {
                "description": tasks.descriptions.get(name, ""),
                "classes": sorted(c for c, t in tasks.task_of.items() if t == name),
                "related": sorted(tasks.related.get(name, frozenset())),
            }
            for name in names
        },
    }
