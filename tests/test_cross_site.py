"""web/cross_site.py: every write a browser sends on another site's behalf is refused before any route runs.

Against the real app (password sign-in, so the study and invitation forms are served): the sign-in and sign-out
forms, a study's qualification and leave forms, the invitation sign-up, ``POST /api/<name>`` and Gradio's routes
under a mount (queue join, upload). A person who sent such a form gets a page saying why, with a link on; a
script or a page's own script gets the JSON sentence. Nothing changes on a refused write. The app's own pages
(``Sec-Fetch-Site: same-origin``) and scripts (no such header, no Origin) pass.
"""

from __future__ import annotations

import uuid

import httpx
import pytest
from e2e_helpers import IDENTITY_ACCOUNTS, IDENTITY_PASSWORD, ApiClient

FORGED = ({"sec-fetch-site": "cross-site"}, {"sec-fetch-site": "same-site"}, {"origin": "https://evil.example"})
OWN = {"sec-fetch-site": "same-origin"}


@pytest.fixture(scope="module")
def running(served_app):
    from conftest import VILPACT_DATA

    from backend.vilpact.importer import import_vilpact

    app = served_app(identities=True)
    import_vilpact(app.ctx.database, VILPACT_DATA)
    return app


def signed_in(app, identity: str) -> httpx.Client:
    return ApiClient(app.url, IDENTITY_ACCOUNTS[identity], IDENTITY_PASSWORD).http


def leases(app, who: str) -> int:
    return app.ctx.database.scalar("SELECT count(*) FROM assignments WHERE annotator = ?", (who,))


@pytest.mark.parametrize("path", ["/login", "/logout", "/study/1/qualification", "/study/1/leave", "/invite"])
def test_a_form_sent_from_another_site_gets_a_page_that_says_why(running, path):
    form = {"username": IDENTITY_ACCOUNTS["admin"], "password": IDENTITY_PASSWORD, "token": "x"}
    for headers in FORGED:
        reply = httpx.post(running.url + path, data=form, headers={**headers, "accept": "text/html"})
        assert reply.status_code == 403, (path, headers)
        assert "sent from another site" in reply.text and 'href="/"' in reply.text
        assert "set-cookie" not in reply.headers  # the sign-in did not happen


def test_the_login_form_from_this_app_still_signs_in(running):
    form = {"username": IDENTITY_ACCOUNTS["admin"], "password": IDENTITY_PASSWORD}
    reply = httpx.post(f"{running.url}/login", data=form, headers={**OWN, "origin": running.url})
    assert reply.status_code == 200 and "set-cookie" in reply.headers


def test_a_script_route_refuses_a_forged_post_and_changes_nothing(running):
    """The sendBeacon draft and every other /api call from another site's page, with the person's cookie."""
    annotator = signed_in(running, "annotator")
    before = leases(running, IDENTITY_ACCOUNTS["annotator"])
    for headers in FORGED:
        refused = annotator.post("/api/intent_next", json={"data": []}, headers=headers)
        assert refused.status_code == 403, headers
        assert refused.json()["error"].startswith("A request from another site was refused")
    assert leases(running, IDENTITY_ACCOUNTS["annotator"]) == before
    own = annotator.post("/api/intent_next", json={"data": []}, headers=OWN)
    assert own.status_code == 200 and own.json()["data"][0]["task"] is not None
    assert annotator.post("/api/intent_next", json={"data": []}).status_code == 200  # a script


def test_gradio_routes_under_a_mount_refuse_a_forged_write_but_not_a_read(running):
    admin = signed_in(running, "admin")
    join = {"data": [], "fn_index": 0, "session_hash": uuid.uuid4().hex}
    for headers in FORGED:
        refused = admin.post("/admin/gradio_api/queue/join", json=join, headers=headers)
        assert refused.status_code == 403 and refused.json()["session"] == "cross_site", headers
        upload = admin.post("/admin/gradio_api/upload", files={"files": ("x.txt", b"x")}, headers=headers)
        assert upload.status_code == 403, headers
    # a cross-site read gets no CORS grant from the browser anyway; a link to a page must still open it
    assert admin.get("/admin/", headers=FORGED[0]).status_code == 200
    assert admin.post("/admin/gradio_api/upload", files={"files": ("x.txt", b"x")}, headers=OWN).status_code == 200
    assert admin.post("/admin/gradio_api/upload", files={"files": ("x.txt", b"x")}).status_code == 200
