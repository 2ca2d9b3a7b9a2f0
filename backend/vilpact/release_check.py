"""Algorithm 1 measured against ViLPAct's release on real Charades annotations (issue 39): every annotated action
of a training video in, the released sequence expected out.

* :func:`released_videos` pairs the videos of a Charades-format file with their rows of ``all_gt_seq.csv``
  (only ids listed in ``dataset-split/train.csv`` when a split is given);
* :func:`measure` runs an extraction on each and counts **exact recovery** (the chosen actions are the released
  ones: the same classes with the same times, as a multiset), and action **precision** and **recall**;
* :func:`folds` cuts the videos into k folds by id, for cross-validation (the task map is refitted on the other
  folds, backend/vilpact/task_fit.py).
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from backend.vilpact.charades import CharadesVideo
from backend.vilpact.extraction import TimedAction, merge_same_class
from backend.vilpact.layout import parse_items
from backend.vilpact.task_fit import LabelledVideo, released_flags


@dataclass(frozen=True)
class ReleasedVideo:
    """A video's annotated actions (as the file has them) and its released sequence."""

    video_id: str
    actions: tuple[TimedAction, ...]
    released: tuple[TimedAction, ...]
    row: Mapping[str, str]

    def labelled(self) -> LabelledVideo:
        """The video for the task-map fit: actions after the same-class merge, each flagged released or not."""
        merged = tuple(merge_same_class(list(self.actions)))
        return LabelledVideo(self.video_id, merged, released_flags(merged, self.released))


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def released_videos(
    videos: Iterable[CharadesVideo], release_rows: Iterable[Mapping[str, str]], only: set[str] | None = None
) -> list[ReleasedVideo]:
    """The videos that have a released row (and are in ``only``, when given), sorted by id."""
    rows = {r["id"]: r for r in release_rows}
    found = [
        ReleasedVideo(v.id, v.actions, tuple(parse_items(rows[v.id]["action_flow_id"])), rows[v.id])
        for v in videos
        if v.id in rows and (only is None or v.id in only)
    ]
    return sorted(found, key=lambda v: v.video_id)


@dataclass(frozen=True)
class Measure:
    videos: int
    exact: int
    true_positive: int
    chosen: int
    released: int
    failures: tuple[str, ...] = ()

    @property
    def exact_share(self) -> float:
        return self.exact / self.videos if self.videos else 0.0

    @property
    def precision(self) -> float:
        return self.true_positive / self.chosen if self.chosen else 0.0

    @property
    def recall(self) -> float:
        return self.true_positive / self.released if self.released else 0.0

    def __add__(self, other: Measure) -> Measure:
        return Measure(
            self.videos + other.videos,
            self.exact + other.exact,
            self.true_positive + other.true_positive,
            self.chosen + other.chosen,
            self.released + other.released,
            self.failures + other.failures,
        )

    def as_dict(self) -> dict[str, float | int]:
        return {
            "videos": self.videos,
            "exact": self.exact,
            "exact_share": round(self.exact_share, 4),
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
        }


def _key(action: TimedAction) -> tuple[str, float, float]:
    return (action.class_id, action.start, action.end)


def measure(
    videos: Sequence[ReleasedVideo], extract: Callable[[str, list[TimedAction]], Sequence[TimedAction]]
) -> Measure:
    """Exact recovery, precision and recall of ``extract(video_id, actions) -> chosen actions``.

    >>> v = ReleasedVideo("V", (TimedAction("c1", 0, 5), TimedAction("c2", 1, 3)), (TimedAction("c1", 0, 5),), {})
    >>> m = measure([v], lambda vid, acts: acts)   # everything chosen: recall 1, precision 1/2, not exact
    >>> m.exact, m.precision, m.recall
    (0, 0.5, 1.0)
    """
    exact = true_positive = chosen = released = 0
    failures = []
    for video in videos:
        got = Counter(_key(a) for a in extract(video.video_id, list(video.actions)))
        want = Counter(_key(a) for a in video.released)
        hit = sum((got & want).values())
        true_positive, chosen, released = true_positive + hit, chosen + sum(got.values()), released + sum(want.values())
        if got == want:
            exact += 1
        else:
            failures.append(video.video_id)
    return Measure(len(videos), exact, true_positive, chosen, released, tuple(failures))


def folds(videos: Sequence[ReleasedVideo], k: int) -> list[list[ReleasedVideo]]:
    """``k`` folds: every k-th video by id (``videos`` sorted by id).

    >>> [len(f) for f in folds(list(range(11)), 5)]
    [3, 2, 2, 2, 2]
    """
    return [list(videos[i::k]) for i in range(k)]
