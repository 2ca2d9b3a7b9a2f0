"""CoFe's greedy selection of in-context examples (section 3.2, equations 1-2, Algorithm 1, section 4.1).

For a test case (X, Y) and a candidate (X_c, Y_c) from the bank B, with C the examples chosen so far::

    Match(T, T') = w_p |P(T) ∩ P(T')| + w_s |S(T) ∩ [S(T') - S(C)]| - w_c depth(T')      (1)
    score_c      = Match(X, X_c) + Match(Y, Y_c)                                           (2)

Algorithm 1 adds, n times, the candidate with the highest score; a candidate holding the test case's
aiming combination is never chosen.
Decisions where the paper is silent or disagrees with itself (see docs/decisions.md):

- the complexity penalty uses w_c, as equation 1 says (Algorithm 1 writes w_p there, a typo: with
  w_p = 100 it would swamp primitive matching);
- the two sides are scored separately and added, as equation 2 says, so the penalty is
  w_c (depth(X_c) + depth(Y_c)); a feature key carries its side;
- an example already in C is not chosen again (Algorithm 1 leaves this implicit);
- ties go to the earlier bank line (Algorithm 1 replaces the candidate only on a strictly higher score);
- Algorithm 1 starts each step from ``max_score = 0``, so once nothing scores above 0 (everything covered
  under the S(C) term, or w_s = 0) it would add ``None``; we take the best remaining candidate instead, so
  every test case gets n examples (the paper's prompts all have 10);
- a test primitive counts only until C covers it (``primitive_once``): equation 1 read literally counts it
  again for every example and left 24% of LongChain's primitives uncovered on the shared data, far from
  the near-100% T_L coverage of Table 2 and the primitive coverage principle (section 2.1), which this
  reading reproduces (99.8% LongChain, 100% PhraReco);
- the ``- S(C)`` term (diversity) is on only in the high-diversity preset (section 4.1);
- ``matching`` drops one term of equation 2 (:mod:`backend.icl.matching`: ``source_only`` is appendix D's
  Table 6, ``target_only`` section 5 / appendix C.6); the complexity penalty then counts the matched side's
  depth only, and the aiming-combination exclusion still looks at both sides (it is the held-out principle,
  not a matching term).

The fast path keeps, per bank example, integer counts of shared primitives and of still-uncovered shared
structures, built from the inverted index; after each pick it decrements the counts of exactly the examples
holding a newly covered structure. :func:`reference_select` is the plain full-scan Algorithm 1 that the tests
and benchmarks/icl_selection.py compare it with.

Worked example (bank lines 0-2, test "Emma ate"):

>>> from backend.icl.data import make_example
>>> bank = [make_example({"input": i, "output": o}) for i, o in [
...     ("Liam ate .", "EAT ( LIAM , NONE , NONE )"),
...     ("Emma slept .", "SLEEP ( EMMA , NONE , NONE )"),
...     ("Emma ate the cake .", "EAT ( EMMA , CAKE , NONE )")]]
>>> test = make_example({"input": "Emma ate .", "output": "EAT ( EMMA , NONE , NONE )"})
>>> index = build_index(bank)
>>> [(c.example_id, c.primitive_coverage, c.structural_similarity) for c in cofe_select(index, test, PRESETS["full_similarity"], n=3)]
[(2, 5, 13), (0, 0, 14), (1, 0, 14)]

Line 2 shares all five primitives (X: Emma, ate; Y: EMMA, EAT, NONE), so 500 + 13 beats 300 + 14 (lines 0
and 1 share three each); once it covers them, lines 0 and 1 add no primitive, tie on 14 structures and the
earlier line goes first. With the ``- S(C)`` term (high diversity), line 2 already covered their
shared ``active-verb[ate]``, ``PRED-FUNC[EAT]``, ... so each keeps only the 7 structures line 2 lacks
(tests/test_icl_selection.py counts them by hand).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from backend.errors import ValidationError
from backend.icl.data import IclExample
from backend.icl.index import BankIndex, build_index, side_keys
from backend.icl.matching import MATCHING, on_sides

__all__ = ["CoFeWeights", "PRESETS", "Chosen", "cofe_select", "reference_select", "aiming_keys", "build_index"]


@dataclass(frozen=True)
class CoFeWeights:
    """Equation 1's weights and switches. ``diversity`` adds the ``- S(C)`` term; ``deep_structures`` puts
    T_S^>1 into S(T) (off for the rough-structural-similarity setting); ``primitive_once`` counts a test
    primitive only until an example in C covers it (the primitive coverage principle, section 2.1; off is
    equation 1 read literally, which left a quarter of LongChain's primitives uncovered on the shared data);
    ``matching`` says which terms of equation 2 count (``both``, ``source_only``, ``target_only``)."""

    w_p: float = 100.0
    w_s: float = 1.0
    w_c: float = 0.0
    diversity: bool = False
    deep_structures: bool = True
    primitive_once: bool = True
    matching: str = "both"

    def __post_init__(self) -> None:
        if self.matching not in MATCHING:
            raise ValidationError(f"unknown matching {self.matching!r}; choose one of {', '.join(MATCHING)}")

    @property
    def sides(self) -> tuple[str, ...]:
        return MATCHING[self.matching]

    def with_changes(self, **changes: Any) -> CoFeWeights:
        return replace(self, **changes)


PRESETS: dict[str, CoFeWeights] = {
    "full_similarity": CoFeWeights(),
    "rough_similarity": CoFeWeights(deep_structures=False),
    "primitive_coverage": CoFeWeights(w_s=0.0),
    "high_diversity": CoFeWeights(diversity=True),
    "low_complexity": CoFeWeights(w_c=0.01),
    "high_complexity": CoFeWeights(w_c=-0.01),
}


WEIGHT_FIELDS = ("w_p", "w_s", "w_c", "diversity", "primitive_once", "matching")


def preset_weights(setting: str, source: object) -> CoFeWeights | None:
    """The preset's weights for ``setting`` with every field of ``WEIGHT_FIELDS`` that ``source`` (parsed CLI
    arguments, a tab's request) sets to something other than None; None for non-CoFe selectors."""
    weights = PRESETS.get(setting)
    if weights is None:
        if getattr(source, "matching", None) not in (None, "both"):
            raise ValidationError(f"matching one side only is a CoFe variant; {setting!r} is a baseline")
        return None
    changes = {k: getattr(source, k) for k in WEIGHT_FIELDS if getattr(source, k, None) is not None}
    return weights.with_changes(**changes)


PRESET_HELP = {
    "full_similarity": "section 4.1: w_p=100, w_s=1, w_c=0, no S(C) term (the paper's default CoFe)",
    "rough_similarity": "section 4.2: as full similarity with S(T) = T_S^1 only",
    "primitive_coverage": "Table 1 baseline: primitives only (w_s=0)",
    "high_diversity": "section 4.3: full similarity plus the S(C) term",
    "low_complexity": "section 4.3: w_c=0.01",
    "high_complexity": "section 4.3: w_c=-0.01",
}


@dataclass(frozen=True)
class Chosen:
    """One selected example: its bank line (0-based), the integer terms of equation 1 when it was picked
    (``primitive_coverage`` and ``structural_similarity``, named for section 3.2's principles; appendix C.3
    calls them prim_score and stru_score), and the test case's features it covered first."""

    example_id: int
    primitive_coverage: int
    structural_similarity: int
    score: float
    new_primitives: tuple[str, ...] = field(default=())
    new_structures: tuple[str, ...] = field(default=())


# ---------------------------------------------------------------- aiming combinations

# Category -> one-depth patterns (side, parent, child): a one-depth structure of the test case whose parent is
# ``parent`` and which has a child ``child`` is an aiming combination (figure 2; appendix E's T_A).
AIMING_PATTERNS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "phrareco": (("X", "subject", "pp-mod"), ("Y", "AGENT", "PP-FUNC")),
    "longchain": (),
    "deepnest": (),
}
AIMING_HELP = {
    "phrareco": "a prepositional phrase on the subject (source: subject -> pp-mod; target: AGENT -> PP-FUNC)",
    "longchain": "a clause chain longer than any bank example's (the bank has at most 2 recursions, appendix A); "
    "S(T) stops at depth 2 (appendix C.4), so no bank example holds it",
    "deepnest": "prepositional nesting deeper than any bank example's; no bank example holds it",
}


