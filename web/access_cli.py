"""``compstudio access``: the access table of the app, read from its built pages (web/access_table.py).

Prints ``{event: least identity}`` as JSON, ``--markdown`` the table of docs/access.md, ``--update-docs`` rewrites
that page. The pages are built as the app would build them for the settings of ``--data-dir`` (nothing is served).
This is the one command module above ``backend/`` (backend/cli.py lists it by name): it builds the web pages.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import gradio as gr

from backend.context import AppContext, build_context
from backend.settings import load_settings
from web.access_table import access_table, markdown
from web.audiences import all_audiences, build_audience
from web.scripts import MOUNT, build_scripts_blocks

PAGE = Path(__file__).resolve().parent.parent / "docs" / "access.md"
TABLE_START, TABLE_END = "<!-- access:start -->", "<!-- access:end -->"


def built_pages(ctx: AppContext) -> dict[str, gr.Blocks]:
    """Every page the app serves, built (not served): each audience's (web/audiences.py) and the scripts mount's."""
    pages = {f"/{name}": build_audience(ctx, audience) for name, audience in all_audiences().items()}
    return {**pages, MOUNT: build_scripts_blocks(ctx)}


def update_page(text: str, table: str) -> str:
    """``text`` (docs/access.md) with the table between its markers replaced by ``table``."""
    head, _, rest = text.partition(TABLE_START)
    _, _, tail = rest.partition(TABLE_END)
    return f"{head}{TABLE_START}\n{table}\n{TABLE_END}{tail}"


def _access(args: argparse.Namespace) -> Any:
    pages = built_pages(build_context(load_settings(data_dir=args.data_dir)))
    if args.update_docs:
        PAGE.write_text(update_page(PAGE.read_text(encoding="utf-8"), markdown(pages)), encoding="utf-8")
        return {"updated": str(PAGE)}
    if args.markdown:
        print(markdown(pages))
        return None
    return access_table(pages.values())


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    del groups
    access = sub.add_parser(
        "access",
        parents=[common],
        help="the access table: every event of the web app with the least identity that may call it",
    )
    access.add_argument("--markdown", action="store_true", help="as the table of docs/access.md")
    access.add_argument("--update-docs", action="store_true", help="rewrite the table in docs/access.md")
    access.set_defaults(handler=_access)
