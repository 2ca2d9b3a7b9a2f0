"""ViLPAct's commands: ``import vilpact DIR`` (the released data), ``import charades ...`` (Charades-format
annotations), ``vilpact extract ...`` (Algorithm 1 from files to the released layout, no database) and
``vilpact accept`` (imported videos' sequences into the intent pool). Each import is one transaction."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from backend.errors import ImportFileError
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


def charades_files(args: argparse.Namespace) -> Any:
    """The files named on the command line: one folder with Charades' file names, or CSVs and ``--classes``."""
    from backend.vilpact.charades import STANDARD_NAMES, CharadesFiles

    paths: list[Path] = args.paths
    if len(paths) == 1 and paths[0].is_dir():
        found = CharadesFiles.in_folder(paths[0])
        chosen = {k: getattr(args, k, None) or getattr(found, k) for k in STANDARD_NAMES}
        return CharadesFiles(found.videos, **chosen)
    if args.classes is None:
        raise ImportFileError(str(paths[0]), None, "name the class file with --classes Charades_v1_classes.txt")
    return CharadesFiles(
        tuple(paths), args.classes, getattr(args, "objects", None), getattr(args, "verbs", None), args.mapping
    )


def _import_charades(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.vilpact.charades import import_charades
    from backend.vilpact.charades_pool import accept_stored

    ctx = context_from(args)
    report: dict[str, Any] = import_charades(ctx.database, charades_files(args), videos_dir=args.videos).as_dict()
    if args.accept:
        report["pool"] = accept_stored(ctx.database, ctx.settings, "cli", None, ctx.embeddings)
    return report


def _extract(args: argparse.Namespace) -> Any:
    from backend.settings import load_settings
    from backend.vilpact.charades_pool import extract_files

    return extract_files(charades_files(args), args.out, load_settings(), explain=args.explain)


def _accept(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.vilpact.charades_pool import accept_stored

    ctx = context_from(args)
    return accept_stored(ctx.database, ctx.settings, "cli", args.video_ids or None, ctx.embeddings)


def _export(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.vilpact.charades_pool import export_stored

    ctx = context_from(args)
    return export_stored(ctx.database, ctx.settings, args.out, ctx.embeddings)


def _charades_inputs(parser: argparse.ArgumentParser, objects_and_verbs: bool) -> None:
    parser.add_argument(
        "paths", type=Path, nargs="+", help="Charades-format CSVs (Charades_v1_train.csv ...), or one folder of them"
    )
    parser.add_argument("--classes", type=Path, default=None, help="Charades_v1_classes.txt (cNNN name)")
    if objects_and_verbs:
        parser.add_argument("--objects", type=Path, default=None, help="Charades_v1_objectclasses.txt (oNNN name)")
        parser.add_argument("--verbs", type=Path, default=None, help="Charades_v1_verbclasses.txt (vNNN name)")
    parser.add_argument("--mapping", type=Path, default=None, help="Charades_v1_mapping.txt (cNNN oNNN vNNN)")


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    vilpact = groups["import"].add_parser("vilpact", parents=[common], help="import ViLPAct's released data")
    vilpact.add_argument("dir", type=Path, help="the release's data/ folder")
    vilpact.add_argument("--videos", type=Path, default=None, help="folder of <id>.mp4 Charades videos")
    vilpact.add_argument("--no-pool", action="store_true", help="do not put the sequences in the annotation pool")
    vilpact.set_defaults(handler=_import_vilpact)

    charades = groups["import"].add_parser(
        "charades", parents=[common], help="import Charades-format annotations (videos, classes, objects, verbs)"
    )
    _charades_inputs(charades, objects_and_verbs=True)
    charades.add_argument("--videos", type=Path, default=None, help="folder of <id>.mp4 videos")
    charades.add_argument(
        "--accept", action="store_true", help="also put the extracted sequences in the intent pool (vilpact accept)"
    )
    charades.set_defaults(handler=_import_charades)

    tools = sub.add_parser("vilpact", help="ViLPAct's sequence extraction (Algorithm 1)").add_subparsers(
        dest="action", required=True
    )
    extract = tools.add_parser(
        "extract", help="extract sequences from Charades-format files into the released layout (no database)"
    )
    _charades_inputs(extract, objects_and_verbs=True)
    extract.add_argument("--out", type=Path, required=True, help="sequences.csv to write (all_gt_seq.csv's columns)")
    extract.add_argument("--explain", type=Path, default=None, help="also write every decision as JSON lines")
    extract.set_defaults(handler=_extract)

    accept = tools.add_parser(
        "accept", parents=[common], help="put imported Charades videos' sequences in the intent pool (N annotators)"
    )
    accept.add_argument("video_ids", nargs="*", help="only these videos (default: every imported video)")
    accept.set_defaults(handler=_accept)

    export = tools.add_parser(
        "export", parents=[common], help="write imported Charades videos' sequences in the released layout"
    )
    export.add_argument("--out", type=Path, required=True)
    export.set_defaults(handler=_export)
