"""Hub backup and restore for a Space without persistent storage.

* :class:`HubBackup`: pushes the snapshots (never the live database) and uploaded media to a private
  dataset repo with ``huggingface_hub.CommitScheduler``; keeps the newest ``backup_keep`` snapshots there.
* :func:`restore_from_hub_if_empty`: an empty data folder gets the newest Hub snapshot that passes
  ``PRAGMA integrity_check`` (corrupted ones are skipped) and the media files back.

``huggingface_hub`` is imported inside functions only.
"""

from __future__ import annotations

import collections
import functools
import logging
import shutil
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path, PurePosixPath
from typing import Any

from backend.errors import BackupError
from backend.operations.backup import (
    BACKUP_DIR_NAME,
    RestoreReport,
    check_snapshot,
    record_run,
    restore_snapshot,
    snapshot_time,
)
from backend.settings import Settings
from backend.storage import Database

log = logging.getLogger(__name__)

REPO_TYPE = "dataset"
# What goes to the Hub: snapshots and media people uploaded. Demo media is regenerated on start and
# exports are rebuilt on demand, so neither is pushed.
HUB_ALLOW = ["backups/compstudio-*.db", "media/**"]
HUB_IGNORE = ["media/demo/**", "media/exports/**", "**/.*", ".*"]


@functools.cache
def _scheduler_class() -> type:
    from huggingface_hub import CommitScheduler

    class SnapshotScheduler(CommitScheduler):
        """CommitScheduler that records each push and keeps only the newest snapshots in the repo."""

        def __init__(
            self, *, on_pushed: Callable[[Any], None], on_failed: Callable[[Exception], None], **kwargs: Any
        ) -> None:
            self._on_pushed, self._on_failed = on_pushed, on_failed
            super().__init__(**kwargs)

        def push_to_hub(self) -> Any:
            try:
                info = super().push_to_hub()
                if info is not None:
                    self._on_pushed(info)
                return info
            except Exception as exc:  # any Hub/network failure: record it for the admins, then re-raise
                self._on_failed(exc)
                raise

    return SnapshotScheduler


class HubBackup:
    """Pushes ``<data>/backups/compstudio-*.db`` and uploaded media to a private dataset repo.

    The CommitScheduler watches the data folder but uploads only files matching ``HUB_ALLOW``: the
    snapshots, written complete under their final name, never the live ``compstudio.db``.
    ``api`` is an ``HfApi`` (a fake subclass in tests); its constructor calls ``create_repo``.
    """

    def __init__(self, settings: Settings, database: Database, api: Any = None):
        from huggingface_hub import HfApi

        self.settings = settings
        self.database = database
        self.api = api if api is not None else HfApi()
        self.repo_id = settings.hub_backup_repo
        self._prune_lock = threading.Lock()
        self._pending: collections.deque[tuple[bool, str]] = collections.deque()
        self.scheduler = _scheduler_class()(
            on_pushed=self._pushed,
            on_failed=self._failed,
            repo_id=self.repo_id,
            repo_type=REPO_TYPE,
            private=True,
            folder_path=settings.data_dir,
            every=settings.backup_every_minutes or 5,
            allow_patterns=HUB_ALLOW,
            ignore_patterns=HUB_IGNORE,
            hf_api=self.api,
        )

    def push(self) -> Future[Any]:
        """Push what changed now; returns a Future (``.result()`` waits for the commit)."""
        return self.scheduler.trigger()

    def push_and_wait(self, timeout: float = 600.0) -> None:
        """Push now, wait for the commit and record the outcome from this thread; never raises."""
        try:
            self.push().result(timeout=timeout)
        except Exception:  # recorded by _failed (or a timeout: the push goes on in the background)
            log.exception("Hub push failed")
        self.flush_records()

    def stop(self, timeout: float = 120.0) -> None:
        """Push the last changes, then stop the scheduler."""
        self.push_and_wait(timeout)
        self.scheduler.stop()

    def _pushed(self, info: Any) -> None:
        self._pending.append((True, str(getattr(info, "oid", "") or "")))
        self.prune()

    def _failed(self, exc: Exception) -> None:
        self._pending.append((False, f"{type(exc).__name__}: {exc}"))

    def flush_records(self) -> None:
        """Write the results of finished pushes to ``backup_runs`` from the calling thread.

        Pushes run in HfApi's worker thread; recording them from there would be a commit by another
        connection, which the backup loop's ``PRAGMA data_version`` check would take for a change to back up.
        """
        while self._pending:
            ok, detail = self._pending.popleft()
            record_run(self.database, "hub", ok, file=self.repo_id, detail=detail)

    def prune(self) -> list[str]:
        """Delete repo snapshots older than the newest ``backup_keep`` (history keeps them in git)."""
        from huggingface_hub import CommitOperationDelete

        with self._prune_lock:
            names = hub_snapshots(self.api.list_repo_files(self.repo_id, repo_type=REPO_TYPE))
            old = names[self.settings.backup_keep :]
            if old:
                self.api.create_commit(
                    repo_id=self.repo_id,
                    repo_type=REPO_TYPE,
                    operations=[CommitOperationDelete(path_in_repo=name) for name in old],
                    commit_message=f"Drop {len(old)} old snapshots",
                )
        return old


