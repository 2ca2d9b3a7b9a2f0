"""``compstudio access``: the access table, read from the app's built pages (web/access_cli.py, which this command
imports only when it runs: every other command starts without Gradio)."""

from __future__ import annotations

import argparse
from typing import Any


def _access(args: argparse.Namespace) -> Any:
    from web.access_cli import run  # the pages are the web shell's: built only for this command

    return run(args)


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
