"""Launch the real app (in-process or as a subprocess) and talk to it over HTTP or a real browser.

Used by the end-to-end, browser, load and crash tests, and by benchmarks/annotation_load.py. Tests start the app
in-process through the ``served_app`` fixture (tests/conftest.py), which calls :func:`app_in_process`.
"""

from __future__ import annotations

import contextlib
import http.client
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
from urllib.parse import urlencode, urlsplit

import httpx

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
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
    shell: Any = None  # web.Shell: the FastAPI app and each mount's Blocks
    process: subprocess.Popen | None = None

    def page_url(self, audience: str) -> str:
        """The address of an audience's page (web/audiences.py), e.g. ``page_url("reviewer")``."""
        return f"{self.url}/{audience}/"

    @property
    def scripts_url(self) -> str:
        """Where gradio_client connects (web/scripts.py)."""
        return f"{self.url}/scripts/"


@contextlib.contextmanager
def app_in_process(settings, port: int | None = None, prebuild: bool = False, hold: Any = None) -> Iterator[RunningApp]:
    """The real web app (web.create_shell, served by uvicorn) in this process, on ``port`` (default: a free one).
    Each page is built on its first request, or all in the background with ``prebuild`` (as app.py does; the
    pages after the first wait for the ``threading.Event`` ``hold``, as app.py's wait for the warm-up)."""
    import threading

    import uvicorn

    import app as app_module

    shell, ctx = app_module.build_app(settings, prebuild=prebuild)
    shell.blocks.hold = hold
    port = port or free_port()
    # a browser's open streams (queue data, heartbeat) would hold a graceful shutdown for the whole join timeout
    config = uvicorn.Config(shell.app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the app did not start")
        time.sleep(0.05)
    try:
        yield RunningApp(url=f"http://127.0.0.1:{port}", ctx=ctx, shell=shell)
    finally:
        server.should_exit = True
        thread.join(timeout=30)


# one account per identity of the access table (backend/accounts/access.py); the author is an annotator with the
# VQA author permission (served_app(identities=True) in tests/conftest.py creates them)
IDENTITY_ACCOUNTS = {"annotator": "ann", "author": "writer", "reviewer": "rev", "admin": "boss"}
IDENTITY_PASSWORD = "password1"


def start_app_process(
    data_dir: Path, port: int, env: dict[str, str] | None = None, log: Path | None = None
) -> subprocess.Popen:
    """``python app.py`` as a user would run it, in its own process group."""
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", **(env or {})}
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115
    return subprocess.Popen(
        [sys.executable, str(ROOT / "app.py"), "--data-dir", str(data_dir), "--port", str(port)],
        cwd=ROOT,
        env=full_env,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def wait_http_ok(url: str, timeout: float = 60.0) -> float:
    """Seconds until ``url`` answered 200 (raises after ``timeout``)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        try:
            if httpx.get(url, timeout=2, follow_redirects=True).status_code == 200:  # / sends visitors to /login
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


#: the endpoints web/scripts.py also serves at ``POST /api/<name>``
LEAN_ENDPOINTS = frozenset({"intent_next", "intent_submit", "intent_skip", "intent_draft", "intent_viewed"})


class ApiClient:
    """A signed-in raw HTTP client for the named endpoints (``POST /api/<name>``, ``/scripts/gradio_api/...``).

    The calls go over one kept-alive ``http.client`` connection: httpx costs ~1.1 ms of client CPU a call
    against ~0.3 ms here, and with 30 annotator threads in one load-driver process that overhead (and its
    GIL queue) was being counted as server latency. ``.http`` is an httpx client with the same cookies, for
    ad-hoc requests in tests. Connection failures raise ``OSError`` / ``http.client.HTTPException``.
    """

    def __init__(self, url: str, username: str, password: str, timeout: float = 30.0):
        self._open(url, timeout)
        status, headers, body = self._request(
            "POST",
            "/login",
            urlencode({"username": username, "password": password}),
            {"Content-Type": "application/x-www-form-urlencoded"},
        )
        if status != 200:
            raise PermissionError(f"login failed for {username}: {status} {body[:200]!r}")
        self._keep_cookies(headers)

    @classmethod
    def by_link(cls, link: str, timeout: float = 30.0, forwarded_for: str | None = None) -> ApiClient:
        """Signed in as a crowd worker arriving by a study link (its 303 sets the session cookie).
        ``forwarded_for``: the client address a reverse proxy would pass on (believed from loopback only when the app
        is started with ``COMPSTUDIO_TRUSTED_PROXIES=127.0.0.1``)."""
        parts = urlsplit(link)
        client = cls.__new__(cls)
        client._open(f"{parts.scheme}://{parts.netloc}", timeout)
        extra = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
        status, headers, body = client._request("GET", f"{parts.path}?{parts.query}", headers=extra)
        if status != 303:
            raise PermissionError(f"the study link was refused: {status} {body[:200]!r}")
        client._keep_cookies(headers)
        return client

    def _open(self, url: str, timeout: float) -> None:
        self.url = url
        parts = urlsplit(url)
        self._host, self._port, self._timeout = parts.hostname, parts.port, timeout
        self._conn = http.client.HTTPConnection(self._host, self._port, timeout=timeout)
        self._http: httpx.Client | None = None
        # one Gradio session per client, as the browser and gradio_client do: without it the server sets up
        # a fresh session for every call (measured here: ~50 ms instead of ~7 ms per call)
        self.session_hash = uuid.uuid4().hex

    def _keep_cookies(self, headers: list[tuple[str, str]]) -> None:
        self.cookies = dict(
            value.split(";", 1)[0].split("=", 1) for key, value in headers if key.lower() == "set-cookie"
        )
        self._cookie_header = "; ".join(f"{k}={v}" for k, v in self.cookies.items())

    def _request(
        self, method: str, path: str, body: str | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        self._conn.request(method, path, body=body, headers=headers or {})
        response = self._conn.getresponse()
        return response.status, response.getheaders(), response.read()

    def _json_post(self, path: str, payload: Any) -> tuple[int, bytes]:
        headers = {"Content-Type": "application/json", "Cookie": self._cookie_header}
        try:
            status, _, body = self._request("POST", path, json.dumps(payload), headers)
        except (OSError, http.client.HTTPException):
            self._conn.close()  # a fresh connection for the caller's retry
            raise
        return status, body

    def run(self, name: str, *args: Any, route: str | None = None) -> Any:
        """One call of an endpoint: the result, or ``ApiError``. By default the annotation endpoints go to the
        shell's lean ``/api/<name>`` routes (web/scripts.py) and every other one to Gradio's one-step route on
        the scripts mount (``/scripts/gradio_api/run/<name>``, for ``queue=False`` endpoints)."""
        if route is None:
            route = "/api" if name in LEAN_ENDPOINTS else "/scripts/gradio_api/run"
        status, raw = self._json_post(f"{route}/{name}", {"data": list(args), "session_hash": self.session_hash})
        body = json.loads(raw)
        if status != 200 or body.get("error") or "data" not in body:
            raise ApiError(body.get("error") or body.get("detail") or f"HTTP {status}")
        return body["data"][0]

    def call(self, name: str, *args: Any) -> Any:
        """Two-step call through the queue (``/gradio_api/call/<name>``): the result, or ``ApiError``."""
        status, raw = self._json_post(
            f"/scripts/gradio_api/call/{name}", {"data": list(args), "session_hash": self.session_hash}
        )
        if status != 200:
            raise ApiError(f"HTTP {status}: {raw[:200]!r}")
        event_id = json.loads(raw)["event_id"]
        self._conn.request(
            "GET", f"/scripts/gradio_api/call/{name}/{event_id}", headers={"Cookie": self._cookie_header}
        )
        response = self._conn.getresponse()
        event, data = None, None
        try:
            for line in iter(response.readline, b""):
                text = line.decode().strip()
                if text.startswith("event:"):
                    event = text.split(":", 1)[1].strip()
                elif text.startswith("data:") and event in {"complete", "error"}:
                    data = text.split(":", 1)[1].strip()
                    break
            response.read()  # drain the stream so that the connection can be reused
        except (OSError, http.client.HTTPException):
            self._conn.close()
            raise
        if event != "complete":
            raise ApiError(json.loads(data) if data and data != "null" else f"endpoint {name} failed")
        return json.loads(data)[0]

    @property
    def http(self) -> httpx.Client:
        """An httpx client signed in as this client, for ad-hoc requests."""
        if self._http is None:
            self._http = httpx.Client(
                base_url=self.url, timeout=self._timeout, cookies=self.cookies, follow_redirects=True
            )  # the old script addresses (/gradio_api/...) answer 307 to /scripts/...
        return self._http

    def close(self) -> None:
        self._conn.close()
        if self._http is not None:
            self._http.close()


class ApiError(Exception):
    pass


#: how long an ``expect`` waits for what a person should see (Playwright's default is 5 s): on the 2-core machine
#: the full run keeps both cores busy, and a save that takes 0.3 s alone has taken over 5 s there (2026-12-03)
EXPECT_TIMEOUT_MS = 20_000


@contextlib.contextmanager
def chromium_browser() -> Iterator[Any]:
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def browser_login(page, url: str, username: str, password: str) -> None:
    """Sign in through the login page (web/signin.py), as a person would."""
    page.goto(url)
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
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


def axe_serious(page) -> list[str]:
    """Serious and critical violations, one line each (rule, help, the first elements). Toasts are checked
    once they have faded in, and outputs once no event is pending and none is fading back (Gradio dims a pending
    output to opacity 0.2 and brings it back in 0.15 s; half-faded text has too little contrast by construction)."""
    page.wait_for_function(
        """() => {
        if (document.querySelector('.pending')) return false;  // an output still waiting for its event
        const unfading = document.getAnimations().some(  // an output coming back from pending (transition: all .15s)
            (a) => a.playState === 'running' && a instanceof CSSTransition && a.transitionProperty === 'opacity');
        if (unfading) return false;
        const inToast = (e) => e && e.closest && e.closest('[data-testid="toast-body"], .toast-wrap');
        const fading = (a) => (a.effect?.getKeyframes?.() || []).some((k) => 'opacity' in k);  // not the countdown bar
        const moving = document.getAnimations().some(
            (a) => a.playState === 'running' && inToast(a.effect?.target) && fading(a));
        if (moving) return false;  // a toast still fading in (or out): its text is half transparent
        return [...document.querySelectorAll('[data-testid="toast-body"]')].every((el) => {
            for (let e = el; e; e = e.parentElement) if (getComputedStyle(e).opacity !== '1') return false;
            return true;
        });
    }""",
        timeout=30_000,
    )
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{v['impact']} {v['id']}: {v['help']} at {[(n['target'], n.get('failureSummary')) for n in v['nodes']][:3]}"
        for v in results.response["violations"]
        if v["impact"] in {"serious", "critical"}
    ]
