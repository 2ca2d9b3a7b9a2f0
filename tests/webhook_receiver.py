"""A loopback webhook receiver for the tests: a real HTTP server on 127.0.0.1 that checks each delivery's
signature itself (its own HMAC, not backend/webhooks/signing.py), keeps every request, de-duplicates events by
their id, and can answer 500 to the first ``fail_first`` requests (to see the sender retry)."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    event_id: str
    event: str
    body: dict[str, Any]
    signature_ok: bool
    attempt: int
    at: float


@dataclass
class Receiver:
    secret: str
    fail_first: int = 0
    requests: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def signature_ok(self, timestamp: str, body: bytes, given: str) -> bool:
        if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > 300:
            return False
        expected = (
            "sha256=" + hmac.new(self.secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
        )
        return hmac.compare_digest(expected, given)

    def events(self) -> dict[str, Received]:
        """Each event once (the first signed delivery of it that was answered 2xx), by event id."""
        with self.lock:
            seen: dict[str, Received] = {}
            for r in self.requests:
                if r.signature_ok and r.event_id not in seen and r.attempt >= 0:
                    seen[r.event_id] = r
            return seen

    def wait_for(self, predicate, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self):
                return
            time.sleep(0.05)
        raise AssertionError(f"the receiver did not see what was awaited in {timeout} s: {self.requests!r}")

    def start(self, port: int = 0) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                ok = receiver.signature_ok(
                    self.headers.get("X-CompStudio-Timestamp", ""), body, self.headers.get("X-CompStudio-Signature", "")
                )
                with receiver.lock:
                    failing = len(receiver.requests) < receiver.fail_first
                    receiver.requests.append(
                        Received(
                            self.headers.get("X-CompStudio-Event-Id", ""),
                            self.headers.get("X-CompStudio-Event", ""),
                            json.loads(body or b"{}"),
                            ok,
                            -1 if failing else int(self.headers.get("X-CompStudio-Attempt") or 0),
                            time.time(),
                        )
                    )
                status = 500 if failing else (200 if ok else 401)
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
