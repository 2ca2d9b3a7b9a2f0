"""The task map of Algorithm 1 fitted to ViLPAct's release (issue 39): the paper assigns each of the 157 Charades
classes to one of 22 tasks by hand and does not publish the map, so CompStudio starts from its own hand-authored
map (``assets/charades/tasks.json``) and fits it to the released sequences of the training videos.

The fit reads the release through the task score alone, where Algorithm 1 keeps the video's largest task (the
greedy search from every seed with only the task score: the sequence grown from a seed is all the actions of its
task, and the longest one wins, the earliest on a tie). Three steps, every number a field of :class:`FitConfig`:

1. **merge tasks** released together: two tasks present in a video, at least one released, are *co-released* when
   both are and *split* otherwise; the pair with the highest co-release rate ``co / (co + split)`` merges while
   that rate reaches ``merge_rate`` over at least ``min_videos`` videos (dressing with shoes, meals with medicine);
2. **move classes**: each class in turn goes to the task (or a task of its own) under which the most training
   videos containing it come back exactly, when that gains at least ``move_gain`` videos; ``rounds`` passes;
3. **relate tasks**: two tasks are *related* (the task score ``extract_related_task_score``) when their
   co-release rate reaches ``related_rate`` over at least ``min_videos`` videos.

``scripts/fit_charades_tasks.py`` writes the map fitted on all 1,919 training videos to
``assets/charades/tasks_fitted.json``, the default; ``benchmarks/charades_recovery.py`` refits it on each fold.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from backend.vilpact.extraction import TimedAction
from backend.vilpact.tasks import TaskMap


@dataclass(frozen=True)
class FitConfig:
    merge_rate: float = 0.5
    min_videos: int = 5
    move_gain: int = 3
    rounds: int = 1
    related_rate: float = 0.1


@dataclass(frozen=True)
class LabelledVideo:
    """A training video: its actions (after the same-class merge) and whether each is in the released sequence."""

    video_id: str
    actions: tuple[TimedAction, ...]
    released: tuple[bool, ...]


def released_flags(actions: Sequence[TimedAction], released: Iterable[TimedAction]) -> tuple[bool, ...]:
    """Which of ``actions`` the released sequence holds (the same class and times; each released item once).

    >>> acts = [TimedAction("c1", 0, 5), TimedAction("c2", 1, 4), TimedAction("c1", 0, 5)]
    >>> released_flags(acts, [TimedAction("c1", 0.0, 5.0)])
    (True, False, False)
    """
    left = Counter((a.class_id, a.start, a.end) for a in released)
    flags = []
    for action in actions:
        key = (action.class_id, action.start, action.end)
        flags.append(left[key] > 0)
        left[key] -= 1
    return tuple(flags)


def largest_task(actions: Sequence[TimedAction], task_of: Mapping[str, str]) -> tuple[bool, ...]:
    """Algorithm 1 under the task score alone: the actions of the task with most actions (the earliest-starting
    task on a tie).

    >>> acts = [TimedAction("c1", 5, 9), TimedAction("c2", 0, 3), TimedAction("c3", 1, 2)]
    >>> largest_task(acts, {"c1": "a", "c2": "b", "c3": "a"})
    (True, False, True)
    >>> largest_task(acts[:2], {"c1": "a", "c2": "b"})   # one each: b starts first
    (False, True)
    """
    count: Counter[str] = Counter()
    first: dict[str, float] = {}
    for action in actions:
        task = task_of.get(action.class_id, action.class_id)
        count[task] += 1
        first[task] = min(first.get(task, action.start), action.start)
    if not count:
        return ()
    chosen = max(count, key=lambda t: (count[t], -first[t]))
    return tuple(task_of.get(a.class_id, a.class_id) == chosen for a in actions)


def _co_release(videos: Sequence[LabelledVideo], task_of: Mapping[str, str]) -> tuple[Counter, Counter]:
    together: Counter[tuple[str, str]] = Counter()
    split: Counter[tuple[str, str]] = Counter()
    for video in videos:
        out = {task_of[a.class_id] for a, r in zip(video.actions, video.released, strict=True) if r}
        rest = {task_of[a.class_id] for a in video.actions} - out
        for a in out:
            for b in out:
                if a < b:
                    together[(a, b)] += 1
            for b in rest:
                split[(min(a, b), max(a, b))] += 1
    return together, split


def _rates(
    videos: Sequence[LabelledVideo], task_of: Mapping[str, str], min_videos: int
) -> dict[tuple[str, str], float]:
    together, split = _co_release(videos, task_of)
    return {
        pair: together[pair] / (together[pair] + split[pair])
        for pair in set(together) | set(split)
        if together[pair] + split[pair] >= min_videos
    }


def _merge_tasks(videos: Sequence[LabelledVideo], task_of: dict[str, str], config: FitConfig) -> dict[str, str]:
    while True:
        rates = _rates(videos, task_of, config.min_videos)
        best = max(((r, p) for p, r in rates.items() if r >= config.merge_rate), default=None)
        if best is None:
            return task_of
        keep, gone = best[1]
        task_of = {c: keep if t == gone else t for c, t in task_of.items()}


def _exact(videos: Sequence[LabelledVideo], task_of: Mapping[str, str]) -> int:
    return sum(largest_task(v.actions, task_of) == v.released for v in videos)


def _move_classes(videos: Sequence[LabelledVideo], task_of: dict[str, str], config: FitConfig) -> dict[str, str]:
    having: dict[str, list[LabelledVideo]] = {}
    for video in videos:
        for class_id in {a.class_id for a in video.actions}:
            having.setdefault(class_id, []).append(video)
    for _round in range(config.rounds):
        moved = False
        for class_id in sorted(task_of):
            mine = having.get(class_id, [])
            if not mine:
                continue
            current = task_of[class_id]
            best, best_task = _exact(mine, task_of) + config.move_gain - 0.5, current
            # a class can only gain where the task is in its videos: try those tasks
            near: Counter[str] = Counter(t for v in mine for t in {task_of[a.class_id] for a in v.actions})
            candidates = sorted(t for t, n in near.items() if n >= config.min_videos)
            for task in [*candidates, f"own:{class_id}"]:
                if task == current:
                    continue
                task_of[class_id] = task
                score = _exact(mine, task_of)
                if score > best:
                    best, best_task = score, task
            task_of[class_id] = best_task
            moved = moved or best_task != current
        if not moved:
            break
    return task_of


def fit_task_map(videos: Sequence[LabelledVideo], base: TaskMap, config: FitConfig | None = None) -> TaskMap:
    """The task map fitted to ``videos`` from ``base`` (see the module docstring).

    >>> a, b, c = TimedAction("c1", 0, 5), TimedAction("c2", 1, 6), TimedAction("c3", 2, 7)
    >>> videos = [LabelledVideo(f"v{i}", (a, b, c), (True, True, False)) for i in range(5)]
    >>> fitted = fit_task_map(videos, TaskMap({"c1": "t1", "c2": "t2", "c3": "t3"}), FitConfig(rounds=0))
    >>> fitted.task_of["c1"] == fitted.task_of["c2"] != fitted.task_of["c3"]   # c1, c2 always released together
    True
    """
    config = config or FitConfig()
    classes = {a.class_id for v in videos for a in v.actions} | set(base.task_of)
    task_of = {c: base.task(c) for c in sorted(classes)}
    task_of = _merge_tasks(videos, task_of, config)
    task_of = _move_classes(videos, task_of, config)
    related: dict[str, set[str]] = {t: set() for t in task_of.values()}
    for (x, y), rate in _rates(videos, task_of, config.min_videos).items():
        if rate >= config.related_rate:
            related[x].add(y)
            related[y].add(x)
    return TaskMap(task_of, {t: frozenset(r) for t, r in related.items()}, dict(base.descriptions))
