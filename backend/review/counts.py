"""How many sequence rounds wait for a review, in total and for one reviewer (issue 13 §3: counts are live).

``waiting`` counts every open review task; ``for_you`` those the reviewer could take now: not already
reviewed or skipped by them, not a round they annotated, and with a free slot (or their own live lease).
The difference is work for other reviewers (a check review of a round you reviewed, a round you wrote).
"""

from __future__ import annotations

import sqlite_utils

from backend.storage import utcnow

KIND = "review"

_FOR_YOU = """
SELECT count(*) FROM tasks t
WHERE t.kind = :kind AND t.status = 'open'
  AND NOT EXISTS (SELECT 1 FROM assignments mine WHERE mine.kind = t.kind AND mine.item_id = t.item_id
                  AND mine.annotator = :me AND mine.status != 'leased')
  AND NOT EXISTS (SELECT 1 FROM annotations an WHERE an.annotator = :me AND an.source = 'live'
                  AND an.sequence_id || '@' || an.round = t.item_id)
  AND (EXISTS (SELECT 1 FROM assignments mine WHERE mine.kind = t.kind AND mine.item_id = t.item_id
               AND mine.annotator = :me AND mine.status = 'leased' AND mine.expires_at > :now)
       OR (SELECT count(*) FROM assignments a WHERE a.kind = t.kind AND a.item_id = t.item_id
           AND a.round = t.round AND (a.status = 'submitted' OR (a.status = 'leased' AND a.expires_at > :now)))
          < t.needed)
"""


def queue_counts(db: sqlite_utils.Database, username: str) -> dict[str, int]:
    """``{"waiting": open review tasks, "for_you": those ``username`` may take now}`` (any connection)."""
    params = {"kind": KIND, "me": username, "now": utcnow()}
    waiting = db.conn.execute("SELECT count(*) FROM tasks WHERE kind = :kind AND status = 'open'", params)
    return {"waiting": int(waiting.fetchone()[0]), "for_you": int(db.conn.execute(_FOR_YOU, params).fetchone()[0])}
