"""``python -m backend backup`` (snapshot now, or ``--list``) and ``python -m backend restore SNAPSHOT``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from backend.operations import backup


def _backup(args: argparse.Namespace) -> Any:
    from backend.cli import context_from

    ctx = context_from(args)
    directory = backup.backups_dir(ctx.settings)
    if args.list:
        return {"directory": str(directory), "snapshots": [s.as_dict() for s in backup.list_snapshots(directory)]}
    snapshot = backup.take_snapshot(ctx.database, directory)
    removed = backup.prune_snapshots(directory, ctx.settings.backup_keep)
    backup.record_run(ctx.database, "local", True, snapshot.path.name, snapshot.bytes)
    return {**snapshot.as_dict(), "rows": backup.count_rows(snapshot.path), "deleted": [str(p) for p in removed]}


def _restore(args: argparse.Namespace) -> Any:
    from backend.settings import load_settings

    settings = load_settings(data_dir=args.data_dir)
    snapshot = args.snapshot
    if not snapshot.exists() and (backup.backups_dir(settings) / snapshot.name).exists():
        snapshot = backup.backups_dir(settings) / snapshot.name  # a bare name from `backup --list`
    return backup.restore_snapshot(snapshot, settings).as_dict()


def _init(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.operations.first_start import prepare_data_folder

    return prepare_data_folder(context_from(args), accounts=not args.no_accounts)


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    init = sub.add_parser(
        "init",
        parents=[common],
        help="prepare a data folder as the app's first start does: database, demo content, demo accounts",
    )
    init.add_argument("--no-accounts", action="store_true", help="do not create the demo accounts")
    init.set_defaults(handler=_init)

    take = sub.add_parser(
        "backup", parents=[common], help="snapshot the database now into <data>/backups (keeps the last backup_keep)"
    )
    take.add_argument("--list", action="store_true", help="list the snapshots instead, newest first")
    take.set_defaults(handler=_backup)

    restore = sub.add_parser(
        "restore",
        parents=[common],
        help="replace the database with a snapshot (stop the app first; the current "
        "database is saved as a new snapshot)",
    )
    restore.add_argument("snapshot", type=Path, help="a snapshot file, or its name in <data>/backups")
    restore.set_defaults(handler=_restore)
