"""Checking a study link's Prolific id against Prolific (issue 40 §1).

A study link's worker id is the platform's to vouch for: anyone holding the link can type an id of the right
shape. Where the study owner gives a Prolific API token and the study's id on Prolific, every *new* id is asked
about before it may start: does this participant have a submission in this study? Prolific creates a submission
for each participant who joins a study, before sending them to the study URL ("A new submission is created for
each participant that joins your study", https://docs.prolific.com/api-reference/submissions), and lists them
with ``GET https://api.prolific.com/api/v1/submissions/?study=<study id>`` filtered further by participant, with
the header ``Authorization: Token <token>`` (https://docs.prolific.com/api-reference/submissions/get-submissions;
docs/decisions.md, "Places taken at work, and Prolific's word on who is a participant").

We send ``study`` and ``participant_id`` and then look for the participant in the results ourselves (following the
``next`` page address while there is one), so the answer is right even where a filter is ignored. An id Prolific
does not know gets :class:`~backend.errors.ParticipantUnknown` (a clear page and nothing else). When Prolific
cannot be asked (no answer, 5xx, a refused token) the arrival goes on, logged and audited as unchecked: a paying
study must not strand its real workers because Prolific's API is slow; the address limit and the places still
hold then.

The HTTP client is injected (:class:`ProlificApi` takes an ``httpx.Client``), so tests use a fake Prolific.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from backend.campaigns.links import Visit
from backend.campaigns.studies import Study, prolific_token
from backend.errors import ParticipantUnknown
from backend.storage import Database, audit

log = logging.getLogger(__name__)
MAX_PAGES = 20  # 20 pages of Prolific's results per check at most (a filter ignored on a huge study)


class ProlificUnreachable(Exception):
    """Prolific gave no usable answer (network, 5xx, a refused token)."""


@dataclass(frozen=True)
class ProlificApi:
    """Prolific's API at ``base_url`` (``prolific_api_url``), through ``client``."""

    base_url: str
    client: httpx.Client

    def has_submission(self, token: str, study_id: str, participant_id: str) -> bool:
        """Whether ``participant_id`` has a submission (any status) in Prolific study ``study_id``."""
        url: str | None = f"{self.base_url.rstrip('/')}/api/v1/submissions/"
        params: dict[str, str] | None = {"study": study_id, "participant_id": participant_id}
        for _ in range(MAX_PAGES):
            if url is None:
                break
            try:
                reply = self.client.get(url, params=params, headers={"Authorization": f"Token {token}"}, timeout=5.0)
            except httpx.HTTPError as exc:
                raise ProlificUnreachable(f"no answer from Prolific: {exc}") from exc
            if reply.status_code != 200:
                raise ProlificUnreachable(f"Prolific answered {reply.status_code}")
            body: dict[str, Any] = reply.json()
            results = body.get("results") or []
            if any(str(row.get("participant_id", "")).lower() == participant_id for row in results):
                return True
            url, params = _next_page(body), None
        return False


def _next_page(body: dict[str, Any]) -> str | None:
    links = body.get("_links") or {}
    nxt = body.get("next") or (links.get("next") or {}).get("href")
    return str(nxt) if nxt else None


def participant_check(database: Database, api: ProlificApi | None) -> Callable[[Study, Visit], None]:
    """The ``check_platform`` of backend/campaigns/workers.py:arrive for studies with a Prolific token."""

    def check(study: Study, visit: Visit) -> None:
        token = prolific_token(database.db, study.id)
        if api is None or study.platform != "prolific" or not token or not study.prolific_study_id:
            return
        try:
            known = api.has_submission(token, study.prolific_study_id, visit.worker_id)
        except ProlificUnreachable as exc:
            log.warning("study %s: arrival %s not checked with Prolific (%s)", study.id, visit.worker_id, exc)
            with database.write() as db:
                audit(db, "prolific", "prolific.unchecked", str(study.id), {"participant": visit.worker_id})
            return
        if not known:
            with database.write() as db:
                audit(db, "prolific", "prolific.unknown", str(study.id), {"participant": visit.worker_id})
            raise ParticipantUnknown(
                "Prolific does not list you as a participant of this study, so it cannot start here. Please open "
                "the study from your Prolific account's study page (Prolific adds your ID to the link). If you did, "
                "wait a minute and open it again, or message the researchers through Prolific."
            )

    return check
