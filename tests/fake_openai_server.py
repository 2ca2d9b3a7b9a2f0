"""A small OpenAI-compatible server on 127.0.0.1, for tests and benchmarks, speaking vLLM's dialect.

It speaks the real protocol (``POST /v1/chat/completions`` and ``/v1/completions``, ``GET /v1/models`` with
each served name's ``root`` and ``max_model_len``, ``GET /version``), checks requests the way a server would
(model name, message shape, base64 image data URLs that decode to images) and answers deterministically: the
letter of the option whose text names the colour it sees in the first image, or "The answer is (A)."
otherwise; ``shift`` moves that letter on (other weights served under the same name: :meth:`swap`).

``prompt_logprobs`` (vLLM's per-token log-probabilities of the prompt, chat requests ending in an assistant
message with ``continue_final_message``, or completions): with ``scorer`` (:class:`TransformersScorer`) they are
a real tiny transformers model's; without, each whitespace-separated word of the prompt is a token, scoring
-0.1 when it names the colour seen in the first image and -3.0 otherwise. ``supports_prompt_logprobs = False``
makes it ignore the parameter, as servers other than vLLM do. Knobs for tests: ``delay_s`` per request; a prompt containing
``FAIL500`` always gets HTTP 500; ``FLAKY`` fails with 500 on its first attempt only; ``SLOW`` sleeps past
any client timeout; ``hold_until = n`` makes each request wait (up to 2 s) until n requests are in flight,
so a concurrency test does not depend on thread timing. It records calls, attempts per prompt, GET requests by
path (``gets``: identity reads) and the most requests ever in flight at once.

For the serving layer (backend/inference/backends/transport.py): several instances are replicas of one model;
``kill()`` stops one as a crashed server does (requests in flight get no reply, new connections are refused) and
``revive()`` starts it again on the same port; ``die_after = n`` kills it when its n-th request arrives.
``capacity = n`` answers 429 to any request beyond n in flight, and ``throttle_next(n, retry_after=...)`` the next
n requests (a 429 storm), with a ``Retry-After`` header when given. ``answered`` counts the 200 replies each
prompt got and ``log`` lists (monotonic time of arrival, prompt, status) per reply. ``GET /health`` and ``GET /version``
answer as vLLM's do. Video may come as one ``video_url`` part of JPEG frames (vLLM's ``data:video/jpeg;base64,``
form, frames joined by commas); ``usage.prompt_tokens`` counts words and, with ``media_tokens = n``, n per image
and n per pair of video frames (a video's frames are merged in pairs, as Qwen2-VL's are).
"""

from __future__ import annotations

import base64
import io
import json
import socket
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class TransformersScorer:
    """Real prompt log-probabilities from a tiny text-only transformers model (``AutoModelForCausalLM``), the
    prompt rendered with its tokenizer's chat template as vLLM renders it."""

    def __init__(self, path: str) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
        self._lock = threading.Lock()

    def render(self, body: dict) -> str:
        if "prompt" in body:
            return body["prompt"]
        return self.tokenizer.apply_chat_template(
            body["messages"],
            add_generation_prompt=bool(body.get("add_generation_prompt", True)),
            continue_final_message=bool(body.get("continue_final_message", False)),
            tokenize=False,
        )

    def prompt_logprobs(self, body: dict) -> tuple[int, list]:
        import torch

        ids = self.tokenizer(self.render(body), add_special_tokens=False, return_tensors="pt")["input_ids"]
        with self._lock, torch.inference_mode():
            logits = self.model(input_ids=ids).logits[0, :-1].float()
        logprobs = torch.log_softmax(logits, dim=-1).gather(1, ids[0, 1:].unsqueeze(1)).squeeze(1)
        entries = [None] + [
            {str(int(token)): {"logprob": float(lp), "rank": 1, "decoded_token": ""}}
            for token, lp in zip(ids[0, 1:], logprobs, strict=True)
        ]
        return int(ids.shape[1]), entries


