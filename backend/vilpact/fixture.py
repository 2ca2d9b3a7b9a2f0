"""A check of the extraction against ViLPAct's release (issue 30 §4). Charades' raw file is not public here, so
each check video is *built* from a released sequence: a Charades-format row holding the sequence's actions (in
their released order, times as released) plus distractor actions the extraction must leave out:

* ``overlapping``: an action of another task and another object, starting inside the sequence's span;
* ``far``: an action of another task and another object, 25-60 s after the sequence ends;
* ``far_same_task``: an action of one of the sequence's own tasks, 25-60 s after it ends (only time tells it apart);
* ``before``: like ``far`` but that long before the sequence starts, when the video has room for it.

"Another task" means neither a task of the sequence nor one related to them (assets/charades/tasks.json), and
"another object" an object none of its actions touches. Distractors go at random places of the row's action
list; the random choices are seeded by the video id, so the same release always gives the same check set.
:func:`recovery` runs the extraction on it and counts videos whose released sequence comes back exactly (the same
actions with the same times, in the same order). ``tests/data/charades/`` holds a few hundred of them
(``scripts/build_charades_fixture.py``); ``benchmarks/charades_recovery.py`` checks all 2,912.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from backend.vilpact.extraction import TimedAction
from backend.vilpact.layout import parse_items
from backend.vilpact.tasks import TaskMap

DISTRACTOR_KINDS = ("overlapping", "far", "far_same_task", "before")
FAR_S = (25.0, 60.0)
DURATION_S = (2.0, 10.0)


def _timed(class_id: str, start: float, rng: random.Random) -> TimedAction:
    begin = round(start, 2)
    end = round(begin + rng.uniform(*DURATION_S), 2)
    return TimedAction(class_id, begin, end, f"{begin:.2f}", f"{end:.2f}")


def other_classes(
    actions: Sequence[TimedAction], classes: Iterable[str], tasks: TaskMap, objects: Mapping[str, str | None]
) -> list[str]:
    """Classes of no task of ``actions`` nor one related to them, and of no object they touch."""
    own = {tasks.task(a.class_id) for a in actions}
    near = own | {t for task in own for t in tasks.related.get(task, frozenset())}
    touched = {objects.get(a.class_id) for a in actions}
    return [c for c in sorted(classes) if tasks.task(c) not in near and objects.get(c) not in touched]


def distractors(
    actions: Sequence[TimedAction],
    classes: Iterable[str],
    tasks: TaskMap,
    objects: Mapping[str, str | None],
    rng: random.Random,
) -> list[TimedAction]:
    """One distractor of each kind that fits (see the module docstring)."""
    start, end = min(a.start for a in actions), max(a.end for a in actions)
    others = other_classes(actions, classes, tasks, objects)
    own = {tasks.task(a.class_id) for a in actions}
    same = [c for c in sorted(classes) if tasks.task(c) in own]
    made = []
    if others:
        made.append(_timed(rng.choice(others), rng.uniform(start, end), rng))
        made.append(_timed(rng.choice(others), end + rng.uniform(*FAR_S), rng))
    made.append(_timed(rng.choice(same), end + rng.uniform(*FAR_S), rng))
    before = start - rng.uniform(*FAR_S) - DURATION_S[1]
    if others and before >= 0:
        made.append(_timed(rng.choice(others), before, rng))
    return made


@dataclass(frozen=True)
class CheckVideo:
    """A Charades-format row built from a released sequence, and the sequence it should give back."""

    row: dict[str, str]
    expected: tuple[TimedAction, ...]


def check_video(
    released: Mapping[str, str], classes: Iterable[str], tasks: TaskMap, objects: Mapping[str, str | None], seed: str
) -> CheckVideo:
    """The check row for one released row of ``all_gt_seq.csv``."""
    rng = random.Random(f"{seed}:{released['id']}")
    expected = parse_items(released["action_flow_id"])
    items = list(expected)
    for extra in distractors(expected, list(classes), tasks, objects, rng):
        items.insert(rng.randrange(len(items) + 1), extra)
    length = max(a.end for a in items) + 2.0
    touched = sorted({str(objects.get(a.class_id)) for a in items if objects.get(a.class_id)})
    row = {
        "id": released["id"],
        "subject": "fixture",
        "scene": released["scene"],
        "quality": "",
        "relevance": "",
        "verified": "",
        "script": "",
        "objects": ";".join(touched),
        "descriptions": "",
        "actions": ";".join(a.item for a in items),
        "length": f"{length:.2f}",
    }
    return CheckVideo(row, tuple(expected))


def check_set(
    released_rows: Iterable[Mapping[str, str]],
    classes: Iterable[str],
    tasks: TaskMap,
    objects: Mapping[str, str | None],
    seed: str = "vilpact",
) -> list[CheckVideo]:
    class_list = sorted(classes)
    return [check_video(r, class_list, tasks, objects, seed) for r in released_rows]


@dataclass(frozen=True)
class Recovery:
    videos: int
    exact: int
    failures: list[str]

    @property
    def share(self) -> float:
        return self.exact / self.videos if self.videos else 0.0


def recovery(
    checks: Sequence[CheckVideo], extract: Callable[[str, list[TimedAction]], Sequence[TimedAction]]
) -> Recovery:
    """How many check videos give back their released sequence exactly (``extract(video_id, actions)`` returns
    the chosen actions in order; class ids and times as numbers are compared)."""
    failures = []
    for check in checks:
        actions = parse_items(check.row["actions"])
        got = [(a.class_id, a.start, a.end) for a in extract(check.row["id"], actions)]
        if got != [(a.class_id, a.start, a.end) for a in check.expected]:
            failures.append(check.row["id"])
    return Recovery(len(checks), len(checks) - len(failures), failures)
