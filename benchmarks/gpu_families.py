"""Real architectures with random weights, for ``benchmarks/gpu_check.py --source random`` (no Hub needed).

Each family's ``config.json`` as its published checkpoint has it (the sizes, the vision tower, the token layout),
written here as data: Qwen2-VL-2B-Instruct, Qwen2.5-VL-7B-Instruct, LLaVA-OneVision-Qwen2-0.5B and
SmolVLM2-256M-Video-Instruct. :func:`build` gives the model random weights (compute and memory are a real
checkpoint's; answers are noise), a tokenizer built here (byte-level BPE with the family's special tokens, so no
unknown tokens), the family's processor with its released image settings, and a generation config whose
``min_new_tokens`` equals ``max_new_tokens`` (random weights rarely emit EOS: every answer is exactly N tokens, on
every side). The output projection's rows past the tokenizer's vocabulary are zeroed (same sizes, same cost), so
answers decode to text. ``small=True`` shrinks the widths and depths (the CPU mode) and keeps the rest.

Sizes of SmolVLM2-256M are those of its published config as recalled here (text: Llama, 576 wide, 30 layers, 9
heads, 3 KV heads; vision: SigLIP 768 wide, 12 layers, 512 px, patch 16; pixel shuffle 4: 64 tokens a tile).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

FAMILIES = ("qwen2vl-2b", "qwen25vl-7b", "llava-ov-0.5b", "smolvlm-256m")

_QWEN_VISION_2B = {
    "depth": 32,
    "embed_dim": 1280,
    "mlp_ratio": 4,
    "num_heads": 16,
    "in_channels": 3,
    "hidden_size": 1536,
    "patch_size": 14,
    "spatial_merge_size": 2,
    "temporal_patch_size": 2,
}
_QWEN_TEXT = {"rope_theta": 1e6, "rms_norm_eps": 1e-6, "hidden_act": "silu", "use_sliding_window": False}
CONFIGS: dict[str, dict[str, Any]] = {
    "qwen2vl-2b": {
        "model_type": "qwen2_vl",
        "text_config": {
            **_QWEN_TEXT,
            "hidden_size": 1536,
            "intermediate_size": 8960,
            "num_hidden_layers": 28,
            "num_attention_heads": 12,
            "num_key_value_heads": 2,
            "max_position_embeddings": 32768,
            "vocab_size": 151936,
            "tie_word_embeddings": True,
            "rope_parameters": {"rope_type": "default", "rope_theta": 1e6, "mrope_section": [16, 24, 24]},
        },
        "vision_config": _QWEN_VISION_2B,
        "tie_word_embeddings": True,
    },
    "qwen25vl-7b": {
        "model_type": "qwen2_5_vl",
        "text_config": {
            **_QWEN_TEXT,
            "hidden_size": 3584,
            "intermediate_size": 18944,
            "num_hidden_layers": 28,
            "num_attention_heads": 28,
            "num_key_value_heads": 4,
            "max_position_embeddings": 128000,
            "vocab_size": 152064,
            "tie_word_embeddings": False,
            "rope_parameters": {"rope_type": "default", "rope_theta": 1e6, "mrope_section": [16, 24, 24]},
        },
        "vision_config": {
            "depth": 32,
            "hidden_size": 1280,
            "intermediate_size": 3420,
            "num_heads": 16,
            "in_channels": 3,
            "out_hidden_size": 3584,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "window_size": 112,
            "fullatt_block_indexes": [7, 15, 23, 31],
            "tokens_per_second": 2,
            "hidden_act": "silu",
        },
        "tie_word_embeddings": False,
    },
    "llava-ov-0.5b": {
        "model_type": "llava_onevision",
        "text_config": {
            "model_type": "qwen2",
            **_QWEN_TEXT,
            "hidden_size": 896,
            "intermediate_size": 4864,
            "num_hidden_layers": 24,
            "num_attention_heads": 14,
            "num_key_value_heads": 2,
            "max_position_embeddings": 32768,
            "vocab_size": 152000,
            "tie_word_embeddings": True,
        },
        "vision_config": {
            "model_type": "siglip_vision_model",
            "hidden_size": 1152,
            "intermediate_size": 4304,
            "num_hidden_layers": 26,
            "num_attention_heads": 16,
            "image_size": 384,
            "patch_size": 14,
            "vision_use_head": False,
        },
        "image_grid_pinpoints": [[384 * i, 384 * j] for i in range(1, 7) for j in range(1, 7)],
        "vision_aspect_ratio": "anyres_max_9",
        "vision_feature_select_strategy": "full",
        "vision_feature_layer": -1,
        "use_image_newline_parameter": True,
        "tie_word_embeddings": False,
    },
    "smolvlm-256m": {
        "model_type": "smolvlm",
        "text_config": {
            "model_type": "llama",
            "hidden_size": 576,
            "intermediate_size": 1536,
            "num_hidden_layers": 30,
            "num_attention_heads": 9,
            "num_key_value_heads": 3,
            "max_position_embeddings": 8192,
            "rope_theta": 100000.0,
            "rms_norm_eps": 1e-5,
            "vocab_size": 49280,
            "tie_word_embeddings": True,
        },
        "vision_config": {
            "hidden_size": 768,
            "intermediate_size": 3072,
            "num_hidden_layers": 12,
            "num_attention_heads": 12,
            "image_size": 512,
            "patch_size": 16,
        },
        "scale_factor": 4,
        "tie_word_embeddings": True,
    },
}

#: the CPU mode's sizes: narrow and shallow, everything else (tokens, processors, image sizes) as released
_SMALL_TEXT = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2}
_SMALL_VISION = {
    "qwen2vl-2b": {"depth": 2, "embed_dim": 32, "num_heads": 2, "hidden_size": 64},
    "qwen25vl-7b": {
        "depth": 2,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_heads": 2,
        "out_hidden_size": 64,
        "fullatt_block_indexes": [1],
    },
    "llava-ov-0.5b": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2},
    "smolvlm-256m": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2},
}

_QWEN_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}<|im_start|>system\n"
    "You are a helpful assistant.<|im_end|>\n{% endif %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'video' %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
_OV_TEMPLATE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + ' ' }}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<image>{% elif part['type'] == 'video' %}<video>"
    "{% elif part['type'] == 'text' %}{{ '\n' + part['text'] }}{% endif %}{% endfor %}<|im_end|>{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
_QWEN_SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>")
_QWEN_SPECIALS += ("<|vision_pad|>", "<|image_pad|>", "<|video_pad|>")
_SMOL_GRID = tuple(f"<row_{i + 1}_col_{j + 1}>" for i in range(6) for j in range(6))
_SMOL_SPECIALS = ("<|endoftext|>", "<|im_start|>", "<end_of_utterance>", "<fake_token_around_image>", "<image>")
_SMOL_SPECIALS += ("<global-img>", "<video>", *_SMOL_GRID)
SPECIALS = {
    "qwen2vl-2b": _QWEN_SPECIALS,
    "qwen25vl-7b": _QWEN_SPECIALS,
    "llava-ov-0.5b": ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<image>", "<video>"),
    "smolvlm-256m": _SMOL_SPECIALS,
}
_CORPUS = (
    "What colour is the square? Which picture shows the cat? Options: A. red B. green C. blue D. yellow",
    "Answer with the option's letter from the given choices directly. One or more options may be correct.",
    "What will the person do next? open the fridge, take a cup, pour water, sit down, turn on the light.",
    "You are a helpful assistant. user assistant system Image 1: Image 2: Left: Right: the answer is",
)


def tokenizer(family: str, vocab_size: int = 2000) -> Any:
    """A byte-level BPE tokenizer (no unknown tokens) with the family's special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIALS[family]),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(_CORPUS) * 4, trainer)
    eos = "<end_of_utterance>" if family.startswith("smolvlm") else "<|im_end|>"
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<|endoftext|>", eos_token=eos)


