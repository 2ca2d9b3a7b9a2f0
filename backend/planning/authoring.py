"""Authoring new planning questions from a sequence with an intent (paper §3, "Planning evaluation").

The observed part is the actions that start inside the first 20% (the sequence's observed window); the six
candidates are the true future and five distractors made the way the released ones were: 2,534 of the
2,550 released distractors differ from the answer in exactly one position. Each distractor replaces one
action of the future, preferring a substitute that looks plausible (same object, then same verb, then any
class), and is never a sequence that is itself a true future of that intent in the knowledge base, nor a
repeat of another candidate. New questions are ``pending`` and go to the annotator pool; they count once
validated (:mod:`backend.planning.validation`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from backend import assignment
from backend.accounts.auth import require_role
from backend.errors import NotFound, ValidationError
from backend.planning.catalog import Catalog, load_catalog
from backend.planning.knowledge import build_knowledge_base, observed_count
from backend.planning.questions import N_CHOICES, PlanningQuestion, insert_questions
from backend.storage import Database, audit
from backend.vilpact.sequences import get_sequence


def substitutes(class_id: str, catalog: Catalog) -> list[list[str]]:
    """Replacement classes in preference tiers: same object, same verb, the rest (each sorted by id).

    >>> from backend.planning.catalog import ActionClass
    >>> cat = Catalog.of([ActionClass("c1", "Open book", "open", "book"), ActionClass("c2", "Close book", "close", "book"),
    ...                   ActionClass("c3", "Open door", "open", "door"), ActionClass("c4", "Sneeze")])
    >>> substitutes("c1", cat)
    [['c2'], ['c3'], ['c4']]
    """
    me = catalog.classes[class_id]
    same_object, same_verb, rest = [], [], []
    for other in sorted(catalog.classes.values(), key=lambda c: c.id):
        if other.id == class_id:
            continue
        if me.object and other.object == me.object:
            same_object.append(other.id)
        elif me.verb and other.verb == me.verb:
            same_verb.append(other.id)
        else:
            rest.append(other.id)
    return [same_object, same_verb, rest]


def make_distractors(
    future: Sequence[str],
    catalog: Catalog,
    forbidden: set[tuple[str, ...]],
    rng: random.Random,
    count: int = N_CHOICES - 1,
) -> list[tuple[str, ...]]:
    """``count`` distinct one-position substitutions of ``future`` that are not in ``forbidden``.

    Positions are spread over the future (a random order, cycled); at each position the first preference
    tier that still has an unused substitute is used, the substitute drawn at random within the tier.

    >>> from backend.planning.catalog import ActionClass
    >>> cat = Catalog.of([ActionClass(f"c{i}", f"a{i}", "v", "o" if i < 4 else None) for i in range(9)])
    >>> out = make_distractors(("c0", "c1"), cat, {("c0", "c1"), ("c2", "c1")}, random.Random(0))
    >>> len(out), len(set(out)), all(sum(a != b for a, b in zip(d, ("c0", "c1"))) == 1 for d in out)
    (5, 5, True)
    >>> ("c2", "c1") in out
    False
    """
    if not future:
        raise ValidationError("the sequence has no future actions after its observed window")
    taken = set(forbidden) | {tuple(future)}
    positions = list(range(len(future)))
    rng.shuffle(positions)
    out: list[tuple[str, ...]] = []
    attempts = 0
    while len(out) < count:
        attempts += 1
        if attempts > count * len(future) * 4 + 20:
            raise ValidationError("could not find enough distinct distractors for this sequence")
        position = positions[len(out) % len(positions)] if attempts <= count else rng.choice(positions)
        for tier in substitutes(future[position], catalog):
            pool = [c for c in tier if (_cand := (*future[:position], c, *future[position + 1 :])) not in taken]
            if pool:
                choice = rng.choice(pool)
                candidate = (*future[:position], choice, *future[position + 1 :])
                taken.add(candidate)
                out.append(candidate)
                break
    return out


def author_question(
    database: Database,
    username: str | None,
    sequence_id: str,
    intent: str | None = None,
    *,
    seed: int = 0,
    annotators_per_question: int = 3,
) -> PlanningQuestion:
    """A reviewer authors a question (see :func:`create_question`)."""
    username = require_role(database, username, "reviewer").username
    return create_question(
        database, username, sequence_id, intent, seed=seed, annotators_per_question=annotators_per_question
    )


def create_question(
    database: Database,
    actor: str,
    sequence_id: str,
    intent: str | None = None,
    *,
    seed: int = 0,
    annotators_per_question: int = 3,
) -> PlanningQuestion:
    """Build, store (``pending``) and queue for validation a question from ``sequence_id`` (no role check:
    for the trusted CLI and :func:`author_question`)."""
    catalog = load_catalog(database)
    sequence = get_sequence(database, sequence_id)
    if intent is None:
        row = database.query_one(
            "SELECT high_level_intent FROM annotations WHERE sequence_id = ? ORDER BY id LIMIT 1", (sequence_id,)
        )
        if row is None:
            raise NotFound(f"sequence {sequence_id!r} has no intent yet; give one")
        intent = row["high_level_intent"]
    intent = intent.strip()
    if not intent:
        raise ValidationError("the intent is empty")
    if sequence.ob_end_frame is None:
        raise ValidationError(f"sequence {sequence_id!r} has no observed window")
    ids = [a.class_id for a in sequence.actions]
    split = observed_count([a.start for a in sequence.actions], sequence.ob_end_frame)
    observed, future = tuple(ids[:split]), tuple(ids[split:])
    same_intent = {e.future for e in build_knowledge_base(database) if intent in e.intents}
    rng = random.Random(f"{seed}:{sequence_id}:{intent}")
    choices = [future, *make_distractors(future, catalog, same_intent, rng)]
    rng.shuffle(choices)
    existing = database.scalar("SELECT count(*) FROM planning_questions WHERE id LIKE ?", (f"{sequence_id}-q%",))
    question = PlanningQuestion(
        id=f"{sequence_id}-q{existing + 1}",
        video_id=sequence.video_id,
        sequence_id=sequence_id,
        ob_start_frame=sequence.ob_start_frame or 0,
        ob_end_frame=sequence.ob_end_frame,
        observed=observed,
        intent=intent,
        choices=tuple(choices),
        answer_index=choices.index(future),
        scene=sequence.scene,
        source="authored",
        status="pending",
    )
    with database.write() as db:
        insert_questions(db, [question], actor)
        assignment.add_tasks(db, "planning", [question.id], annotators_per_question)
        audit(db, actor, "planning.author", question.id, {"sequence_id": sequence_id, "intent": intent})
    return question
