"""Semantic relevance of action names (backend/vilpact/semantics.py): TF-IDF over the names, word vectors from the
bundled MiniLM copy or from a Word2Vec file on disk, through one function."""

from __future__ import annotations

import struct
import sys

import numpy as np
import pytest
from conftest import ROOT

from backend.errors import ImportFileError
from backend.settings import Settings
from backend.vilpact.charades import read_class_names
from backend.vilpact.charades_pool import build_extractor
from backend.vilpact.semantics import BUNDLED_WORDS, read_word_vectors, semantic_table, tfidf_weights, word_vectors

CLASSES = ROOT / "assets" / "vilpact" / "Charades_v1_classes.txt"
NAMES = {"c1": "Opening a book", "c2": "Closing a book", "c3": "Opening a door"}
VECTORS = {"book": [1.0, 0.0], "opening": [0.0, 2.0], "closing": [0.0, 1.0], "door": [0.6, 0.8]}


class CountingEncoder:
    """Stands in for EmbeddingModels: records which words it was asked to encode."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def embed(self, texts: list[str], model: str | None = None) -> np.ndarray:
        self.asked += texts
        return np.ones((len(texts), 384), dtype=np.float32) / np.sqrt(384)


@pytest.mark.slow  # loads the MiniLM encoder: 5-50 s depending on the machine's load
def test_the_bundled_vectors_are_the_encoders_for_every_class_word():
    from backend.inference.embeddings import MINILM_HUB_ID, EmbeddingModels

    sys.path.insert(0, str(ROOT / "scripts"))
    from bundle_charades_vectors import bundled_vocabulary

    with np.load(BUNDLED_WORDS) as data:
        words, vectors = data["words"].tolist(), data["vectors"]
    assert words == bundled_vocabulary(), "rerun scripts/bundle_charades_vectors.py"
    fresh = EmbeddingModels().embed(words[:8], model=MINILM_HUB_ID)
    assert np.allclose(fresh, vectors[:8], atol=1e-5)


def test_every_class_word_is_bundled_so_extraction_loads_no_model():
    encoder = CountingEncoder()
    table = semantic_table(read_class_names(CLASSES), "", encoder)
    assert encoder.asked == []
    assert table.of("c027", "c025") > table.of("c027", "c106")  # opening/closing a book vs drinking


def test_a_word_not_bundled_is_encoded_on_first_use():
    encoder = CountingEncoder()
    found = word_vectors(["book", "skateboard"], "", encoder)
    assert encoder.asked == ["skateboard"] and set(found) == {"book", "skateboard"}


def _text_file(path, header: bool) -> None:
    lines = [f"{w} {' '.join(str(x) for x in v)}" for w, v in VECTORS.items()]
    path.write_text(("4 2\n" if header else "") + "\n".join(["Book 9 9", *lines]) + "\n", encoding="utf-8")


def _binary_file(path) -> None:
    with path.open("wb") as handle:
        handle.write(b"4 2\n")
        for word, vector in VECTORS.items():
            handle.write(word.encode() + b" " + struct.pack("<2f", *vector) + b"\n")


@pytest.mark.parametrize("kind", ["word2vec text", "glove", "word2vec binary", "npz"])
def test_word2vec_files_plug_in(tmp_path, kind):
    path = tmp_path / {"word2vec text": "v.txt", "glove": "v.txt", "word2vec binary": "v.bin", "npz": "v.npz"}[kind]
    if kind == "word2vec binary":
        _binary_file(path)
    elif kind == "npz":
        np.savez(path, words=np.array(list(VECTORS)), vectors=np.array(list(VECTORS.values()), dtype=np.float32))
    else:
        _text_file(path, header=kind == "word2vec text")
    found = read_word_vectors(path, ["book", "closing", "missing"])
    assert set(found) == {"book", "closing"}
    # "Book" (capitalised) is looked up only when "book" itself is missing: the exact word wins here
    assert found["book"].tolist() == ([9.0, 9.0] if kind in ("word2vec text", "glove") else [1.0, 0.0])


def test_the_semantic_score_from_a_word2vec_file_worked_by_hand(tmp_path):
    path = tmp_path / "v.bin"
    _binary_file(path)
    table = semantic_table(NAMES, str(path))
    weights = tfidf_weights(NAMES)
    assert round(weights["c1"]["opening"], 4) == round(weights["c1"]["book"], 4) == 0.7027  # (ln 1.5 + 1) / 2
    # c1 = 0.703 (1, 0) + 0.703 (0, 1); c2 = 0.703 (1, 0) + 1.049 (0, 1): cos = (0.703 + 1.049) / (sqrt 2 * 1.263)
    assert round(table.of("c1", "c2"), 3) == 0.981
    # c3 = 0.703 (0, 1) + 1.049 (0.6, 0.8) = (0.629, 1.542), unit (0.378, 0.926); c1 unit (0.707, 0.707)
    assert round(table.of("c1", "c3"), 3) == round(0.7071 * (0.3779 + 0.9259), 3) == 0.922


def test_the_setting_names_the_word_vector_file(tmp_path):
    path = tmp_path / "v.bin"
    _binary_file(path)
    extractor = build_extractor(Settings(extract_word_vectors=str(path)), NAMES)
    assert round(extractor.relevance.semantic.of("c1", "c2"), 3) == 0.981


def test_broken_word_vector_files_are_named(tmp_path):
    with pytest.raises(ImportFileError, match="word-vector file not found"):
        read_word_vectors(tmp_path / "none.bin", ["a"])
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"no header here\n")
    with pytest.raises(ImportFileError, match="not a binary word2vec file"):
        read_word_vectors(bad, ["a"])
    short = tmp_path / "short.bin"
    short.write_bytes(b"2 4\nbook " + struct.pack("<2f", 1, 2))
    with pytest.raises(ImportFileError, match="cut short"):
        read_word_vectors(short, ["book"])
    text = tmp_path / "bad.txt"
    text.write_text("book 1 x\n")
    with pytest.raises(ImportFileError, match="line 1: the vector of 'book' is not numbers"):
        read_word_vectors(text, ["book"])
