"""Shared fixtures. HF_HUB_OFFLINE is set before anything can import huggingface_hub."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from pathlib import Path  # noqa: E402
from urllib.parse import urlsplit  # noqa: E402

import pytest  # noqa: E402

from backend.context import AppContext, build_context  # noqa: E402
from backend.settings import Settings  # noqa: E402

if TYPE_CHECKING:
    from e2e_helpers import RunningApp

ROOT = Path(__file__).resolve().parent.parent
# Tests read only what the repository ships: assets/ (the released ViLPAct data, the in-context bank) and
# small cuts under tests/data/ (sources in tests/data/README.md). Never ../shared: a plain clone must pass.
VILPACT_DATA = ROOT / "assets" / "vilpact"
COGS_ASSETS = ROOT / "assets" / "icl"  # the bank's first 2,000 lines, the first 15 test cases of each category
COGS_BANK = COGS_ASSETS / "example_bank.jsonl"
COGS_TESTS = ROOT / "tests" / "data" / "cogs"  # 12 test cases of each category, cut from the full release
COGS_BANK_MORE = COGS_TESTS / "example_bank_2001-3000.jsonl"  # the release's bank lines after the shipped 2,000


@pytest.fixture
def vilpact_dir() -> Path:
    return VILPACT_DATA


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", demo_content=False)


@pytest.fixture
def ctx(settings: Settings) -> AppContext:
    return build_context(settings)


@pytest.fixture
def database(ctx: AppContext):
    return ctx.database


@pytest.fixture(scope="session")
def demo_media_cache(tmp_path_factory) -> Path:
    """The demo videos, generated once per test session (about a second each)."""
    from backend.vilpact.demo import ensure_demo_content

    cache_settings = Settings(data_dir=tmp_path_factory.mktemp("demo-cache") / "data")
    ensure_demo_content(build_context(cache_settings))
    return cache_settings.media_dir / "demo"


def seed_demo_media(settings: Settings, cache: Path) -> None:
    """Copy the cached demo videos into a fresh data folder (ensure_demo_content then keeps them)."""
    import shutil

    shutil.copytree(cache, settings.media_dir / "demo", dirs_exist_ok=True)


#: who :class:`ServedApps` signs up: ``{"ann": "annotator"}`` (password ``e2e_helpers.IDENTITY_PASSWORD``, or the
#: factory's ``password=``) or ``[("ann", "annotator", "a-password")]``
Users = Mapping[str, str] | Iterable[tuple[str, str, str]]


class ServedApps:
    """The factory that the ``served_app`` fixture yields: each call starts the real app in this process
    (``e2e_helpers.app_in_process``: a free port, the app's real launch settings) on a fresh data folder of its
    own, with the accounts asked for, and returns its ``e2e_helpers.RunningApp`` (``url``, ``ctx``, ``demo``).

    An app runs until the end of the test module, so a module fixture can start one and share it; a per-test
    fixture starts its own with :meth:`started` (shut down when the test ends).
    """

    def __init__(self, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> None:
        self._request = request
        self._tmp = tmp_path_factory
        self._running: dict[int, contextlib.ExitStack] = {}

    def __call__(
        self,
        users: Users | None = None,
        *,
        password: str | None = None,
        demo: bool = False,
        identities: bool = False,
        settings: Settings | None = None,
        **overrides: Any,
    ) -> RunningApp:
        """Start one app.

        ``users``: accounts to create (see :data:`Users`); ``password``: theirs when ``users`` is a mapping.
        ``demo``: the shipped demo content, its videos copied from the session's cache (``demo_content=True``).
        ``identities``: also an account of each identity of the access table (``e2e_helpers.IDENTITY_ACCOUNTS``,
        password ``e2e_helpers.IDENTITY_PASSWORD``; the author holds the VQA author permission).
        ``settings``: start on these (their data folder) instead of fresh ones (a start-up path chose them).
        ``overrides``: settings fields (``Settings.replace``), e.g. ``require_full_view=False``."""
        from e2e_helpers import IDENTITY_ACCOUNTS, IDENTITY_PASSWORD

        from backend.accounts import auth
        from backend.vqa.permissions import set_permission

        if settings is None:
            folder = self._tmp.mktemp(f"served-{self._request.module.__name__.rsplit('.', 1)[-1]}")
            settings = Settings(data_dir=folder / "data", demo_content=demo)
        settings = settings.replace(**overrides)
        if demo:
            seed_demo_media(settings, self._request.getfixturevalue("demo_media_cache"))
        app = self._start(settings)
        try:
            if isinstance(users, Mapping):
                accounts = [(name, role, password or IDENTITY_PASSWORD) for name, role in users.items()]
            else:
                accounts = list(users or [])
            for name, role, secret in accounts:
                auth.add_user(app.ctx.database, name, role, secret)
            if identities:
                for identity, name in IDENTITY_ACCOUNTS.items():
                    role = "annotator" if identity == "author" else identity
                    auth.add_user(app.ctx.database, name, role, IDENTITY_PASSWORD)
                set_permission(app.ctx.database, IDENTITY_ACCOUNTS["admin"], IDENTITY_ACCOUNTS["author"], "author")
        except BaseException:
            self.stop(app)
            raise
        return app

    def restart(self, app: RunningApp) -> RunningApp:
        """Shut ``app`` down and start the app again on its data folder and port, as a restarted server would
        (a browser keeps its cookies: same host, same port). The old ``RunningApp`` is of no more use."""
        port = urlsplit(app.url).port
        self.stop(app)
        return self._start(app.ctx.settings, port)

    def _start(self, settings: Settings, port: int | None = None) -> RunningApp:
        from e2e_helpers import app_in_process

        stack = contextlib.ExitStack()
        app = stack.enter_context(app_in_process(settings, port))
        self._running[id(app)] = stack
        return app

    @contextlib.contextmanager
    def started(self, users: Users | None = None, **options: Any) -> Iterator[RunningApp]:
        """One app for the ``with`` block (a per-test fixture: ``with served_app.started(...) as app: yield app``);
        the same arguments as calling the factory."""
        app = self(users, **options)
        try:
            yield app
        finally:
            self.stop(app)

    def stop(self, app: RunningApp) -> None:
        """Shut one app down now (a per-test app, after the test)."""
        stack = self._running.pop(id(app), None)
        if stack is not None:
            stack.close()

    def stop_all(self) -> None:
        while self._running:
            _, stack = self._running.popitem()
            stack.close()


@pytest.fixture(scope="module")
def served_app(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedApps]:
    """``served_app(users=..., demo=..., **settings) -> RunningApp``: the real app, as many as a module needs,
    each on a free port and its own data folder, all shut down at the module's end (see :class:`ServedApps`).

    One shared app per module::

        @pytest.fixture(scope="module")
        def app(served_app):
            return served_app({"boss": "admin", "ann": "annotator"}, demo=True, require_full_view=False)

    A fresh app per test: ``with served_app.started(...) as app: yield app``."""
    apps = ServedApps(request, tmp_path_factory)
    try:
        yield apps
    finally:
        apps.stop_all()


@pytest.fixture(scope="module")
def identities_app(served_app: ServedApps) -> RunningApp:
    """The real app on the demo content, one per test module, with an account of each identity of the access
    table (``e2e_helpers.IDENTITY_ACCOUNTS``, password ``e2e_helpers.IDENTITY_PASSWORD``), its pages built whole
    (``lazy_tabs=False``: every event of every tab is in its page, as the access table reads them)."""
    return served_app(demo=True, identities=True, lazy_tabs=False)


@pytest.fixture
def demo_ctx(settings: Settings, demo_media_cache: Path) -> AppContext:
    """A fresh database with the demo content (classes, five demo sequences in the pool)."""
    from backend.vilpact.demo import ensure_demo_content

    seed_demo_media(settings, demo_media_cache)
    context = build_context(settings)
    ensure_demo_content(context)
    return context


@pytest.fixture(scope="module")
def browser(served_app: ServedApps):
    """Debian's chromium through Playwright, one per test module. It asks for ``served_app`` only to close
    before the module's apps stop: an open page's event streams would hold each app's shutdown for 2 s."""
    from e2e_helpers import chromium_browser

    with chromium_browser() as launched:
        yield launched


#: how long a file of each mark runs, roughly: the order in which files are handed to the pytest-xdist workers
FILE_WEIGHT = {"crash": 4, "load": 4, "browser": 3, "slow": 2}


def pytest_collection_modifyitems(config, items):
    """Every test that uses the ``browser`` fixture is a browser test (``-m "not browser"`` leaves it out); files
    that start chromium themselves, kill processes or load a server say so with ``pytestmark`` (issue 31).

    Then the long files go first: ``--dist loadfile`` hands whole files to the workers in collection order, so
    a long file collected last would leave the other worker idle while it runs (longest first keeps both busy to
    the end). The sort is stable: each file's tests keep their order. (Alternating the crash and load files with
    the browser files, to fill the idle first minute, was tried on 2026-12-03: 14:05 against 12:07, so not kept.)"""
    weight: dict[str, int] = {}
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
        path = item.nodeid.split("::")[0]
        marks = [FILE_WEIGHT.get(mark.name, 0) for mark in item.iter_markers()]
        weight[path] = max([weight.get(path, 0), *marks])
    items.sort(key=lambda item: -weight[item.nodeid.split("::")[0]])
