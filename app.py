"""CompStudio: ``python app.py [--host H] [--port P] [--data-dir D]``.

Builds the AppContext (settings, database, migrations), creates the demo content on first start, composes
the tabs listed in ``components.TABS`` and launches Gradio with password login (or Sign in with Hugging Face
on a Space).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import gradio as gr  # noqa: E402
from starlette.requests import HTTPConnection  # noqa: E402

from backend.context import AppContext, build_context  # noqa: E402
from backend.settings import Settings, load_settings  # noqa: E402
from components import TABS, intents  # noqa: E402
from components.access import check_events  # noqa: E402
from components.common import TabHandle, caller  # noqa: E402
from components.fastpath import fast_routes  # noqa: E402
from components.frontend_assets import asset_routes  # noqa: E402
from components.invitations import invitation_routes  # noqa: E402
from components.pages import Header, page_name_of, plan_pages  # noqa: E402
from components.role_pages import CompStudioBlocks, PagePlan, RolePages, endpoint_roles, role_page_routes  # noqa: E402
from components.signin import SignIn, build_signin, oauth_logout_routes  # noqa: E402
from components.study_pages import study_routes  # noqa: E402

APP_JS = """
() => {
  // Ctrl+Enter submits: the player's script does it (assets/player/player.js, components/player.py)
  // Drafts are saved while typing; the last keystrokes before a reload or a closed tab would still be in
  // flight, so the page sends them once more as it goes away (sendBeacon survives the page).
  const fields = '#concrete-intent textarea, #concrete-intent input, #high-level-intent textarea, #high-level-intent input';
  let typed = false;
  document.addEventListener('input', (event) => { if (event.target.matches(fields)) typed = true; });
  const flushDraft = () => {
    const marker = document.querySelector('#intent-sequence');
    const concrete = document.querySelector('#concrete-intent textarea, #concrete-intent input');
    const high = document.querySelector('#high-level-intent textarea, #high-level-intent input');
    const sequence = marker ? marker.textContent.trim() : '';
    if (!typed || !sequence || !concrete || !high || !navigator.sendBeacon) return;
    const url = window.location.pathname.replace(/[^/]*$/, '') + 'gradio_api/run/intent_draft';
    const body = JSON.stringify({data: [sequence, concrete.value, high.value, Date.now()]});
    navigator.sendBeacon(url, new Blob([body], {type: 'application/json'}));
  };
  window.addEventListener('pagehide', flushDraft);
  // Gradio's toast header is a role="button" holding the Close button (axe-core: nested-interactive,
  // serious): make the header a plain region; Close stays a button, and the header still toggles on click.
  const plainToastHeaders = () => document.querySelectorAll('.toast-header[role="button"]').forEach((header) => {
    header.removeAttribute('role');
    header.removeAttribute('tabindex');
  });
  new MutationObserver(plainToastHeaders).observe(document.body, {childList: true, subtree: true});
  document.addEventListener('visibilitychange', () => { if (document.visibilityState === 'hidden') flushDraft(); });
}
"""
CSS = """
#intent-progress {font-size: 0.95em} footer {visibility: hidden} #intent-sequence {display: none}
#intent-message:not(:has(p)), #intent-skip-message:not(:has(p)) {display: none}
#intent-message p, #intent-skip-message p {color: #9a3412; font-weight: 600}
@media (hover: hover) and (pointer: fine) {.cs-ctrl-enter::after {content: "\\00a0(Ctrl+Enter)"}}
#app-title h1 {font-size: 1.6em; margin: 0; overflow-wrap: normal; word-break: normal; hyphens: none}
@media (max-width: 640px) {
  #app-header {flex-direction: column; gap: 0.25em}
  #app-title h1 {font-size: 1.25em}
}
"""


# Gradio's Soft theme draws labels and the primary button in indigo 500 on indigo 100 / white (3.9-4.5:1);
# one step darker passes WCAG AA (4.5:1), which axe-core checks in tests/test_browser_accessibility.py.
def app_theme() -> gr.themes.Base:
    return gr.themes.Soft().set(
        block_label_text_color="*primary_700",
        block_title_text_color="*primary_700",
        color_accent="*primary_600",
        body_text_color_subdued="*neutral_500",  # neutral 400 (a dropdown's placeholder, info text) is 2.5:1
        button_primary_background_fill="*primary_700",
        button_primary_background_fill_hover="*primary_600",
    )


HEAD = "<title>CompStudio</title>"


def build_demo(ctx: AppContext) -> gr.Blocks:
    """All tabs in one Blocks; each person's browser gets a page with the tabs they may open
    (components/pages.py, components/role_pages.py), and every call is checked again on the server."""
    oauth = ctx.settings.effective_auth_mode == "oauth"
    with CompStudioBlocks(title="CompStudio") as demo:
        with gr.Row(elem_id="app-header"):
            gr.Markdown("# CompStudio · compositional generalization benchmarks", elem_id="app-title")
            who = gr.Markdown(elem_id="whoami")
            # signs out in this tab (a Markdown link opened a new one); /logout is components/signin.py's
            logout = gr.Button(
                "Log out", elem_id="logout", size="sm", variant="secondary", scale=0, min_width=100, visible=False
            )
            logout.click(None, js="() => { window.location.assign('logout'); }")
            if oauth:
                gr.LoginButton()
        handles: list[TabHandle] = []
        with gr.Tabs() as tabs:
            for module_name, builder in TABS:
                handles.append(getattr(importlib.import_module(module_name), builder)(ctx))
        # one page per identity and per crowd-study tab, each with its own load event (components/pages.py)
        pages = plan_pages(ctx, demo, Header(who=who, logout=logout, tabs=tabs), handles)
    check_events(demo)  # every event was wired behind its access-table row (components/access.py)
    demo.queue(default_concurrency_limit=4)
    demo.role_pages = PagePlan(pages=pages, endpoint_roles=endpoint_roles(demo))
    return demo


def build_app(settings: Settings, *, notices: tuple[str, ...] = (), hf_api: Any = None) -> tuple[gr.Blocks, AppContext]:
    """The app and its context (whose backup service ``main`` starts)."""
    ctx = build_context(settings, notices=notices, hf_api=hf_api)
    if settings.demo_content:
        from backend.icl.demo import ensure_icl_demo
        from backend.vilpact.demo import ensure_demo_content, ensure_vilpact_demo
        from backend.vqa.demo import ensure_vqa_demo

        ensure_demo_content(ctx)
        ensure_vilpact_demo(ctx)
        ensure_vqa_demo(ctx)
        ensure_icl_demo(ctx)
    return build_demo(ctx), ctx


def page_viewer(ctx: AppContext, signin: SignIn | None) -> Callable[[HTTPConnection], tuple[str | None, str]]:
    """Who asks for the page at ``/`` (components/role_pages.py): the name Gradio shows (password sign-in) and
    the page they get (components/pages.page_name_of), "anyone" when not signed in."""

    def viewer(connection: HTTPConnection) -> tuple[str | None, str]:
        if signin is not None:
            name = shown = signin.user(connection)
        else:  # Sign in with Hugging Face: the session Gradio's OAuth keeps (Gradio shows no name then)
            name, shown = caller(ctx, gr.Request(request=connection)), None  # type: ignore[arg-type]
        return shown, page_name_of(ctx, name)

    return viewer


def launch_kwargs(ctx: AppContext, demo: gr.Blocks) -> dict:
    plan = getattr(demo, "role_pages", None)
    if plan is None:
        raise TypeError("launch_kwargs needs the Blocks made by build_demo (its role pages)")
    kwargs: dict = {
        "allowed_paths": [str(ctx.settings.media_dir.resolve())],
        "js": APP_JS,
        "css": CSS,
        "theme": app_theme(),
        "head": HEAD,
        "footer_links": ["api"],
        "state_session_capacity": ctx.settings.session_capacity,
        # every upload (images, CSV, JSONL, zip): larger files get 413 and the page says so; each gr.File
        # also names its file types, which Gradio checks on the server
        "max_file_size": int(ctx.settings.max_upload_mb * 1024 * 1024),
        # raw-HTTP calls of the annotation endpoints skip Gradio's per-call machinery (components/fastpath.py)
        "app_kwargs": {"routes": fast_routes(intents.api_endpoints(ctx))},
    }
    signin = build_signin(ctx) if ctx.settings.effective_auth_mode == "password" else None
    # each person's browser gets the page of their role (only the tabs it may open), before Gradio's "/",
    # and Gradio's frontend files from memory, cached by the browser (components/frontend_assets.py)
    kwargs["app_kwargs"]["routes"] = [
        *role_page_routes(RolePages(plan), page_viewer(ctx, signin)),
        *asset_routes(),
        *kwargs["app_kwargs"]["routes"],
    ]
    if signin is not None:
        # our login page, /login, /logout and sessions kept in SQLite (components/signin.py); the sign-in's
        # hashing runs on worker threads, never on the event loop
        kwargs["auth_dependency"] = signin.user
        kwargs["app_kwargs"] = {
            # crowd workers arrive by study links and get the same sessions (components/study_pages.py)
            "routes": [
                *signin.routes(),
                *invitation_routes(signin),
                *study_routes(ctx),
                *kwargs["app_kwargs"]["routes"],
            ],
            "middleware": [signin.middleware()],
        }
    else:  # Sign in with Hugging Face: our /logout frees the person's leases before Gradio's would run
        kwargs["app_kwargs"]["routes"] = [*oauth_logout_routes(ctx), *kwargs["app_kwargs"]["routes"]]
    return kwargs


def login_help(ctx: AppContext) -> str:
    if ctx.settings.effective_auth_mode == "oauth":
        return "Sign in with Hugging Face on the page."
    lines = ["Sign in with an account (create one: python -m backend users add NAME --role admin --password PW)."]
    if ctx.settings.demo_content:
        from backend.accounts.demo import ensure_demo_accounts

        accounts = ensure_demo_accounts(ctx)
        lines.append(f"Demo accounts (passwords also in {accounts.path}):")
        lines.extend(f"  {name:16s} {password}" for name, password in accounts.accounts.items())
    return "\n".join(lines)


def mark_matplotlib_absent() -> None:
    """Gradio wraps every call in ``MatplotlibBackendMananger``, which runs ``import matplotlib`` twice a
    call. We do not install matplotlib, and each failed import searches every ``sys.path`` entry: 12% of
    the event loop's time per Gradio call (py-spy, 30 annotators). Recording it as absent in
    ``sys.modules`` makes that failure immediate. Nothing changes where matplotlib is installed."""
    if importlib.util.find_spec("matplotlib") is None:
        sys.modules.setdefault("matplotlib", None)  # type: ignore[arg-type]  # None: "import fails at once"


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    parser = argparse.ArgumentParser(prog=prog, description="Run the CompStudio web app.")
    parser.add_argument(
        "--host",
        default=None,
        help="address to bind (COMPSTUDIO_HOST; default GRADIO_SERVER_NAME, "
        "else 0.0.0.0 on a Hugging Face Space, else 127.0.0.1)",
    )
    parser.add_argument(
        "--port", type=int, default=None, help="port (COMPSTUDIO_PORT; default GRADIO_SERVER_PORT, else 7860)"
    )
    parser.add_argument("--data-dir", type=Path, default=None, help="data folder (default ./data; COMPSTUDIO_DATA_DIR)")
    args = parser.parse_args(argv)
    from backend.inference import hardware  # noqa: F401  (registers the spaces.GPU wrapper before launch on ZeroGPU)
    from backend.inference.store import close_interrupted_runs
    from backend.operations import start as space_start
    from backend.operations.service import stop_on_sigterm
    from components.idle_sessions import start_idle_session_sweep

    mark_matplotlib_absent()
    settings = load_settings(host=args.host, port=args.port, data_dir=args.data_dir)
    start = space_start.prepare_start(settings)  # data folder on a Space; Hub restore into an empty one
    demo, ctx = build_app(start.settings, notices=tuple(start.notices()))
    print(
        f"CompStudio: data in {ctx.settings.data_dir.resolve()}; listening on {ctx.settings.host}:{ctx.settings.port}"
    )
    for notice in ctx.notices:
        print(f"Notice: {notice}")
    print(login_help(ctx), flush=True)
    # Everything built so far lives as long as the process: keep it out of the garbage collector's
    # generations, so collections during requests stay short (full collections of the whole UI tree
    # otherwise land in request latency).
    gc.collect()
    gc.freeze()
    ctx.database.start_checkpointer()
    close_interrupted_runs(ctx.database)  # batch runs a crash cut short: failed, to be resumed
    ctx.backup.start()
    ctx.webhooks.start()  # queued webhook deliveries, retried across restarts (backend/webhooks/sender.py)
    stop_on_sigterm(ctx.backup)
    from backend.inference.warmup import start_warm_up

    start_warm_up(ctx, ready=lambda: demo.is_running)  # the planning baselines, once the server is serving
    start_idle_session_sweep(demo, ctx.settings.session_idle_minutes)  # memory of closed tabs and old clients
    try:
        demo.launch(
            server_name=ctx.settings.host, server_port=ctx.settings.port, ssr_mode=False, **launch_kwargs(ctx, demo)
        )
    finally:
        ctx.webhooks.stop()
        ctx.backup.stop()
        ctx.database.stop_checkpointer()


if __name__ == "__main__":
    main()
