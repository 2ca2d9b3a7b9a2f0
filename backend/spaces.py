"""Running as a Hugging Face Space: where the data lives, who is admin, Hub backup and restore, hardware.

Plain functions the app calls at start-up (all take ``env`` so tests can stand in for a Space):

* :func:`space_settings` / :func:`resolve_data_dir`: on a Space (``SPACE_ID`` set) the data folder is
  ``/data/compstudio`` when the persistent disk ``/data`` is writable, else the ephemeral folder plus a
  banner telling admins that data is lost on restart unless Hub backup is configured.
* :func:`space_admins`, :func:`oauth_sign_in`: the Space owner and the ``admins`` setting are admins; an
  optional organisation restriction; everyone else signs up as annotator.
* :class:`HubBackup`: pushes the snapshots (never the live database) and uploaded media to a private
  dataset repo with ``huggingface_hub.CommitScheduler``; keeps the newest ``backup_keep`` snapshots there.
* :func:`restore_from_hub_if_empty`: an empty data folder gets the newest Hub snapshot that passes
  ``PRAGMA integrity_check`` (corrupted ones are skipped) and the media files back.
* :func:`hardware`, :func:`zero_gpu`: ``cpu``, ``gpu`` or ``zerogpu`` for the model registry.
* :func:`listen_address`: where the server binds. A Space's proxy reaches the app on the container's
  interface, never on loopback, so on a Space the default is ``0.0.0.0:7860``; Gradio's own
  ``GRADIO_SERVER_NAME`` / ``GRADIO_SERVER_PORT`` are honoured; ``--host`` / ``COMPSTUDIO_HOST`` win.

``huggingface_hub`` and ``torch`` are imported inside functions only.
"""

from __future__ import annotations

import collections
import functools
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from backend import auth
from backend.backup import (
    BACKUP_DIR_NAME,
    RestoreReport,
    check_snapshot,
    record_run,
    restore_snapshot,
    snapshot_time,
)
from backend.errors import BackupError, PermissionDenied, SettingsError
from backend.settings import Settings
from backend.storage import Database

log = logging.getLogger(__name__)

PERSISTENT_ROOT = Path("/data")
DATA_SUBDIR = "compstudio"
REPO_TYPE = "dataset"
# What goes to the Hub: snapshots and media people uploaded. Demo media is regenerated on start and
# exports are rebuilt on demand, so neither is pushed.
HUB_ALLOW = ["backups/compstudio-*.db", "media/**"]
HUB_IGNORE = ["media/demo/**", "media/exports/**", "**/.*", ".*"]


# -- environment ---------------------------------------------------------------------------------
def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def on_space(env: Mapping[str, str] | None = None) -> bool:
    """True inside a Hugging Face Space (the platform sets ``SPACE_ID`` to ``owner/name``)."""
    return bool(_env(env).get("SPACE_ID"))


def space_owner(env: Mapping[str, str] | None = None) -> str | None:
    """The user or organisation that owns the Space: ``SPACE_AUTHOR_NAME``, else the owner part of ``SPACE_ID``.

    >>> space_owner({"SPACE_ID": "ada/compstudio"})
    'ada'
    >>> space_owner({"SPACE_ID": "ada/compstudio", "SPACE_AUTHOR_NAME": "lab"})
    'lab'
    >>> space_owner({}) is None
    True
    """
    env = _env(env)
    if env.get("SPACE_AUTHOR_NAME"):
        return env["SPACE_AUTHOR_NAME"]
    space_id = env.get("SPACE_ID", "")
    return space_id.split("/", 1)[0] if "/" in space_id else None


