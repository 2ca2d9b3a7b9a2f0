"""One page per role: each person's browser receives only the tabs they may open (issue 17).

Gradio sends the configuration of the whole Blocks to every visitor, and its frontend loads the code of every
component type in it and builds every component, including tabs the person never sees. Measured with
``benchmarks/page_speed.py``, that was most of the sign-in wait. Gradio can serve part of a Blocks: a page entry
(``config["page"][name]``) lists the components, events and layout one page holds. ``components/pages.py``
plans one page per identity of the access table (anyone, annotator, author, reviewer, admin) and one per
crowd-study work tab (a study worker sees only their study's tab), and :func:`role_page_routes` serves each
person theirs at ``/``, chosen on the server from who they are.

What a page leaves out: the tabs (and inner tabs) it does not hold, every component inside them, and every
event that touches one of them. The named API endpoints are for scripts, not the page; "Use via API" lists
those the page's identity may call. Each page has its own load event (``components.pages.page_load``). Nothing else
changes: events keep their ids, and every handler still checks the caller on the server
(``components/access.py``); a page decides what is sent, not what is allowed.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import gradio as gr
from gradio import route_utils, utils
from gradio.route_utils import API_PREFIX
from gradio.routes import templates
from gradio.state_holder import StateHolder
from gradio_client.snippet import generate_code_snippets  # type: ignore[import-untyped]
from hf_gradio.cli import generate_cli_snippet  # type: ignore[import-untyped]
from starlette.requests import HTTPConnection, Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from backend.accounts import access
from components.idle_sessions import LeanStateHolder


@dataclass(frozen=True)
class Page:
    """One page: the identity whose rights its API list follows, the blocks it leaves out (with everything
    inside them), its own load event, and the properties it starts with (its tabs shown, the tab it lands on,
    so that the load need not change them: a changed selection would also fire the tab's select event)."""

    identity: str
    hidden: frozenset[int]
    load: int
    props: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class PagePlan:
    """The app's pages by name, and the access table's least identity of each named API endpoint."""

    pages: Mapping[str, Page]
    endpoint_roles: Mapping[int, str]  # event id of a named API endpoint -> least identity (access table)

    def page(self, config: Mapping[str, Any], name: str) -> dict[str, Any]:
        """The ``config["page"]`` entry of page ``name``: layout, component ids and event ids."""
        page = self.pages[name]
        layout = _pruned(config["layout"], page.hidden)
        components = set(_ids(layout))
        other_loads = {other.load for other in self.pages.values()} - {page.load}
        kept: list[int] = []
        for dependency in config["dependencies"]:
            number = dependency["id"]
            if number in other_loads or number in self.endpoint_roles:  # endpoints: for scripts, not the page
                continue
            if _fits(dependency, components, set(kept)):
                kept.append(number)
        # nor the stand-in component Gradio makes for each named endpoint
        used = {
            block for dependency in config["dependencies"] if dependency["id"] in kept for block in _touched(dependency)
        }
        unused = frozenset(c["id"] for c in config["components"] if c["type"] == "api" and c["id"] not in used)
        layout = _pruned(layout, unused)
        return {"layout": layout, "components": sorted(components - unused), "dependencies": kept}

    def endpoints(self, name: str) -> set[int]:
        """The named API endpoints the page's identity may call (listed in the page's "Use via API")."""
        identity = self.pages[name].identity
        return {number for number, least in self.endpoint_roles.items() if access.allows(least, identity)}


def _ids(node: Mapping[str, Any]) -> Iterable[int]:
    yield node["id"]
    for child in node.get("children", ()):
        yield from _ids(child)


def _pruned(node: Mapping[str, Any], hidden: frozenset[int]) -> dict[str, Any]:
    out: dict[str, Any] = {"id": node["id"]}
    if "children" in node:
        out["children"] = [_pruned(child, hidden) for child in node["children"] if child["id"] not in hidden]
    return out


def _fits(dependency: Mapping[str, Any], components: set[int], kept: set[int]) -> bool:
    """An event belongs to a page when everything it touches is on the page and, for ``.then`` steps, the
    event it follows is too. Events with neither triggers nor a predecessor are API endpoints."""
    if dependency.get("trigger_after") is not None and dependency["trigger_after"] not in kept:
        return False
    return all(block in components for block in _touched(dependency))


def _touched(dependency: Mapping[str, Any]) -> list[int]:
    return [
        *(target[0] for target in dependency["targets"]),
        *dependency["inputs"],
        *dependency["outputs"],
        *(dependency.get("show_progress_on") or ()),
    ]


def inside(block: Any, hidden: set[int] | frozenset[int]) -> bool:
    """Whether ``block`` is one of ``hidden`` (block ids) or sits inside one."""
    while block is not None:
        if block._id in hidden:
            return True
        block = block.parent
    return False


def endpoint_roles(demo: gr.Blocks) -> dict[int, str]:
    """The least role of each named API endpoint (an event with no trigger), from the access table."""
    return {
        fn._id: access.EVENTS.get(fn.api_name or "", "admin")
        for fn in demo.fns.values()
        if fn.api_visibility == "public" and fn.api_name and not fn.targets and fn.trigger_after is None
    }


class CompStudioBlocks(gr.Blocks):
    """The app's Blocks: it carries the plan of its pages (set by ``app.build_demo``), and the state
    holder Gradio gives it makes lean sessions (components/idle_sessions.py)."""

    role_pages: PagePlan | None = None
    _holder: StateHolder | None = None

    @property  # type: ignore[override]
    def state_holder(self) -> StateHolder | None:
        return self._holder

    @state_holder.setter
    def state_holder(self, holder: StateHolder) -> None:
        # Gradio's App makes a StateHolder and hands it to the Blocks (StateHolder.set_blocks); the app and the
        # Blocks share that one object, so changing its class here changes it for both
        if type(holder) is StateHolder:
            holder.__class__ = LeanStateHolder
        self._holder = holder


class RolePages:
    """The pages served at ``/``: Gradio's configuration cut to one page, and the API description of the
    endpoints its identity may call ("Use via API"), made once per page and root URL (a launched Blocks'
    configuration does not change; a rebuilt one is a new key)."""

    #: pages kept: the root comes from the request's Host header, so the cache must not grow with what callers send
    KEEP = 32

    def __init__(self, plan: PagePlan):
        self.plan = plan
        self._served: OrderedDict[tuple[int, str, str], tuple[dict[str, Any], dict[str, Any]]] = OrderedDict()

    def served(self, blocks: gr.Blocks, name: str, root: str) -> tuple[dict[str, Any], dict[str, Any]]:
        key = (id(blocks.config), name, root)
        if key in self._served:
            self._served.move_to_end(key)
        else:
            while len(self._served) >= self.KEEP:
                self._served.popitem(last=False)
            source = blocks.config
            page = self.plan.page(source, name)
            ids, events = set(page["components"]), set(page["dependencies"])
            rest = {k: v for k, v in source.items() if k not in {"components", "dependencies", "layout", "page"}}
            config = utils.safe_deepcopy(rest)
            config["components"] = utils.safe_deepcopy([c for c in source["components"] if c["id"] in ids])
            starts = self.plan.pages[name].props
            for component in config["components"]:
                component["props"].update(starts.get(component["id"], {}))
            config["dependencies"] = utils.safe_deepcopy([d for d in source["dependencies"] if d["id"] in events])
            config["layout"] = page["layout"]
            config["page"] = {"": page}  # the browser takes the page of its URL, "/"
            config["current_page"] = ""
            config = dict(route_utils.update_root_in_config(config, root))
            self._served[key] = (config, _api_info(blocks, events | self.plan.endpoints(name), root))
        return self._served[key]


def _api_info(blocks: gr.Blocks, events: set[int], root: str) -> dict[str, Any]:
    """Gradio's API description (``routes.get_page_api_info`` and ``prepare_api_info``) of ``events``."""
    info = blocks.get_api_info()
    named = {f"/{blocks.fns[number].api_name}" for number in events if number in blocks.fns}
    unnamed = {str(number) for number in events}
    prepared = route_utils.update_example_values_to_use_public_url(
        utils.safe_deepcopy(
            {
                "named_endpoints": {k: v for k, v in info["named_endpoints"].items() if k in named},
                "unnamed_endpoints": {k: v for k, v in info["unnamed_endpoints"].items() if str(k) in unnamed},
            }
        )
    )
    cli = generate_cli_snippet(prepared["named_endpoints"])
    for name, endpoint in prepared["named_endpoints"].items():
        endpoint["code_snippets"] = generate_code_snippets(
            name, endpoint, root, space_id=blocks.space_id, api_prefix=API_PREFIX + "/"
        )
        endpoint["code_snippets"]["cli"] = cli[name].replace("{space_id}", blocks.space_id or root)
    return prepared


def role_page_routes(pages: RolePages, viewer: Callable[[HTTPConnection], tuple[str | None, str]]) -> list[Route]:
    """``GET /`` (before Gradio's own): the caller's page. ``viewer`` gives the signed-in person's name as Gradio
    shows it (None under Sign in with Hugging Face) and the name of their page, "anyone" when not signed in."""

    async def page(request: Request) -> Response:
        username, name = await anyio.to_thread.run_sync(viewer, request)
        app = request.app
        if name == "anyone" and (app.auth is not None or getattr(app, "auth_dependency", None) is not None):
            return RedirectResponse("login", status_code=303)
        blocks = app.get_blocks()
        root_path = app.root_path or request.scope.get("root_path") or blocks.custom_mount_path
        root = route_utils.get_root_url(request=request, route_path="/", root_path=root_path)
        config, api_info = pages.served(blocks, name, root)
        context = {"base_url": "./", "config": {**config, "username": username, "deep_link_state": "none"}}
        return templates.TemplateResponse(
            request=request, name="frontend/index.html", context={**context, "gradio_api_info": api_info}
        )

    return [Route("/", page, methods=["GET", "HEAD"])]
