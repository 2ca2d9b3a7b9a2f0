"""An inverted index over an example bank: from each primitive and partial structure to the examples
holding it, so that scoring a test case touches only the postings of its own features (numpy).

Feature keys carry their side (``X:`` source, ``Y:`` target) so that equation 2's two Match terms add up.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from backend.icl.data import IclExample
from backend.icl.trees import TreeFeatures

SIDES = ("X", "Y")


def side_keys(source: TreeFeatures, target: TreeFeatures, kind: str, deep: bool = True) -> set[str]:
    """Feature keys of both sides. ``kind``: ``P`` primitives (T_L), ``N`` internal nodes (T_N), ``S1``
    (T_S^1), ``S2`` (T_S^>1) or ``S`` (S(T): T_S^1, plus T_S^>1 when ``deep``)."""
    keys: set[str] = set()
    for side, feats in zip(SIDES, (source, target), strict=True):
        if kind == "P":
            values: Iterable[str] = feats.primitives
        elif kind == "N":
            values = feats.internal
        elif kind == "S1":
            values = feats.structures1
        elif kind == "S2":
            values = feats.structures2
        else:
            values = feats.structures if deep else feats.structures1
        prefix = side + ":"
        keys.update(prefix + value for value in values)
    return keys


class Postings:
    """Feature ids for string keys, CSR lists feature -> example ids, and the transpose example -> features."""

    def __init__(self, per_example: list[Iterable[str]]):
        vocab: dict[str, int] = {}
        example_ptr = np.zeros(len(per_example) + 1, dtype=np.int64)
        fids: list[int] = []
        setdefault = vocab.setdefault
        for example_id, keys in enumerate(per_example):
            fids.extend(setdefault(key, len(vocab)) for key in keys)
            example_ptr[example_id + 1] = len(fids)
        self.vocab = vocab
        self.keys = list(vocab)
        self.example_ptr = example_ptr
        self.example_fids = np.asarray(fids, dtype=np.int32)
        owners = np.repeat(np.arange(len(per_example), dtype=np.int32), np.diff(example_ptr))
        order = np.argsort(self.example_fids, kind="stable")
        self.indices = owners[order]
        self.indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        self.indptr[1:] = np.cumsum(np.bincount(self.example_fids, minlength=len(vocab)))

    def __len__(self) -> int:
        return len(self.vocab)

    def ids(self, keys: Iterable[str]) -> np.ndarray:
        vocab = self.vocab
        return np.asarray(sorted(vocab[k] for k in keys if k in vocab), dtype=np.int64)

    def posting(self, fid: int) -> np.ndarray:
        return self.indices[self.indptr[fid] : self.indptr[fid + 1]]

    def features_of(self, example_id: int) -> np.ndarray:
        return self.example_fids[self.example_ptr[example_id] : self.example_ptr[example_id + 1]]

    def counts(self, fids: np.ndarray, size: int) -> np.ndarray:
        """How many of the features ``fids`` each example holds."""
        if not len(fids):
            return np.zeros(size, dtype=np.int64)
        parts = np.concatenate([self.posting(int(f)) for f in fids])
        return np.bincount(parts, minlength=size)


@dataclass
class BankIndex:
    examples: list[IclExample]
    primitives: Postings
    structures: Postings
    depth_sum: np.ndarray
    fingerprint: str
    source_depth: np.ndarray | None = None  # depth(X_c), for matching one side only (section 5, appendix D)
    target_depth: np.ndarray | None = None  # depth(Y_c)

    def depth(self, sides: tuple[str, ...] = SIDES) -> np.ndarray:
        """The complexity term's depth summed over the matched ``sides`` (equation 2 adds one per side)."""
        if tuple(sides) == SIDES or self.source_depth is None or self.target_depth is None:
            return self.depth_sum
        return self.source_depth if sides == ("X",) else self.target_depth

    def __len__(self) -> int:
        return len(self.examples)


def build_index(examples: list[IclExample]) -> BankIndex:
    """Index a bank: primitives and S(T) = T_S^1 ∪ T_S^>1 of both sides (rough similarity uses the T_S^1 part)."""
    digest = hashlib.sha256()
    for example in examples:
        digest.update(f"{example.input}\t{example.output}\n".encode())
    return BankIndex(
        examples=examples,
        primitives=Postings([side_keys(e.source, e.target, "P") for e in examples]),
        structures=Postings([side_keys(e.source, e.target, "S") for e in examples]),
        depth_sum=np.array([e.source.depth + e.target.depth for e in examples], dtype=np.float64),
        fingerprint=digest.hexdigest()[:16],
        source_depth=np.array([e.source.depth for e in examples], dtype=np.float64),
        target_depth=np.array([e.target.depth for e in examples], dtype=np.float64),
    )
