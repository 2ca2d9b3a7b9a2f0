"""Launch the real app (in-process or as a subprocess) and talk to it over HTTP or a real browser.

Used by the end-to-end, browser, load and crash tests, and by benchmarks/annotation_load.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic", "--disable-dev-shm-usage",
    "--autoplay-policy=no-user-gesture-required",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class RunningApp:
    url: str
    ctx: Any  # AppContext (None for a subprocess)
    demo: Any = None
    process: subprocess.Popen | None = None


@contextlib.contextmanager
def app_in_process(settings) -> Iterator[RunningApp]:
    """The real Gradio server in this process, on a free port, with the app's real launch settings."""
    import app as app_module

    demo, ctx = app_module.build_app(settings)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, ssr_mode=False,
                **app_module.launch_kwargs(ctx))
    try:
        yield RunningApp(url=f"http://127.0.0.1:{port}", ctx=ctx, demo=demo)
    finally:
        demo.close()


def start_app_process(data_dir: Path, port: int, env: dict[str, str] | None = None, log: Path | None = None) -> subprocess.Popen:
    """``python app.py`` as a user would run it, in its own process group."""
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", **(env or {})}
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115
    return subprocess.Popen(
        [sys.executable, str(ROOT / "app.py"), "--data-dir", str(data_dir), "--port", str(port)],
        cwd=ROOT, env=full_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
    )


def wait_http_ok(url: str, timeout: float = 60.0) -> float:
    """Seconds until ``url`` answered 200 (raises after ``timeout``)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return time.monotonic() - start
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"{url} did not answer 200 within {timeout} s")


def kill_hard(process: subprocess.Popen) -> None:
    """kill -9 the app (its whole process group)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


class ApiClient:
    """A signed-in raw HTTP client for the named endpoints (``POST /gradio_api/run/<name>``)."""

    def __init__(self, url: str, username: str, password: str, timeout: float = 30.0):
        self.url = url
        # one Gradio session per client, as the browser and gradio_client do: without it the server sets up
        # a fresh session for every call (measured here: ~50 ms instead of ~7 ms per call)
        self.session_hash = uuid.uuid4().hex
        self.http = httpx.Client(base_url=url, timeout=timeout)
        response = self.http.post("/login", data={"username": username, "password": password})
        if response.status_code != 200:
            raise PermissionError(f"login failed for {username}: {response.status_code} {response.text[:200]}")

    def run(self, name: str, *args: Any) -> Any:
        """One-step call of an endpoint outside the queue (``queue=False``): the result, or ``ApiError``."""
        response = self.http.post(f"/gradio_api/run/{name}", json={"data": list(args), "session_hash": self.session_hash})
        body = response.json()
        if response.status_code != 200 or body.get("error") or "data" not in body:
            raise ApiError(body.get("error") or body.get("detail") or f"HTTP {response.status_code}")
        return body["data"][0]

    def call(self, name: str, *args: Any) -> Any:
        """Two-step call through the queue (``/gradio_api/call/<name>``): the result, or ``ApiError``."""
        response = self.http.post(f"/gradio_api/call/{name}", json={"data": list(args), "session_hash": self.session_hash})
        if response.status_code != 200:
            raise ApiError(f"HTTP {response.status_code}: {response.text[:200]}")
        event_id = response.json()["event_id"]
        event, data = None, None
        with self.http.stream("GET", f"/gradio_api/call/{name}/{event_id}") as stream:
            for line in stream.iter_lines():
                if line.startswith("event:"):
                    event = line.split(":", 1)[1].strip()
                elif line.startswith("data:") and event in {"complete", "error"}:
                    data = line.split(":", 1)[1].strip()
                    break
        if event != "complete":
            raise ApiError(json.loads(data) if data and data != "null" else f"endpoint {name} failed")
        return json.loads(data)[0]

    def close(self) -> None:
        self.http.close()


class ApiError(Exception):
    pass


@contextlib.contextmanager
def chromium_browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def browser_login(page, url: str, username: str, password: str) -> None:
    """Sign in through Gradio's login form, as a person would."""
    page.goto(url)
    page.get_by_label("username").fill(username)
    page.get_by_label("password").fill(password)
    page.get_by_role("button", name="Login").click()
    page.wait_for_selector("#whoami", timeout=30_000)


def visit_every_tab(page, screenshot_dir: Path | None = None) -> list[str]:
    """Click every tab a signed-in person sees; returns their labels. Raises when a tab shows an error toast.

    With ``screenshot_dir``, saves ``<label>.png`` of each tab (the README's screenshots).
    """
    from playwright.sync_api import expect

    page.wait_for_selector("#whoami strong", timeout=60_000)
    labels = [label.strip() for label in page.get_by_role("tab").all_inner_texts() if label.strip()]
    for label in labels:
        page.get_by_role("tab", name=label, exact=True).click()
        panel = page.get_by_role("tabpanel").filter(visible=True).first
        expect(panel).to_be_visible(timeout=30_000)
        # whatever the tab loads has finished: no component still pending
        page.wait_for_function("() => !document.querySelector('.pending, .generating')", timeout=30_000)
        errors = page.locator(".toast-body.error, [data-testid='toast-body'].error")
        if errors.count():
            raise AssertionError(f"tab {label!r} shows an error: {errors.first.inner_text()}")
        if screenshot_dir is not None:
            screenshot_dir.mkdir(parents=True, exist_ok=True)
            slug = "".join(ch if ch.isalnum() else "-" for ch in label.lower()).strip("-")
            page.screenshot(path=str(screenshot_dir / f"{slug}.png"), full_page=True)
    return labels