def space_admins(settings: Settings, env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The ``admins`` setting plus, on a Space, its owner (an organisation owner matches no user: name the
    organisation's admins in the setting instead)."""
    owner = space_owner(env) if on_space(env) else None
    names = list(settings.admins)
    if owner and owner not in names:
        names.append(owner)
    return tuple(names)


LOCAL_HOST, SPACE_HOST, DEFAULT_PORT = "127.0.0.1", "0.0.0.0", 7860


def listen_address(settings: Settings, env: Mapping[str, str] | None = None) -> tuple[str, int]:
    """The address and port the web server binds to.

    An explicit ``host``/``port`` setting (``--host``, ``COMPSTUDIO_HOST``) wins; then Gradio's conventions,
    ``GRADIO_SERVER_NAME`` / ``GRADIO_SERVER_PORT`` (Hugging Face sets them for Gradio Spaces); then
    ``0.0.0.0`` on a Space, where the proxy reaches the container on its network interface, and
    ``127.0.0.1`` elsewhere; port 7860.

    >>> listen_address(Settings(), {})
    ('127.0.0.1', 7860)
    >>> listen_address(Settings(), {"SPACE_ID": "ada/cs"})
    ('0.0.0.0', 7860)
    >>> listen_address(Settings(), {"GRADIO_SERVER_NAME": "0.0.0.0", "GRADIO_SERVER_PORT": "8080"})
    ('0.0.0.0', 8080)
    >>> listen_address(Settings(host="127.0.0.1", port=9000), {"SPACE_ID": "ada/cs", "GRADIO_SERVER_PORT": "7860"})
    ('127.0.0.1', 9000)
    """
    env = _env(env)
    host = settings.host or env.get("GRADIO_SERVER_NAME") or (SPACE_HOST if on_space(env) else LOCAL_HOST)
    port = settings.port
    if not port:
        raw = env.get("GRADIO_SERVER_PORT", "").strip()
        try:
            port = int(raw) if raw else DEFAULT_PORT
        except ValueError:
            raise SettingsError(f"GRADIO_SERVER_PORT={raw!r} is not a port number") from None
    if not 0 < port < 65536:
        raise SettingsError(f"port {port} is out of range (1-65535)")
    return host, port


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


def _writable(folder: Path) -> bool:
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        return False
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".compstudio-write-test-"):
            return True
    except OSError:
        return False


def _inside(path: Path, root: Path) -> bool:
    return path.resolve().is_relative_to(root.resolve())


def ephemeral_banner(settings: Settings) -> str:
    if settings.hub_backup_repo:
        return (
            "This Space has no persistent storage: its disk is wiped on every restart. Snapshots go to the "
            f"private Hub dataset `{settings.hub_backup_repo}` every {settings.backup_every_minutes:g} minutes "
            "and are restored on start; work done since the last snapshot is lost on a restart."
        )
    return (
        "Data will be lost on restart: this Space has no persistent storage (`/data`) and no Hub backup. "
        "Add persistent storage in the Space's settings, or set `COMPSTUDIO_HUB_BACKUP_REPO` (and an `HF_TOKEN` "
        "secret with write access) to back up to a private dataset."
    )


def resolve_data_dir(
    settings: Settings, env: Mapping[str, str] | None = None, persistent_root: Path = PERSISTENT_ROOT
) -> tuple[Path, str | None]:
    """The data folder to use and, when data will not survive a restart on a Space, a banner for admins.

    Off a Space: ``settings.data_dir``, no banner. On a Space: an explicit ``COMPSTUDIO_DATA_DIR`` wins;
    otherwise ``/data/compstudio`` when ``/data`` is writable; otherwise ``settings.data_dir`` (ephemeral).
    """
    env = _env(env)
    if not on_space(env):
        return settings.data_dir, None
    subfolder = persistent_root / DATA_SUBDIR  # left by an earlier container, maybe under another user id
    persistent = _writable(persistent_root) and (not subfolder.exists() or _writable(subfolder))
    if env.get("COMPSTUDIO_DATA_DIR"):
        chosen = settings.data_dir
    elif persistent:
        return persistent_root / DATA_SUBDIR, None
    else:
        chosen = settings.data_dir
    if persistent and _inside(chosen, persistent_root):
        return chosen, None
    return chosen, ephemeral_banner(settings)


def space_settings(
    settings: Settings, env: Mapping[str, str] | None = None, persistent_root: Path = PERSISTENT_ROOT
) -> tuple[Settings, str | None]:
    """``settings`` as they apply here: the resolved data folder, the owner among the admins and the address
    to listen on."""
    data_dir, banner = resolve_data_dir(settings, env, persistent_root)
    host, port = listen_address(settings, env)
    return settings.replace(data_dir=data_dir, admins=space_admins(settings, env), host=host, port=port), banner


@dataclass(frozen=True)
class SpaceStart:
    """What :func:`prepare_start` decided: the settings to build the app with, and notices for admins."""

    settings: Settings
    banner: str | None
    restored: RestoreReport | None
    hub_notice: str | None = None

    def notices(self) -> list[str]:
        restored = self.restored.message() if self.restored else None
        return [text for text in (self.banner, self.hub_notice, restored) if text]


def prepare_start(
    settings: Settings,
    env: Mapping[str, str] | None = None,
    *,
    api: Any = None,
    persistent_root: Path = PERSISTENT_ROOT,
) -> SpaceStart:
    """Everything that must happen before ``build_context``: the data folder and admins for this
    environment, then the Hub restore when that folder is empty. Off a Space without Hub backup this
    returns ``settings`` with the listening address filled in.

    With Hub backup configured but no token, Hub backup is turned off (``hub_backup_repo`` emptied) with a
    notice for admins, instead of reading a private repo's "not found" as "nothing to restore"."""
    hub_notice = None
    if hub_token_missing(settings, api):
        hub_notice = missing_token_notice(settings)
        log.warning(hub_notice)
        settings = settings.replace(hub_backup_repo="")
    settings, banner = space_settings(settings, env, persistent_root)
    return SpaceStart(settings, banner, restore_from_hub_if_empty(settings, api), hub_notice=hub_notice)


# -- sign-in -------------------------------------------------------------------------------------
def user_orgs(userinfo: Mapping[str, Any]) -> set[str]:
    """Organisation names in an OAuth userinfo (Hugging Face lists them under ``orgs``), lower-cased.

    >>> sorted(user_orgs({"orgs": [{"preferred_username": "LabA", "name": "Lab A"}]}))
    ['lab a', 'laba']
    """
    names: set[str] = set()
    for org in userinfo.get("orgs") or ():
        for key in ("preferred_username", "name"):
            if isinstance(org, Mapping) and org.get(key):
                names.add(str(org[key]).lower())
    return names


def oauth_sign_in(
    database: Database, settings: Settings, userinfo: Mapping[str, Any], env: Mapping[str, str] | None = None
) -> auth.User:
    """The account of someone who signed in with Hugging Face (``gr.OAuthProfile`` is this userinfo).

    With ``allowed_orgs`` set, only members of one of them (and the admins) may sign in.
    """
    username = userinfo.get("preferred_username")
    if not username:
        raise PermissionDenied("The Hugging Face sign-in gave no user name. Sign out and sign in again.")
    admins = space_admins(settings, env)
    if settings.allowed_orgs and username not in admins:
        allowed = {org.lower() for org in settings.allowed_orgs}
        if not allowed & user_orgs(userinfo):
            raise PermissionDenied(
                f"This CompStudio is open to members of {', '.join(settings.allowed_orgs)} only, and Hugging Face "
                f"did not report {username!r} as a member. Join the organisation or ask an admin."
            )
    return auth.oauth_user(database, username, admins)


# -- hardware ------------------------------------------------------------------------------------
@functools.cache
def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def hardware(env: Mapping[str, str] | None = None, *, cuda_available: bool | None = None) -> str:
    """``"zerogpu"`` on ZeroGPU Spaces (``SPACES_ZERO_GPU=true``, as Gradio checks it), ``"gpu"`` when
    torch sees CUDA, else ``"cpu"``. The model registry offers only CPU-friendly models on ``"cpu"``.

    >>> hardware({"SPACES_ZERO_GPU": "true"})
    'zerogpu'
    >>> hardware({}, cuda_available=False)
    'cpu'
    """
    if _env(env).get("SPACES_ZERO_GPU", "").lower() == "true":
        return "zerogpu"
    if cuda_available is None:
        cuda_available = _cuda_available()
    return "gpu" if cuda_available else "cpu"


def zero_gpu(fn: Callable[..., Any], *, duration: int | None = None, env: Mapping[str, str] | None = None):
    """``fn`` wrapped in ``spaces.GPU`` on ZeroGPU hardware (CUDA is only usable inside it there), else ``fn``.

    Wrap model calls when the registry is built, before ``launch``: ZeroGPU looks for decorated functions
    at start-up. The ``spaces`` package is preinstalled on ZeroGPU Spaces.
    """
    if hardware(env, cuda_available=False) != "zerogpu":
        return fn
    import spaces

    return spaces.GPU(duration=duration)(fn) if duration else spaces.GPU(fn)


# -- Hub backup ----------------------------------------------------------------------------------
@functools.cache
def _scheduler_class() -> type:
    from huggingface_hub import CommitScheduler

    class SnapshotScheduler(CommitScheduler):
        """CommitScheduler that records each push and keeps only the newest snapshots in the repo."""

        def __init__(self, *, on_pushed: Callable[[Any], None], on_failed: Callable[[Exception], None], **kwargs):
            self._on_pushed, self._on_failed = on_pushed, on_failed
            super().__init__(**kwargs)

        def push_to_hub(self):
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

    def push(self):
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
