"""``python -m backend import vilpact DIR``: import ViLPAct's released data (one transaction)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from backend.vilpact.importer import import_vilpact


def _import_vilpact(args: argparse.Namespace) -> Any:
    from backend.cli import context_from

    ctx = context_from(args)
    return import_vilpact(
        ctx.database,
        args.dir,
        videos=args.videos,
        add_to_pool=not args.no_pool,
        annotators_per_sequence=ctx.settings.annotators_per_sequence,
    ).as_dict()


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    vilpact = groups["import"].add_parser("vilpact", parents=[common], help="import ViLPAct's released data")
    vilpact.add_argument("dir", type=Path, help="the release's data/ folder")
    vilpact.add_argument("--videos", type=Path, default=None, help="folder of <id>.mp4 Charades videos")
    vilpact.add_argument("--no-pool", action="store_true", help="do not put the sequences in the annotation pool")
    vilpact.set_defaults(handler=_import_vilpact)
