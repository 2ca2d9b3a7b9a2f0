"""Gradio's built frontend files, gzipped and cached by the browser, as middleware (issue 17).

Gradio serves each of its frontend files (``<mount>/assets/...``) with no ``Cache-Control``, so every visit asks
again, and uncompressed. A page needs 60-80 of them, and a browser opens only six connections to a host, so at
sign-in they queue behind each other. Their names carry a content hash (a new Gradio build renames them), so
browsers may keep them for a year (``immutable``): a returning person's browser asks for none of them. This
middleware adds that header to successful answers for those paths and gzips them when the browser accepts it
(Starlette's GZipMiddleware, which skips small bodies); Gradio still finds and serves the files.
"""

from __future__ import annotations

import re

from starlette.datastructures import MutableHeaders
from starlette.middleware.gzip import GZipMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CACHE = "public, max-age=31536000, immutable"
#: Gradio's hashed frontend files under any mount (and at the root)
HASHED = re.compile(r"^(/[^/]+)?/assets/[^?]+$")


class FrontendAssets:
    """Long-lived cache headers and gzip for Gradio's hashed frontend files; every other request passes as is."""

    def __init__(self, app: ASGIApp):
        self.app = app
        self.gzip = GZipMiddleware(self._cached, minimum_size=500, compresslevel=6)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in {"GET", "HEAD"} and HASHED.match(scope["path"]):
            await self.gzip(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _cached(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_cached(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200:
                headers = MutableHeaders(scope=message)
                headers["Cache-Control"] = CACHE
            await send(message)

        await self.app(scope, receive, send_cached)