def aiming_keys(test: IclExample) -> set[str]:
    """The test case's aiming combinations as side-prefixed one-depth structure keys.

    >>> from backend.icl.data import make_example
    >>> t = make_example({"input": "A dog in a house slept .", "output": "SLEEP ( IN ( DOG , HOUSE ) , NONE , NONE )",
    ...                   "category": "phrareco"})
    >>> sorted(aiming_keys(t))
    ['X:subject[pp-mod]', 'Y:AGENT[PP-FUNC]']
    """
    patterns = AIMING_PATTERNS.get(test.category.lower(), ())
    keys = set()
    for side, feats in (("X", test.source), ("Y", test.target)):
        for key in feats.structures1:
            parent, _, rest = key.partition("[")
            children = rest[:-1].split(" ")
            if any(s == side and parent == p and c in children for s, p, c in patterns):
                keys.add(f"{side}:{key}")
    return keys


def excluded_mask(index: BankIndex, test: IclExample) -> np.ndarray:
    """True for bank examples that hold one of the test case's aiming combinations (never chosen)."""
    mask = np.zeros(len(index), dtype=bool)
    for fid in index.structures.ids(aiming_keys(test)):
        mask[index.structures.posting(int(fid))] = True
    return mask


# ---------------------------------------------------------------- selection


