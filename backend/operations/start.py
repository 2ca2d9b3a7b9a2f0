"""What happens before ``build_context``: the data folder and admins for this environment, then the Hub
restore into an empty data folder."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.operations.backup import RestoreReport
from backend.operations.hub import restore_from_hub_if_empty
from backend.operations.space import PERSISTENT_ROOT, space_settings
from backend.settings import Settings


@dataclass(frozen=True)
class SpaceStart:
    """What :func:`prepare_start` decided: the settings to build the app with, and notices for admins."""

    settings: Settings
    banner: str | None
    restored: RestoreReport | None

    def notices(self) -> list[str]:
        return [text for text in (self.banner, self.restored.message() if self.restored else None) if text]


def prepare_start(
    settings: Settings,
    env: Mapping[str, str] | None = None,
    *,
    api: Any = None,
    persistent_root: Path = PERSISTENT_ROOT,
) -> SpaceStart:
    """Everything that must happen before ``build_context``: the data folder and admins for this
    environment, then the Hub restore when that folder is empty. Off a Space without Hub backup this
    returns ``settings`` unchanged."""
    settings, banner = space_settings(settings, env, persistent_root)
    return SpaceStart(settings, banner, restore_from_hub_if_empty(settings, api))