def config(family: str, tok: Any, small: bool) -> Any:
    """The family's config (its real sizes, or the CPU mode's), with this tokenizer's special token ids."""
    from transformers import AutoConfig

    data = copy.deepcopy(CONFIGS[family])
    text, vision = data["text_config"], data["vision_config"]
    if small:
        text.update(_SMALL_TEXT, num_key_value_heads=1, vocab_size=len(tok) + 64, initializer_range=0.2)
        if "rope_parameters" in text:  # mrope: sum == head_dim / 2 (64 / 2 heads = 32: 16)
            text["rope_parameters"] = {**text["rope_parameters"], "mrope_section": [4, 6, 6]}
        vision.update(_SMALL_VISION[family], initializer_range=0.2)
        data["initializer_range"] = 0.2
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS[family]}
    pad, eos = tok.pad_token_id, tok.eos_token_id
    text.update(pad_token_id=pad, eos_token_id=eos, bos_token_id=None)
    if family.startswith("qwen"):
        data.update(
            image_token_id=ids["<|image_pad|>"],
            video_token_id=ids["<|video_pad|>"],
            vision_start_token_id=ids["<|vision_start|>"],
            vision_end_token_id=ids["<|vision_end|>"],
        )
    elif family.startswith("llava"):
        data.update(image_token_index=ids["<image>"], video_token_index=ids["<video>"])
    else:
        data.update(image_token_id=ids["<image>"], pad_token_id=pad)
    assert max(ids.values()) < text["vocab_size"], "special token ids must stay below the vocabulary size"
    kind = data.pop("model_type")
    return AutoConfig.for_model(kind, **data)


