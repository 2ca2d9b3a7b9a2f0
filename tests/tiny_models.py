"""Tiny random vision-language models built offline, once per test session, from one table of families.

``FAMILIES`` maps each family to its builder and the registry settings the app would use for it: LLaVA, Qwen2-VL
and a text-only causal LM (the families most tests use), and Qwen2.5-VL, LLaVA-OneVision, Idefics3, SmolVLM
(SmolVLM2) and Gemma 3 (``RECENT``: the families tests/test_inference_families.py runs as a researcher would).
Each builder returns the folder of a saved model + processor (``from_pretrained``-loadable with ``AutoProcessor``
/ ``AutoTokenizer`` and ``AutoModelForImageTextToText`` / ``AutoModelForCausalLM``, as the app loads a local
model); ``tiny_spec(family, **changes)`` returns a registry ``ModelSpec`` for it. Each is built on first call
(well under a second) and cached for the session in one temporary folder.

Sizes: text hidden size 64, 1-2 layers, vision hidden size 32, images of 32-64 px; each model is well under a
megabyte and answers in milliseconds on CPU. Random weights emit deterministic garbage: test plumbing, not
quality. Processor settings and chat templates follow each family's processor in transformers 5 (the
Idefics3/SmolVLM template is ``smolvlm.processing_smolvlm.DEFAULT_CHAT_TEMPLATE``; the others use the generic
template below with the family's own media markers). Recipes: the stack notes (NOTES-stack.md, "tiny models").
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


_TEXT = dict(
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=4096,
)
_VISION = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2)


def _text(tokenizer: Any, **changes: Any) -> dict[str, Any]:
    ids = dict(vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    return {**_TEXT, **ids, "bos_token_id": None, **changes}


_QWEN_MARKERS = ("<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>")
_QWEN_PIXELS = {"min_pixels": 28 * 28, "max_pixels": 56 * 56}


def _qwen_tokenizer() -> Any:
    """Qwen2-VL's and Qwen2.5-VL's media markers in the generic template."""
    return tiny_tokenizer(
        _QWEN_MARKERS,
        image_marker="<|vision_start|><|image_pad|><|vision_end|>",
        video_marker="<|vision_start|><|video_pad|><|vision_end|>",
    )


def _qwen_media_ids(tokenizer: Any) -> dict[str, int]:
    ids = {name: tokenizer.convert_tokens_to_ids(name) for name in _QWEN_MARKERS}
    return dict(
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )


def _save(
    path: Path, model_class: Any, config: Any, processor: Any, tokenizer: Any, seed: int = 0, bos: bool = True
) -> Path:
    """Random weights (``seed``) for ``config``, saved with the processor (or the tokenizer, for a text model);
    ``bos=False`` clears the generation config's BOS token (the families whose templates start without one)."""
    import torch

    torch.manual_seed(seed)
    model = model_class(config).eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    if not bos:
        model.generation_config.bos_token_id = None
    model.save_pretrained(path)
    processor.save_pretrained(path)
    return path


@functools.cache
def tiny_llava() -> Path:
    """A ~0.6 MB LLaVA (CLIP vision 32 px, Llama text) saved with its processor."""
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
    return _save(path, LlavaForConditionalGeneration, config, processor, tokenizer)


@functools.cache
def tiny_qwen2vl(head_dim: int = 16, folder: Path | None = None, seed: int = 0) -> Path:
    """A tiny Qwen2-VL (native ``videos=`` input) saved with its processor. ``head_dim`` 32 or more for vLLM's
    CPU attention (scripts/check_vllm.sh: text and vision heads of 32, ``sum(mrope_section) == head_dim / 2``);
    ``folder``: where to save it (default: this session's temporary folder); ``seed``: other random weights."""
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
    tokenizer = _qwen_tokenizer()
    pixels = _QWEN_PIXELS
    processor = Qwen2VLProcessor(
        image_processor=Qwen2VLImageProcessor(**pixels),
        video_processor=Qwen2VLVideoProcessor(**pixels, max_frames=8),
        tokenizer=tokenizer,
        chat_template=tokenizer.chat_template,
    )
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
        **_qwen_media_ids(tokenizer),
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return _save(path, Qwen2VLForConditionalGeneration, config, processor, tokenizer, seed=seed)


@functools.cache
def tiny_causal_lm() -> Path:
    """A tiny text-only Llama (``AutoModelForCausalLM`` + ``AutoTokenizer``)."""
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
    return _save(path, LlamaForCausalLM, config, tokenizer, tokenizer)


