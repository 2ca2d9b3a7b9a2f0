"""STRIPS checks of action sequences under an open-world state (paper §3, "Multimodal knowledge base").

Each ViLPAct action class may carry STRIPS text (``KB/action_class.csv``; 121 of 157 classes)::

    action   Put(P,x,to)       pre      InHand(P,x)&Person(P)&Place(to)
    args     Clothes           post-Add At(x,to)&Reachable(P,x)     post-Del InHand(P,x)

``args`` binds parameters to objects: a bare value binds ``x`` (or the first parameter after ``P``
when there is no ``x``), ``to=Table`` binds ``to``. ``P`` is the one person of the video. A literal whose
variables are not all bound (for example ``At(x,to)`` when ``to`` is unknown) says nothing about a
concrete object and is skipped.

Quirks of the release handled here: c108's post-Add starts with ``*`` (stripped); c150's ``pre`` uses
``x`` although its action is ``Run(P,at)`` (a variable that is not a parameter counts as unbound);
c146–c156 have empty ``args`` (so only literals about ``P`` are checked); some rows have no post-Del.

Simulation (open world). The state maps ground literals to True/False; anything absent is unknown.
A step is a *violation* only when one of its preconditions is known False, i.e. contradicts what earlier
steps established; an unknown precondition is assumed to have held. After a step its preconditions are
known True (the step happened), then post-Del literals become False and post-Add literals True. A class
without STRIPS is *unknown*, never a violation; since it may have changed its object in ways we cannot
see, what was known about that object is forgotten.

>>> open_book = StripsAction.parse("c027", "Open(P,x)", "IsClosed(x)&Person(P)", "IsOpen(x)", "IsClosed(x)", "Book")
>>> close_book = StripsAction.parse("c025", "Close(P,x)", "IsOpen(x)&Person(P)", "IsClosed(x)", "IsOpen(x)", "Book")
>>> kb = {"c027": open_book, "c025": close_book}
>>> [s.status for s in simulate(["c027", "c025"], kb)]          # open, then close: valid
['ok', 'ok']
>>> steps = simulate(["c027", "c027"], kb)                       # opening an open book
>>> steps[1].status, steps[1].contradicted
('violation', ('IsClosed(book)',))
>>> [s.status for s in simulate(["c026", "c027"], kb)]          # c026 (holding a book) has no STRIPS
['unknown', 'ok']
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from backend.planning.catalog import Catalog

if TYPE_CHECKING:
    from backend.planning.questions import PlanningQuestion

Literal = tuple[str, tuple[str, ...]]
PERSON = "person"
_LITERAL = re.compile(r"^\s*\*?\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(([^()]*)\)\s*$")


def parse_literal(text: str) -> Literal:
    """``InHand(P,x)`` -> ``("InHand", ("P", "x"))``; a leading ``*`` (quirk of c108) is dropped.

    >>> parse_literal("*CapacityIncreased(to)")
    ('CapacityIncreased', ('to',))
    """
    match = _LITERAL.match(text)
    if not match:
        raise ValueError(f"not a STRIPS literal: {text!r}")
    args = tuple(a.strip() for a in match.group(2).split(",") if a.strip())
    return match.group(1), args


def parse_conjunction(text: str | None) -> tuple[Literal, ...]:
    """``A(x)&B(P,x)`` -> two literals; empty or missing text -> none."""
    if not text or not text.strip():
        return ()
    return tuple(parse_literal(part) for part in text.split("&") if part.strip())


def parse_bindings(params: tuple[str, ...], args: str | None) -> dict[str, str]:
    """``Clothes`` binds x, ``to=Table`` binds ``to``; values are lower-cased object names.

    >>> parse_bindings(("P", "x", "to"), "to=Table")
    {'P': 'person', 'to': 'table'}
    >>> parse_bindings(("P", "at"), "Bed")
    {'P': 'person', 'at': 'bed'}
    """
    bindings = {"P": PERSON}
    for part in (args or "").split("&"):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.partition("=")
        if sep:
            bindings[name.strip()] = value.strip().lower()
        else:
            free = [p for p in params if p != "P"]
            target = "x" if "x" in params else (free[0] if free else "x")
            bindings[target] = part.lower()
    return bindings


@dataclass(frozen=True)
class StripsAction:
    class_id: str
    pre: tuple[Literal, ...]
    add: tuple[Literal, ...]
    delete: tuple[Literal, ...]
    bindings: Mapping[str, str]

    @classmethod
    def parse(
        cls, class_id: str, action: str, pre: str | None, post_add: str | None, post_del: str | None, args: str | None
    ) -> StripsAction:
        _, params = parse_literal(action)
        return cls(
            class_id,
            parse_conjunction(pre),
            parse_conjunction(post_add),
            parse_conjunction(post_del),
            parse_bindings(params, args),
        )

    def ground(self, literals: tuple[Literal, ...]) -> list[Literal]:
        """Literals with every variable bound (the others say nothing about a concrete object)."""
        out = []
        for name, args in literals:
            if all(a in self.bindings for a in args):
                out.append((name, tuple(self.bindings[a] for a in args)))
        return out


def strips_table(catalog: Catalog) -> dict[str, StripsAction]:
    """Parsed STRIPS of every class that has it (121 of 157 in the release)."""
    table = {}
    for c in catalog.classes.values():
        if c.strips_action and c.pre:
            table[c.id] = StripsAction.parse(c.id, c.strips_action, c.pre, c.post_add, c.post_del, c.args)
    return table


def show(literal: Literal) -> str:
    return f"{literal[0]}({','.join(literal[1])})"


@dataclass(frozen=True)
class Step:
    index: int
    class_id: str
    status: str  # ok | violation | unknown
    contradicted: tuple[str, ...] = ()


def simulate(
    class_ids: Sequence[str], table: Mapping[str, StripsAction], objects: Mapping[str, str | None] | None = None
) -> list[Step]:
    """Run ``class_ids`` in order from an empty (all unknown) state; one :class:`Step` per action.

    ``objects`` maps class ids to their object (the catalog's ``object``), used to forget facts about the
    object of a class without STRIPS.
    """
    state: dict[Literal, bool] = {}
    steps = []
    for index, class_id in enumerate(class_ids):
        action = table.get(class_id)
        if action is None:
            obj = (objects or {}).get(class_id)
            if obj:
                obj = obj.lower()
                for literal in [lit for lit in state if obj in lit[1]]:
                    del state[literal]
            steps.append(Step(index, class_id, "unknown"))
            continue
        pre = action.ground(action.pre)
        contradicted = tuple(show(lit) for lit in pre if state.get(lit) is False)
        for lit in pre:
            state[lit] = True
        for lit in action.ground(action.delete):
            state[lit] = False
        for lit in action.ground(action.add):
            state[lit] = True
        steps.append(Step(index, class_id, "violation" if contradicted else "ok", contradicted))
    return steps


@dataclass(frozen=True)
class CandidateCheck:
    status: str  # executable | violation | unknown
    first_violation: int | None = None  # position in the candidate
    violated_class: str | None = None
    contradicted: tuple[str, ...] = ()
    unknown_steps: int = 0

    def describe(self, catalog: Catalog | None = None) -> str:
        if self.status == "violation":
            assert self.first_violation is not None  # set with every violation (check_candidate)
            name = catalog.name(self.violated_class) if catalog and self.violated_class else self.violated_class
            return f"violation at step {self.first_violation + 1} ({name}): needs {', '.join(self.contradicted)}"
        if self.status == "unknown":
            return f"no contradiction, {self.unknown_steps} step(s) without STRIPS"
        return "executable"


def check_candidate(
    observed: Sequence[str],
    candidate: Sequence[str],
    table: Mapping[str, StripsAction],
    objects: Mapping[str, str | None] | None = None,
) -> CandidateCheck:
    """Simulate observed + candidate; judge only the candidate's steps (the observed part is ground truth).

    >>> kb = {"c025": StripsAction.parse("c025", "Close(P,x)", "IsOpen(x)&Person(P)", "IsClosed(x)", "IsOpen(x)", "Book")}
    >>> check_candidate(["c025"], ["c025"], kb).describe()
    'violation at step 1 (c025): needs IsOpen(book)'
    >>> check_candidate([], ["c025", "c026"], kb).status
    'unknown'
    """
    steps = simulate(list(observed) + list(candidate), table, objects)[len(observed) :]
    for position, step in enumerate(steps):
        if step.status == "violation":
            return CandidateCheck("violation", position, step.class_id, step.contradicted)
    unknown = sum(1 for s in steps if s.status == "unknown")
    return CandidateCheck("unknown" if unknown else "executable", unknown_steps=unknown)


def check_question(
    question: PlanningQuestion, catalog: Catalog, table: Mapping[str, StripsAction] | None = None
) -> list[CandidateCheck]:
    """The check of each of a question's choices."""
    table = strips_table(catalog) if table is None else table
    objects = {cid: c.object for cid, c in catalog.classes.items()}
    return [check_candidate(question.observed, choice, table, objects) for choice in question.choices]


def distractor_report(questions: Sequence[PlanningQuestion], catalog: Catalog) -> dict[str, Any]:
    """How many released distractors (and answers) are not executable under the simulation."""
    table = strips_table(catalog)
    distractors = violating = answers_violating = unknown = 0
    for q in questions:
        for index, check in enumerate(check_question(q, catalog, table)):
            if index == q.answer_index:
                answers_violating += check.status == "violation"
                continue
            distractors += 1
            violating += check.status == "violation"
            unknown += check.status == "unknown"
    return {
        "questions": len(questions),
        "distractors": distractors,
        "distractors_not_executable": violating,
        "distractors_unknown": unknown,
        "answers_not_executable": answers_violating,
    }
