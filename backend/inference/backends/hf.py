"""``transformers``: local models through Hugging Face transformers.

* Vision-language models: ``AutoProcessor`` + ``AutoModelForImageTextToText``; text-only models
  (``options.model_class == "causal-lm"``): ``AutoTokenizer`` + ``AutoModelForCausalLM``.
* Prompts go through the model's chat template (``prompt_style="chat"``) or are plain text with the
  processor's media tokens (``"plain"``, for base models). Several images per request are fine.
* Families (tiny versions of each tested in tests/test_inference_families.py): LLaVA, Qwen2-VL, Qwen2.5-VL,
  LLaVA-OneVision, Idefics3, SmolVLM, Gemma 3 — one code path; images go to the processor as one list per
  request, which is how Gemma 3, Idefics3 and SmolVLM match images to prompts and how LLaVA-OneVision tells
  a request with several images (one tile each) from a request with one (any-resolution tiles).
* Video: with ``options.native_video`` and a processor whose video inputs have their own names (Qwen2-VL,
  Qwen2.5-VL, LLaVA-OneVision), sampled frames go in as the processor's ``videos=`` input, with the rate they
  were sampled at when the request knows it (:func:`~backend.inference.request.sampled_fps`); otherwise each
  frame is an image.
* Batches are left-padded with an attention mask, so batched answers equal one-by-one answers (tested).
* GPU when present: bf16, the whole model moved to the one GPU with ``.to("cuda")`` (accelerate's dispatch hooks
  cost more than half of every decoding step on one GPU); ``device_map="auto"`` only where the model needs it
  (``options.device_map``, or weights larger than the first GPU's free memory with several GPUs). CPU and
  float32 otherwise. Loading happens when the backend is built (on first use, through the registry's pool);
  :meth:`unload` frees the weights.
* Speed options (they never change a greedy answer, so the prediction key leaves them out,
  :data:`~backend.inference.registry.SPEED_OPTIONS`): ``static_cache`` (transformers' own static KV cache,
  ``cache_implementation="static"``, compiled by ``generate`` itself with a ``CompileConfig`` on CUDA; families
  whose model class cannot compile fall back to the dynamic cache, and the manifest says so) and ``compile``
  (``false``: the static cache without compilation). Batches are prepared (images decoded and resized, the
  processor run) apart from generation (:meth:`prepare_batch`), so the runner prepares batch k+1 while batch k
  generates (:mod:`backend.inference.batching`).
* :meth:`usage_report` says what a run used: placement, dtype, attention implementation, cache, batch sizes,
  peak memory and visual tokens per item (the run manifest's ``engine``).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.errors import InferenceError, ValidationError
from backend.inference.base import OptionScore
from backend.inference.request import (
    GenerationParams,
    Request,
    load_image,
    sampled_fps,
    validate_request,
    video_frames,
)

if TYPE_CHECKING:
    from backend.inference.registry import ModelSpec


def _device_and_dtype(spec: ModelSpec) -> tuple[str, Any]:
    import torch

    device = spec.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype_name = spec.dtype
    if dtype_name == "auto":
        dtype_name = "bfloat16" if device.startswith("cuda") else "float32"
    return device, getattr(torch, dtype_name)


def _weights_bytes(path: str) -> int:
    """The size of a local model folder's weight files (0 for a Hub id: its size is unknown before download)."""
    folder = Path(path)
    if not folder.is_dir():
        return 0
    return sum(f.stat().st_size for f in folder.glob("*.safetensors")) or sum(
        f.stat().st_size for f in folder.glob("*.bin")
    )


def placement(spec: ModelSpec, device: str, gpus: int, free_bytes: int) -> str | None:
    """The ``device_map`` to load with, or None to load on ``device`` and move there with ``.to()``: the option
    ``device_map`` when set; ``"auto"`` when ``device`` is ``auto`` on CUDA and the weights do not fit the first
    GPU's free memory while there are several GPUs (or the option says so); else None (one device, no hooks).

    >>> from backend.inference.registry import ModelSpec
    >>> placement(ModelSpec("m", "transformers", "x"), "cuda", 1, 10**11)
    >>> placement(ModelSpec("m", "transformers", "x", options={"device_map": "auto"}), "cuda", 1, 10**11)
    'auto'
    """
    chosen = spec.options.get("device_map")
    if chosen:
        return str(chosen)
    if device == "cuda" and spec.device == "auto" and gpus > 1 and _weights_bytes(spec.path) > 0.9 * free_bytes:
        return "auto"
    return None


@dataclass
class PreparedBatch:
    """A batch ready for ``generate``: the processor's tensors (on the CPU) and its visual tokens."""

    inputs: Any
    size: int
    visual_tokens: int


