"""Ordered schema migrations, applied at start-up by ``Database.migrate``.

Each benchmark package owns a module of migrations under ``backend/storage/schema/``; this list fixes
their order. Never edit an applied migration: append a new one.
"""

from __future__ import annotations

from backend.storage.migration import Migration


def _collect() -> tuple[Migration, ...]:
    from backend.storage.schema import (  # a function only to keep the names out of this module
        backup,
        campaign_quality,
        campaigns,
        charades,
        core,
        icl,
        inference,
        planning,
        review,
        samples,
        signin,
        vqa,
        webhooks,
    )

    return (
        tuple(core.MIGRATIONS)
        + tuple(planning.MIGRATIONS)
        + tuple(backup.MIGRATIONS)
        + tuple(review.MIGRATIONS)
        + tuple(vqa.MIGRATIONS)
        + tuple(inference.MIGRATIONS)
        + tuple(icl.MIGRATIONS)
        + tuple(signin.MIGRATIONS)
        + tuple(campaigns.MIGRATIONS)
        + tuple(campaign_quality.MIGRATIONS)
        + tuple(charades.MIGRATIONS)
        + tuple(webhooks.MIGRATIONS)
        + tuple(samples.MIGRATIONS)
    )


MIGRATIONS: tuple[Migration, ...] = _collect()
