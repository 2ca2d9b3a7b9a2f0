"""ViLPAct's sequence extraction (paper, Appendix 7.1, Algorithm 1): from all the actions annotated in one
Charades video, the greedy choice of "a sequence of temporally and semantically coherent actions, which interact
with the same or related objects".

The paper names the three coherence scores and that the method is greedy; it gives neither the formulas nor the
order of the search. CompStudio's reading (docs/decisions.md, "Charades extraction"; every number a setting):

* **semantic relevance** of an action to the sequence built so far: the largest (``extract_semantic_aggregate
  = max``) or the mean cosine between its TF-IDF-weighted name vector and the members' (backend/vilpact/semantics.py);
* **temporal relevance**: ``1 - gap / extract_max_gap_s``, where ``gap`` is how far the action lies outside the
  sequence's span (0 when it overlaps it); an action more than ``extract_max_gap_s`` away never joins;
* **task relevance**: 1 when a member has the action's task, ``extract_related_task_score`` when a member's
  task is related to it, else 0 (the 22-task map, backend/vilpact/tasks.py);
* **coherence**: their weighted mean (weights ``extract_*_weight``); an action joins when its coherence
  reaches ``extract_min_coherence``.

Greedy search (:func:`grow`): from a seed action, add the most coherent remaining action while one passes
(``extract_greedy_order = coherence``), or scan the later actions in time order and add each that passes
(``= time``). Every action is tried as the seed; the sequence with the most actions wins, then the higher mean
coherence, then the earlier seed. The video is kept when it has more than three actions
(``extract_min_actions = 4``, paper §3).

Fitted to the release on the real Charades annotations (issue 39; docs/decisions.md, "Algorithm 1 on the real
Charades annotations"), four rules the paper does not name:

* **same-class merge** (:func:`merge_same_class`, ``extract_same_class_merge = pairs``): a class annotated exactly
  twice with overlapping segments is one action, written as the release writes it (``c148 11.10 33.0``);
* **the release's order** (:func:`release_order`): actions sorted by start, then end, then class id;
* **top-up** (``extract_fill_min_coherence``): when the longest sequence has fewer than ``extract_min_actions``
  actions, the search runs again letting the most coherent action join down to that coherence while the
  sequence is short (a related task: the release tops up a short task with one done beside it);
* **repeated class** (:func:`repeated_segments`, ``extract_repeated_class = follow``): a class still annotated
  twice after the merge (two segments apart) takes no part in the search (it is neither a seed nor counted in a
  sequence's length); each of its segments then joins the finished sequence when its coherence with it reaches
  ``extract_min_coherence`` within ``extract_max_gap_s`` (with the fitted weights: when a member has its task).

The default weights (task 1, semantic 0, temporal 0) and the fitted task map (backend/vilpact/task_fit.py) are
what the release supports; the semantic and temporal scores are still computed and shown in the preview.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from backend.vilpact.semantics import SemanticTable
from backend.vilpact.tasks import TaskMap

if TYPE_CHECKING:
    from backend.settings import Settings

GREEDY_ORDERS = ("coherence", "time")
SEMANTIC_AGGREGATES = ("max", "mean")


@dataclass(frozen=True)
class TimedAction:
    """One annotated action of a video: ``cNNN start end`` with the times as the file wrote them."""

    class_id: str
    start: float
    end: float
    start_text: str = ""
    end_text: str = ""

    @property
    def item(self) -> str:
        """The action as an ``action_flow_id`` item, in the file's spelling of the times.

        >>> TimedAction("c001", 10.8, 16.6, "10.80", "16.60").item, TimedAction("c002", 1.5, 2.0).item
        ('c001 10.80 16.60', 'c002 1.5 2')
        """
        return f"{self.class_id} {self.start_text or f'{self.start:g}'} {self.end_text or f'{self.end:g}'}"


@dataclass(frozen=True)
class ExtractionConfig:
    """Algorithm 1's weights and thresholds (the ``extract_*`` settings)."""

    semantic_weight: float = 1.0
    temporal_weight: float = 1.0
    task_weight: float = 1.0
    min_coherence: float = 0.6
    max_gap_s: float = 20.0
    related_task_score: float = 0.5
    semantic_aggregate: str = "max"
    greedy_order: str = "coherence"
    min_actions: int = 4
    fill_min_coherence: float = 1.0
    same_class_merge: str = "none"
    repeated_class: str = "count"

    @classmethod
    def from_settings(cls, settings: Settings) -> ExtractionConfig:
        return cls(
            semantic_weight=settings.extract_semantic_weight,
            temporal_weight=settings.extract_temporal_weight,
            task_weight=settings.extract_task_weight,
            min_coherence=settings.extract_min_coherence,
            max_gap_s=settings.extract_max_gap_s,
            related_task_score=settings.extract_related_task_score,
            semantic_aggregate=settings.extract_semantic_aggregate,
            greedy_order=settings.extract_greedy_order,
            min_actions=settings.extract_min_actions,
            fill_min_coherence=settings.extract_fill_min_coherence,
            same_class_merge=settings.extract_same_class_merge,
            repeated_class=settings.extract_repeated_class,
        )


