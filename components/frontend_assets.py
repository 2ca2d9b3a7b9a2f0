"""Gradio's built frontend (``/assets/...``) served from memory, cached by the browser (issue 17).

Gradio serves each of its frontend files with Starlette's ``FileResponse``: a stat and a file read on a worker
thread for every request, and no ``Cache-Control``, so every visit asks again. A page of ours needs 60-80
of them, and a browser opens only six connections to a host, so at sign-in they queue behind each other
(measured: 20-260 ms from request to first byte for files of 1-150 KB, on loopback).

Here each file is read once, on its first request, and answered from memory on the event loop, gzipped when
the browser accepts it and the type compresses (JavaScript, CSS, SVG). The names carry a content hash (a
new Gradio build renames them), so browsers may keep them for a year (``immutable``): a returning person's
browser asks for none of them. Only files that were in Gradio's build folder at start are served (the
request names a key of that listing; nothing is joined to a path), everything else is a 404 as before.
"""

from __future__ import annotations

import gzip
import mimetypes
from dataclasses import dataclass, field
from pathlib import Path

from gradio.route_utils import BUILD_PATH_LIB
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

COMPRESSIBLE = {".js", ".css", ".svg", ".json", ".map"}
MEDIA = {".js": "text/javascript", ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf"}
CACHE = "public, max-age=31536000, immutable"


@dataclass
class FrontendAssets:
    """Files of one build folder, by name; bodies (plain, gzipped) are read on first use."""

    folder: Path
    names: frozenset[str]
    _bodies: dict[str, tuple[bytes, bytes | None, str]] = field(default_factory=dict)

    @classmethod
    def of(cls, folder: Path) -> FrontendAssets:
        names = frozenset(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
        return cls(folder=folder, names=names)

    def body(self, name: str) -> tuple[bytes, bytes | None, str] | None:
        """(bytes, gzipped bytes or None, media type) of ``name``, or None when the build has no such file."""
        if name not in self.names:
            return None
        if name not in self._bodies:
            data = (self.folder / name).read_bytes()
            suffix = Path(name).suffix
            packed = gzip.compress(data, compresslevel=6, mtime=0) if suffix in COMPRESSIBLE else None
            media = MEDIA.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"
            self._bodies[name] = (data, packed if packed and len(packed) < len(data) else None, media)
        return self._bodies[name]


def asset_routes(assets: FrontendAssets | None = None) -> list[Route]:
    """``GET /assets/{name}``, placed before Gradio's own route for the same files."""
    served = assets or FrontendAssets.of(Path(BUILD_PATH_LIB))

    async def asset(request: Request) -> Response:
        found = served.body(request.path_params["name"])
        if found is None:
            return PlainTextResponse("Not Found", status_code=404)
        data, packed, media = found
        headers = {"Cache-Control": CACHE, "Vary": "Accept-Encoding"}
        if packed is not None and "gzip" in request.headers.get("accept-encoding", ""):
            return Response(packed, media_type=media, headers={**headers, "Content-Encoding": "gzip"})
        return Response(data, media_type=media, headers=headers)

    return [Route("/assets/{name:path}", asset, methods=["GET", "HEAD"])]
