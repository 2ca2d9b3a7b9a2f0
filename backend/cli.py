"""``python -m backend ...``: a thin shell over the library. Every command prints one JSON value.

Each package contributes its sub-commands through a ``register(sub, groups, common)`` function in
its ``cli`` module (this module registers only ``settings``), listed in ``COMMAND_MODULES``: ``sub`` takes top-level commands, ``groups["import"]`` and
``groups["export"]`` take ``import KIND`` / ``export KIND`` commands, ``common`` is the parent parser with
``--data-dir``. A handler takes the parsed args and returns what to print as JSON (or :class:`Finished`, that and an
exit code). ``--data-dir`` is accepted before the command too (``python -m backend --data-dir D gold ...``).

Exit codes (:data:`EXIT_CODES`, docs/evaluation-cli.md), so a script can branch: 0 done (every run finished); 1 an
unexpected error (a traceback); 2 an error a person can fix (``error: ...``: bad arguments, an unknown model, no
server); 3 a run finished with errors (some items' calls failed: they have no answer); 4 a run failed (every item's
call failed); 130 interrupted (Ctrl+C).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass
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
    "backend.serve.cli",
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
    "backend.accounts.access_cli",  # `access`: the access table, read from the built web pages
)


#: what each exit code means (docs/evaluation-cli.md, "Exit codes")
EXIT_CODES = {
    0: "done: every run finished",
    1: "an unexpected error (a traceback on standard error)",
    2: "an error you can fix (error: ... on standard error)",
    3: "a run finished with errors: some items' calls failed and have no answer",
    4: "a run failed: every item's call failed",
    130: "interrupted",
}
EXIT_OK, EXIT_USAGE, EXIT_RUN_ERRORS, EXIT_RUN_FAILED, EXIT_INTERRUPTED = 0, 2, 3, 4, 130


@dataclass(frozen=True)
class Finished:
    """What a handler prints (``value``, as JSON unless None) and the exit code it asks for."""

    value: Any
    code: int = EXIT_OK


def status_exit(statuses: Iterable[str | None]) -> int:
    """The exit code of the runs a command made, by the worst of their statuses.

    >>> status_exit(["finished", "finished with errors"]), status_exit(["failed", "finished"]), status_exit([])
    (3, 4, 0)
    """
    seen = set(statuses)
    if "failed" in seen:
        return EXIT_RUN_FAILED
    return EXIT_RUN_ERRORS if "finished with errors" in seen else EXIT_OK


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
    epilog = "exit codes: " + "; ".join(f"{code} {meaning}" for code, meaning in EXIT_CODES.items())
    parser = argparse.ArgumentParser(prog=prog, description="CompStudio command line", epilog=epilog)
    parser.add_argument(
        "--data-dir",
        dest="data_dir_first",
        type=Path,
        default=None,
        help="data folder, before or after the command (default: COMPSTUDIO_DATA_DIR or ./data)",
    )
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
    passthrough: list[str] = []
    if "--" in argv:  # what follows `--` goes as it is to a command that passes flags on (serve: the engine's)
        cut = argv.index("--")
        argv, passthrough = argv[:cut], argv[cut + 1 :]
    args = parser.parse_args(argv)
    if passthrough:
        if not hasattr(args, "engine_flags"):
            parser.error(f"{args.command} takes no flags after --")
        args.engine_flags = passthrough
    if getattr(args, "data_dir", None) is None:
        args.data_dir = getattr(args, "data_dir_first", None)  # --data-dir given before the command
    try:
        result = args.handler(args)
    except CompStudioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    code = EXIT_OK
    if isinstance(result, Finished):
        result, code = result.value, result.code
    if result is not None:
        emit(result)
    return code
