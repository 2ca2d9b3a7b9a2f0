"""Push the final dataset to a Hugging Face dataset repo with ``huggingface_hub``.

The export (``dataset.jsonl``, ViLPAct's ``all_gt_seq.csv`` and the card ``README.md``) is written to
``<data>/exports/publish`` and uploaded in one commit (``HfApi.create_commit``). The token comes from the caller (the signed-in
admin's OAuth token), else the environment (``HF_TOKEN``) or the logged-in user (``hf auth login``):
``HfApi(token=None)`` looks in that order.
"""

from __future__ import annotations

import re
import shutil
from typing import Any

from backend.accounts import auth
from backend.errors import CompStudioError, ValidationError
from backend.review.dataset import export_dataset
from backend.settings import Settings
from backend.storage import Database, audit

_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$")


class PublishError(CompStudioError):
    """The Hub refused or could not be reached."""


def check_repo_id(repo_id: str) -> str:
    """
    >>> check_repo_id("team/vilpact-intents")
    'team/vilpact-intents'
    """
    repo_id = (repo_id or "").strip()
    if not _REPO.match(repo_id):
        raise ValidationError(f"{repo_id!r} is not a repo id: write OWNER/NAME, e.g. my-team/vilpact-intents")
    return repo_id


def publish(
    database: Database,
    settings: Settings,
    repo_id: str,
    private: bool = False,
    *,
    api: Any = None,
    token: str | None = None,
    actor: str = "cli",
) -> dict[str, Any]:
    """Export and upload. ``api`` is an ``HfApi`` (tests pass an offline subclass)."""
    repo_id = check_repo_id(repo_id)
    folder = settings.data_dir / "exports" / "publish"
    if folder.exists():
        shutil.rmtree(folder)
    exported = [export_dataset(database, fmt, folder, actor=actor) for fmt in ("vilpact", "jsonl")]
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi(token=token)
    from huggingface_hub import CommitOperationAdd
    from huggingface_hub.errors import HfHubHTTPError, LocalTokenNotFoundError, OfflineModeIsEnabled

    # One commit of the few export files (``upload_folder`` would switch to a multi-commit pipeline with hf_xet).
    operations = [CommitOperationAdd(path_in_repo=p.name, path_or_fileobj=str(p)) for p in sorted(folder.iterdir())]

    try:
        url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        commit = api.create_commit(
            repo_id=repo_id,
            repo_type="dataset",
            operations=operations,
            commit_message=f"CompStudio export: {exported[-1]['sequences']} sequences",
        )
    except (HfHubHTTPError, LocalTokenNotFoundError, OfflineModeIsEnabled, OSError) as exc:
        raise PublishError(
            f"publishing to {repo_id} failed: {str(exc).rstrip('.')}. Check HF_TOKEN (write access to {repo_id.split('/')[0]}) "
            "and the network."
        ) from exc
    with database.write() as db:
        audit(db, actor, "dataset.publish", repo_id, {"private": private, "sequences": exported[-1]["sequences"]})
    return {
        "repo": repo_id,
        "private": private,
        "url": str(url),
        "commit": str(getattr(commit, "oid", commit)),
        "sequences": exported[-1]["sequences"],
        "files": sorted(p.name for p in folder.iterdir()),
    }


def publish_dataset(
    database: Database,
    settings: Settings,
    username: str | None,
    repo_id: str,
    private: bool = False,
    *,
    api: Any = None,
    token: str | None = None,
) -> dict[str, Any]:
    """The admin button: same as the CLI's ``publish``, behind the admin role."""
    admin = auth.require_role(database, username, "admin")
    return publish(database, settings, repo_id, private, api=api, token=token, actor=admin.username)


def export_for_download(database: Database, settings: Settings, username: str | None, fmt: str) -> dict[str, Any]:
    """Export into ``<media>/exports/dataset-<fmt>`` (never a path the caller chooses), for download."""
    username = auth.require_role(database, username, "admin").username
    return export_dataset(database, fmt, settings.media_dir / "exports" / f"dataset-{fmt}", actor=username)
