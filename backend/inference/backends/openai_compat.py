"""``openai``: any OpenAI-compatible chat-completions server (vLLM, TGI, SGLang, hosted APIs).

``spec.path`` is the served model name; ``options``: ``base_url`` (e.g. ``http://host:8000/v1``),
``api_key_env`` (name of the environment variable holding the key; none sent when unset), ``timeout_s``
(per request, default 60), ``retries`` (default 3), ``backoff_s`` (first retry delay, doubled each time,
default 0.5). Images go as base64 PNG data URLs; a video as ``frames_per_video`` sampled frames.
Up to ``spec.concurrency`` requests are in flight at once. Timeouts, connection errors, 429 and 5xx
are retried with exponential backoff; a request that still fails becomes an :class:`InferenceError`
for its item only (:meth:`generate_each`). Scaling out = pointing this at a vLLM deployment.

``score_options`` asks for one token with ``logprobs`` and reads the log-probability of each option's
letter (the server cannot score arbitrary continuations); ``InferenceError`` if the server returns none.
"""

from __future__ import annotations

import base64
import io
import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from backend.errors import InferenceError
from backend.inference.base import OptionScore
from backend.inference.parsing import letters_for
from backend.inference.request import GenerationParams, Request, load_image, text, validate_request, video_frames

if TYPE_CHECKING:
    from PIL import Image

    from backend.inference.registry import ModelSpec

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


def data_url(img: Image.Image) -> str:
    buffer = io.BytesIO()
    img.save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


class OpenAIBackend:
    def __init__(self, spec: ModelSpec) -> None:
        import httpx

        self.spec = spec
        options = spec.options
        if not options.get("base_url"):
            raise InferenceError(f"model {spec.name}: options.base_url is required for the openai backend")
        self.timeout_s = float(options.get("timeout_s", 60))
        self.retries = int(options.get("retries", 3))
        self.backoff_s = float(options.get("backoff_s", 0.5))
        headers = {}
        key = os.environ.get(options.get("api_key_env") or "", "")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self.client = httpx.Client(
            base_url=str(options["base_url"]).rstrip("/") + "/",
            headers=headers,
            timeout=self.timeout_s,
            limits=httpx.Limits(max_connections=spec.concurrency, max_keepalive_connections=spec.concurrency),
        )
        self._pool = ThreadPoolExecutor(max_workers=spec.concurrency, thread_name_prefix=f"openai-{spec.name}")

    def messages(self, request: Request) -> list[dict[str, Any]]:
        validate_request(request)
        content: list[dict[str, Any]] = []
        for part in request:
            if part["type"] == "text":
                content.append({"type": "text", "text": part["text"]})
            elif part["type"] == "image":
                img = load_image(part["image"], self.spec.max_image_side)
                content.append({"type": "image_url", "image_url": {"url": data_url(img)}})
            else:
                for frame in video_frames(part, self.spec.frames_per_video, self.spec.max_image_side):
                    content.append({"type": "image_url", "image_url": {"url": data_url(frame)}})
        return [{"role": "user", "content": content}]

    def _body(self, request: Request, params: GenerationParams) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.spec.path,
            "messages": self.messages(request),
            "max_tokens": params.max_new_tokens or self.spec.max_new_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "seed": params.seed,
        }
        if params.stop:
            body["stop"] = list(params.stop)
        return body

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        import httpx

        problem = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                response = self.client.post("chat/completions", json=body)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                problem = f"{type(exc).__name__}: {exc or 'timed out'}"
                continue
            if response.status_code in RETRY_STATUS:
                problem = f"HTTP {response.status_code}: {response.text[:200]}"
                continue
            if response.status_code != 200:
                raise InferenceError(
                    f"model server refused the request: HTTP {response.status_code}: {response.text[:500]}"
                )
            return response.json()
        raise InferenceError(f"model server failed after {self.retries + 1} attempts; last: {problem}")

    def _one(self, request: Request, params: GenerationParams) -> str:
        reply = self._post(self._body(request, params))
        try:
            return (reply["choices"][0]["message"].get("content") or "").strip()
        except (KeyError, IndexError, TypeError) as exc:
            raise InferenceError(f"model server sent an unexpected reply: {str(reply)[:300]}") from exc

    def generate_each(self, requests: Sequence[Request], params: GenerationParams) -> list[str | Exception]:
        """One answer or one exception per request, ``concurrency`` in flight."""
        futures = [self._pool.submit(self._one, request, params) for request in requests]
        results: list[str | Exception] = []
        for future in futures:
            try:
                results.append(future.result())
            except Exception as exc:
                results.append(exc)
        return results

    def generate(self, requests: Sequence[Request], params: GenerationParams) -> list[str]:
        results = self.generate_each(requests, params)
        for result in results:
            if isinstance(result, Exception):
                raise result
        return [str(r) for r in results]

    def score_options(self, request: Request, options: Sequence[str]) -> list[OptionScore]:
        letters = letters_for(len(options))
        listing = "\n".join(f"{letter}. {option}" for letter, option in zip(letters, options, strict=True))
        prompt = [*request, text(f"Options:\n{listing}\nAnswer with the option's letter only.")]
        body = self._body(prompt, GenerationParams(max_new_tokens=1))
        body.update(logprobs=True, top_logprobs=min(20, max(5, len(options))))
        reply = self._post(body)
        try:
            top = reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
        except (KeyError, IndexError, TypeError) as exc:
            raise InferenceError("the model server returned no log-probabilities") from exc
        best: dict[str, float] = {}
        for entry in top:
            token = entry["token"].strip().strip("().").upper()
            if token in letters and token not in best:
                best[token] = float(entry["logprob"])
        floor = min(best.values(), default=0.0) - 10.0
        return [OptionScore(best.get(letter, floor), best.get(letter, floor), 1) for letter in letters]

    def unload(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.client.close()
