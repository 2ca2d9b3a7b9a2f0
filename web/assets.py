"""Gradio's built frontend files, from memory, gzipped and cached by the browser, as middleware (issues 17, 25).

Gradio serves each of its frontend files (``<mount>/assets/...``, ``<mount>/static/...``) with Starlette's
``FileResponse``, with no ``Cache-Control``, so every visit asks again, uncompressed, and each answer is a stat
and a file read on a worker thread. A page needs 60-80 of them, and a browser opens only six connections to a
host, so at sign-in they queue behind each other; gzipping each answer again on every request (Starlette's
GZipMiddleware, or the mount's own Brotli/gzip middleware) cost 3× the time of an answer from memory for a 135 KB
file (10.4 against 3.5 ms, measured 2026-12-03), and the page's 60-80 files made the annotator's sign-in ~0.3 s
slower than the shell before this one, which served them from memory.

So this middleware lets Gradio answer the first request for a file (asked without ``Accept-Encoding``) (every mount serves the same build, so
``/admin/assets/x.js`` and ``/annotator/assets/x.js`` are one entry), keeps that 200 answer's body and its
gzipped form, and answers every later request for it from memory on the event loop. Only Gradio's own answers
are kept (a file it does not have stays a 404 from Gradio, every time), and only its frontend folders, which
hold no data (web/gate.py lets them pass for anyone, as Gradio does). The ``assets/`` names carry a content hash
(a new Gradio build renames them), so browsers may keep those for a year (``immutable``): a returning person's
browser asks for none of them. The ``static/`` names (fonts, one script) carry none and get no such header.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from starlette.datastructures import Headers
from starlette.middleware.gzip import GZipMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CACHE = "public, max-age=31536000, immutable"
#: Gradio's frontend files under any mount: group 1 is the folder (``assets`` hashed, ``static`` not), and
#: the match from the folder on is the key shared by every mount
FRONTEND_FILE = re.compile(r"^(?:/[^/]+)?(/(assets|static)/[^?]+)$")
#: the types worth gzipping (fonts and images are compressed already)
COMPRESSIBLE = ("text/", "application/javascript", "application/json", "image/svg")
#: answers larger than this are passed through, not kept
MAX_KEPT_BYTES = 4 * 1024 * 1024
#: files shorter than this are not gzipped (the header costs more than it saves)
MIN_GZIP_BYTES = 500


@dataclass(frozen=True)
class Kept:
    """One frontend file as Gradio answered it: its body, the body gzipped (None when not worth it), its type."""

    body: bytes
    packed: bytes | None
    media_type: str
    hashed: bool

    @classmethod
    def of(cls, body: bytes, media_type: str, hashed: bool) -> Kept:
        packed = None
        if len(body) >= MIN_GZIP_BYTES and media_type.startswith(COMPRESSIBLE):
            squeezed = gzip.compress(body, compresslevel=6, mtime=0)
            packed = squeezed if len(squeezed) < len(body) else None
        return cls(body=body, packed=packed, media_type=media_type, hashed=hashed)

    def headers(self, gzipped: bool) -> list[tuple[bytes, bytes]]:
        body = self.packed if gzipped and self.packed is not None else self.body
        out = [(b"content-type", self.media_type.encode("latin-1")), (b"content-length", str(len(body)).encode())]
        if self.packed is not None:
            out.append((b"vary", b"Accept-Encoding"))
        if gzipped and self.packed is not None:
            out.append((b"content-encoding", b"gzip"))
        if self.hashed:
            out.append((b"cache-control", CACHE.encode()))
        return out


@dataclass
class FrontendAssets:
    """ASGI middleware: see the module's docstring. ``kept`` holds the files answered so far, by key."""

    app: ASGIApp
    kept: dict[str, Kept] = field(default_factory=dict)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = FRONTEND_FILE.match(scope["path"]) if scope["type"] == "http" else None
        if found is None or scope.get("method") not in {"GET", "HEAD"}:
            await self.app(scope, receive, send)
            return
        key, hashed = found.group(1), found.group(2) == "assets"
        kept = self.kept.get(key)
        if kept is None:
            kept = await self._from_gradio(scope, receive, send, hashed)
            if kept is None:
                return  # Gradio's answer went out as it was
            self.kept[key] = kept
        gzipped = "gzip" in Headers(scope=scope).get("accept-encoding", "")
        body = kept.packed if gzipped and kept.packed is not None else kept.body
        await send({"type": "http.response.start", "status": 200, "headers": kept.headers(gzipped)})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})

    async def _from_gradio(self, scope: Scope, receive: Receive, send: Send, hashed: bool) -> Kept | None:
        """Gradio's answer to a GET for this file: kept (and not sent) when it is a whole 200 small enough to
        keep; otherwise sent on as it came, and None."""
        start: Message | None = None
        chunks: list[bytes] = []
        size = 0
        passing = False

        async def capture(message: Message) -> None:
            nonlocal start, size, passing
            if passing:
                await send(message)
                return
            if message["type"] == "http.response.start":
                start = message
                headers = Headers(raw=message.get("headers", []))
                if message["status"] != 200 or "content-encoding" in headers or scope["method"] != "GET":
                    passing = True
                    await send(message)
                return
            if message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                size += len(chunks[-1])
                if size > MAX_KEPT_BYTES:  # too large to keep: what came so far, then the rest as it comes
                    passing = True
                    assert start is not None
                    await send(start)
                    await send({"type": "http.response.body", "body": b"".join(chunks), "more_body": True})
                    if not message.get("more_body", False):
                        await send({"type": "http.response.body", "body": b""})

        # asked plainly: the mount's own compression (Gradio's Brotli/gzip middleware, per request) is skipped
        plain = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k.lower() != b"accept-encoding"]}
        await self.app(plain, receive, capture)
        if passing or start is None:
            return None
        media_type = Headers(raw=start.get("headers", [])).get("content-type", "application/octet-stream")
        return Kept.of(b"".join(chunks), media_type, hashed)


class PageGzip:
    """ASGI middleware: a mount's page itself (``GET /<mount>/``) gzipped for a browser that accepts it.

    Gradio writes the page's whole config into that HTML (``window.gradio_config``): 330 KB for an annotator's
    page and 710 KB for an admin's, sent uncompressed (measured 2026-12-04, issue 44), two thirds of the bytes of a
    sign-in. It is different for every person and visit (no-store), so it is gzipped on each request, at level 6
    (a few ms of one core; Starlette's GZipMiddleware). Everything else passes as it is."""

    def __init__(self, app: ASGIApp, mounts: Callable[[], Iterable[str]]):
        self.app = app
        self.mounts = mounts
        self.gzip = GZipMiddleware(app, minimum_size=MIN_GZIP_BYTES, compresslevel=6)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method") == "GET" and scope["path"].rstrip("/") in self.mounts():
            await self.gzip(scope, receive, send)
            return
        await self.app(scope, receive, send)