def hub_snapshots(files: list[str]) -> list[str]:
    """Snapshot paths in a repo listing, newest first.

    >>> hub_snapshots(["media/a.mp4", "backups/compstudio-20261129T150000000000Z.db",
    ...                "backups/compstudio-20261129T160000000000Z.db", "backups/notes.txt"])
    ['backups/compstudio-20261129T160000000000Z.db', 'backups/compstudio-20261129T150000000000Z.db']
    """
    found = [
        f
        for f in files
        if PurePosixPath(f).parent == PurePosixPath(BACKUP_DIR_NAME) and snapshot_time(PurePosixPath(f).name)
    ]
    return sorted(found, reverse=True)


def _media_target(data_dir: Path, name: str) -> Path | None:
    """Where a repo file ``media/...`` goes in the data folder; None for anything that would escape it."""
    path = PurePosixPath(name)
    if path.parts[:1] != ("media",) or ".." in path.parts or path.is_absolute():
        return None
    return data_dir.joinpath(*path.parts)


def hub_token_missing(settings: Settings, api: Any = None) -> bool:
    """True when Hub backup is configured but no Hugging Face token can be found (no ``HF_TOKEN`` secret).

    Without a token a private repo answers "not found", which would read as "nothing to restore" and start
    an empty database: the caller turns Hub backup and restore off instead and tells the admins. An ``api``
    passed in (tests, scripts) carries its own credentials and is trusted.
    """
    if not settings.hub_backup_repo or api is not None:
        return False
    from huggingface_hub import get_token

    return not get_token()


def missing_token_notice(settings: Settings) -> str:
    return (
        f"Hub backup to `{settings.hub_backup_repo}` is OFF: no `HF_TOKEN` secret is set, so nothing was restored "
        "and nothing will be pushed. Add an `HF_TOKEN` secret with write access to that dataset in the Space's "
        "settings and restart the Space."
    )


def restore_from_hub_if_empty(settings: Settings, api: Any = None) -> RestoreReport | None:
    """On a start with an empty data folder (no database yet), restore the newest usable Hub snapshot.

    Returns None when there is nothing to do (no ``hub_backup_repo``, or a database exists already);
    otherwise a report saying what was restored and which snapshots were skipped (corrupted ones fail
    ``PRAGMA integrity_check`` and the next older one is tried). When the repo cannot be read at all,
    raises BackupError rather than start empty: a fresh database would later push over the backups.
    """
    repo = settings.hub_backup_repo
    if not repo or settings.db_path.exists():
        return None
    from huggingface_hub.errors import RepositoryNotFoundError

    if api is None:
        from huggingface_hub import HfApi

        api = HfApi()
    try:
        files = list(api.list_repo_files(repo, repo_type=REPO_TYPE))
    except RepositoryNotFoundError:
        return RestoreReport(snapshot=None, taken_at=None, rows={}, note=f"the Hub repo {repo} does not exist yet")
    except Exception as exc:  # network, auth, offline mode: refuse to start empty over a backup
        raise BackupError(
            f"could not list the Hub backup repo {repo} ({type(exc).__name__}: {exc}). CompStudio did not start "
            "with an empty database, which would later be pushed over your backups: check HF_TOKEN and "
            "COMPSTUDIO_HUB_BACKUP_REPO, or unset it to start without restoring."
        ) from exc
    skipped: list[dict[str, str]] = []
    report: RestoreReport | None = None
    restored_name = ""
    with tempfile.TemporaryDirectory(prefix="compstudio-restore-") as tmp:
        for name in hub_snapshots(files):
            try:
                local = Path(api.hf_hub_download(repo_id=repo, filename=name, repo_type=REPO_TYPE, local_dir=tmp))
            except Exception as exc:  # one unreadable file must not stop us trying the older ones
                skipped.append({"snapshot": name, "problem": f"download failed: {exc}"})
                continue
            problem = check_snapshot(local)
            if problem:
                skipped.append({"snapshot": name, "problem": problem})
                continue
            report = restore_snapshot(local, settings, actor="hub-restore", save_current=False)
            restored_name = name
            break
        media = _restore_media(settings, api, files, Path(tmp)) if report else 0
    if report is None:
        note = "no snapshot in the repo" if not skipped else "no usable snapshot"
        return RestoreReport(snapshot=None, taken_at=None, rows={}, skipped=skipped, note=f"{note} in {repo}")
    return RestoreReport(
        snapshot=f"{repo}/{restored_name}",
        taken_at=report.taken_at,
        rows=report.rows,
        skipped=skipped,
        media_files=media,
    )


def _restore_media(settings: Settings, api: Any, files: list[str], tmp: Path) -> int:
    restored = 0
    for name in files:
        target = _media_target(settings.data_dir, name)
        if target is None or target.exists():
            continue
        local = Path(
            api.hf_hub_download(repo_id=settings.hub_backup_repo, filename=name, repo_type=REPO_TYPE, local_dir=tmp)
        )
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(local), target)
        restored += 1
    return restored
