"""Parse trees and the notations of CoFe section 3.2 / appendix E.

A tree's internal nodes carry grammar categories and its leaves are words. From a tree ``T``:

- ``T_L``: the leaves, i.e. the primitives ``P(T)``;
- ``T_N``: the internal nodes' categories;
- ``T_S^1``: one-depth sub-structures, a parent with all its children (written ``parent[child child]``);
- ``T_S^>1``: complete sub-structures (CSS, appendix E) of depth 2, the most appendix C.4 allows: a parent
  with all its children, where a non-empty subset of its internal children is expanded one level;
- ``depth``: how complex the tree is (see :func:`recursion_depth`).

``S(T) = T_S^1 ∪ T_S^>1`` are the partial structures of equation 1.

>>> t = parse_logical_form("OBSERVE ( JACKSON , BABY , NONE )")
>>> print(t.pretty())
CLAUSE[PRED-FUNC[OBSERVE] AGENT[JACKSON] THEME[BABY] RECIPIENT[NONE]]
>>> sorted(tree_features(t).primitives)
['BABY', 'JACKSON', 'NONE', 'OBSERVE']
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from backend.errors import CompStudioError


class TreeError(CompStudioError):
    """A logical form, sentence or supplied tree that cannot be turned into a parse tree."""


@dataclass(frozen=True)
class Tree:
    label: str
    children: tuple[Tree, ...] = ()

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def leaves(self) -> Iterator[str]:
        if self.is_leaf:
            yield self.label
        for child in self.children:
            yield from child.leaves()

    def nodes(self) -> Iterator[Tree]:
        yield self
        for child in self.children:
            yield from child.nodes()

    def pretty(self) -> str:
        if self.is_leaf:
            return self.label
        return f"{self.label}[{' '.join(child.pretty() for child in self.children)}]"

    def to_json(self) -> Any:
        """Nested lists ``[label, child, ...]``; a leaf is its word (the format :func:`tree_from_json` reads)."""
        if self.is_leaf:
            return self.label
        return [self.label, *(child.to_json() for child in self.children)]


def node(label: str, *children: Tree | str) -> Tree:
    return Tree(label, tuple(Tree(c) if isinstance(c, str) else c for c in children))


def tree_from_json(value: Any) -> Tree:
    """Read a user-supplied tree: a string is a leaf, ``[label, child, ...]`` an internal node.

    >>> tree_from_json(["S", ["NP", "Jackson"], ["VP", "slept"]]).pretty()
    'S[NP[Jackson] VP[slept]]'
    """
    if isinstance(value, str) and value.strip():
        return Tree(value.strip())
    if isinstance(value, list) and len(value) >= 2 and isinstance(value[0], str) and value[0].strip():
        return Tree(value[0].strip(), tuple(tree_from_json(child) for child in value[1:]))
    raise TreeError(f"a tree is a word or [label, child, ...] with at least one child, not {value!r}")


# ---------------------------------------------------------------- target side: CoFe logical forms

_CONCATS = {"CCOMP", "XCOMP"}
_PREPOSITIONS = {"IN", "ON", "BESIDE"}
_ROLES = ("AGENT", "THEME", "RECIPIENT")


class _Tokens:
    def __init__(self, text: str):
        self.items = text.split()
        self.pos = 0

    def peek(self, ahead: int = 0) -> str | None:
        index = self.pos + ahead
        return self.items[index] if index < len(self.items) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            want = f"{expected!r}" if expected else "a token"
            raise TreeError(f"expected {want} at token {self.pos + 1}, found {token!r}")
        self.pos += 1
        return token


def parse_logical_form(text: str) -> Tree:
    """Parse a CoFe logical form into the target grammar of appendix A.

    ``CLAUSE -> PRED-FUNC ( AGENT , THEME , RECIPIENT )``, ``CLAUSE -> CLAUSE CP-CONCAT CLAUSE`` (chains
    nest to the right), ``AGENT|THEME|RECIPIENT -> word | PP-FUNC`` and
    ``PP-FUNC -> PP-CONCAT ( PP-S , PP-FUNC ) | word``. A lone word (the bank's primitive examples, such
    as ``TOUCH``) is ``PRIMITIVE -> word``.

    >>> parse_logical_form("SCREAM ( ON ( BABY , IN ( TRAY , HOUSE ) ) , NONE , NONE )").pretty()
    'CLAUSE[PRED-FUNC[SCREAM] AGENT[PP-FUNC[PP-CONCAT[ON] PP-S[BABY] PP-FUNC[PP-CONCAT[IN] PP-S[TRAY] PP-FUNC[HOUSE]]]] THEME[NONE] RECIPIENT[NONE]]'
    """
    tokens = _Tokens(text)
    if not tokens.items:
        raise TreeError("empty logical form")
    if len(tokens.items) == 1 and _is_word(tokens.items[0]):
        return node("PRIMITIVE", tokens.items[0])
    tree = _clause_chain(tokens)
    if tokens.peek() is not None:
        raise TreeError(f"unexpected {tokens.peek()!r} at token {tokens.pos + 1}")
    return tree


def _clause_chain(tokens: _Tokens) -> Tree:
    clause = _clause(tokens)
    if tokens.peek() in _CONCATS:
        concat = tokens.take()
        return node("CLAUSE", clause, node("CP-CONCAT", concat), _clause_chain(tokens))
    return clause


def _clause(tokens: _Tokens) -> Tree:
    predicate = tokens.take()
    if not _is_word(predicate) or predicate in _PREPOSITIONS or predicate in _CONCATS:
        raise TreeError(f"expected a predicate at token {tokens.pos}, found {predicate!r}")
    tokens.take("(")
    arguments = []
    for index, role in enumerate(_ROLES):
        if index:
            tokens.take(",")
        arguments.append(node(role, _argument(tokens)))
    tokens.take(")")
    return node("CLAUSE", node("PRED-FUNC", predicate), *arguments)


def _argument(tokens: _Tokens) -> Tree | str:
    word = tokens.take()
    if word in _PREPOSITIONS and tokens.peek() == "(":
        tokens.take("(")
        head = _argument(tokens)
        tokens.take(",")
        modifier = _argument(tokens)
        tokens.take(")")
        modifier_node = modifier if isinstance(modifier, Tree) else node("PP-FUNC", modifier)
        return node("PP-FUNC", node("PP-CONCAT", word), node("PP-S", head), modifier_node)
    if not _is_word(word):
        raise TreeError(f"expected an argument at token {tokens.pos}, found {word!r}")
    return word


def _is_word(token: str) -> bool:
    return token not in {"(", ")", ","}


# ---------------------------------------------------------------- notations of section 3.2


@dataclass(frozen=True)
class TreeFeatures:
    primitives: frozenset[str]
    internal: frozenset[str]
    structures1: frozenset[str]
    structures2: frozenset[str]
    depth: int
    aiming_keys: frozenset[str] = field(default=frozenset())

    @property
    def structures(self) -> frozenset[str]:
        return self.structures1 | self.structures2


def one_depth_key(tree: Tree) -> str:
    return f"{tree.label}[{' '.join(child.label for child in tree.children)}]"


def two_depth_keys(tree: Tree, keys1: dict[int, str] | None = None) -> list[str]:
    """The depth-2 complete sub-structures rooted at ``tree`` (one per non-empty subset of its internal children).

    >>> two_depth_keys(node("S", node("A", "x"), "y", node("B", "z")))
    ['S[A[x] y B]', 'S[A y B[z]]', 'S[A[x] y B[z]]']
    """
    children = tree.children
    internal = [i for i, child in enumerate(children) if child.children]
    if not internal:
        return []
    expanded = [
        (keys1.get(id(child)) if keys1 is not None else None) or one_depth_key(child) if child.children else ""
        for child in children
    ]
    plain = [child.label for child in children]
    keys = []
    for size in range(1, len(internal) + 1):
        for chosen in itertools.combinations(internal, size):
            parts = plain.copy()
            for i in chosen:
                parts[i] = expanded[i]
            keys.append(f"{tree.label}[{' '.join(parts)}]")
    return keys


def recursion_depth(tree: Tree) -> int:
    """1 + the most recursive rule applications on one root-to-leaf path.

    A node counts as a recursive application when a node below it on the path carries the same category
    (``CLAUSE -> CLAUSE CP-CONCAT CLAUSE``, ``PP-FUNC -> PP-CONCAT ( PP-S , PP-FUNC )`` and their source-side
    twins). So a plain clause has depth 1, and the bank's most recursive examples (2 recursions,
    appendix A) have depth 3, as section 4.3 states; both sides of one example get the same depth
    (appendix C.2). On a path, that count is the number of internal nodes minus their distinct categories.

    >>> recursion_depth(parse_logical_form("A ( B , NONE , NONE ) CCOMP C ( D , NONE , NONE )"))
    2
    """
    best = 0
    counts: dict[str, int] = {}

    def walk(current: Tree, length: int) -> None:
        nonlocal best
        if not current.children:
            best = max(best, length - len(counts))
            return
        counts[current.label] = counts.get(current.label, 0) + 1
        for child in current.children:
            walk(child, length + 1)
        counts[current.label] -= 1
        if not counts[current.label]:
            del counts[current.label]

    walk(tree, 0)
    return best + 1


def tree_features(tree: Tree) -> TreeFeatures:
    """P, T_N, T_S^1, T_S^>1 and depth of one tree (section 3.2, appendix E)."""
    internal_nodes = [n for n in tree.nodes() if n.children]
    keys1 = {id(n): one_depth_key(n) for n in internal_nodes}
    structures2: set[str] = set()
    for current in internal_nodes:
        structures2.update(two_depth_keys(current, keys1))
    return TreeFeatures(
        primitives=frozenset(tree.leaves()),
        internal=frozenset(n.label for n in internal_nodes),
        structures1=frozenset(keys1.values()),
        structures2=frozenset(structures2),
        depth=recursion_depth(tree),
    )
