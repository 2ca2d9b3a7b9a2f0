"""``openai``: any OpenAI-compatible server (vLLM, TGI, SGLang, hosted APIs).

``spec.path`` is the served model name; ``options``: ``base_url`` (e.g. ``http://host:8000/v1``, or a list of
replicas), ``api_key_env`` (name of the environment variable holding the key; none sent when unset),
``native_video``, ``extra_body`` (fields added to every request, e.g. vLLM's ``top_k`` or ``ignore_eos``; part of
the key), and how requests travel: ``timeout_s`` (per request, default 60), ``retries`` (default 3), ``backoff_s``
(first retry delay, doubled each time, default 0.5), ``adaptive_concurrency`` with ``min_concurrency`` /
``max_concurrency``, health checks and ``Retry-After``, all in :mod:`backend.inference.backends.transport`, which
sends every request (:meth:`_post` is the seam). Up to ``spec.concurrency`` requests are in flight at once (or the
adaptive limit); a request that still fails after its retries becomes an :class:`InferenceError` for its item
only (:meth:`generate_each`), and :meth:`generate_stream` yields answers as they arrive, so a batch run keeps the
limit in flight. Scaling out = pointing this at a vLLM or SGLang deployment (docs/scaling.md).

* **Prompts.** ``prompt_style="chat"``: ``/v1/chat/completions``, one user message (images as base64 PNG data
  URLs, a video as ``frames_per_video`` sampled frames, each an image, or with ``native_video`` as one
  ``video_url`` part holding those frames as JPEGs: the ``data:video/jpeg;base64,`` form vLLM takes for
  Qwen2-VL-family models, so the server's video processor sees a clip). ``"plain"``: ``/v1/completions`` with the plain template
  (the request's text parts joined by newlines, as the transformers backend's plain template; text only: the
  completions API takes no images), for base models.
* **What is served** (:meth:`identity`): ``GET /v1/models`` (the entry of the served name: ``root``, the weights'
  folder, and ``max_model_len``) and ``GET /version`` at the server's root, read at the first call and again at
  the start of every run; :mod:`backend.inference.revision` binds them into the revision. With replicas, the
  first that answers, under the replicas' URLs together (``models test`` compares them all:
  :mod:`backend.inference.probe`).
* **Likelihood** (:meth:`score_options`): each option's text is scored by its log-probability as the continuation
  of the prompt, from the server's per-token ``prompt_logprobs`` (vLLM): chat requests end with an assistant
  message holding the option (``continue_final_message``), plain ones append it to the prompt; the option's tokens
  are those past the prompt's own token count. A server that returns no prompt log-probabilities is refused
  (:meth:`check_likelihood`): there is no top-k-letter fallback.
"""

from __future__ import annotations

import base64
import io
import os
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from typing import TYPE_CHECKING, Any

from backend.errors import InferenceError, ValidationError
from backend.inference.backends.transport import Transport, TransportOptions
from backend.inference.base import OptionScore
from backend.inference.request import GenerationParams, Request, load_image, validate_request, video_frames
from backend.inference.video_input import native_video

if TYPE_CHECKING:
    import httpx
    from PIL import Image

    from backend.inference.registry import ModelSpec

NO_PROMPT_LOGPROBS = (
    "the model server at {url} returns no prompt log-probabilities (prompt_logprobs), so option texts cannot be "
    "scored: scoring 'likelihood' is refused for model {name}. Serve it with vLLM, or set scoring: generate."
)


def data_url(img: Image.Image) -> str:
    buffer = io.BytesIO()
    img.save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def video_data_url(frames: Sequence[Image.Image], quality: int = 95) -> str:
    """Sampled frames as one clip: JPEG frames, base64, joined by commas (vLLM's ``video/jpeg`` data URL)."""
    encoded = []
    for frame in frames:
        buffer = io.BytesIO()
        frame.convert("RGB").save(buffer, format="JPEG", quality=quality)
        encoded.append(base64.b64encode(buffer.getvalue()).decode())
    return "data:video/jpeg;base64," + ",".join(encoded)


def scoring_method(spec: ModelSpec) -> str:
    """How this backend scores ``scoring: likelihood`` (named in the run manifest)."""
    endpoint = "/v1/completions" if spec.prompt_style == "plain" else "/v1/chat/completions (continue_final_message)"
    return f"option text log-probability from the server's prompt_logprobs on {endpoint}"