@functools.cache
def tiny_qwen2_5_vl() -> Path:
    """Qwen2.5-VL: windowed vision attention, native ``videos=`` input (Qwen2-VL's image and video processors)."""
    from transformers import (
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
        Qwen2_5_VLProcessor,
        Qwen2VLImageProcessor,
        Qwen2VLVideoProcessor,
    )

    tokenizer = _qwen_tokenizer()
    pixels = _QWEN_PIXELS
    processor = Qwen2_5_VLProcessor(
        image_processor=Qwen2VLImageProcessor(**pixels),
        video_processor=Qwen2VLVideoProcessor(**pixels, max_frames=8),
        tokenizer=tokenizer,
        chat_template=tokenizer.chat_template,
    )
    rope = {"rope_type": "default", "rope_theta": 1e4, "mrope_section": [2, 3, 3]}  # sum == head_dim / 2
    config = Qwen2_5_VLConfig(
        text_config=_text(tokenizer, rope_parameters=rope),
        vision_config=dict(
            depth=1,
            hidden_size=32,
            intermediate_size=64,
            num_heads=2,
            out_hidden_size=64,
            patch_size=14,
            spatial_merge_size=2,
            temporal_patch_size=2,
            window_size=56,
            fullatt_block_indexes=[0],
        ),
        **_qwen_media_ids(tokenizer),
    )
    return _save(_root() / "qwen2_5_vl", Qwen2_5_VLForConditionalGeneration, config, processor, tokenizer, bos=False)


@functools.cache
def tiny_llava_onevision() -> Path:
    """LLaVA-OneVision: SigLIP + Qwen2, any-resolution tiles for a single image, one tile per image when a
    request has several, pooled frames for ``videos=``."""
    from transformers import (
        LlavaOnevisionConfig,
        LlavaOnevisionForConditionalGeneration,
        LlavaOnevisionImageProcessor,
        LlavaOnevisionProcessor,
        LlavaOnevisionVideoProcessor,
    )

    tokenizer = tiny_tokenizer(("<image>", "<video>"), image_marker="<image>\n", video_marker="<video>\n")
    pinpoints = [[32, 32], [32, 64], [64, 32], [64, 64]]
    size = {"height": 32, "width": 32}
    processor = LlavaOnevisionProcessor(
        image_processor=LlavaOnevisionImageProcessor(size=size, image_grid_pinpoints=pinpoints),
        video_processor=LlavaOnevisionVideoProcessor(size=size),
        tokenizer=tokenizer,
        num_image_tokens=16,  # (32 / 8) ** 2 patches, no CLS token in SigLIP
        vision_feature_select_strategy="full",
        chat_template=tokenizer.chat_template,
    )
    config = LlavaOnevisionConfig(
        vision_config=dict(model_type="siglip_vision_model", image_size=32, patch_size=8, **_VISION),
        text_config=dict(model_type="qwen2", **_text(tokenizer)),
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        video_token_index=tokenizer.convert_tokens_to_ids("<video>"),
        image_grid_pinpoints=pinpoints,
        vision_feature_select_strategy="full",
        vision_feature_layer=-1,
    )
    return _save(
        _root() / "llava_onevision", LlavaOnevisionForConditionalGeneration, config, processor, tokenizer, bos=False
    )


def _idefics_tokenizer() -> Any:
    from transformers.models.smolvlm.processing_smolvlm import DEFAULT_CHAT_TEMPLATE

    grid = tuple(f"<row_{i + 1}_col_{j + 1}>" for i in range(6) for j in range(6))
    special = ("<|im_start|>", "<fake_token_around_image>", "<image>", "<end_of_utterance>", "<global-img>", "<video>")
    return tiny_tokenizer(special + grid, template=DEFAULT_CHAT_TEMPLATE)


def _idefics_config(config_class: Any, tokenizer: Any) -> Any:
    return config_class(
        vision_config=dict(image_size=32, patch_size=8, **_VISION),
        text_config=dict(model_type="llama", **_text(tokenizer)),
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
        scale_factor=2,  # (32 / 8) ** 2 / 2 ** 2 = 4 tokens per 32 px tile
        pad_token_id=tokenizer.pad_token_id,
    )


