"""Study links (issue 16 §1): a per-study secret signs the link; every visit is checked against it.

The link is ``<app>/study/<study_id>?<platform parameters>&sig=<signature>``, where the signature is
HMAC-SHA256 under the study's own secret of the text ``compstudio-study:<study_id>``, base64url, first 32
characters (192 bits). The platform fills in the worker's id when it sends the worker (Prolific replaces
``{{%PROLIFIC_PID%}}``; Mechanical Turk appends ``workerId``, ``assignmentId``, ``hitId``), so the signature
cannot cover the worker id: it proves the link was made by an admin of this server *for this study*.

* a forged link (no secret, so no valid ``sig``) is refused;
* an altered link (another study number, a changed ``sig``) is refused: the signature is checked against the
  secret of the study the link names, and the study id is inside what is signed;
* a link reused for another study is refused, since each study has its own secret;
* the worker id itself is the platform's to vouch for, so ids are held to the platform's shape (a Prolific id is
  24 hexadecimal characters; a Mechanical Turk WorkerId is "A" then capitals and digits, at most 64: the API's
  ``CustomerId``), one worker id may start a study once only, new ids are limited per client address, and a study
  has places (backend/campaigns/workers.py). An admin can see every id that arrived.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from backend.campaigns.studies import PLATFORMS, Study
from backend.errors import StudyLinkRefused, ValidationError
from backend.storage import Database

SIGNATURE_PARAM = "sig"
# what each platform writes into the link for the worker, study and session ids
PLACEHOLDERS = {
    "prolific": {"PROLIFIC_PID": "{{%PROLIFIC_PID%}}", "STUDY_ID": "{{%STUDY_ID%}}", "SESSION_ID": "{{%SESSION_ID%}}"},
    "mturk": {},  # Mechanical Turk appended workerId, assignmentId, hitId and turkSubmitTo itself (archived)
    "connect": {},  # CloudResearch Connect appends participantId, assignmentId and projectId itself
    "generic": {},  # the owner's own id parameter: ``<worker_param>=WORKER_ID`` (study_link)
}
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
_KEPT_PARAMS = ("turkSubmitTo",)  # kept beside the platform's own three (MTurk submits the HIT there)


def study_signature(secret: str, study_id: int) -> str:
    """The link's ``sig`` for ``study_id`` under ``secret``.

    >>> study_signature("s3cret", 7)
    '6B7v-93wR7T8DvIT-tLu-zT7o1GTP0H8'
    >>> study_signature("s3cret", 8) != study_signature("s3cret", 7) != study_signature("other", 7)
    True
    """
    mac = hmac.new(secret.encode(), f"compstudio-study:{int(study_id)}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode().rstrip("=")[:32]


def _secret(database: Database, study_id: int) -> str:
    secret = database.scalar("SELECT secret FROM studies WHERE id = ?", (int(study_id),))
    if secret is None:
        raise StudyLinkRefused(f"there is no study {study_id}: check the link you were given")
    return str(secret)


def study_link(database: Database, study: Study, base_url: str) -> str:
    """The link to paste into the platform: the platform's placeholders and the signature."""
    if not re.match(r"^https?://[^\s?#]+$", base_url or ""):
        raise ValidationError(f"the app's public address must start with http:// or https:// (got {base_url!r})")
    placeholders = PLACEHOLDERS[study.platform] or (
        {study.worker_param: "WORKER_ID"} if study.platform == "generic" else {}
    )
    query = {**placeholders, SIGNATURE_PARAM: study_signature(_secret(database, study.id), study.id)}
    # the platform's placeholders must stay readable ({{%...%}}): only the signature needs no escaping either
    return f"{base_url.rstrip('/')}/study/{study.id}?" + "&".join(f"{k}={v}" for k, v in query.items())


def worker_link(database: Database, study: Study, base_url: str, worker_id: str, **extra: str) -> str:
    """The link as the platform sends one worker (for trying a study, and for tests)."""
    params = {study.worker_param: worker_id, **extra}
    params[SIGNATURE_PARAM] = study_signature(_secret(database, study.id), study.id)
    return f"{base_url.rstrip('/')}/study/{study.id}?{urlencode(params)}"


@dataclass(frozen=True)
class Visit:
    """A checked visit: the platform's worker id and the platform parameters worth keeping."""

    worker_id: str
    params: dict[str, str]
    preview: bool = False  # Mechanical Turk's preview of a HIT (no worker yet)


def verify_visit(database: Database, study: Study, query: dict[str, Any]) -> Visit:
    """Check a visit's signature and read the worker's id; raises :class:`StudyLinkRefused` with a message
    the worker can act on."""
    given = str(query.get(SIGNATURE_PARAM) or "")
    expected = study_signature(_secret(database, study.id), study.id)
    if not given or not hmac.compare_digest(given.encode(), expected.encode()):
        raise StudyLinkRefused(
            "This study link is not valid: it was changed, or it belongs to another study. Open the study again "
            "from the page of the platform that sent you (Prolific, Mechanical Turk, ...), without editing the link."
        )
    names = [n for n in (study.worker_param, study.study_param, study.session_param, *_KEPT_PARAMS) if n]
    params = {name: str(query[name])[:500] for name in names if query.get(name)}
    if study.platform == "mturk" and params.get("assignmentId") == MTURK_PREVIEW:
        return Visit("", params, preview=True)
    platform = PLATFORMS[study.platform]
    worker_id = params.get(study.worker_param, "").strip()
    if platform.lowercase:
        worker_id = worker_id.lower()
    if not platform.worker_id.match(worker_id):
        raise StudyLinkRefused(
            f"This study link has no valid worker id: the {study.worker_param!r} parameter must be "
            f"{platform.worker_id_words}. Open the study from the platform's page, which adds your id to the link, "
            "without editing it."
        )
    params[study.worker_param] = worker_id
    return Visit(worker_id, params)


def link_for(database: Database, username: str | None, study_id: int, base_url: str, operator: bool = False) -> dict:
    """The study link an admin pastes into the platform, with the platform and the parameter names."""
    from backend.accounts.admin import acting_admin
    from backend.campaigns.studies import get_study

    acting_admin(database, username, operator)
    study = get_study(database, study_id)
    return {
        "study_id": study.id,
        "platform": study.platform,
        "link": study_link(database, study, base_url),
        "worker_param": study.worker_param,
    }