class FakeOpenAIServer:
    def __init__(
        self,
        model: str = "fake-vlm",
        delay_s: float = 0.0,
        slow_s: float = 3.0,
        root: str | None = "/models/fake-vlm-a",
        version: str | None = "0.0.fake",
        scorer: TransformersScorer | None = None,
        port: int = 0,
    ) -> None:
        self.model, self.delay_s, self.slow_s = model, delay_s, slow_s
        self.root, self.version, self.max_model_len = root, version, 4096
        self.scorer = scorer
        self.shift = 0
        self.supports_prompt_logprobs = True
        self.endpoints: Counter[str] = Counter()
        self.gets: Counter[str] = Counter()  # GET requests by path (/v1/models: identity reads)
        self.scored_requests = 0
        self.calls = 0
        self.attempts: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.images_seen = 0
        self.hold_until = 0
        self.videos_seen = 0
        self.media_tokens = 0  # prompt tokens per image and per pair of video frames (0: words only)
        self.last_body: dict = {}
        self.capacity = 0  # 0: no limit; else 429 beyond this many in flight
        self.retry_after: float | None = None  # the Retry-After of capacity 429s
        self.die_after = 0  # kill the server when this many requests have arrived (0: never)
        self.answered: Counter[str] = Counter()
        self.log: list[tuple[float, str, int]] = []
        self.dead = False
        self._storm: list[tuple[int, float | None]] = []  # (status, retry-after) for the next requests
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._server = self._listen(("127.0.0.1", port))
        self._address = self._server.server_address[:2]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _listen(self, address) -> ThreadingHTTPServer:
        return _Server(address, self._handler())

    @property
    def base_url(self) -> str:
        host, port = self._address
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if not self.dead:
            self._server.shutdown()
            self._server.server_close()

    def kill(self) -> None:
        """Crash: stop listening; requests in flight and on open connections get no reply."""
        with self._lock:
            if self.dead:
                return
            self.dead = True
            self._changed.notify_all()
        self._stop_listening()

    def _stop_listening(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def swap(self, root: str | None, shift: int) -> None:
        """Serve other weights under the same name: a new ``root`` (None: say nothing of it) and answers moved
        ``shift`` letters on."""
        self.root, self.shift = root, shift

    def revive(self) -> None:
        """Start again on the same port (a restarted replica)."""
        with self._lock:
            if not self.dead:
                return
            self._server = self._listen(self._address)
            self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
            self.dead = False
        self._thread.start()

    def throttle_next(self, count: int, retry_after: float | None = None, status: int = 429) -> None:
        """Answer the next ``count`` requests with ``status`` (a storm), with ``Retry-After`` when given."""
        with self._lock:
            self._storm.extend([(status, retry_after)] * count)

    def reset(self) -> None:
        """Forget counts, after waiting (up to 5 s) for requests still being served (e.g. a SLOW one)."""
        with self._lock:
            self._changed.wait_for(lambda: self.in_flight == 0, timeout=5.0)
            self.calls, self.max_in_flight, self.images_seen, self.videos_seen = 0, 0, 0, 0
            self.attempts.clear()
            self.endpoints.clear()
            self.scored_requests = 0
            self.answered.clear()
            self.log.clear()

    # -- protocol ---------------------------------------------------------------------------------
    def answer(self, body: dict) -> tuple[int, dict]:
        from PIL import Image

        self.last_body = body

        if body.get("model") != self.model:
            return 404, {"error": {"message": f"model {body.get('model')!r} does not exist", "type": "NotFound"}}
        if "prompt" in body:
            if not isinstance(body["prompt"], str):
                return 400, {"error": {"message": "prompt must be a string", "type": "BadRequest"}}
            messages = [{"role": "user", "content": body["prompt"]}]
        else:
            messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return 400, {"error": {"message": "messages must be a non-empty list", "type": "BadRequest"}}
        texts, images, frames = [], [], 0
        for message in messages:
            content = message.get("content")
            parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for part in parts:
                if part["type"] == "text":
                    texts.append(part["text"])
                elif part["type"] == "image_url":
                    url = part["image_url"]["url"]
                    if not url.startswith("data:image/") or ";base64," not in url:
                        return 400, {"error": {"message": "image_url must be a base64 data URL", "type": "BadRequest"}}
                    images.append(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB"))
                elif part["type"] == "video_url":
                    url = part["video_url"]["url"]
                    if not url.startswith("data:video/jpeg;base64,"):
                        return 400, {"error": {"message": "video_url must be JPEG frames", "type": "BadRequest"}}
                    clip = [Image.open(io.BytesIO(base64.b64decode(f))) for f in url.split(",")[1:]]
                    if not clip or any(f.format != "JPEG" for f in clip):
                        return 400, {"error": {"message": "video frames must be JPEG images", "type": "BadRequest"}}
                    frames += len(clip)
                    images.append(clip[0].convert("RGB"))
                else:
                    return 400, {"error": {"message": f"unknown content part {part['type']!r}", "type": "BadRequest"}}
        prompt = "\n".join(texts)
        with self._lock:
            self.attempts[prompt] += 1
            attempt = self.attempts[prompt]
            self.images_seen += len(images) - (1 if frames else 0)
            self.videos_seen += 1 if frames else 0
        if "FAIL500" in prompt or ("FLAKY" in prompt and attempt == 1):
            return 500, {"error": {"message": "internal server error", "type": "InternalServerError"}}
        if "SLOW" in prompt:
            time.sleep(self.slow_s)
        content = self._reply(prompt, images, self.shift)
        if "prompt" in body:
            choice: dict = {"index": 0, "text": " " + content, "finish_reason": "stop"}
        else:
            choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        prompt_tokens = self._prompt_tokens(prompt, len(images), frames)
        extra: dict = {}
        if self.supports_prompt_logprobs and body.get("prompt_logprobs") is not None:
            prompt_tokens, extra["prompt_logprobs"] = self._prompt_logprobs(body, prompt, images)
            with self._lock:
                self.scored_requests += 1
        elif self.scorer is not None:
            prompt_tokens = self.scorer.prompt_logprobs(body)[0]
        if body.get("logprobs"):
            letter = content[content.index("(") + 1] if "(" in content else "A"
            top = [{"token": letter, "logprob": -0.1}] + [
                {"token": other, "logprob": -3.0 - i} for i, other in enumerate("ABCDEF") if other != letter
            ]
            choice["logprobs"] = {
                "content": [{"token": letter, "logprob": -0.1, "top_logprobs": top[: body.get("top_logprobs", 5)]}]
            }
        return 200, {
            "id": f"chatcmpl-{self.calls}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [choice],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 4, "total_tokens": 0},
            **extra,
        }

    def _prompt_logprobs(self, body: dict, prompt: str, images: list) -> tuple[int, list]:
        if self.scorer is not None:
            return self.scorer.prompt_logprobs(body)
        seen = _colour(images[0]) if images else None
        words = prompt.split()
        entries = [None] + [
            {str(i): {"logprob": -0.1 if word == seen else -3.0, "rank": 1, "decoded_token": word}}
            for i, word in enumerate(words[1:], start=1)
        ]
        return len(words), entries

    def _prompt_tokens(self, prompt: str, images: int, video_frames: int) -> int:
        """Words, and :attr:`media_tokens` per image and per pair of video frames (0 by default: words only)."""
        still = images - (1 if video_frames else 0)
        return len(prompt.split()) + (still + (video_frames + 1) // 2) * self.media_tokens

    @staticmethod
    def _reply(prompt: str, images: list, shift: int = 0) -> str:
        letter = "A"
        if images:
            colour = _colour(images[0])
            for line in prompt.splitlines():
                if len(line) > 3 and line[1:3] == ". " and line[3:].startswith(colour):
                    letter = line[0]
                    break
        return f"The answer is ({'ABCDEF'[('ABCDEF'.index(letter) + shift) % 6]})."

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                return None

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _drop(self) -> None:
                """No reply: the connection closes, as when a server process dies."""
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

            def do_GET(self) -> None:
                path = self.path.rstrip("/")
                with server._lock:
                    server.gets[path] += 1
                if server.dead:
                    self._drop()
                elif path == "/v1/models":
                    entry: dict = {"id": server.model, "object": "model", "owned_by": "fake"}
                    if server.root is not None:
                        entry |= {"root": server.root, "max_model_len": server.max_model_len}
                    self._send(200, {"object": "list", "data": [entry]})
                elif path in ("/health", "/v1/health"):
                    self._send(200, {})
                elif path == "/version" and server.version is not None:
                    self._send(200, {"version": server.version})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                arrived = time.monotonic()
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if server.dead:
                    self._drop()
                    return
                endpoint = self.path.rstrip("/")
                if endpoint not in ("/v1/chat/completions", "/v1/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                if (endpoint == "/v1/completions") != ("prompt" in body):
                    self._send(400, {"error": {"message": "completions take a prompt, chat takes messages"}})
                    return
                with server._lock:
                    server.endpoints[endpoint] += 1
                    server.calls += 1
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    storm = server._storm.pop(0) if server._storm else None
                    if storm is None and server.capacity and server.in_flight > server.capacity:
                        storm = (429, server.retry_after)
                    dies = bool(server.die_after) and server.calls >= server.die_after and not server.dead
                    if dies:
                        server.die_after, server.dead = 0, True
                    server._changed.notify_all()
                    if storm is None and not dies:
                        server._changed.wait_for(
                            lambda: server.in_flight >= server.hold_until or server.dead, timeout=2.0
                        )
                if dies:
                    threading.Thread(target=server._stop_listening, daemon=True).start()
                try:
                    if storm is not None:
                        status, payload = storm[0], {"error": {"message": "slow down", "type": "RateLimitError"}}
                    else:
                        if server.delay_s:
                            time.sleep(server.delay_s)
                        status, payload = server.answer(body)
                finally:
                    with server._lock:
                        server.in_flight -= 1
                        server._changed.notify_all()
                if server.dead:
                    self._drop()
                    return
                headers = {"Retry-After": f"{storm[1]:g}"} if storm is not None and storm[1] is not None else {}
                # counted before the reply goes out: a client that has its answer finds it in the log (counted
                # after, a test reading the log right after its call raced the handler); a reply that could not
                # be sent is taken back
                with server._lock:
                    server.log.append((arrived, _prompt_of(body), status))
                    if status == 200:
                        server.answered[_prompt_of(body)] += 1
                try:
                    self._send(status, payload, headers)
                except (BrokenPipeError, ConnectionResetError):
                    with server._lock:
                        server.log.remove((arrived, _prompt_of(body), status))
                        if status == 200:
                            server.answered[_prompt_of(body)] -= 1
                    return

        return Handler


def _colour(img) -> str:
    from backend.inference.toy import COLOURS

    pixel = img.getpixel((img.width // 2, img.height // 2))
    return min(COLOURS, key=lambda c: sum((a - b) ** 2 for a, b in zip(COLOURS[c], pixel, strict=True)))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # socketserver's 5 resets connections when many clients connect at once


def _prompt_of(body: dict) -> str:
    """The prompt of a completions request, the text parts of a chat request joined (how the counts above name
    a request)."""
    if isinstance(body.get("prompt"), str):
        return body["prompt"]
    texts = []
    for message in body.get("messages") or []:
        content = message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        texts += [part["text"] for part in parts if part.get("type") == "text"]
    return "\n".join(texts)


if __name__ == "__main__":  # a server in its own process, for benchmarks (benchmarks/serving.py)
    import argparse

    parser = argparse.ArgumentParser(description="serve the fake OpenAI-compatible server until killed")
    parser.add_argument("--model", default="fake-vlm")
    parser.add_argument("--delay-s", type=float, default=0.0, help="service time per request")
    parser.add_argument("--port", type=int, default=0, help="the port (default: a free one); as an engine of serve")
    parser.add_argument("--root", default="/models/fake-vlm-a", help="the weights' folder /v1/models names")
    args = parser.parse_args()
    with FakeOpenAIServer(args.model, delay_s=args.delay_s, root=args.root, port=args.port) as fake:
        print(fake.base_url, flush=True)
        threading.Event().wait()
