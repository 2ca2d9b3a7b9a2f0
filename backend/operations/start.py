"""What happens before ``build_context``: the data folder and admins for this environment, then the Hub
restore into an empty data folder."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.operations.backup import RestoreReport
from backend.operations.hub import hub_token_missing, missing_token_notice, restore_from_hub_if_empty
from backend.operations.space import PERSISTENT_ROOT, space_settings
from backend.settings import Settings

log = logging.getLogger(__name__)


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
