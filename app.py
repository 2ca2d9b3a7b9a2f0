"""CompStudio: ``python app.py [--host H] [--port P] [--data-dir D]``.

Builds the AppContext (settings, database, migrations), creates the demo content on first start, builds the
web shell (web/: one mounted Blocks per audience, composed from the tabs in ``components.TABS``) and serves it
with uvicorn, with password sign-in (or Sign in with Hugging Face on a Space).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.util
import os
import sys
import threading
from pathlib import Path
from typing import Any

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from backend.context import AppContext, build_context  # noqa: E402
from backend.settings import Settings, load_settings  # noqa: E402
from web import Shell, create_shell  # noqa: E402
from web.look import APP_JS, CSS, HEAD, app_theme  # noqa: E402,F401  (kept importable from app)


def build_app(
    settings: Settings, *, notices: tuple[str, ...] = (), hf_api: Any = None, prebuild: bool = False
) -> tuple[Shell, AppContext]:
    """The web app (web.create_shell: a FastAPI app with one mounted Blocks per audience, each built on its first
    request, or all in the background once serving with ``prebuild``) and its context (whose backup service
    ``main`` starts)."""
    ctx = build_context(settings, notices=notices, hf_api=hf_api)
    if settings.demo_content:
        from backend.operations.first_start import write_demo_content  # the same as `compstudio init`

        write_demo_content(ctx)
    return create_shell(ctx, prebuild=prebuild), ctx


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


def freeze_heap() -> None:
    """Keep everything built so far (it lives as long as the process) out of the garbage collector's
    generations, so that collections during requests stay short; then hand the memory that building freed back
    to the system (glibc keeps freed heap pages otherwise; benchmarks/cold_start.py, 2026-12-04: 369 -> 343 MiB
    resident 20 s after a cold start on the demo content)."""
    gc.collect()
    gc.freeze()
    release_free_memory()


def release_free_memory() -> None:
    """glibc's ``malloc_trim(0)``: return the free pages at the top of the heap and in its arenas to the system.
    Nothing happens where the C library is not glibc (musl, macOS)."""
    import ctypes

    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)  # the process's own symbols: libc's, where it is glibc
    if trim is not None:
        trim(0)


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
    import uvicorn

    from backend.inference import hardware  # noqa: F401  (registers the spaces.GPU wrapper before launch on ZeroGPU)
    from backend.inference.store import close_interrupted_runs
    from backend.operations import start as space_start
    from backend.operations.service import stop_on_sigterm
    from web import client_address

    mark_matplotlib_absent()
    settings = load_settings(host=args.host, port=args.port, data_dir=args.data_dir)
    start = space_start.prepare_start(settings)  # data folder on a Space; Hub restore into an empty one
    shell, ctx = build_app(start.settings, notices=tuple(start.notices()), prebuild=True)
    print(
        f"CompStudio: data in {ctx.settings.data_dir.resolve()}; listening on {ctx.settings.host}:{ctx.settings.port}"
    )
    for notice in ctx.notices:
        print(f"Notice: {notice}")
    print(login_help(ctx), flush=True)
    # full collections of the whole UI tree otherwise land in request latency
    freeze_heap()
    shell.blocks.on_prebuilt = freeze_heap  # and again once the pages are built, in the background
    ctx.database.start_checkpointer()
    close_interrupted_runs(ctx.database)  # batch runs a crash cut short: failed, to be resumed
    ctx.backup.start()
    ctx.webhooks.start()  # queued webhook deliveries, retried across restarts (backend/webhooks/sender.py)
    stop_on_sigterm(ctx.backup)
    from backend.inference.warmup import start_warm_up

    # the planning baselines, once the server is serving; the pages after /scripts are built once they are warm
    shell.blocks.hold = threading.Event()
    start_warm_up(ctx, ready=lambda: shell.ready, done=shell.blocks.hold)
    try:
        # X-Forwarded-For/-Proto are believed only from `trusted_proxies` (none by default; uvicorn's own default
        # trusted loopback): uvicorn applies them to the client address and the scheme, web/client_address.py checks
        trusted = ",".join(sorted(client_address.trusted(ctx.settings.trusted_proxies)))
        uvicorn.run(
            shell.app,
            host=ctx.settings.host,
            port=ctx.settings.port,
            log_level="warning",
            proxy_headers=bool(trusted),
            forwarded_allow_ips=trusted or None,
        )
    finally:
        ctx.webhooks.stop()
        ctx.backup.stop()
        ctx.database.stop_checkpointer()


if __name__ == "__main__":
    main()
