"""Write ``assets/embeddings/<model>.npz``: the sentence vectors of every text nsplan-lite embeds on the bundled
demo content (the released ViLPAct knowledge-base and question intents), so that a fresh app's first answer needs
no encoder (``backend/inference/embedding_cache.py``; issue 17).

``HF_HUB_OFFLINE=1 .venv/bin/python scripts/bundle_embeddings.py`` (about a minute on two cores); rerun it when
``assets/vilpact`` or the default ``embedding_model`` changes (``tests/test_warmup.py`` fails until then).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from backend.context import build_context  # noqa: E402
from backend.inference.embedding_cache import BUNDLED, cache_file_name, text_key, write_vectors  # noqa: E402
from backend.planning.evaluation import nsplan_texts  # noqa: E402
from backend.settings import Settings  # noqa: E402
from backend.vilpact.demo import ensure_vilpact_demo  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bundle-embeddings-") as tmp:
        ctx = build_context(Settings(data_dir=Path(tmp) / "data", demo_content=False))
        ensure_vilpact_demo(ctx)
        texts = nsplan_texts(ctx.database)
        model = ctx.settings.embedding_model
        vectors = ctx.embeddings.embed(texts, model=model)
        path = BUNDLED / cache_file_name(model)
        write_vectors(path, {text_key(t): v for t, v in zip(texts, vectors, strict=True)}, compressed=True)
        ctx.database.close()
    print(f"{len(texts)} texts, model {model}: {path.relative_to(ROOT)} ({path.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