@dataclass
class Usage:
    """What the backend has done since it was loaded (counters; a run reads the difference)."""

    items: int = 0
    batches: int = 0
    largest_batch: int = 0
    visual_tokens: int = 0
    static_cache_batches: int = 0


class TransformersBackend:
    # transformers' Auto* classes return a different class per model (and None after unload): typed as Any
    processor: Any
    tokenizer: Any
    model: Any

    def __init__(self, spec: ModelSpec) -> None:
        import torch
        import transformers

        self.spec = spec
        self.text_only = spec.options.get("model_class") == "causal-lm"
        self.device, self.dtype = _device_and_dtype(spec)
        self._lock = threading.Lock()
        self._tokenizer_lock = threading.Lock()  # the fast tokenizer is not safe across threads (prepare vs decode)
        self.usage = Usage()
        load: dict[str, Any] = {"dtype": self.dtype}
        if spec.options.get("attn_implementation"):
            load["attn_implementation"] = str(spec.options["attn_implementation"])
        cuda = self.device.startswith("cuda")
        gpus = torch.cuda.device_count() if cuda else 0
        free = torch.cuda.mem_get_info()[0] if cuda and gpus > 1 else 0  # only asked with several GPUs
        self.device_map = placement(spec, self.device, gpus, free)
        if self.device_map:
            load["device_map"] = self.device_map
        try:  # downloads (from the Hub) report through tqdm, which the UI's gr.Progress(track_tqdm=True) shows
            if self.text_only:
                self.processor = transformers.AutoTokenizer.from_pretrained(spec.path)
                self.tokenizer = self.processor
                self.model = transformers.AutoModelForCausalLM.from_pretrained(spec.path, **load)
            else:
                self.processor = transformers.AutoProcessor.from_pretrained(spec.path)
                self.tokenizer = self.processor.tokenizer
                self.model = transformers.AutoModelForImageTextToText.from_pretrained(spec.path, **load)
        except (OSError, ValueError, KeyError) as exc:
            raise InferenceError(
                f"Could not load model {spec.name!r} from {spec.path!r}: {str(exc).splitlines()[0][:300]}. "
                "Check the Hub id or local folder, the network (HF_HUB_OFFLINE), and HF_TOKEN for gated models."
            ) from exc
        if not self.device_map:
            self.model.to(self.device)  # one device: no dispatch hooks
        self.model.eval()
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.native_video = bool(spec.options.get("native_video")) and _separate_video_inputs(self.processor)
        self.visual_token_ids = _visual_token_ids(self.processor, self.tokenizer)
        self.static_cache = _static_cache(self.model, spec)
        # generate compiles a static-cache forward on CUDA only (transformers' _valid_auto_compile_criteria)
        self.compiles = bool(self.static_cache) and cuda and spec.options.get("compile", True) is not False

    # -- prompts -----------------------------------------------------------------------------------
    def _convert(self, request: Request) -> tuple[list[dict], list, list[tuple[list, float | None]]]:
        """Chat-template content parts, the images and the videos (frames, sampled fps) of one request."""
        validate_request(request)
        content, images, videos = [], [], []
        for part in request:
            if part["type"] == "text":
                content.append({"type": "text", "text": part["text"]})
            elif self.text_only:
                raise ValidationError(f"model {self.spec.name} is text-only and cannot take {part['type']} parts")
            elif part["type"] == "image":
                content.append({"type": "image"})
                images.append(load_image(part["image"], self.spec.max_image_side))
            else:
                frames = video_frames(part, self.spec.frames_per_video, self.spec.max_image_side)
                if self.native_video:
                    content.append({"type": "video"})
                    videos.append((frames, sampled_fps(part, len(frames))))
                else:
                    content.extend({"type": "image"} for _ in frames)
                    images.extend(frames)
        return content, images, videos

    def _prompt(self, content: list[dict]) -> str:
        if self.spec.prompt_style == "chat" and getattr(self.processor, "chat_template", None):
            messages = [{"role": "user", "content": content}]
            return self.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        markers = {
            "image": getattr(self.processor, "image_token", "<image>"),
            "video": getattr(self.processor, "video_token", "<video>"),
        }
        return "\n".join(p["text"] if p["type"] == "text" else markers[p["type"]] for p in content)

    def _inputs(self, requests: Sequence[Request]) -> Any:
        """The processor's tensors for ``requests``, on the CPU."""
        texts, images, videos = [], [], []
        for request in requests:
            content, request_images, request_videos = self._convert(request)
            texts.append(self._prompt(content))
            images.append(request_images)
            videos.extend(request_videos)
        with self._tokenizer_lock:
            if self.text_only:
                return self.tokenizer(texts, padding=True, return_tensors="pt", add_special_tokens=False)
            kwargs: dict[str, Any] = {"text": texts, "padding": True, "return_tensors": "pt"}
            if any(images):
                # One list per request: Gemma 3, Idefics3 and SmolVLM match images to prompts by it, and
                # LLaVA-OneVision processes a request with several images differently from one with one.
                kwargs["images"] = images
            if videos:
                kwargs["videos"] = [frames for frames, _ in videos]
                kwargs["video_metadata"] = [_metadata(len(frames), fps) for frames, fps in videos]
                kwargs["do_sample_frames"] = False
            return self.processor(**kwargs)

    def _on_device(self, inputs: Any) -> dict[str, Any]:
        """``inputs`` on the model's device, floating tensors in the model's dtype (one copy each)."""
        import torch

        device = self.model.device
        return {
            key: value.to(device, self.dtype) if torch.is_floating_point(value) else value.to(device)
            for key, value in inputs.items()
        }

    # -- the contract --------------------------------------------------------------------------------
    def prepare_batch(self, requests: Sequence[Request]) -> PreparedBatch:
        """Decode, resize and run the processor for a batch (no GPU needed: the runner calls it on a background
        thread for the next batch while this one generates)."""
        inputs = self._inputs(requests)
        visual = 0
        if self.visual_token_ids:
            import torch

            ids = inputs["input_ids"]
            visual = int(torch.isin(ids, torch.tensor(sorted(self.visual_token_ids), dtype=ids.dtype)).sum())
        return PreparedBatch(inputs, len(requests), visual)

    def generate(self, requests: Sequence[Request], params: GenerationParams) -> list[str]:
        return self.generate_prepared(self.prepare_batch(requests), params) if requests else []

    def generate_prepared(self, batch: PreparedBatch, params: GenerationParams) -> list[str]:
        from backend.inference import hardware

        return hardware.run(self._generate, batch, params)

    def _generation_options(self, params: GenerationParams) -> dict[str, Any]:
        import torch

        options: dict[str, Any] = {
            "max_new_tokens": params.max_new_tokens or self.spec.max_new_tokens,
            "pad_token_id": self.tokenizer.pad_token_id,
        }
        if params.greedy:
            options["do_sample"] = False
        else:
            torch.manual_seed(params.seed)
            options.update(do_sample=True, temperature=params.temperature, top_p=params.top_p)
        if self.static_cache:
            from transformers import CompileConfig

            options["cache_implementation"] = "static"
            if self.compiles:
                options["compile_config"] = CompileConfig(fullgraph=False, dynamic=None)
            else:
                options["disable_compile"] = True
        return options

    def _generate(self, batch: PreparedBatch, params: GenerationParams) -> list[str]:
        import torch

        with self._lock, torch.inference_mode():
            inputs = self._on_device(batch.inputs)
            try:
                output = self.model.generate(**inputs, **self._generation_options(params))
            except torch.OutOfMemoryError:
                if self.device.startswith("cuda"):
                    torch.cuda.empty_cache()  # the runner retries a smaller batch (backend.inference.batching)
                raise
        new_tokens = output[:, inputs["input_ids"].shape[1] :].cpu()
        with self._tokenizer_lock:
            texts = self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
        usage = self.usage
        usage.items += batch.size
        usage.batches += 1
        usage.largest_batch = max(usage.largest_batch, batch.size)
        usage.visual_tokens += batch.visual_tokens
        usage.static_cache_batches += int(bool(self.static_cache))
        return [_cut(text, params.stop).strip() for text in texts]

    # -- what a run used -----------------------------------------------------------------------------
    def usage_mark(self) -> Usage:
        """The counters now (and the peak memory counter reset on CUDA): pass to :meth:`usage_report`."""
        import torch

        if self.device.startswith("cuda"):
            torch.cuda.reset_peak_memory_stats()
        return Usage(**vars(self.usage))

    def usage_report(self, mark: Usage | None = None) -> dict[str, Any]:
        """What the manifest's ``engine`` says about the calls since ``mark``."""
        import torch
        import transformers

        mark = mark or Usage()
        items = self.usage.items - mark.items
        if self.device.startswith("cuda"):
            peak: dict[str, Any] = {"peak_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 3)}
            peak["peak_memory_of"] = "GPU memory allocated by torch"
        else:
            peak = {"peak_memory_gib": round(_peak_rss() / 2**30, 3), "peak_memory_of": "process resident set"}
        return {
            "engine": f"transformers {transformers.__version__}",
            "device": str(self.model.device),
            "placement": f"device_map={self.device_map}"
            if self.device_map
            else f".to({self.device}) (no dispatch hooks)",
            "dtype": str(self.dtype).removeprefix("torch."),
            "attn_implementation": getattr(self.model.config, "_attn_implementation", None),
            "static_cache": self.static_cache or False,
            "compiled": self.compiles,
            "batches": self.usage.batches - mark.batches,
            "items": items,
            "visual_tokens_per_item": round((self.usage.visual_tokens - mark.visual_tokens) / items, 1)
            if items
            else None,
            **peak,
        }

    def score_options(self, request: Request, options: Sequence[str]) -> list[OptionScore]:
        """Log-likelihood of each option's tokens after the prompt (one forward pass per option)."""
        from backend.inference import hardware

        return hardware.run(self._score_options, request, options)

    def _score_options(self, request: Request, options: Sequence[str]) -> list[OptionScore]:
        import torch

        with self._lock, torch.inference_mode():
            prompt = self._on_device(self._inputs([request]))
            prompt_len = prompt["input_ids"].shape[1]
            scores = []
            for option in options:
                with self._tokenizer_lock:
                    ids = self.tokenizer(" " + option.strip(), add_special_tokens=False, return_tensors="pt")
                ids = ids["input_ids"]
                ids = ids.to(self.model.device)
                inputs = dict(prompt)
                for key, value in prompt.items():
                    if (
                        not torch.is_floating_point(value)
                        and value.dim() == 2
                        and value.shape[1] == prompt_len
                        and key != "image_grid_thw"
                    ):
                        extra = (
                            ids
                            if key == "input_ids"
                            else (torch.ones_like(ids) if key == "attention_mask" else torch.zeros_like(ids))
                        )
                        inputs[key] = torch.cat([value, extra.to(value.dtype)], dim=1)
                logits = self.model(**inputs).logits[0, prompt_len - 1 : -1].float()
                logprobs = torch.log_softmax(logits, dim=-1).gather(1, ids[0].unsqueeze(1)).squeeze(1)
                total = float(logprobs.sum())
                scores.append(OptionScore(total, total / max(1, ids.shape[1]), int(ids.shape[1])))
        return scores

    def unload(self) -> None:
        import torch

        self.model = None
        gc.collect()
        if self.device.startswith("cuda"):
            torch.cuda.empty_cache()


def _metadata(num_frames: int, fps: float | None) -> Any:
    """What the video processor knows of frames we sampled: their rate. Qwen2.5-VL places frames in time with
    it (``second_per_grid_ts``); unknown (``None``) means transformers' default of 24 fps, under which the frames
    of a few seconds of video all get the same temporal position."""
    from transformers.video_utils import VideoMetadata

    return VideoMetadata(total_num_frames=num_frames, fps=fps, frames_indices=list(range(num_frames)))


def _visual_token_ids(processor: Any, tokenizer: Any) -> set[int]:
    """The ids of the tokens that stand for image or video content (what "visual tokens per item" counts)."""
    ids = set()
    for name in ("image_token_id", "video_token_id"):
        value = getattr(processor, name, None)
        if isinstance(value, int):
            ids.add(value)
    for name in ("image_token", "video_token"):
        token = getattr(processor, name, None)
        if isinstance(token, str):
            value = tokenizer.convert_tokens_to_ids(token)
            if isinstance(value, int) and value != tokenizer.unk_token_id:
                ids.add(value)
    return ids


def _static_cache(model: Any, spec: ModelSpec) -> str | None:
    """``"static"`` when ``options.static_cache`` asks for it and the family's model can compile (transformers'
    ``_can_compile_fullgraph``); None otherwise (the dynamic cache)."""
    if not spec.options.get("static_cache"):
        return None
    return "static" if getattr(model, "_can_compile_fullgraph", False) else None


def _peak_rss() -> int:
    """The process's peak resident set in bytes (Linux reports KiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _separate_video_inputs(processor: Any) -> bool:
    """Whether the processor takes ``videos=`` into inputs of their own (``pixel_values_videos``: Qwen2-VL,
    Qwen2.5-VL, LLaVA-OneVision). SmolVLM's video processor writes ``pixel_values``, the images' key, so a batch
    holding an image request and a video request would lose the images: its videos go in as frames."""
    video = getattr(processor, "video_processor", None)
    if video is None:
        return False
    image = getattr(processor, "image_processor", None)
    return not set(video.model_input_names) & set(getattr(image, "model_input_names", ()))


def _cut(text: str, stop: Sequence[str]) -> str:
    for marker in stop:
        if marker and marker in text:
            text = text[: text.index(marker)]
    return text
