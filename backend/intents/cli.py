"""``python -m backend export intents``: intent annotations as JSON Lines or CSV."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from backend.intents.export import FORMATS, export_intents


def _export_intents(args: argparse.Namespace) -> Any:
    from backend.cli import context_from

    return export_intents(context_from(args).database, args.format, args.out, source=args.source)


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    intents = groups["export"].add_parser("intents", parents=[common], help="export intent annotations")
    intents.add_argument("--format", choices=FORMATS, default="jsonl")
    intents.add_argument("--out", type=Path, required=True)
    intents.add_argument("--source", choices=("live", "imported"), default=None, help="only this source")
    intents.set_defaults(handler=_export_intents)
