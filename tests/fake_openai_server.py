"""A small OpenAI-compatible chat-completions server on 127.0.0.1, for tests and benchmarks.

It speaks the real protocol (``POST /v1/chat/completions``, ``GET /v1/models``), checks requests the way
a server would (model name, message shape, base64 image data URLs that decode to images) and answers
deterministically: the letter of the option whose text names the colour it sees in the first image, or
"The answer is (A)." otherwise. Knobs for tests: ``delay_s`` per request; a prompt containing
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


class FakeOpenAIServer:
    def __init__(self, model: str = "fake-vlm", delay_s: float = 0.0, slow_s: float = 3.0) -> None:
        self.model, self.delay_s, self.slow_s = model, delay_s, slow_s
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

    def reset(self) -> None:
        """Forget counts, after waiting (up to 5 s) for requests still being served (e.g. a SLOW one)."""
        with self._lock:
            self._changed.wait_for(lambda: self.in_flight == 0, timeout=5.0)
            self.calls, self.max_in_flight, self.images_seen = 0, 0, 0
            self.attempts.clear()

    # -- protocol ---------------------------------------------------------------------------------
    def answer(self, body: dict) -> tuple[int, dict]:
        from PIL import Image

        if body.get("model") != self.model:
            return 404, {"error": {"message": f"model {body.get('model')!r} does not exist", "type": "NotFound"}}
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
        content = self._reply(prompt, images)
        choice: dict = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
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
            "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": 4, "total_tokens": 0},
        }

    @staticmethod
    def _reply(prompt: str, images: list) -> str:
        from backend.inference.toy import COLOURS

        if images:
            pixel = images[0].getpixel((images[0].width // 2, images[0].height // 2))
            colour = min(COLOURS, key=lambda c: sum((a - b) ** 2 for a, b in zip(COLOURS[c], pixel, strict=True)))
            for line in prompt.splitlines():
                if len(line) > 3 and line[1:3] == ". " and line[3:].startswith(colour):
                    return f"The answer is ({line[0]})."
        return "The answer is (A)."

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
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [{"id": server.model, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": "not found"}})
                    return
                with server._lock:
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