@dataclass(frozen=True)
class Scores:
    """The three coherence scores of an action against a sequence, and their weighted mean."""

    semantic: float
    temporal: float
    task: float
    coherence: float

    def as_dict(self) -> dict[str, float]:
        return {k: round(v, 4) for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class Decision:
    """Whether an action is in the video's sequence, its scores (None for the seed) and why."""

    action: TimedAction
    chosen: bool
    scores: Scores | None
    reason: str
    term: str = ""  # the term that decided it: a score, the gap limit, the top-up, the seed or the search order


@dataclass(frozen=True)
class Extraction:
    """Algorithm 1 on one video: a decision per action in time order, and whether the video is kept."""

    video_id: str
    decisions: tuple[Decision, ...]
    kept: bool
    verdict: str

    @property
    def chosen(self) -> tuple[TimedAction, ...]:
        return tuple(d.action for d in self.decisions if d.chosen)


@dataclass(frozen=True)
class Relevance:
    """Everything the scores need about classes: semantic relevance, each class's task and the task map."""

    semantic: SemanticTable
    tasks: TaskMap
    task_of: dict[str, str]

    def task_relevance(self, class_a: str, class_b: str, related_score: float) -> float:
        return self.tasks.relevance(
            self.task_of.get(class_a, class_a), self.task_of.get(class_b, class_b), related_score
        )


def temporal_relevance(gap: float, max_gap_s: float) -> float:
    """``1 - gap / max_gap`` for an action ``gap`` seconds outside the sequence's span; 0 beyond ``max_gap``.

    >>> temporal_relevance(0.0, 20.0), temporal_relevance(5.0, 20.0), temporal_relevance(25.0, 20.0)
    (1.0, 0.75, 0.0)
    """
    if gap <= 0:
        return 1.0
    return max(0.0, 1.0 - gap / max_gap_s) if max_gap_s > 0 else 0.0


def gap_to_span(action: TimedAction, start: float, end: float) -> float:
    """Seconds between ``action`` and the span ``start..end`` (0 when they overlap or touch).

    >>> a = TimedAction("c001", 30.0, 35.0)
    >>> gap_to_span(a, 0.0, 12.5), gap_to_span(a, 32.0, 40.0), gap_to_span(a, 36.0, 40.0)
    (17.5, 0.0, 1.0)
    """
    return max(0.0, action.start - end, start - action.end)


def coherence(semantic: float, temporal: float, task: float, config: ExtractionConfig) -> Scores:
    """The weighted mean of the three scores.

    >>> coherence(0.6, 1.0, 0.5, ExtractionConfig()).coherence   # (0.6 + 1.0 + 0.5) / 3
    0.7
    >>> round(coherence(0.6, 1.0, 0.0, ExtractionConfig(task_weight=2.0)).coherence, 4)   # (0.6 + 1.0) / 4
    0.4
    """
    total = config.semantic_weight + config.temporal_weight + config.task_weight
    mixed = config.semantic_weight * semantic + config.temporal_weight * temporal + config.task_weight * task
    return Scores(semantic, temporal, task, round(mixed / total, 12) if total > 0 else 0.0)


@dataclass(frozen=True)
class _Pairs:
    """One video's semantic and task relevance between every two of its actions (looked up once per video)."""

    semantic: list[list[float]]
    task: list[list[float]]

    @classmethod
    def of(cls, actions: list[TimedAction], relevance: Relevance, related_score: float) -> _Pairs:
        classes = [a.class_id for a in actions]
        rows = [relevance.semantic.relevance.get(c, {}) for c in classes]
        tasks = [relevance.task_of.get(c, c) for c in classes]
        return cls(
            [[row.get(d, 0.0) for d in classes] for row in rows],
            [[relevance.tasks.relevance(t, u, related_score) for u in tasks] for t in tasks],
        )


class _Growth:
    """A sequence being grown from one seed, with each outside action's running scores against its members."""

    def __init__(
        self,
        actions: list[TimedAction],
        seed: int,
        pairs: _Pairs,
        config: ExtractionConfig,
        held: frozenset[int] = frozenset(),
    ):
        self.actions, self.pairs, self.config, self.held = actions, pairs, config, held
        self.members = [seed]
        self.joined: dict[int, Scores] = {}
        self.filled: set[int] = set()
        self.start, self.end = actions[seed].start, actions[seed].end
        self.sem_best = [0.0] * len(actions)
        self.sem_sum = [0.0] * len(actions)
        self.task_best = [0.0] * len(actions)
        total = config.semantic_weight + config.temporal_weight + config.task_weight
        self._weights = (config.semantic_weight / total, config.temporal_weight / total, config.task_weight / total)
        self._absorb(seed)

    def _absorb(self, index: int) -> None:
        semantic, task = self.pairs.semantic[index], self.pairs.task[index]
        sem_best, sem_sum, task_best = self.sem_best, self.sem_sum, self.task_best
        for j in range(len(self.actions)):
            sem_sum[j] += semantic[j]
            if semantic[j] > sem_best[j]:
                sem_best[j] = semantic[j]
            if task[j] > task_best[j]:
                task_best[j] = task[j]

    def _parts(self, j: int) -> tuple[float, float, float, float]:
        """(coherence, semantic, temporal, task) of action ``j`` against the members now; coherence -1 when it
        lies beyond ``max_gap_s`` (it may never join)."""
        action = self.actions[j]
        gap = max(0.0, action.start - self.end, self.start - action.end)
        temporal = temporal_relevance(gap, self.config.max_gap_s)
        semantic = self.sem_best[j] if self.config.semantic_aggregate == "max" else self.sem_sum[j] / len(self.members)
        w_sem, w_temp, w_task = self._weights
        mixed = w_sem * semantic + w_temp * temporal + w_task * self.task_best[j]
        return (mixed if temporal > 0 else -1.0), semantic, temporal, self.task_best[j]

    def scores(self, j: int) -> Scores:
        """Action ``j``'s scores against the members now."""
        _mixed, semantic, temporal, task = self._parts(j)
        return coherence(semantic, temporal, task, self.config)

    def add(self, j: int, filled: bool = False) -> None:
        self.joined[j] = self.scores(j)
        if filled:
            self.filled.add(j)
        self.members.append(j)
        self.start, self.end = min(self.start, self.actions[j].start), max(self.end, self.actions[j].end)
        self._absorb(j)

    def mean_coherence(self) -> float:
        return sum(s.coherence for s in self.joined.values()) / len(self.joined) if self.joined else 0.0


def grow(
    actions: list[TimedAction],
    seed: int,
    pairs: _Pairs,
    config: ExtractionConfig,
    top_up: bool = False,
    held: frozenset[int] = frozenset(),
) -> _Growth:
    """Algorithm 1's greedy step from ``seed`` over ``actions`` (sorted by start); with ``top_up``, a sequence
    shorter than ``min_actions`` also takes actions down to ``fill_min_coherence``. The ``held`` actions (a
    repeated class) never join here."""
    growth = _Growth(actions, seed, pairs, config, held)
    threshold = config.min_coherence - 1e-9  # the coherence the scores report is rounded to 12 places
    if config.greedy_order == "time":
        for j in range(seed + 1, len(actions)):
            if j not in held and growth._parts(j)[0] >= threshold:
                growth.add(j)
        return growth
    fill = min(threshold, config.fill_min_coherence - 1e-9) if top_up else threshold
    outside = [j for j in range(len(actions)) if j != seed and j not in held]
    while outside:
        # below extract_min_actions the fill threshold applies (a sequence too short is topped up)
        floor = fill if len(growth.members) < config.min_actions else threshold
        best, best_at = floor, -1
        for j in outside:  # in time order: the earlier action wins a tie
            mixed = growth._parts(j)[0]
            if mixed > best or (mixed >= best and best_at < 0):
                best, best_at = mixed, j
        if best_at < 0:
            break
        growth.add(best_at, filled=best < threshold)
        outside.remove(best_at)
    return growth


SCORE_TERMS = (("task", "task relevance"), ("semantic", "semantic relevance"), ("temporal", "temporal relevance"))


def deciding_term(scores: Scores, config: ExtractionConfig, chosen: bool) -> str:
    """The term that decided an action: the gap limit or the search order when they did, else the score with the
    largest weighted share of the coherence (chosen) or of what it lacks (left out); the task score on a tie.

    >>> config = ExtractionConfig(semantic_weight=0.0, temporal_weight=0.0)
    >>> deciding_term(Scores(0.9, 1.0, 0.0, 0.0), config, False), deciding_term(Scores(0.1, 1.0, 1.0, 1.0), config, True)
    ('task relevance', 'task relevance')
    >>> deciding_term(Scores(0.2, 1.0, 0.3, 0.5), ExtractionConfig(), False)   # lacks 0.8 semantic, 0.7 task
    'semantic relevance'
    >>> deciding_term(Scores(0.9, 0.0, 1.0, -1.0), ExtractionConfig(), False)
    'temporal relevance (extract_max_gap_s)'
    """
    if scores.temporal <= 0 and not chosen:
        return "temporal relevance (extract_max_gap_s)"
    if not chosen and scores.coherence >= config.min_coherence:
        return "search order (extract_greedy_order)"
    weights = {"task": config.task_weight, "semantic": config.semantic_weight, "temporal": config.temporal_weight}
    share = {
        name: weights[name] * (getattr(scores, name) if chosen else 1.0 - getattr(scores, name))
        for name, _label in SCORE_TERMS
    }
    best = max(SCORE_TERMS, key=lambda term: share[term[0]])  # max keeps the first (task) on a tie
    return best[1]


def _reason_chosen(scores: Scores) -> str:
    task = "the same task" if scores.task >= 1 else ("a related task" if scores.task > 0 else "another task")
    return f"coherent with the sequence: coherence {scores.coherence:.2f}, {task}"


def _reason_left_out(scores: Scores, config: ExtractionConfig) -> str:
    if scores.temporal <= 0:
        return f"more than {config.max_gap_s:g} s away from the sequence (extract_max_gap_s)"
    task = "another task" if scores.task == 0 else ("a related task" if scores.task < 1 else "the same task")
    if scores.coherence >= config.min_coherence:
        return "scanned before it was coherent with the sequence (extract_greedy_order = time)"
    return f"coherence {scores.coherence:.2f} below {config.min_coherence:g} (extract_min_coherence): {task}"


def release_order(action: TimedAction) -> tuple[float, float, str]:
    """The order of a released sequence: by start, then end, then class id (all 1,919 training rows' order).

    >>> [a.class_id for a in sorted([TimedAction("c027", 2.1, 14.9), TimedAction("c030", 2.1, 9.4)], key=release_order)]
    ['c030', 'c027']
    """
    return (action.start, action.end, action.class_id)


def _longest(
    ordered: list[TimedAction], pairs: _Pairs, config: ExtractionConfig, top_up: bool, held: frozenset[int]
) -> _Growth:
    """The sequence grown from every seed in time order (the ``held`` ones excepted): the most actions, then the
    higher mean coherence, then the earlier seed."""
    best: tuple[tuple[int, float, int], _Growth] | None = None
    for seed in range(len(ordered)):
        if seed in held:
            continue
        growth = grow(ordered, seed, pairs, config, top_up, held)
        rank = (len(growth.members), growth.mean_coherence(), -seed)
        if best is None or rank > best[0]:
            best = (rank, growth)
    assert best is not None
    return best[1]


def _end_text(value: float) -> str:
    """A merged action's end as the release writes it: Python's ``str`` of the number (``33.0``, ``15.3``)."""
    return str(float(value))


def merge_same_class(actions: list[TimedAction]) -> list[TimedAction]:
    """The release's same-class merge (docs/decisions.md, "Algorithm 1 on the real annotations"): a class
    annotated exactly twice in a video, the two segments overlapping by more than 0 s, becomes one action from
    the earlier start (its text as written) to the later end (written as a Python float, ``33.0``). Classes
    annotated once, or three times or more, and pairs that only touch or lie apart stay as they are. The merged
    action takes the place of the first of the two in the file's order.

    >>> acts = [TimedAction("c148", 15.9, 33.0, "15.90", "33.00"), TimedAction("c000", 11.4, 23.0, "11.40", "23.00"),
    ...         TimedAction("c148", 11.1, 16.7, "11.10", "16.70")]
    >>> [a.item for a in merge_same_class(acts)]   # 2NZ5C
    ['c148 11.10 33.0', 'c000 11.40 23.00']
    >>> [a.item for a in merge_same_class([TimedAction("c1", 0, 5, "0.00", "5.00"), TimedAction("c1", 5, 9, "5.00", "9.00")])]
    ['c1 0.00 5.00', 'c1 5.00 9.00']
    """
    segments: dict[str, list[TimedAction]] = {}
    for action in actions:
        segments.setdefault(action.class_id, []).append(action)
    merged: list[TimedAction] = []
    for action in actions:
        pair = segments[action.class_id]
        if len(pair) != 2 or min(pair[0].end, pair[1].end) - max(pair[0].start, pair[1].start) <= 0:
            merged.append(action)
        elif action is pair[0]:
            first = min(pair, key=lambda a: (a.start, a.end))
            end = max(a.end for a in pair)
            merged.append(TimedAction(action.class_id, first.start, end, first.start_text, _end_text(end)))
    return merged


def repeated_segments(actions: list[TimedAction]) -> frozenset[int]:
    """The positions of the actions whose class is annotated exactly twice in ``actions`` (after the same-class
    merge: two segments apart). They follow the sequence rather than shape it (``extract_repeated_class =
    follow``): in the training videos such a class is incidental more often than not (docs/decisions.md).

    >>> acts = [TimedAction("c097", 0, 4), TimedAction("c061", 1, 9), TimedAction("c097", 20, 25)]
    >>> sorted(repeated_segments(acts)), sorted(repeated_segments(acts[:2]))
    ([0, 2], [])
    """
    count: dict[str, int] = {}
    for action in actions:
        count[action.class_id] = count.get(action.class_id, 0) + 1
    return frozenset(j for j, action in enumerate(actions) if count[action.class_id] == 2)


def _decision(
    j: int, action: TimedAction, seed: int, winner: _Growth, held: frozenset[int], followers: set[int],
    config: ExtractionConfig,
) -> Decision:  # fmt: skip
    """Why action ``j`` is in the winning sequence or out of it, and the term that decided."""
    if j == seed:
        return Decision(
            action, True, None, "the seed: the sequence grown from it is the longest", "seed (search order)"
        )
    if j in winner.filled:
        reason = (
            f"joined to reach {config.min_actions} actions: coherence {winner.joined[j].coherence:.2f} "
            f"at least {config.fill_min_coherence:g} (extract_fill_min_coherence)"
        )
        return Decision(action, True, winner.joined[j], reason, "top-up (extract_fill_min_coherence)")
    if j in held:
        scores = winner.scores(j)
        chosen = j in followers
        verdict_of = (
            f"coherence {scores.coherence:.2f} with the finished sequence"
            if chosen
            else _reason_left_out(scores, config).split(" (extract_")[0]
        )
        reason = f"a class annotated twice, left out of the search: {verdict_of} (extract_repeated_class)"
        return Decision(action, chosen, scores, reason, "repeated class (extract_repeated_class)")
    if j in winner.joined:
        scores = winner.joined[j]
        return Decision(action, True, scores, _reason_chosen(scores), deciding_term(scores, config, True))
    scores = winner.scores(j)
    return Decision(action, False, scores, _reason_left_out(scores, config), deciding_term(scores, config, False))


def extract_sequence(
    video_id: str, actions: list[TimedAction], relevance: Relevance, config: ExtractionConfig
) -> Extraction:
    """Algorithm 1 on one video's actions: the chosen sequence with a decision (and its reason) per action.

    >>> from backend.vilpact.semantics import SemanticTable
    >>> from backend.vilpact.tasks import TaskMap
    >>> book = {"c025": "reading_a_book", "c026": "reading_a_book", "c027": "reading_a_book", "c032": "reading_a_book"}
    >>> tasks = TaskMap({**book, "c106": "having_a_meal"})
    >>> sem = SemanticTable({a: {b: (0.9 if a in book and b in book else 0.3) for b in tasks.task_of} for a in tasks.task_of})
    >>> rel = Relevance(sem, tasks, dict(tasks.task_of))
    >>> acts = [TimedAction("c027", 0, 4), TimedAction("c106", 2, 6), TimedAction("c026", 3, 9),
    ...         TimedAction("c032", 5, 12), TimedAction("c025", 12, 14), TimedAction("c026", 60, 70)]
    >>> result = extract_sequence("V1", acts, rel, ExtractionConfig())
    >>> [a.class_id for a in result.chosen], result.kept
    (['c027', 'c026', 'c032', 'c025'], True)
    >>> [(d.action.class_id, d.scores.coherence) for d in result.decisions if d.scores]
    [('c106', 0.433333333333), ('c026', 0.966666666667), ('c032', 0.966666666667), ('c025', 0.966666666667), ('c026', 0.633333333333)]

    By hand: each book action joins with (0.9 + 1 + 1) / 3; the overlapping drink scores (0.3 + 1 + 0) / 3 and stays
    out; the last book action scores (0.9 + 0 + 1) / 3 = 0.63 but lies 46 s after the sequence, beyond the gap limit.
    >>> print(result.decisions[1].reason)
    coherence 0.43 below 0.6 (extract_min_coherence): another task
    >>> print(result.decisions[-1].reason)   # 46 s after the sequence ends at 14 s
    more than 20 s away from the sequence (extract_max_gap_s)
    """
    if config.same_class_merge == "pairs":
        actions = merge_same_class(actions)
    ordered = sorted(actions, key=release_order)
    if not ordered:
        return Extraction(video_id, (), False, "the video has no annotated actions")
    pairs = _Pairs.of(ordered, relevance, config.related_task_score)
    held = repeated_segments(ordered) if config.repeated_class == "follow" else frozenset()
    if len(held) == len(ordered):
        held = frozenset()  # only repeated classes: they are the search
    winner = _longest(ordered, pairs, config, top_up=False, held=held)
    if len(winner.members) < config.min_actions and config.fill_min_coherence < config.min_coherence:
        winner = _longest(ordered, pairs, config, top_up=True, held=held)  # too short to keep: top it up
    # a repeated class joins the finished sequence when it passes the ordinary test against it
    followers = {j for j in held if winner._parts(j)[0] >= config.min_coherence - 1e-9}
    seed = winner.members[0]
    decisions = [_decision(j, action, seed, winner, held, followers, config) for j, action in enumerate(ordered)]
    count = len(winner.members) + len(followers)
    kept = count >= config.min_actions
    verdict = (
        f"kept: a sequence of {count} actions"
        if kept
        else f"left out: its most coherent sequence has {count} action{'s' if count != 1 else ''}; "
        f"ViLPAct keeps sequences of at least {config.min_actions} (extract_min_actions)"
    )
    return Extraction(video_id, tuple(decisions), kept, verdict)


def build_relevance(
    names: dict[str, str],
    tasks: TaskMap,
    objects: dict[str, str | None] | None = None,
    word_source: str = "",
    embeddings: Any = None,
) -> Relevance:
    """The class-level lookups for ``names`` (class id -> action name): semantic table and each class's task."""
    from backend.vilpact.semantics import semantic_table

    objects = objects or {}
    task_of = {class_id: tasks.task(class_id, objects.get(class_id)) for class_id in names}
    return Relevance(semantic_table(names, word_source, embeddings), tasks, task_of)