def processor(family: str, tok: Any) -> Any:
    """The family's processor with its released image settings."""
    import transformers as t

    if family.startswith("qwen"):
        cls = t.Qwen2VLProcessor if family == "qwen2vl-2b" else t.Qwen2_5_VLProcessor
        return cls(
            image_processor=t.Qwen2VLImageProcessor(min_pixels=56 * 56, max_pixels=28 * 28 * 16384),
            video_processor=t.Qwen2VLVideoProcessor(min_pixels=128 * 28 * 28, max_pixels=768 * 28 * 28),
            tokenizer=tok,
            chat_template=_QWEN_TEMPLATE,
        )
    if family.startswith("llava"):
        norm = {"image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
        return t.LlavaOnevisionProcessor(
            image_processor=t.LlavaOnevisionImageProcessor(
                size={"height": 384, "width": 384}, image_grid_pinpoints=CONFIGS[family]["image_grid_pinpoints"], **norm
            ),
            video_processor=t.LlavaOnevisionVideoProcessor(size={"height": 384, "width": 384}, **norm),
            tokenizer=tok,
            num_image_tokens=729,
            vision_feature_select_strategy="full",
            vision_aspect_ratio="anyres_max_9",
            chat_template=_OV_TEMPLATE,
        )
    from transformers.models.smolvlm.processing_smolvlm import DEFAULT_CHAT_TEMPLATE

    tile = {"longest_edge": 512}
    return t.SmolVLMProcessor(
        image_processor=t.SmolVLMImageProcessor(size={"longest_edge": 4 * 512}, max_image_size=tile),
        video_processor=t.SmolVLMVideoProcessor(size=tile, max_image_size=tile),
        tokenizer=tok,
        image_seq_len=64,
        chat_template=DEFAULT_CHAT_TEMPLATE,
    )


def decode_bytes(model: Any) -> int:
    """Bytes of weights a decoding step reads: the language model's, without the input embedding (one row per
    token), with the output projection (tied or not)."""
    out, emb = model.get_output_embeddings().weight, model.get_input_embeddings().weight
    vision = sum(
        p.numel()
        for n, p in model.named_parameters()
        if any(k in n for k in ("visual", "vision_tower", "vision_model", "multi_modal_projector", "connector"))
    )
    total = sum(p.numel() for p in model.parameters())
    tied = out.data_ptr() == emb.data_ptr()
    return (total - vision - emb.numel() + (out.numel() if tied else 0)) * out.element_size()


def build(family: str, folder: Path, *, small: bool, device: str, dtype: Any, new_tokens: int) -> dict[str, Any]:
    """Random weights for ``family``'s architecture on ``device`` in ``dtype``, saved with its processor and a
    generation config of exactly ``new_tokens`` new tokens; what was built."""
    import torch
    from transformers import AutoModelForImageTextToText

    tok = tokenizer(family)
    cfg = config(family, tok, small)
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForImageTextToText.from_config(cfg, dtype=dtype)
    with torch.no_grad():
        model.get_output_embeddings().weight[len(tok) :] = 0  # answers stay inside the tokenizer's vocabulary
    gen = model.generation_config
    gen.pad_token_id, gen.eos_token_id, gen.bos_token_id = tok.pad_token_id, tok.eos_token_id, None
    gen.min_new_tokens = gen.max_new_tokens = new_tokens
    info = {
        "family": family,
        "params": sum(p.numel() for p in model.parameters()),
        "decode_bytes": decode_bytes(model),
        "dtype": str(dtype).removeprefix("torch."),
        "small": small,
    }
    model.save_pretrained(folder)
    processor(family, tok).save_pretrained(folder)
    (folder / "gpu_check.json").write_text(json.dumps(info))
    del model
    return info
