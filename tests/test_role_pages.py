"""Issue 17: each role's browser gets a page with only the tabs it may open (components/role_pages.py), and
Gradio's frontend files come from memory with a year of browser caching (components/frontend_assets.py).

Read from the real server: ``GET /`` as each identity, the configuration and API description embedded in the
page, then a real browser signing in as each role.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import httpx
import pytest
from e2e_helpers import IDENTITY_ACCOUNTS, IDENTITY_PASSWORD, ApiClient, browser_login
from gradio.route_utils import BUILD_PATH_LIB

from backend.accounts import access, auth
from components.role_pages import _touched

PASSWORD = IDENTITY_PASSWORD
ACCOUNTS = IDENTITY_ACCOUNTS
TOP_TABS = {
    "annotator": {"intents", "planning", "vqa", "icl"},
    "author": {"intents", "planning", "vqa", "icl"},
    "reviewer": {"intents", "review", "planning", "vqa", "icl", "results", "models"},
    "admin": {"intents", "review", "planning", "vqa", "icl", "results", "models", "admin", "studies"},
}
# inner tabs above the annotator: who gets them
INNER_TABS = {
    "vqa-author": {"author", "reviewer", "admin"},
    "vqa-verify": {"author", "reviewer", "admin"},
    "vqa-models": {"reviewer", "admin"},
    "vqa-admin": {"admin"},
    "review-publish": {"admin"},
}


@pytest.fixture(scope="module")
def running(identities_app):
    return identities_app


def served(app, identity: str, query: str = "", client: ApiClient | None = None) -> tuple[dict, dict]:
    """The configuration and API description embedded in ``GET /`` for ``identity`` (or ``client``'s person)."""
    client = client or ApiClient(app.url, ACCOUNTS[identity], PASSWORD)
    html = client.http.get(app.url + "/" + query).text
    config = json.loads(re.search(r"window.gradio_config = (.*?);</script>", html, re.S).group(1))
    api = json.loads(re.search(r"window.gradio_api_info = (.*?);</script>", html, re.S).group(1))
    return config, api


def tab_ids(config: dict) -> set[str]:
    return {c["props"]["id"] for c in config["components"] if c["type"] == "tabitem"}


@pytest.mark.parametrize("identity", list(ACCOUNTS))
def test_each_page_holds_the_tabs_of_its_role_and_no_other(running, identity):
    config, _ = served(running, identity)
    ids = tab_ids(config)
    top_level = {tab for tab in ids if "-" not in tab}
    assert top_level == TOP_TABS[identity]
    for inner, who in INNER_TABS.items():
        assert (inner in ids) == (identity in who), inner
    everything = running.demo.config["components"]
    assert len(config["components"]) < len(everything) or identity == "admin"
    # the page starts with its tabs shown and the role's landing tab selected (no change, no select event)
    props = {c["props"].get("id"): c["props"] for c in config["components"] if c["type"] == "tabitem"}
    assert all(props[tab]["visible"] for tab in TOP_TABS[identity])
    landing = {"annotator": "intents", "author": "intents", "reviewer": "review", "admin": "admin"}[identity]
    outer = next(c for c in config["components"] if c["type"] == "tabs")
    assert outer["props"]["selected"] == landing


@pytest.mark.parametrize("identity", list(ACCOUNTS))
def test_a_page_keeps_every_event_its_components_trigger(running, identity):
    """Nothing a person can do on the page is lost: every event whose trigger is on the page is sent, with
    everything it touches; only the page's own load event is there; the named endpoints stay with scripts."""
    config, _ = served(running, identity)
    on_page = {c["id"] for c in config["components"]} | {config["layout"]["id"]}
    sent = {d["id"] for d in config["dependencies"]}
    for dependency in config["dependencies"]:
        assert set(_touched(dependency)) <= on_page, dependency["id"]
    plan = running.demo.role_pages
    endpoints = set(plan.endpoint_roles)
    loads = {page.load for page in plan.pages.values()}
    for dependency in running.demo.config["dependencies"]:
        if dependency["id"] in endpoints | loads or not dependency["targets"]:
            continue
        if all(target[0] in on_page for target in dependency["targets"]):
            assert dependency["id"] in sent, f"event {dependency['id']} ({dependency['api_name']}) was left out"
    assert [d["id"] for d in config["dependencies"] if d["id"] in loads] == [plan.pages[identity].load]
    assert not sent & endpoints


def test_a_study_worker_gets_only_their_studys_tab(running):
    from backend.campaigns import links, studies

    study = studies.create_study(
        running.ctx.database, "boss", name="Plans", kind="planning", tasks_per_worker=2, qualification_size=0,
        completion_code="PLANS-OK", places=5,
    )  # fmt: skip
    worker = ApiClient.by_link(links.worker_link(running.ctx.database, study, running.url, "5f00aa11bb22cc33dd44ee66"))
    config, api = served(running, "annotator", client=worker)
    assert {tab for tab in tab_ids(config) if "-" not in tab} == {"planning"}
    outer = next(c for c in config["components"] if c["type"] == "tabs")
    assert outer["props"]["selected"] == "planning"
    assert "planning_submit_check" in {name.lstrip("/") for name in api["named_endpoints"]}  # an annotator's API list
    assert not {"review_next", "dataset_publish"} & {name.lstrip("/") for name in api["named_endpoints"]}


def test_the_server_chooses_the_page_not_the_caller(running):
    mine, _ = served(running, "annotator")
    for query in ("?page=as-admin", "?page=", "?page=as-reviewer&x=1"):
        config, _ = served(running, "annotator", query)
        assert tab_ids(config) == tab_ids(mine), query
    assert httpx.get(running.url + "/", follow_redirects=False).status_code == 303  # not signed in: to /login


@pytest.mark.parametrize("identity", ["annotator", "reviewer", "admin"])
def test_use_via_api_lists_exactly_the_endpoints_the_role_may_call(running, identity):
    _, api = served(running, identity)
    listed = {name.lstrip("/") for name in api["named_endpoints"]}
    endpoints = [fn for fn in running.demo.fns.values() if fn._id in running.demo.role_pages.endpoint_roles]
    allowed = {fn.api_name for fn in endpoints if access.allows(access.EVENTS[fn.api_name], identity)}
    assert allowed <= listed
    assert not {fn.api_name for fn in endpoints} - allowed & listed
    assert ("review_next" in listed) == (identity != "annotator")
    assert "intent_submit" in listed
    assert all("python" in api["named_endpoints"][f"/{name}"]["code_snippets"] for name in allowed)


def test_frontend_files_come_from_memory_gzipped_and_cached_for_a_year(running):
    client = ApiClient(running.url, "ann", PASSWORD)
    html = client.http.get(running.url + "/").text
    script = re.search(r'src="\./assets/([^"]+\.js)"', html).group(1)
    original = (Path(BUILD_PATH_LIB) / script).read_bytes()
    zipped = httpx.get(f"{running.url}/assets/{script}", headers={"Accept-Encoding": "gzip"})
    assert zipped.status_code == 200 and zipped.headers["content-encoding"] == "gzip"
    assert zipped.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert zipped.headers["content-type"].startswith("text/javascript")
    assert zipped.content == original  # httpx unpacks it
    assert int(zipped.headers["content-length"]) < len(original)
    plain = httpx.get(f"{running.url}/assets/{script}", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.content == original
    assert gzip.decompress(gzip.compress(original)) == original
    for name in ("missing.js", "..%2F..%2Fapp.py", "%2e%2e/%2e%2e/routes.py", "../../blocks.py"):
        response = httpx.get(f"{running.url}/assets/{name}")
        assert response.status_code == 404, name


def test_each_role_signs_in_to_its_own_tabs_and_lands_where_it_works(running, browser):
    seen = {}
    for identity in ("annotator", "admin"):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        browser_login(page, running.url, ACCOUNTS[identity], PASSWORD)
        page.wait_for_selector("#whoami strong")
        tabs = page.get_by_role("tab")
        tabs.first.wait_for()
        seen[identity] = [t.strip() for t in tabs.all_inner_texts() if t.strip()]
        selected = page.locator("[role=tab][aria-selected=true]").first.inner_text().strip()
        if identity == "annotator":
            assert selected == "Annotate intents"
            page.locator("#intent-sequence").wait_for(state="attached")
        else:  # the Admin tab is filled by its own select event when the page opens on it
            assert selected == "Admin"
            page.get_by_text("Accounts", exact=True).first.click()
            page.locator("#users-count").get_by_text(re.compile(r"\d+ accounts?")).wait_for()
            assert "boss" in page.locator("#users-table").inner_text()
        assert not page.get_by_text("Error", exact=True).count()
        context.close()
    assert "Review" not in seen["annotator"] and "Studies" not in seen["annotator"]
    assert {"Review", "Models", "Admin", "Studies"} <= set(seen["admin"])


def test_a_changed_role_gets_its_new_page_at_the_next_visit(running, browser):
    auth.add_user(running.ctx.database, "promoted", "annotator", PASSWORD)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    browser_login(page, running.url, "promoted", PASSWORD)
    page.wait_for_selector("#whoami strong")
    assert not page.get_by_role("tab", name="Review", exact=True).count()
    auth.set_role(running.ctx.database, "promoted", "reviewer")
    page.reload()
    page.get_by_role("tab", name="Review", exact=True).wait_for()
    page.locator("#whoami strong").wait_for()
    assert "(reviewer)" in page.locator("#whoami").inner_text()
    context.close()


def test_sessions_are_lean_and_keep_what_gradio_keeps(running):
    """Gradio computed every block's config at each session's start (~45 ms, ~1 MB); ours on first use, the same."""
    from gradio.state_holder import SessionState

    from components.idle_sessions import LeanSessionState, LeanStateHolder

    assert isinstance(running.demo.state_holder, LeanStateHolder)
    assert running.demo.server_app.state_holder is running.demo.state_holder
    lean, full = LeanSessionState(running.demo), SessionState(running.demo)
    assert set(vars(lean)) == set(vars(full))
    assert dict.__len__(lean.config_values) == 0
    some = next(iter(full.config_values))
    assert lean.config_values[some] == full.config_values[some]
    assert dict(lean.config_values.items()) == full.config_values  # a deep link reads them all
    client = ApiClient(running.url, "ann", PASSWORD)
    client.call("planning_questions")  # a new session, through Gradio's queue
    assert isinstance(running.demo.state_holder.session_data[client.session_hash], LeanSessionState)


def test_served_pages_are_kept_for_a_bounded_number_of_roots(running):
    """The root URL comes from the request's Host header: what callers send must not grow the cache."""
    from components.role_pages import RolePages

    pages = RolePages(running.demo.role_pages)
    for index in range(RolePages.KEEP + 8):
        config, _ = pages.served(running.demo, "annotator", f"http://host-{index}.example")
        assert config["root"] == f"http://host-{index}.example"
    assert len(pages._served) == RolePages.KEEP