class OpenAIBackend:
    def __init__(self, spec: ModelSpec) -> None:

        self.spec = spec
        options = spec.options
        self.plain = spec.prompt_style == "plain"
        self.native_video = native_video(spec)
        extra = options.get("extra_body") or {}
        if not isinstance(extra, dict):
            raise ValidationError(f"model {spec.name}: options.extra_body must be a mapping of request fields")
        self.extra_body: dict[str, Any] = dict(extra)  # server-specific fields (vLLM: top_k, ignore_eos, ...)
        headers = {}
        key = os.environ.get(options.get("api_key_env") or "", "")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self.transport = Transport(TransportOptions.from_spec(spec), headers, name=spec.name)
        self.base_url = self.transport.replicas[0].url  # the first replica: identity, messages
        self.timeout_s = self.transport.options.timeout_s
        self.client: httpx.Client = self.transport.replicas[0].client
        workers = self.transport.options.workers
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"openai-{spec.name}")
        self._identity: dict[str, Any] | None = None
        self._identity_lock = threading.Lock()
        self._prompt_logprobs: bool | None = None

    # -- what the server serves ---------------------------------------------------------------------
    def identity(self, refresh: bool = False, timeout_s: float | None = None) -> dict[str, Any]:
        """What the server says it serves under ``spec.path``: ``root``, ``max_model_len``, ``server_version``
        (each None when not offered), with ``base_url`` and ``served_name``; ``unreachable`` (the error) when the
        server did not answer. Read once, and again with ``refresh``; ``timeout_s``: the wait for each reply when
        it is read now (default ``min(timeout_s option, 10)``; views ask for less, runs refresh with the default)."""
        with self._identity_lock:
            if self._identity is None or refresh:
                self._identity = self._read_identity(timeout_s)
            return dict(self._identity)

    def _read_identity(self, timeout_s: float | None = None) -> dict[str, Any]:
        """The first replica that answers says what is served; ``base_url`` names the whole deployment (the
        replicas' URLs together, sorted), so the revision depends neither on which replica answered nor on the
        order the replicas are listed in (docs/decisions.md)."""
        found: dict[str, Any] = {}
        for replica in self.transport.replicas:
            found = self._identity_of(replica.client, replica.url, timeout_s)
            if "unreachable" not in found:
                break
        return found | {"base_url": ",".join(sorted(r.url for r in self.transport.replicas))}

    def _identity_of(self, client: httpx.Client, base_url: str, timeout_s: float | None = None) -> dict[str, Any]:
        import httpx

        found: dict[str, Any] = {"base_url": base_url, "served_name": self.spec.path}
        timeout = min(self.timeout_s, 10.0 if timeout_s is None else timeout_s)
        try:
            listing = client.get("models", timeout=timeout)
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            return found | {"unreachable": f"{type(exc).__name__}: {exc or 'timed out'}"}
        entry: dict[str, Any] = {}
        if listing.status_code == 200:
            try:
                entries = listing.json().get("data") or []
                entry = next((e for e in entries if isinstance(e, dict) and e.get("id") == self.spec.path), {})
            except (ValueError, AttributeError):
                entry = {}
        found |= {"root": entry.get("root"), "max_model_len": entry.get("max_model_len"), "server_version": None}
        root_url = base_url[: -len("/v1")] if base_url.endswith("/v1") else base_url
        try:
            version = client.get(root_url + "/version", timeout=timeout)
            if version.status_code == 200:
                found["server_version"] = str(version.json().get("version") or "") or None
        except (httpx.TimeoutException, httpx.TransportError, ValueError, AttributeError):
            pass
        return found

    # -- prompts ---------------------------------------------------------------------------------
    def content(self, request: Request, native_video: bool | None = None) -> list[dict[str, Any]]:
        """The parts of a user message; a video as one clip (``native_video``, default: the option) or as frames."""
        validate_request(request)
        as_clip = self.native_video if native_video is None else native_video
        content: list[dict[str, Any]] = []
        for part in request:
            if part["type"] == "text":
                content.append({"type": "text", "text": part["text"]})
            elif part["type"] == "image":
                img = load_image(part["image"], self.spec.max_image_side)
                content.append({"type": "image_url", "image_url": {"url": data_url(img)}})
            else:
                frames = video_frames(part, self.spec.frames_per_video, self.spec.max_image_side)
                if as_clip:
                    content.append({"type": "video_url", "video_url": {"url": video_data_url(frames)}})
                    continue
                for frame in frames:
                    content.append({"type": "image_url", "image_url": {"url": data_url(frame)}})
        return content

    def messages(self, request: Request, native_video: bool | None = None) -> list[dict[str, Any]]:
        return [{"role": "user", "content": self.content(request, native_video)}]

    def plain_prompt(self, request: Request) -> str:
        """The plain template: the text parts joined by newlines (the completions API takes no media)."""
        validate_request(request)
        media = [part["type"] for part in request if part["type"] != "text"]
        if media:
            raise ValidationError(
                f"model {self.spec.name}: prompt_style 'plain' sends text to /v1/completions, which takes no "
                f"{media[0]}; use prompt_style 'chat' for items with images or video"
            )
        return "\n".join(part["text"] for part in request)

    def _body(self, request: Request, params: GenerationParams) -> tuple[str, dict[str, Any]]:
        body: dict[str, Any] = {
            "model": self.spec.path,
            "max_tokens": params.max_new_tokens or self.spec.max_new_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "seed": params.seed,
        }
        if params.stop:
            body["stop"] = list(params.stop)
        body |= self.extra_body
        if self.plain:
            return "completions", body | {"prompt": self.plain_prompt(request), "add_special_tokens": False}
        return "chat/completions", body | {"messages": self.messages(request)}

    def _post(self, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
        """The one place requests leave: through the transport (replicas, retries, concurrency limit)."""
        return self.transport.post(endpoint, body)

    def _one(self, request: Request, params: GenerationParams) -> str:
        endpoint, body = self._body(request, params)
        reply = self._post(endpoint, body)
        try:
            choice = reply["choices"][0]
            found = choice["text"] if self.plain else choice["message"].get("content")
            return (found or "").strip()
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise InferenceError(f"model server sent an unexpected reply: {str(reply)[:300]}") from exc

    def generate_each(self, requests: Sequence[Request], params: GenerationParams) -> list[str | Exception]:
        """One answer or one exception per request, ``concurrency`` in flight."""
        return _gather([self._pool.submit(self._one, request, params) for request in requests])

    def generate_stream(
        self, requests: Sequence[Request], params: GenerationParams
    ) -> Iterator[tuple[int, str | Exception, float]]:
        """``(index, answer or exception, latency ms)`` per request, as answers arrive (any order), the limit in
        flight all along. Closing the iterator early cancels what was not sent."""

        def timed(request: Request) -> tuple[str | Exception, float]:
            began = time.perf_counter()
            try:
                answer: str | Exception = self._one(request, params)
            except Exception as exc:
                answer = exc
            return answer, (time.perf_counter() - began) * 1000

        futures = {self._pool.submit(timed, request): index for index, request in enumerate(requests)}
        try:
            for future in as_completed(futures):
                answer, latency = future.result()
                yield futures[future], answer, latency
        finally:
            for future in futures:
                future.cancel()

    def video_prompt_tokens(self, request: Request) -> dict[str, int]:
        """The prompt tokens the server counts for ``request`` with its video sent as a clip and as frames (one
        one-token call each; for the run manifest)."""
        counts = {}
        for name, as_clip in (("video", True), ("frames", False)):
            body = {"model": self.spec.path, "messages": self.messages(request, as_clip), "max_tokens": 1}
            usage = self._post("chat/completions", {**body, "temperature": 0.0}).get("usage") or {}
            if "prompt_tokens" not in usage:
                raise InferenceError("the model server reported no usage.prompt_tokens")
            counts[name] = int(usage["prompt_tokens"])
        return counts

    def serving_mark(self) -> dict[str, Any]:
        """A mark for :meth:`serving_report` (taken when a run starts)."""
        return self.transport.mark()

    def serving_report(self, since: dict[str, Any] | None = None) -> dict[str, Any]:
        """Replicas, concurrency (start, settled, lowest, highest), throttling and token usage since ``since``."""
        return {**self.transport.report(since), "video_input": "video" if self.native_video else "frames"}

    def generate(self, requests: Sequence[Request], params: GenerationParams) -> list[str]:
        results = self.generate_each(requests, params)
        for result in results:
            if isinstance(result, Exception):
                raise result
        return [str(r) for r in results]

    # -- likelihood ------------------------------------------------------------------------------
    def _scoring_body(self, request: Request, continuation: str | None) -> tuple[str, dict[str, Any]]:
        """A one-token request whose prompt is ``request`` (ready for the answer) followed by
        ``continuation``; with ``None``, the prompt alone (to count its tokens)."""
        endpoint, body = self._body(request, GenerationParams(max_new_tokens=1))
        if continuation is None:
            return endpoint, body if self.plain else body | {"add_generation_prompt": True}
        if self.plain:
            return endpoint, body | {"prompt": body["prompt"] + continuation, "prompt_logprobs": 0}
        messages = [*body["messages"], {"role": "assistant", "content": continuation}]
        extra = {"add_generation_prompt": False, "continue_final_message": True, "prompt_logprobs": 0}
        return endpoint, body | {"messages": messages} | extra

    def _prompt_tokens(self, request: Request) -> int:
        reply = self._post(*self._scoring_body(request, None))
        try:
            return int(reply["usage"]["prompt_tokens"])
        except (KeyError, TypeError, ValueError) as exc:
            raise InferenceError("the model server reported no prompt token count (usage.prompt_tokens)") from exc

    def _continuation(self, request: Request, option: str) -> list[float]:
        """The per-token log-probabilities of the prompt followed by `` option`` (the transformers backend's
        option tokens: a space, then the option text)."""
        reply = self._post(*self._scoring_body(request, " " + option.strip()))
        found = reply.get("prompt_logprobs")
        if found is None and reply.get("choices"):
            found = reply["choices"][0].get("prompt_logprobs")
        if not isinstance(found, list):
            raise InferenceError(NO_PROMPT_LOGPROBS.format(url=self.base_url, name=self.spec.name))
        values = []
        for entry in found[1:]:  # the first token has no log-probability
            if not isinstance(entry, dict) or len(entry) != 1:
                raise InferenceError(f"the model server sent prompt_logprobs of an unknown shape: {str(entry)[:200]}")
            values.append(float(next(iter(entry.values()))["logprob"]))
        return values

    def check_likelihood(self) -> None:
        """Refuse likelihood scoring (``InferenceError``) where the server returns no prompt log-probabilities;
        asked once (a text-only probe)."""
        if self._prompt_logprobs is None:
            try:
                self._continuation([{"type": "text", "text": "Answer:"}], "yes")
                self._prompt_logprobs = True
            except InferenceError as exc:
                if "prompt_logprobs" not in str(exc) and "HTTP 400" not in str(exc):
                    raise  # the server is down or failing: not a verdict on what it supports
                self._prompt_logprobs = False
        if not self._prompt_logprobs:
            raise InferenceError(NO_PROMPT_LOGPROBS.format(url=self.base_url, name=self.spec.name))

    def score_each(self, asks: Sequence[tuple[Request, Sequence[str]]]) -> list[list[OptionScore] | Exception]:
        """Option scores for many (request, options) at once, ``concurrency`` requests in flight: each prompt's
        token count and each prompt + option, all submitted together."""
        self.check_likelihood()
        submitted = [
            (
                self._pool.submit(self._prompt_tokens, request),
                [self._pool.submit(self._continuation, request, option) for option in options],
            )
            for request, options in asks
        ]
        results: list[list[OptionScore] | Exception] = []
        for prefix, continuations in submitted:
            try:
                prompt_tokens = prefix.result()
                scores = []
                for future in continuations:
                    values = future.result()[prompt_tokens - 1 :]
                    if not values:
                        raise InferenceError("the server counted no tokens for an option")
                    scores.append(OptionScore(sum(values), sum(values) / len(values), len(values)))
                results.append(scores)
            except Exception as exc:
                results.append(exc)
        return results

    def score_options(self, request: Request, options: Sequence[str]) -> list[OptionScore]:
        result = self.score_each([(request, options)])[0]
        if isinstance(result, Exception):
            raise result
        return result

    def unload(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.transport.close()


def _gather(futures: Sequence[Future]) -> list[Any]:
    results: list[Any] = []
    for future in futures:
        try:
            results.append(future.result())
        except Exception as exc:
            results.append(exc)
    return results
