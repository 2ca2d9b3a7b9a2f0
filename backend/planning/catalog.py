"""The 157 action classes as the planning code sees them: id <-> name, object, verb and STRIPS text.

Read from the ``action_classes`` table written by ``backend.vilpact.importer`` (never re-imported here).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from backend.errors import NotFound, ValidationError
from backend.storage import Database


@dataclass(frozen=True)
class ActionClass:
    id: str
    name: str
    verb: str | None = None
    object: str | None = None
    strips_action: str | None = None
    pre: str | None = None
    post_add: str | None = None
    post_del: str | None = None
    args: str | None = None


@dataclass(frozen=True)
class Catalog:
    classes: dict[str, ActionClass]
    by_name: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, classes: list[ActionClass]) -> Catalog:
        return cls({c.id: c for c in classes}, {c.name: c.id for c in classes})

    def name(self, class_id: str) -> str:
        return self.classes[class_id].name

    def names(self, class_ids: tuple[str, ...] | list[str]) -> list[str]:
        return [self.classes[c].name for c in class_ids]

    def ids(self, names: list[str], *, where: str = "") -> tuple[str, ...]:
        """Class ids of action names; every unknown name is reported at once."""
        unknown = [n for n in names if n not in self.by_name]
        if unknown:
            prefix = f"{where}: " if where else ""
            raise ValidationError([f"{prefix}unknown action {n!r}" for n in unknown])
        return tuple(self.by_name[n] for n in names)


def load_catalog(database: Database) -> Catalog:
    rows = database.query(
        "SELECT id, name, verb, object, strips_action, pre, post_add, post_del, args FROM action_classes ORDER BY id"
    )
    if not rows:
        raise NotFound("no action classes yet: import ViLPAct first (python -m backend import vilpact DIR)")
    return Catalog.of([ActionClass(**row) for row in rows])