@functools.cache
def tiny_idefics3() -> Path:
    """Idefics3 (the architecture of SmolVLM 1): images split into 32 px tiles plus a global view."""
    from transformers import Idefics3Config, Idefics3ForConditionalGeneration, Idefics3ImageProcessor, Idefics3Processor

    tokenizer = _idefics_tokenizer()
    processor = Idefics3Processor(
        image_processor=Idefics3ImageProcessor(size={"longest_edge": 64}, max_image_size={"longest_edge": 32}),
        tokenizer=tokenizer,
        image_seq_len=4,
        chat_template=tokenizer.chat_template,
    )
    config = _idefics_config(Idefics3Config, tokenizer)
    return _save(_root() / "idefics3", Idefics3ForConditionalGeneration, config, processor, tokenizer, bos=False)


@functools.cache
def tiny_smolvlm() -> Path:
    """SmolVLM (SmolVLM2): Idefics3's tiling; its processor also takes ``videos=``."""
    from transformers import (
        SmolVLMConfig,
        SmolVLMForConditionalGeneration,
        SmolVLMImageProcessor,
        SmolVLMProcessor,
        SmolVLMVideoProcessor,
    )

    tokenizer = _idefics_tokenizer()
    size, tile = {"longest_edge": 64}, {"longest_edge": 32}
    processor = SmolVLMProcessor(
        image_processor=SmolVLMImageProcessor(size=size, max_image_size=tile),
        video_processor=SmolVLMVideoProcessor(size=tile, max_image_size=tile),
        tokenizer=tokenizer,
        image_seq_len=4,
        chat_template=tokenizer.chat_template,
    )
    config = _idefics_config(SmolVLMConfig, tokenizer)
    return _save(_root() / "smolvlm", SmolVLMForConditionalGeneration, config, processor, tokenizer, bos=False)


@functools.cache
def tiny_gemma3() -> Path:
    """Gemma 3: SigLIP pooled to a fixed number of soft tokens per image, bidirectional attention over them."""
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration, Gemma3ImageProcessor, Gemma3Processor

    named = {"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>", "image_token": "<image_soft_token>"}
    tokenizer = tiny_tokenizer((), image_marker="<start_of_image>", named=named)
    processor = Gemma3Processor(
        image_processor=Gemma3ImageProcessor(size={"height": 32, "width": 32}),
        tokenizer=tokenizer,
        image_seq_length=4,
        chat_template=tokenizer.chat_template,
    )
    text = _text(tokenizer, head_dim=16, query_pre_attn_scalar=16, sliding_window=512)
    config = Gemma3Config(
        text_config=dict(model_type="gemma3_text", **text),
        vision_config=dict(model_type="siglip_vision_model", image_size=32, patch_size=8, **_VISION),
        mm_tokens_per_image=4,  # 4 x 4 patches average-pooled to 2 x 2
        boi_token_index=tokenizer.boi_token_id,
        eoi_token_index=tokenizer.eoi_token_id,
        image_token_index=tokenizer.image_token_id,
    )
    return _save(_root() / "gemma3", Gemma3ForConditionalGeneration, config, processor, tokenizer, bos=False)


@dataclass(frozen=True)
class Family:
    """A tiny family: its builder, and the registry settings the app would use for it."""

    build: Callable[[], Path]
    options: dict[str, Any] = field(default_factory=dict)
    prompt_style: str = "chat"


#: family -> its builder and registry settings
FAMILIES: dict[str, Family] = {
    "llava": Family(tiny_llava),
    "qwen2vl": Family(tiny_qwen2vl, {"native_video": True}),
    "causal": Family(tiny_causal_lm, {"model_class": "causal-lm"}, prompt_style="plain"),
    "qwen2_5_vl": Family(tiny_qwen2_5_vl, {"native_video": True}),
    "llava_onevision": Family(tiny_llava_onevision, {"native_video": True}),
    "idefics3": Family(tiny_idefics3),
    "smolvlm": Family(tiny_smolvlm),
    "gemma3": Family(tiny_gemma3),
}
#: the families beyond LLaVA and Qwen2-VL that researchers run today
RECENT = ("qwen2_5_vl", "llava_onevision", "idefics3", "smolvlm", "gemma3")


def tiny_spec(kind: str, **changes: Any) -> Any:
    """A registry entry (``ModelSpec``) for the tiny model of family ``kind`` (a key of :data:`FAMILIES`)."""
    from backend.inference.registry import ModelSpec

    family = FAMILIES[kind]
    base: dict[str, Any] = dict(
        name=f"tiny-{kind}".replace("_", "-"),
        backend="transformers",
        path=str(family.build()),
        dtype="float32",
        device="cpu",
        max_new_tokens=6,
        frames_per_video=4,
        max_image_side=64,
        options=dict(family.options),
        prompt_style=family.prompt_style,
    )
    base.update(changes)
    return ModelSpec(**base)
