"""The web shell (web/, issue 25): which page a person gets, and what each mount lets through.

One app per module (no demo content), an account of each identity of the access table.
"""

from __future__ import annotations

import inspect
import re
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import gradio as gr
import httpx
import pytest
from e2e_helpers import IDENTITY_ACCOUNTS, IDENTITY_PASSWORD, ApiClient, app_in_process

from backend.accounts import auth
from web.audiences import all_audiences
from web.gradio_gaps import is_running
from web.mounts import ShellNotServing


@pytest.fixture(scope="module")
def running(served_app):
    return served_app(identities=True, session_capacity=7)


def signed_in(app, identity: str) -> httpx.Client:
    return ApiClient(app.url, IDENTITY_ACCOUNTS[identity], IDENTITY_PASSWORD).http


def test_every_audience_has_its_mount_and_the_scripts_have_theirs(running):
    assert set(running.shell.blocks) == {f"/{name}" for name in all_audiences()} | {"/scripts"}
    tabs = {name: [spec.tab_id for spec in audience.tabs] for name, audience in all_audiences().items()}
    assert tabs["annotator"] == tabs["author"] == ["intents", "planning", "vqa", "icl"]
    assert tabs["worker-intents"] == ["intents"] and "admin" in tabs["admin"] and "admin" not in tabs["reviewer"]
    # the people's pages hold no named endpoint; the scripts mount holds them all
    for path, blocks in running.shell.blocks.items():
        named = [fn.api_name for fn in blocks.fns.values() if fn.api_visibility == "public"]
        assert bool(named) == (path == "/scripts"), (path, named[:5])


def test_root_sends_each_person_to_their_page_and_a_role_change_on_the_next_visit(running):
    anonymous = httpx.get(f"{running.url}/")
    assert anonymous.status_code == 303 and anonymous.headers["location"] == "/login"
    for identity in IDENTITY_ACCOUNTS:
        reply = signed_in(running, identity).get("/", follow_redirects=False)
        assert reply.headers["location"] == f"/{identity}/", identity
    auth.add_user(running.ctx.database, "climber", "annotator", IDENTITY_PASSWORD)
    climber = ApiClient(running.url, "climber", IDENTITY_PASSWORD).http
    page = climber.get("/")
    assert page.status_code == 200 and str(page.url).endswith("/annotator/")
    assert page.headers["cache-control"] == "no-store"  # Back after Log out asks the server again
    auth.set_role(running.ctx.database, "climber", "reviewer")
    # the open page's calls now say why in one sentence; the next visit gets the reviewer's page
    refused = climber.post("/annotator/gradio_api/queue/join", json={"data": [], "fn_index": 0, "session_hash": "c"})
    assert refused.status_code == 401
    assert refused.json() == {"error": "Your role changed: reload the page.", "session": "role_changed", "link": "/"}
    assert str(climber.get("/annotator/").url).endswith("/reviewer/")


def test_session_keyed_routes_need_the_audiences_sign_in(running):
    """Gradio does not check a sign-in on its heartbeat, stream, cancel and reset routes; the gate does."""
    anonymous, annotator = httpx.Client(base_url=running.url), signed_in(running, "annotator")
    session = uuid.uuid4().hex
    for method, path in (
        ("GET", f"/reviewer/gradio_api/heartbeat/{session}"),
        ("POST", "/reviewer/gradio_api/reset"),
        ("POST", "/reviewer/gradio_api/cancel"),
        ("POST", f"/reviewer/gradio_api/stream/{session}/close"),
        ("GET", "/reviewer/config"),
        ("GET", "/reviewer/gradio_api/info"),
        ("POST", "/reviewer/gradio_api/upload"),
    ):
        body = {"session_hash": session, "event_id": "x", "fn_index": 0}
        assert anonymous.request(method, path, json=body).json()["session"] == "signed_out", path
        assert annotator.request(method, path, json=body).json()["session"] == "role_changed", path
    # the reviewer's own heartbeat is Gradio's (an event stream)
    with signed_in(running, "reviewer").stream("GET", f"/reviewer/gradio_api/heartbeat/{session}") as reply:
        assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/event-stream")


