"""Write ``assets/charades/minilm_words.npz``: the all-MiniLM-L6-v2 vector of every word of Charades' 157 action
names (each word encoded alone), the default word vectors of the sequence extraction's semantic relevance
(``backend/vilpact/semantics.py``; issue 30), so that extraction needs no model at run time.

``HF_HUB_OFFLINE=1 .venv/bin/python scripts/bundle_charades_vectors.py`` (a few seconds); rerun it when the
class list or the word rules of ``name_words`` change (``tests/test_charades_semantics.py`` fails until then).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from backend.inference.embeddings import MINILM_HUB_ID, EmbeddingModels  # noqa: E402
from backend.vilpact.charades import read_class_names  # noqa: E402
from backend.vilpact.semantics import BUNDLED_WORDS, name_words  # noqa: E402

CLASSES = ROOT / "assets" / "vilpact" / "Charades_v1_classes.txt"


def bundled_vocabulary() -> list[str]:
    """The words whose vectors ship: those of the 157 class names."""
    return sorted({w for name in read_class_names(CLASSES).values() for w in name_words(name)})


def main() -> None:
    words = bundled_vocabulary()
    vectors = EmbeddingModels().embed(words, model=MINILM_HUB_ID)
    BUNDLED_WORDS.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(BUNDLED_WORDS, words=np.array(words), vectors=vectors.astype(np.float32))
    print(f"{len(words)} words: {BUNDLED_WORDS.relative_to(ROOT)} ({BUNDLED_WORDS.stat().st_size / 1e3:.0f} kB)")


if __name__ == "__main__":
    main()
