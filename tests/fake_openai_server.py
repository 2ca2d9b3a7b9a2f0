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
so a concurrency test does not depend on thread timing. It records calls, attempts per prompt and the most
requests ever in flight at once.
"""

from __future__ import annotations

import base64
import io
import json
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
    ) -> None:
        self.model, self.delay_s, self.slow_s = model, delay_s, slow_s
        self.root, self.version, self.max_model_len = root, version, 4096
        self.scorer = scorer
        self.shift = 0
        self.supports_prompt_logprobs = True
        self.endpoints: Counter[str] = Counter()
        self.scored_requests = 0
        self.calls = 0
        self.attempts: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.images_seen = 0
        self.hold_until = 0
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def swap(self, root: str | None, shift: int) -> None:
        """Serve other weights under the same name: a new ``root`` (None: say nothing of it) and answers moved
        ``shift`` letters on."""
        self.root, self.shift = root, shift

    def reset(self) -> None:
        """Forget counts, after waiting (up to 5 s) for requests still being served (e.g. a SLOW one)."""
        with self._lock:
            self._changed.wait_for(lambda: self.in_flight == 0, timeout=5.0)
            self.calls, self.max_in_flight, self.images_seen = 0, 0, 0
            self.attempts.clear()
            self.endpoints.clear()
            self.scored_requests = 0

    # -- protocol ---------------------------------------------------------------------------------
    def answer(self, body: dict) -> tuple[int, dict]:
        from PIL import Image

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
        texts, images = [], []
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
                else:
                    return 400, {"error": {"message": f"unknown content part {part['type']!r}", "type": "BadRequest"}}
        prompt = "\n".join(texts)
        with self._lock:
            self.attempts[prompt] += 1
            attempt = self.attempts[prompt]
            self.images_seen += len(images)
        if "FAIL500" in prompt or ("FLAKY" in prompt and attempt == 1):
            return 500, {"error": {"message": "internal server error", "type": "InternalServerError"}}
        if "SLOW" in prompt:
            time.sleep(self.slow_s)
        content = self._reply(prompt, images, self.shift)
        if "prompt" in body:
            choice: dict = {"index": 0, "text": " " + content, "finish_reason": "stop"}
        else:
            choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        prompt_tokens = len(prompt.split())
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

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                path = self.path.rstrip("/")
                if path == "/v1/models":
                    entry: dict = {"id": server.model, "object": "model", "owned_by": "fake"}
                    if server.root is not None:
                        entry |= {"root": server.root, "max_model_len": server.max_model_len}
                    self._send(200, {"object": "list", "data": [entry]})
                elif path == "/version" and server.version is not None:
                    self._send(200, {"version": server.version})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
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
                    server._changed.notify_all()
                    server._changed.wait_for(lambda: server.in_flight >= server.hold_until, timeout=2.0)
                try:
                    if server.delay_s:
                        time.sleep(server.delay_s)
                    status, payload = server.answer(body)
                finally:
                    with server._lock:
                        server.in_flight -= 1
                        server._changed.notify_all()
                try:
                    self._send(status, payload)
                except (BrokenPipeError, ConnectionResetError):
                    return

        return Handler


def _colour(img) -> str:
    from backend.inference.toy import COLOURS

    pixel = img.getpixel((img.width // 2, img.height // 2))
    return min(COLOURS, key=lambda c: sum((a - b) ** 2 for a, b in zip(COLOURS[c], pixel, strict=True)))