def cofe_select(index: BankIndex, test: IclExample, weights: CoFeWeights, n: int = 10) -> list[Chosen]:
    """Algorithm 1 with equation 1's terms, over the inverted index (see the module docstring)."""
    size = len(index)
    prims, structs = index.primitives, index.structures
    p_fids = prims.ids(on_sides(side_keys(test.source, test.target, "P"), weights.sides))
    s_fids = structs.ids(on_sides(side_keys(test.source, test.target, "S", weights.deep_structures), weights.sides))
    prim_count = prims.counts(p_fids, size)
    struct_count = structs.counts(s_fids, size)
    p_open, s_open = set(p_fids.tolist()), set(s_fids.tolist())  # test features nothing chosen covers yet
    blocked = excluded_mask(index, test)
    penalty = weights.w_c * index.depth(weights.sides)
    chosen: list[Chosen] = []
    for _ in range(min(n, size)):
        score = weights.w_p * prim_count + weights.w_s * struct_count - penalty
        score[blocked] = -np.inf
        best = int(np.argmax(score))
        if blocked[best]:
            break
        new_p = [f for f in prims.features_of(best).tolist() if f in p_open]
        new_s = [f for f in structs.features_of(best).tolist() if f in s_open]
        chosen.append(
            Chosen(
                best,
                int(prim_count[best]),
                int(struct_count[best]),
                float(score[best]),
                tuple(sorted(prims.keys[f] for f in new_p)),
                tuple(sorted(structs.keys[f] for f in new_s)),
            )
        )
        blocked[best] = True
        if weights.primitive_once and new_p:
            prim_count -= prims.counts(np.asarray(new_p), size)
        if weights.diversity and new_s:
            struct_count -= structs.counts(np.asarray(new_s), size)
        p_open.difference_update(new_p)
        s_open.difference_update(new_s)
    return chosen


def reference_select(bank: list[IclExample], test: IclExample, weights: CoFeWeights, n: int = 10) -> list[int]:
    """Algorithm 1 as printed (with eq. 1's w_c): every step scans the whole bank. For tests and benchmarks."""
    p_test = on_sides(side_keys(test.source, test.target, "P"), weights.sides)
    s_test = on_sides(side_keys(test.source, test.target, "S", weights.deep_structures), weights.sides)
    aims = aiming_keys(test)
    chosen: list[int] = []
    p_covered: set[str] = set()
    s_covered: set[str] = set()
    for _ in range(min(n, len(bank))):
        max_score, candidate = -math.inf, None
        for i, example in enumerate(bank):
            if i in chosen or (aims and aims & side_keys(example.source, example.target, "S1")):
                continue
            primitive_coverage = 0
            for element in side_keys(example.source, example.target, "P"):
                if element in p_test and not (weights.primitive_once and element in p_covered):
                    primitive_coverage += 1
            structural_similarity = 0
            for element in side_keys(example.source, example.target, "S", weights.deep_structures):
                if element in s_test and not (weights.diversity and element in s_covered):
                    structural_similarity += 1
            depth = float(("X" in weights.sides) * example.source.depth + ("Y" in weights.sides) * example.target.depth)
            score = weights.w_p * primitive_coverage + weights.w_s * structural_similarity - weights.w_c * depth
            if score > max_score:
                max_score, candidate = score, i
        if candidate is None:
            break
        chosen.append(candidate)
        picked = bank[candidate]
        p_covered |= side_keys(picked.source, picked.target, "P") & p_test
        s_covered |= side_keys(picked.source, picked.target, "S", weights.deep_structures) & s_test
    return chosen
