"""Shared fixtures. HF_HUB_OFFLINE is set before anything can import huggingface_hub."""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from backend.context import AppContext, build_context  # noqa: E402
from backend.settings import Settings  # noqa: E402

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


@pytest.fixture(scope="module")
def identities_app(tmp_path_factory, demo_media_cache: Path):
    """The real app in this process on the demo content, one per test module, with an account of each identity
    of the access table (``e2e_helpers.IDENTITY_ACCOUNTS``, password ``e2e_helpers.IDENTITY_PASSWORD``)."""
    from e2e_helpers import IDENTITY_PASSWORD, app_with_identities

    settings = Settings(data_dir=tmp_path_factory.mktemp("identities") / "data")
    seed_demo_media(settings, demo_media_cache)
    with app_with_identities(settings, IDENTITY_PASSWORD) as app:
        yield app


@pytest.fixture
def demo_ctx(settings: Settings, demo_media_cache: Path) -> AppContext:
    """A fresh database with the demo content (classes, five demo sequences in the pool)."""
    from backend.vilpact.demo import ensure_demo_content

    seed_demo_media(settings, demo_media_cache)
    context = build_context(settings)
    ensure_demo_content(context)
    return context


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium through Playwright, one per test module."""
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
    the end). The sort is stable: each file's tests keep their order."""
    weight: dict[str, int] = {}
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
        path = item.nodeid.split("::")[0]
        marks = [FILE_WEIGHT.get(mark.name, 0) for mark in item.iter_markers()]
        weight[path] = max([weight.get(path, 0), *marks])
    items.sort(key=lambda item: -weight[item.nodeid.split("::")[0]])