def test_a_cached_file_is_served_only_by_the_mount_that_wrote_it(running):
    admin = signed_in(running, "admin")
    uploaded = admin.post("/admin/gradio_api/upload", files={"files": ("notes.txt", b"for admins only\n")})
    assert uploaded.status_code == 200
    path = uploaded.json()[0]
    assert admin.get(f"/admin/gradio_api/file={path}").content == b"for admins only\n"
    # the same admin, through another mount (another Blocks): not that mount's file
    assert admin.get(f"/scripts/gradio_api/file={path}").status_code == 403
    reviewer = signed_in(running, "reviewer")
    assert reviewer.get(f"/reviewer/gradio_api/file={path}").status_code == 403
    assert reviewer.get(f"/admin/gradio_api/file={path}").status_code == 401


def test_frontend_files_are_gzipped_and_cached_for_a_year(running):
    page = signed_in(running, "annotator").get("/annotator/")
    scripts = re.findall(r'src="([^"]*/assets/[^"]+\.js)"', page.text)
    assert scripts, page.text[:500]
    assert scripts[0].startswith("../assets/")  # one address for every mount's page: /assets/... at the root
    reply = httpx.get(f"{running.url}/{scripts[0].removeprefix('../')}", headers={"Accept-Encoding": "gzip"})
    assert reply.status_code == 200
    assert reply.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert reply.headers["content-encoding"] == "gzip"
    assert "javascript" in reply.headers["content-type"]


