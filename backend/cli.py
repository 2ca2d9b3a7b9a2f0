"""``python -m backend ...``: a thin shell over the library. Every command prints one JSON value.

Each package contributes its sub-commands through a ``register(sub, groups, common)`` function in
its ``cli`` module (this module registers only ``settings``), listed in ``COMMAND_MODULES``: ``sub`` takes top-level commands, ``groups["import"]`` and
``groups["export"]`` take ``import KIND`` / ``export KIND`` commands, ``common`` is the parent parser with
``--data-dir``. A handler takes the parsed args and returns what to print as JSON. Errors a person can fix print ``error: ...`` and exit 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from backend.context import AppContext, build_context
from backend.errors import CompStudioError
from backend.settings import load_settings, settings_markdown

COMMAND_MODULES = (
    "backend.accounts.cli",
    "backend.vilpact.cli",
    "backend.intents.cli",
    "backend.cli",  # the ``settings`` command, below
    "backend.operations.cli",
    "backend.inference.cli",
    "backend.inference.models_cli",
    "backend.filebench.cli",
    "backend.inference.samples_cli",
    "backend.review.cli",
    "backend.vqa.cli",
    "backend.planning.cli",
    "backend.icl.cli",
    "backend.campaigns.quality_cli",
    "backend.campaigns.cli",
    "backend.webhooks.cli",
    "backend.reporting.cli",
)


def context_from(args: argparse.Namespace) -> AppContext:
    return build_context(load_settings(data_dir=args.data_dir))


def emit(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False, default=str))


TABLE_START, TABLE_END = "<!-- settings:start -->", "<!-- settings:end -->"
SETTINGS_PAGE = Path(__file__).resolve().parent.parent / "docs" / "settings.md"


def _settings(args: argparse.Namespace) -> Any:
    if args.update_docs:
        text = SETTINGS_PAGE.read_text(encoding="utf-8")
        head, _, rest = text.partition(TABLE_START)
        _, _, tail = rest.partition(TABLE_END)
        SETTINGS_PAGE.write_text(f"{head}{TABLE_START}\n{settings_markdown()}\n{TABLE_END}{tail}", encoding="utf-8")
        return {"updated": str(SETTINGS_PAGE)}
    if args.markdown:
        print(settings_markdown())
        return None
    return dict(asdict(load_settings()))


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    settings = sub.add_parser("settings", help="show settings (or the docs/settings.md table with --markdown)")
    settings.add_argument("--markdown", action="store_true")
    settings.add_argument(
        "--update-docs", "--update-readme", action="store_true", help="rewrite the settings table in docs/settings.md"
    )
    settings.set_defaults(handler=_settings)


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-dir", type=Path, default=None, help="data folder (default: COMPSTUDIO_DATA_DIR or ./data)"
    )
    prog = "compstudio" if Path(sys.argv[0]).name == "compstudio" else "python -m backend"
    parser = argparse.ArgumentParser(prog=prog, description="CompStudio command line")
    sub = parser.add_subparsers(dest="command", required=True)
    # listed for --help only: main() hands `app ...` to app.py's own parser before this one parses
    sub.add_parser(
        "app", help="start the web app (the flags of `python app.py`: --host, --port, --data-dir)", add_help=False
    )
    groups = {
        "import": sub.add_parser("import", help="import data (one transaction)").add_subparsers(
            dest="kind", required=True
        ),
        "export": sub.add_parser("export", help="export data").add_subparsers(dest="kind", required=True),
    }
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub, groups, common)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["app"]:
        from app import main as run_app  # the server's own entry point, so its flags are defined once

        run_app(argv[1:], prog="compstudio app")
        return 0
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result = args.handler(args)
    except CompStudioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if result is not None:
        emit(result)
    return 0
