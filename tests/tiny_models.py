"""Tiny random models built offline, once per test session: LLaVA, Qwen2-VL and a text-only causal LM
(the newer families are in tiny_families.py).

Import the builders in any test: ``tiny_llava()``, ``tiny_qwen2vl()``, ``tiny_causal_lm()`` return the
folder of a saved model (``from_pretrained``-loadable with ``AutoProcessor`` / ``AutoTokenizer`` and
``AutoModelForImageTextToText`` / ``AutoModelForCausalLM``); ``tiny_spec(kind, **changes)`` returns a
registry ``ModelSpec`` for it. Each is built on first call (well under a second) and cached for the
session in one temporary folder. Random weights emit deterministic garbage: test plumbing, not quality.
Recipes: the stack notes shipped to developers (NOTES-stack.md, "tiny models").
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

_CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'text' %}{{ part['text'] }}"
    "{% elif part['type'] == 'image' %}{{ image_marker }}"
    "{% elif part['type'] == 'video' %}{{ video_marker }}{% endif %}"
    "{% endfor %}{% endif %}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
_CORPUS = [
    "The answer is (C). Answer with the option's letter from the given choices directly.",
    "What colour is the square? red green blue yellow black white. A, B, C, D, E, F.",
    "Options: A. open a book B. drink water C. turn on the light. One or more options may be correct.",
    "Write the word in capitals. DUST ( SAILOR , BOY , NONE ) First image: Second image: what happens next?",
]


@functools.cache
def _root() -> Path:
    import torch

    # Tiny models run fastest on one thread; more threads only fight over the shared CPU cores.
    torch.set_num_threads(1)
    root = Path(tempfile.mkdtemp(prefix="compstudio-tiny-models-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


def tiny_tokenizer(
    special: tuple[str, ...],
    image_marker: str = "",
    video_marker: str = "",
    named: dict[str, str] | None = None,
    template: str | None = None,
):
    """A byte-level BPE tokenizer (no unknown tokens) with the given special tokens and a chat template
    (``template``, or the generic one with the media markers). ``named``: model-specific special tokens
    the processor reads as attributes (``tokenizer.boi_token``, ``tokenizer.image_token_id``, ...)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<pad>", "<|end|>", "<|user|>", "<|assistant|>", "<|system|>", *special, *(named or {}).values()]
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(_CORPUS, trainer)
    if template is None:
        template = _CHAT_TEMPLATE.replace("{{ image_marker }}", image_marker)
        template = template.replace("{{ video_marker }}", video_marker)
    extra = {"extra_special_tokens": dict(named)} if named else {}
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        eos_token="<|end|>",
        chat_template=template,
        padding_side="left",
        **extra,
    )


@functools.cache
def tiny_llava() -> Path:
    """A ~0.6 MB LLaVA (CLIP vision 32 px, Llama text) saved with its processor."""
    import torch
    from transformers import CLIPImageProcessorPil, LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor

    path = _root() / "llava"
    tokenizer = tiny_tokenizer(("<image>",), image_marker="<image>\n", video_marker="")
    image_processor = CLIPImageProcessorPil(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=8,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=tokenizer.chat_template,
    )
    config = LlavaConfig(
        vision_config=dict(
            model_type="clip_vision_model",
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=32,
            patch_size=8,
            projection_dim=32,
        ),
        text_config=dict(
            model_type="llama",
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            vocab_size=len(tokenizer),
            max_position_embeddings=1024,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id,
        ),
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        image_seq_length=16,
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    torch.manual_seed(0)
    model = LlavaForConditionalGeneration(config).eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(path)
    processor.save_pretrained(path)
    return path


@functools.cache
def tiny_qwen2vl(head_dim: int = 16, folder: Path | None = None, seed: int = 0) -> Path:
    """A tiny Qwen2-VL (native ``videos=`` input) saved with its processor. ``head_dim`` 32 or more for vLLM's
    CPU attention (scripts/check_vllm.sh: text and vision heads of 32, ``sum(mrope_section) == head_dim / 2``);
    ``folder``: where to save it (default: this session's temporary folder); ``seed``: other random weights."""
    import torch
    from transformers import (
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessor,
        Qwen2VLProcessor,
        Qwen2VLVideoProcessor,
    )

    path = folder if folder is not None else _root() / ("qwen2vl" if head_dim == 16 else f"qwen2vl-hd{head_dim}")
    heads = 64 // head_dim
    third = 3 * (head_dim // 8) // 2
    mrope = [head_dim // 2 - 2 * third, third, third]  # [2, 3, 3] for 16, [4, 6, 6] for 32: sum is head_dim / 2
    markers = ("<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>")
    tokenizer = tiny_tokenizer(
        markers,
        image_marker="<|vision_start|><|image_pad|><|vision_end|>",
        video_marker="<|vision_start|><|video_pad|><|vision_end|>",
    )
    pixels = {"min_pixels": 28 * 28, "max_pixels": 56 * 56}
    processor = Qwen2VLProcessor(
        image_processor=Qwen2VLImageProcessor(**pixels),
        video_processor=Qwen2VLVideoProcessor(**pixels, max_frames=8),
        tokenizer=tokenizer,
        chat_template=tokenizer.chat_template,
    )
    ids = {name: tokenizer.convert_tokens_to_ids(name) for name in markers}
    config = Qwen2VLConfig(
        text_config=dict(
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=heads,
            num_key_value_heads=max(1, heads // 2),
            vocab_size=len(tokenizer),
            max_position_embeddings=2048,
            rope_parameters={"rope_type": "default", "rope_theta": 1e4, "mrope_section": mrope},
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id,
            bos_token_id=None,
        ),
        vision_config=dict(
            depth=1,
            embed_dim=32,
            hidden_size=64,
            num_heads=2 if head_dim == 16 else 1,  # vision heads of embed_dim / num_heads
            mlp_ratio=2,
            patch_size=14,
            spatial_merge_size=2,
            temporal_patch_size=2,
            in_channels=3,
        ),
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = Qwen2VLForConditionalGeneration(config).eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(path)
    processor.save_pretrained(path)
    return path


@functools.cache
def tiny_causal_lm() -> Path:
    """A tiny text-only Llama (``AutoModelForCausalLM`` + ``AutoTokenizer``)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    path = _root() / "causal"
    tokenizer = tiny_tokenizer(())
    config = LlamaConfig(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=len(tokenizer),
        max_position_embeddings=1024,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


_BUILDERS = {"llava": tiny_llava, "qwen2vl": tiny_qwen2vl, "causal": tiny_causal_lm}


def tiny_spec(kind: str, **changes):
    """A registry entry for a tiny model: ``kind`` is ``llava``, ``qwen2vl``, ``causal`` or a family of
    tiny_families.py (``qwen2_5_vl``, ``llava_onevision``, ``idefics3``, ``smolvlm``, ``gemma3``)."""
    from tiny_families import FAMILIES

    from backend.inference.registry import ModelSpec

    builders = {**_BUILDERS, **{name: builder for name, (builder, _) in FAMILIES.items()}}
    options = {"causal": {"model_class": "causal-lm"}, "qwen2vl": {"native_video": True}}.get(kind, {})
    options = FAMILIES[kind][1] if kind in FAMILIES else options
    base = dict(
        name=f"tiny-{kind}".replace("_", "-"),
        backend="transformers",
        path=str(builders[kind]()),
        dtype="float32",
        device="cpu",
        max_new_tokens=6,
        frames_per_video=4,
        max_image_side=64,
        options=options,
        prompt_style="plain" if kind == "causal" else "chat",
    )
    base.update(changes)
    return ModelSpec(**base)
