"""The shell's Gradio mounts, each built on its first request (or in the background once the server serves).

Building a page's ``gr.Blocks`` takes 0.3-1.5 s (the admin page holds ~700 components), and the shell has eight:
built at start-up they were a third of the time to the first HTTP 200, and most of the time of each app a test
starts, though a visitor (or a test) uses one or two. So each mount is a :class:`Page`, a Starlette route that
matches ``/<audience>`` and everything under it and, on its first request:

1. builds the Blocks on a worker thread, one page at a time (Gradio's current-Blocks context is process-wide);
2. mounts it with ``gr.mount_gradio_app`` on a FastAPI app of its own, at the same path, with the same
   ``auth_dependency`` as before (so Gradio sees the very same mount);
3. runs that app's lifespan (which starts the Blocks' queue) in the shell's task group until the server stops;

and then hands the request, unchanged, to that app. Later requests go straight there. All of it is public
API: ``gr.mount_gradio_app`` and Starlette's routes and lifespans.

``Pages.prebuild`` (app.py) builds every page in the background once the server serves, so that nobody waits
on a Space; tests leave it off and build only what they visit. The first page (``/scripts``) is built first; the
rest wait for ``Pages.hold`` (app.py: the planning warm-up), so that a script's first answer after start-up does
not share the CPU with building every other page.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import gradio as gr
from anyio.abc import TaskGroup, TaskStatus
from fastapi import FastAPI
from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.types import Receive, Scope, Send

log = logging.getLogger("compstudio.pages")

HOLD_LIMIT_S = 60.0  # the longest the background build waits for Pages.hold (a warm-up that hangs)


class ShellNotServing(RuntimeError):
    """A page was asked for before the shell's lifespan started (or after it ended)."""


class Page(BaseRoute):
    """One audience's mount (or the scripts mount): see the module's docstring."""

    def __init__(
        self,
        path: str,
        build: Callable[[], gr.Blocks],
        mount: Callable[[FastAPI, gr.Blocks], None],
        admits: Callable[[str], bool],
        pages: Pages,
    ):
        self.path = path
        self.admits = admits
        self.build = build
        self.mount = mount
        self.pages = pages
        self.app: FastAPI | None = None  # the app serving it, once built and started
        self.blocks: gr.Blocks | None = None

    # Starlette's route interface: everything under the path, the scope left as it is
    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] in {"http", "websocket"}:
            path = scope["path"]
            if path == self.path or path.startswith(self.path + "/"):
                return Match.FULL, {}
        return Match.NONE, {}

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = self.app or await self.pages.ready(self)
        await app(scope, receive, send)


#: one Blocks built at a time in the whole process, whichever shell builds it: Gradio keeps the Blocks being built
#: in process-wide class attributes (its render context), so two shells of one process (tests run several) must
#: not build at once. A lock, not state: it guards Gradio's global, it holds nothing of ours.
BUILD_LOCK = threading.Lock()


class Pages(Mapping[str, gr.Blocks]):
    """Every mount by path; reading one (``pages["/admin"]``) builds it if need be, from any thread but the
    server's own."""

    def __init__(self) -> None:
        self.routes: dict[str, Page] = {}
        self.prebuild = False  # build every page in the background once the server serves (app.py)
        self.on_prebuilt: Callable[[], None] | None = None  # then call this (app.py freezes the heap)
        self.hold: threading.Event | None = None  # after the first page, wait for this before the rest (app.py)
        self._locks: dict[str, anyio.Lock] = {}
        self._group: TaskGroup | None = None
        self._stop: anyio.Event | None = None
        self._token: Any = None

    def add(self, page: Page) -> Page:
        self.routes[page.path] = page
        return page

    # Mapping: the Blocks of each mount, built on demand
    def __getitem__(self, path: str) -> gr.Blocks:
        page = self.routes[path]
        if page.app is None:
            if self._token is None:
                raise ShellNotServing("the web shell is not serving: start it (uvicorn) before asking for a page")
            anyio.from_thread.run(self.ready, page, token=self._token)
        assert page.blocks is not None
        return page.blocks

    def __iter__(self) -> Iterator[str]:
        return iter(self.routes)

    def __len__(self) -> int:
        return len(self.routes)

    @property
    def built(self) -> dict[str, gr.Blocks]:
        """The Blocks of the mounts built and serving so far."""
        return {path: page.blocks for path, page in self.routes.items() if page.app and page.blocks}

    @property
    def serving(self) -> bool:
        """Whether the server is serving (the shell's lifespan has started)."""
        return self._group is not None

    async def ready(self, page: Page) -> FastAPI:
        """The app serving ``page``, built and started on first use (once, however many ask at once)."""
        if self._group is None or self._stop is None:
            raise ShellNotServing("the web shell is not serving: its lifespan has not started")
        lock = self._locks.setdefault(page.path, anyio.Lock())
        async with lock:
            if page.app is None:
                blocks, app = await anyio.to_thread.run_sync(self._build, page)
                await self._group.start(_serve, app, self._stop)
                page.blocks, page.app = blocks, app
                log.info("built and mounted %s", page.path)
        return page.app

    def _build(self, page: Page) -> tuple[gr.Blocks, FastAPI]:
        """Build the Blocks and mount it on an app of its own (on a worker thread)."""
        with BUILD_LOCK:
            blocks = page.build()
            app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
            page.mount(app, blocks)
            return blocks, app

    async def _prebuild(self) -> None:
        for index, page in enumerate(list(self.routes.values())):
            if not self.serving:
                return
            if index == 1 and self.hold is not None:
                with anyio.move_on_after(HOLD_LIMIT_S):
                    while not self.hold.is_set():
                        await anyio.sleep(0.05)
            try:
                await self.ready(page)
            except Exception:  # noqa: BLE001 - a page that fails to build is built (and fails) again on its visit
                log.exception("building %s in the background failed", page.path)
        if self.on_prebuilt is not None:
            self.on_prebuilt()

    @contextlib.asynccontextmanager
    async def lifespan(self, app: FastAPI) -> AsyncIterator[None]:  # noqa: ARG002 - Starlette's signature
        """The shell's lifespan: a task group the pages' apps run in, until the server stops."""
        async with anyio.create_task_group() as group:
            self._group, self._stop, self._token = group, anyio.Event(), anyio.lowlevel.current_token()
            if self.prebuild:
                group.start_soon(self._prebuild)
            try:
                yield
            finally:
                self._stop.set()  # each page's lifespan ends as Gradio's would at shutdown
                self._group = self._token = None


async def _serve(app: FastAPI, stop: anyio.Event, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    """Run ``app``'s lifespan (gr.mount_gradio_app's: it starts the Blocks' queue) until the server stops."""
    async with app.router.lifespan_context(app):
        task_status.started()
        await stop.wait()
