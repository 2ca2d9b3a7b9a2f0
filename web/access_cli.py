"""``compstudio access``: the access table of the app, read from its built pages (web/access_table.py).

Prints ``{event: least identity}`` as JSON, ``--markdown`` the table of docs/access.md, ``--update-docs`` rewrites
that page. The pages are built as the app would build them for the settings of ``--data-dir`` (nothing is served).
Its arguments are declared in backend/accounts/access_cli.py, which calls :func:`run` when the command runs:
the command line starts without Gradio, and only this command builds the web pages.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import gradio as gr

    from backend.context import AppContext

PAGE = Path(__file__).resolve().parent.parent / "docs" / "access.md"
TABLE_START, TABLE_END = "<!-- access:start -->", "<!-- access:end -->"


def built_pages(ctx: AppContext) -> dict[str, gr.Blocks]:
    """Every page the app serves, built (not served): each audience's (web/audiences.py) and the scripts mount's.
    Gradio and the pages are imported here, not when the command line starts (every command would pay for them)."""
    from web.audiences import all_audiences, build_audience
    from web.scripts import MOUNT, build_scripts_blocks

    pages = {f"/{name}": build_audience(ctx, audience, lazy=False) for name, audience in all_audiences().items()}
    return {**pages, MOUNT: build_scripts_blocks(ctx)}


def update_page(text: str, table: str) -> str:
    """``text`` (docs/access.md) with the table between its markers replaced by ``table``."""
    head, _, rest = text.partition(TABLE_START)
    _, _, tail = rest.partition(TABLE_END)
    return f"{head}{TABLE_START}\n{table}\n{TABLE_END}{tail}"


def run(args: argparse.Namespace) -> Any:
    """The ``access`` command's handler (its arguments: backend/accounts/access_cli.py)."""
    from backend.context import build_context
    from backend.settings import load_settings
    from web.access_table import access_table, markdown

    pages = built_pages(build_context(load_settings(data_dir=args.data_dir)))
    if args.update_docs:
        PAGE.write_text(update_page(PAGE.read_text(encoding="utf-8"), markdown(pages)), encoding="utf-8")
        return {"updated": str(PAGE)}
    if args.markdown:
        print(markdown(pages))
        return None
    return access_table(pages.values())