def test_a_page_with_its_inline_config_is_gzipped_and_stays_uncached(running):
    """Issue 44 (sign-in speed): the page carries Gradio's whole config, a third of a megabyte, uncompressed."""
    client = signed_in(running, "annotator")
    page = client.get("/annotator/", headers={"Accept-Encoding": "gzip"})
    assert page.status_code == 200 and "window.gradio_config" in page.text  # httpx decodes it
    assert page.headers["content-encoding"] == "gzip"
    assert int(page.headers["content-length"]) < len(page.content) / 4
    assert page.headers["cache-control"] == "no-store"
    plain = client.get("/annotator/", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers and "window.gradio_config" in plain.text


def test_a_frontend_file_is_read_once_and_then_answered_from_memory(running):
    """web/assets.py: Gradio answers a file's first request; the same bytes come from memory after it, under
    every mount, plain or gzipped; a file Gradio does not have stays its 404; ``static/`` gets no year-long cache."""
    page = signed_in(running, "annotator").get("/annotator/")
    name = re.findall(r'src="[^"]*/assets/([^"]+\.js)"', page.text)[0]
    on_disk = (Path(gr.__file__).parent / "templates" / "frontend" / "assets" / name).read_bytes()
    kept = running.shell.app.middleware_stack
    while not hasattr(kept, "cache"):
        kept = kept.app
    kept = kept.cache
    first = httpx.get(f"{running.url}/annotator/assets/{name}", headers={"Accept-Encoding": "identity"})
    assert first.content == on_disk and f"/assets/{name}" in kept.kept
    for mount in ("/reviewer", "/admin", "/scripts", ""):  # "": the root, the address the pages use
        again = httpx.get(f"{running.url}{mount}/assets/{name}", headers={"Accept-Encoding": "gzip"})
        assert again.status_code == 200 and again.content == on_disk  # httpx unpacks the gzip
        assert again.headers["content-encoding"] == "gzip" and int(again.headers["content-length"]) < len(on_disk)
    head = httpx.head(f"{running.url}/admin/assets/{name}", headers={"Accept-Encoding": "identity"})
    assert head.status_code == 200 and head.content == b"" and int(head.headers["content-length"]) == len(on_disk)
    for _ in range(2):
        missing = httpx.get(f"{running.url}/annotator/assets/no-such-file-{uuid.uuid4().hex}.js")
        assert missing.status_code == 404
    assert not any("no-such-file" in key for key in kept.kept)
    font = httpx.get(f"{running.url}/annotator/static/fonts/Montserrat/Montserrat-Regular.woff2")
    assert font.status_code == 200 and "immutable" not in font.headers.get("cache-control", "")


def test_the_sign_in_page_has_the_browser_fetch_the_frontend_files_pages_asked_for(running):
    """Issue 44 (sign-in speed): the files a page needs are fetched while the person types (as Gradio's own login,
    its frontend, does), at the one address every mount's page uses; a file first asked at that address is
    answered too; the page may fetch from this site and still runs no script and loads nothing else."""
    page = signed_in(running, "annotator").get("/annotator/")
    index = re.findall(r'src="\.\./(assets/index-[^"]+\.js)"', page.text)[0]
    signin = httpx.get(f"{running.url}/login")
    ahead = re.findall(r'<link rel="prefetch" href="([^"]+)">', signin.text)
    assert index in ahead and all(path.startswith("assets/") for path in ahead)
    for path in ahead[:3]:
        assert httpx.get(f"{running.url}/{path}").status_code == 200
    csp = signin.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'none'" in csp and "connect-src 'none'" in csp
    never_asked = sorted((Path(gr.__file__).parent / "templates" / "frontend" / "assets").glob("*.css"))[-1].name
    assert httpx.get(f"{running.url}/assets/{never_asked}").status_code == 200  # asked of Gradio under a mount
    assert httpx.get(f"{running.url}/assets/no-such-file-{uuid.uuid4().hex}.js").status_code == 404


def test_the_gradio_gaps_are_still_gaps(running):
    """web/gradio_gaps.py: when a Gradio release offers these publicly, drop the workaround."""
    assert "state_session_capacity" not in inspect.signature(gr.mount_gradio_app).parameters
    assert all(blocks.state_session_capacity == 7 for blocks in running.shell.blocks.values())
    assert all(isinstance(files, set) for files in running.shell.blocks["/admin"].temp_file_sets)


def test_a_page_is_built_on_its_first_visit_once_however_many_ask(served_app):
    """web/mounts.py: nothing is built at start-up; the first requests to a page build it once, and only it."""
    app = served_app(identities=True)
    assert app.shell.blocks.built == {} and app.shell.ready
    cookies = ApiClient(app.url, IDENTITY_ACCOUNTS["reviewer"], IDENTITY_PASSWORD).cookies

    def config(_: int) -> int:
        return httpx.get(f"{app.url}/reviewer/config", cookies=cookies, timeout=60).status_code

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(config, range(4))) == [200] * 4
    assert set(app.shell.blocks.built) == {"/reviewer"}
    reviewer_page = app.shell.blocks.built["/reviewer"]
    assert app.shell.blocks["/reviewer"] is reviewer_page and is_running(reviewer_page)
    # the gate still answers first: another audience's page is refused before it is built
    assert httpx.get(f"{app.url}/admin/config", cookies=cookies).json()["session"] == "role_changed"
    assert set(app.shell.blocks.built) == {"/reviewer"}


def test_prebuild_builds_every_page_in_the_background_once_serving(settings):
    with app_in_process(settings, prebuild=True) as app:
        deadline = time.monotonic() + 120
        while len(app.shell.blocks.built) < len(app.shell.blocks) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert set(app.shell.blocks.built) == set(app.shell.blocks)
        assert all(is_running(blocks) for blocks in app.shell.blocks.built.values())


def test_the_pages_after_the_first_wait_for_the_hold(settings):
    """app.py holds the background build after /scripts until the planning warm-up is done, so that a script's
    first answer does not share the CPU with building every other page."""
    import threading

    hold = threading.Event()
    with app_in_process(settings, prebuild=True, hold=hold) as app:
        first = next(iter(app.shell.blocks))
        deadline = time.monotonic() + 120
        while not app.shell.blocks.built and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)  # time enough to start the next page, were it not held
        assert set(app.shell.blocks.built) == {first} == {"/scripts"}
        hold.set()
        while len(app.shell.blocks.built) < len(app.shell.blocks) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert set(app.shell.blocks.built) == set(app.shell.blocks)


def test_a_page_cannot_be_built_before_the_shell_serves(settings):
    from app import build_app

    shell, _ = build_app(settings)
    with pytest.raises(ShellNotServing, match="not serving"):
        shell.blocks["/admin"]
    assert not shell.ready
