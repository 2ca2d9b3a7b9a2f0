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
* GPU when present: bf16 and ``device_map="auto"``; CPU and float32 otherwise. Loading happens when the
  backend is built (on first use, through the registry's pool); :meth:`unload` frees the weights.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Sequence
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


class TransformersBackend:
    # transformers' Auto* classes return a different class per model (and None after unload): typed as Any
    processor: Any
    tokenizer: Any
    model: Any

    def __init__(self, spec: ModelSpec) -> None:
        import transformers

        self.spec = spec
        self.text_only = spec.options.get("model_class") == "causal-lm"
        self.device, self.dtype = _device_and_dtype(spec)
        self._lock = threading.Lock()
        load = {"dtype": self.dtype}
        if self.device == "cuda" and spec.device == "auto":
            load["device_map"] = "auto"
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
        if "device_map" not in load:
            self.model.to(self.device)
        self.model.eval()
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.native_video = bool(spec.options.get("native_video")) and _separate_video_inputs(self.processor)

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
        texts, images, videos = [], [], []
        for request in requests:
            content, request_images, request_videos = self._convert(request)
            texts.append(self._prompt(content))
            images.append(request_images)
            videos.extend(request_videos)
        if self.text_only:
            inputs = self.tokenizer(texts, padding=True, return_tensors="pt", add_special_tokens=False)
        else:
            kwargs: dict[str, Any] = {"text": texts, "padding": True, "return_tensors": "pt"}
            if any(images):
                # One list per request: Gemma 3, Idefics3 and SmolVLM match images to prompts by it, and
                # LLaVA-OneVision processes a request with several images differently from one with one.
                kwargs["images"] = images
            if videos:
                kwargs["videos"] = [frames for frames, _ in videos]
                kwargs["video_metadata"] = [_metadata(len(frames), fps) for frames, fps in videos]
                kwargs["do_sample_frames"] = False
            inputs = self.processor(**kwargs)
        return inputs.to(self.model.device)

    # -- the contract --------------------------------------------------------------------------------
    def generate(self, requests: Sequence[Request], params: GenerationParams) -> list[str]:
        from backend.inference import hardware

        return hardware.run(self._generate, requests, params)

    def _generate(self, requests: Sequence[Request], params: GenerationParams) -> list[str]:
        import torch

        if not requests:
            return []
        with self._lock, torch.inference_mode():
            inputs = self._inputs(requests)
            for key, value in inputs.items():
                if torch.is_floating_point(value):
                    inputs[key] = value.to(self.dtype)
            options: dict[str, Any] = {
                "max_new_tokens": params.max_new_tokens or self.spec.max_new_tokens,
                "pad_token_id": self.tokenizer.pad_token_id,
            }
            if params.greedy:
                options["do_sample"] = False
            else:
                torch.manual_seed(params.seed)
                options.update(do_sample=True, temperature=params.temperature, top_p=params.top_p)
            output = self.model.generate(**inputs, **options)
        new_tokens = output[:, inputs["input_ids"].shape[1] :]
        texts = self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
        return [_cut(text, params.stop).strip() for text in texts]

    def score_options(self, request: Request, options: Sequence[str]) -> list[OptionScore]:
        """Log-likelihood of each option's tokens after the prompt (one forward pass per option)."""
        from backend.inference import hardware

        return hardware.run(self._score_options, request, options)

    def _score_options(self, request: Request, options: Sequence[str]) -> list[OptionScore]:
        import torch

        with self._lock, torch.inference_mode():
            prompt = self._inputs([request])
            prompt_len = prompt["input_ids"].shape[1]
            scores = []
            for option in options:
                ids = self.tokenizer(" " + option.strip(), add_special_tokens=False, return_tensors="pt")["input_ids"]
                ids = ids.to(self.model.device)
                inputs = dict(prompt)
                for key, value in prompt.items():
                    if torch.is_floating_point(value):
                        inputs[key] = value.to(self.dtype)
                    elif value.dim() == 2 and value.shape[1] == prompt_len and key != "image_grid_thw":
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
