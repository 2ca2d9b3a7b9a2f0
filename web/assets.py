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
class FrontendCache:
    """The frontend files answered so far, by key (``/assets/x.js``), in the order pages first asked for them: the
    middleware's memory, and what the sign-in page has the browser fetch ahead (:meth:`ahead`)."""

    kept: dict[str, Kept] = field(default_factory=dict)

    def ahead(self, limit: int = 120) -> list[str]:
        """The hashed scripts and style sheets pages have asked for, first asked first (at most ``limit``): what a
        page about to be opened will ask for, under the one address every mount's page uses (``/assets/...``)."""
        found = [key for key, kept in self.kept.items() if kept.hashed and key.endswith((".js", ".css"))]
        return found[:limit]


@dataclass
class FrontendAssets:
    """ASGI middleware: see the module's docstring. ``cache`` holds the files answered so far; a file asked at the
    root (``/assets/x.js``: the address the pages use, :class:`SharedFrontendPage`, and the sign-in page fetches
    ahead) is asked of Gradio under ``fallback_mount`` the first time."""

    app: ASGIApp
    cache: FrontendCache = field(default_factory=FrontendCache)
    fallback_mount: str = "/scripts"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = FRONTEND_FILE.match(scope["path"]) if scope["type"] == "http" else None
        if found is None or scope.get("method") not in {"GET", "HEAD"}:
            await self.app(scope, receive, send)
            return
        key, hashed = found.group(1), found.group(2) == "assets"
        kept = self.cache.kept.get(key)
        if kept is None:
            if scope["path"] == key:  # at the root: Gradio serves its files under a mount only
                scope = {**scope, "path": self.fallback_mount + key, "raw_path": (self.fallback_mount + key).encode()}
            kept = await self._from_gradio(scope, receive, send, hashed)
            if kept is None:
                return  # Gradio's answer went out as it was
            self.cache.kept[key] = kept
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
        self.gzip = GZipMiddleware(SharedFrontendPage(app), minimum_size=MIN_GZIP_BYTES, compresslevel=6)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method") == "GET" and scope["path"].rstrip("/") in self.mounts():
            await self.gzip(scope, receive, send)
            return
        await self.app(scope, receive, send)


#: the page's own script and style sheet, as Gradio writes them (relative to the page's ``<base href="./">``)
PAGE_FRONTEND = re.compile(rb'(<(?:script|link)\b[^>]*?\b(?:src|href)=")\./assets/')


class SharedFrontendPage:
    """ASGI app wrapper: a mount's page asks for Gradio's frontend at one address for every mount (``/assets/...``
    at the root, as ``../assets/...`` from the page), not under its mount (``/annotator/assets/...``).

    Every mount serves the same build, but a browser caches a file by its address: under per-mount addresses the
    sign-in page could not have the browser fetch a page's files ahead, not knowing whose page comes next. Gradio's
    own sign-in page is its frontend, so its files are loaded while the person types; ours is a plain form, and
    ~60 files were fetched only after the click (issue 44; ``benchmarks/page_speed.py`` times sign-in against a
    plain Gradio app, docs/performance.md). The frontend's other files follow: its scripts import each other
    relatively. Only the
    page's ``<script src>`` and ``<link href>`` in its head change; the page is ~70-140 KB, read whole here."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        start: Message | None = None
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            assert start is not None
            body = b"".join(chunks)
            headers = Headers(raw=start.get("headers", []))
            if start["status"] == 200 and headers.get("content-type", "").startswith("text/html"):
                body = shared_frontend(body)
            raw = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            await send({**start, "headers": [*raw, (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, capture)


def shared_frontend(page: bytes) -> bytes:
    """``page`` with its head's frontend addresses shared by every mount.

    >>> shared_frontend(b'<head><script type="module" src="./assets/index-1.js"></script></head><p>./assets/</p>')
    b'<head><script type="module" src="../assets/index-1.js"></script></head><p>./assets/</p>'
    """
    head, sep, rest = page.partition(b"</head>")
    return PAGE_FRONTEND.sub(rb"\1../assets/", head) + sep + rest
