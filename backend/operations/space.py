"""Running as a Hugging Face Space: where the data lives and who is admin.

Plain functions the app calls at start-up (all take ``env`` so tests can stand in for a Space):
:func:`space_settings` / :func:`resolve_data_dir`: on a Space (``SPACE_ID`` set) the data folder is
``/data/compstudio`` when the persistent disk ``/data`` is writable, else the ephemeral folder plus a
banner telling admins that data is lost on restart unless Hub backup is configured;
:func:`space_admins`: the Space owner and the ``admins`` setting are admins;
:func:`listen_address`: where the server binds. A Space's proxy reaches the app on the container's
interface, never on loopback, so on a Space the default is ``0.0.0.0:7860``; Gradio's own
``GRADIO_SERVER_NAME`` / ``GRADIO_SERVER_PORT`` are honoured; ``--host`` / ``COMPSTUDIO_HOST`` win.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from backend.errors import SettingsError
from backend.settings import Settings

PERSISTENT_ROOT = Path("/data")
DATA_SUBDIR = "compstudio"


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
