"""Tiny random versions of the vision-language families researchers run today, built offline once per session:
Qwen2.5-VL, LLaVA-OneVision, Idefics3, SmolVLM (SmolVLM2) and Gemma 3 (beside LLaVA and Qwen2-VL in
tiny_models.py). Each builder returns the folder of a saved model + processor that
``AutoProcessor`` / ``AutoModelForImageTextToText.from_pretrained`` load, as the app loads a local model.

Sizes: text hidden size 64, 1-2 layers, vision hidden size 32, images of 32-64 px; each model is well under
a megabyte and answers in milliseconds on CPU. Processor settings and chat templates follow each family's
processor in transformers 5.24 (the Idefics3/SmolVLM template is ``smolvlm.processing_smolvlm.DEFAULT_CHAT_TEMPLATE``;
the others use the generic template of tiny_models.py with the family's own media markers).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from tiny_models import _root, tiny_tokenizer

_TEXT = dict(
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=4096,
)
_VISION = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2)


def _save(name: str, model_class: Any, config: Any, processor: Any, tokenizer: Any) -> Path:
    import torch

    path = _root() / name
    torch.manual_seed(0)
    model = model_class(config).eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.bos_token_id = None
    model.save_pretrained(path)
    processor.save_pretrained(path)
    return path


def _text(tokenizer: Any, **changes: Any) -> dict[str, Any]:
    ids = dict(vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    return {**_TEXT, **ids, "bos_token_id": None, **changes}


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

    markers = ("<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>")
    tokenizer = tiny_tokenizer(
        markers,
        image_marker="<|vision_start|><|image_pad|><|vision_end|>",
        video_marker="<|vision_start|><|video_pad|><|vision_end|>",
    )
    pixels = {"min_pixels": 28 * 28, "max_pixels": 56 * 56}
    processor = Qwen2_5_VLProcessor(
        image_processor=Qwen2VLImageProcessor(**pixels),
        video_processor=Qwen2VLVideoProcessor(**pixels, max_frames=8),
        tokenizer=tokenizer,
        chat_template=tokenizer.chat_template,
    )
    ids = {name: tokenizer.convert_tokens_to_ids(name) for name in markers}
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
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    return _save("qwen2_5_vl", Qwen2_5_VLForConditionalGeneration, config, processor, tokenizer)


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
    return _save("llava_onevision", LlavaOnevisionForConditionalGeneration, config, processor, tokenizer)


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
    return _save("idefics3", Idefics3ForConditionalGeneration, config, processor, tokenizer)


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
    return _save("smolvlm", SmolVLMForConditionalGeneration, config, processor, tokenizer)


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
    return _save("gemma3", Gemma3ForConditionalGeneration, config, processor, tokenizer)


#: family -> (builder, registry ``options`` the app would use for it)
FAMILIES: dict[str, Any] = {
    "qwen2_5_vl": (tiny_qwen2_5_vl, {"native_video": True}),
    "llava_onevision": (tiny_llava_onevision, {"native_video": True}),
    "idefics3": (tiny_idefics3, {}),
    "smolvlm": (tiny_smolvlm, {}),
    "gemma3": (tiny_gemma3, {}),
}
