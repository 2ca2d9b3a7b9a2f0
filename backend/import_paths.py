"""Where the web app may read files to import: only below the ``import_dir`` setting (issue 15 §1).

An admin types a folder on the server into the Admin tab (or the ``admin_import_vilpact`` endpoint). Without
a limit an admin account, or whoever took it over, could read any file the server can through an importer's
error messages. The path is resolved (``..`` and symlinks followed) before the check, so neither a
traversal nor a link inside the import folder that points out of it gets through. The CLI is not limited:
whoever runs it can read those files anyway (docs/decisions.md, "Import folder").
"""

from __future__ import annotations

from pathlib import Path

from backend.errors import PermissionDenied
from backend.settings import Settings


def inside_import_dir(settings: Settings, typed: str) -> Path:
    """The resolved path of ``typed`` (relative: inside the import folder) if it lies within the import folder.

    >>> from backend.settings import Settings
    >>> settings = Settings(data_dir=Path("/srv/cs"), import_dir="/srv/imports")
    >>> inside_import_dir(settings, "vilpact/data").as_posix()
    '/srv/imports/vilpact/data'
    >>> inside_import_dir(settings, "../cs/compstudio.db")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    backend.errors.PermissionDenied: The web app imports only from /srv/imports (setting import_dir); ...
    """
    root = settings.import_root.resolve()
    candidate = Path(typed.strip()).expanduser()
    resolved = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if not resolved.is_relative_to(root):
        raise PermissionDenied(
            f"The web app imports only from {root} (setting import_dir); {typed.strip()!r} is outside it. "
            "Copy the files there, or import them with the command line on the server."
        )
    return resolved
