"""Running on a Hugging Face Space: data folder, admins and sign-in, hardware, Hub backup and restore.

The Hub is ``tests.fake_hub.FakeHub`` (an HfApi subclass, no network); ``/data`` is a temporary folder.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from backend.accounts import auth, oauth
from backend.context import build_context
from backend.errors import BackupError, PermissionDenied
from backend.inference import hardware
from backend.operations import backup, space
from backend.operations.hub import HubBackup, hub_snapshots, restore_from_hub_if_empty
from backend.operations.service import BackupService
from backend.operations.start import prepare_start
from backend.settings import Settings
from tests.fake_hub import FakeHub

REPO = "ada/compstudio-backup"
SPACE = {"SPACE_ID": "ada/compstudio", "SPACE_AUTHOR_NAME": "ada"}


@pytest.fixture
def persistent(tmp_path: Path) -> Path:
    root = tmp_path / "persistent"
    root.mkdir()
    return root


def test_off_a_space_nothing_changes(settings):
    assert space.resolve_data_dir(settings, env={}) == (settings.data_dir, None)
    start = prepare_start(settings, env={})
    assert start.settings == settings.replace(host="127.0.0.1", port=7860) and start.notices() == []


def test_on_a_space_with_persistent_storage_data_goes_to_data_compstudio(settings, persistent):
    data_dir, banner = space.resolve_data_dir(settings, env=SPACE, persistent_root=persistent)
    assert (data_dir, banner) == (persistent / "compstudio", None)


def test_on_a_space_without_persistent_storage_admins_are_warned(settings, tmp_path):
    missing = tmp_path / "no-such-mount"
    data_dir, banner = space.resolve_data_dir(settings, env=SPACE, persistent_root=missing)
    assert data_dir == settings.data_dir
    assert "lost on restart" in banner and "COMPSTUDIO_HUB_BACKUP_REPO" in banner

    with_hub = settings.replace(hub_backup_repo=REPO)
    _, banner = space.resolve_data_dir(with_hub, env=SPACE, persistent_root=missing)
    assert REPO in banner and "since the last snapshot is lost" in banner


def test_an_explicit_data_dir_wins_and_is_judged_by_where_it_is(settings, persistent):
    env = {**SPACE, "COMPSTUDIO_DATA_DIR": "x"}
    inside = settings.replace(data_dir=persistent / "mine")
    assert space.resolve_data_dir(inside, env=env, persistent_root=persistent) == (persistent / "mine", None)
    _, banner = space.resolve_data_dir(settings, env=env, persistent_root=persistent)
    assert "lost on restart" in banner


def test_owner_and_named_users_are_admins_everyone_else_annotator(database):
    settings = Settings(admins=("grace",))
    assert space.space_admins(settings, SPACE) == ("grace", "ada")
    assert space.space_admins(settings, {}) == ("grace",)
    assert space.space_admins(settings, {"SPACE_ID": "lab/compstudio"}) == ("grace", "lab")

    def sign_in(name: str, **extra):
        return oauth.oauth_sign_in(database, settings, {"preferred_username": name, **extra}, env=SPACE)

    assert sign_in("ada").role == "admin"
    assert sign_in("grace").role == "admin"
    assert sign_in("stranger").role == "annotator"
    assert auth.get_user(database, "stranger").source == "oauth"
    with pytest.raises(PermissionDenied, match="no user name"):
        oauth.oauth_sign_in(database, settings, {}, env=SPACE)


def test_organisation_restriction(database):
    settings = Settings(allowed_orgs=("LabA",))
    member = {"preferred_username": "mia", "orgs": [{"preferred_username": "laba", "name": "Lab A"}]}
    assert oauth.oauth_sign_in(database, settings, member, env=SPACE).role == "annotator"
    with pytest.raises(PermissionDenied, match="members of LabA only"):
        oauth.oauth_sign_in(database, settings, {"preferred_username": "out", "orgs": []}, env=SPACE)
    assert auth.get_user(database, "out") is None
    assert oauth.oauth_sign_in(database, settings, {"preferred_username": "ada"}, env=SPACE).role == "admin"


def test_hardware_detection_and_zero_gpu_wrapping(monkeypatch):
    assert hardware.hardware({}, cuda_available=True) == "gpu"
    assert hardware.hardware({}, cuda_available=False) == "cpu"
    assert hardware.hardware({"SPACES_ZERO_GPU": "true"}, cuda_available=True) == "zerogpu"

    def model_call(x):
        return x + 1

    assert hardware.zero_gpu(model_call, env={}) is model_call
    wrapped_with = []
    fake_spaces = types.ModuleType("spaces")

    def gpu(fn=None, duration=None):
        def wrap(f):
            wrapped_with.append(duration)
            return lambda *a: ("on-gpu", f(*a))

        return wrap(fn) if fn is not None else wrap

    fake_spaces.GPU = gpu
    monkeypatch.setitem(sys.modules, "spaces", fake_spaces)
    env = {"SPACES_ZERO_GPU": "true"}
    assert hardware.zero_gpu(model_call, env=env)(1) == ("on-gpu", 2)
    assert hardware.zero_gpu(model_call, duration=120, env=env)(1) == ("on-gpu", 2)
    assert wrapped_with == [None, 120]


def _hub_settings(settings: Settings) -> Settings:
    return settings.replace(hub_backup_repo=REPO, backup_every_minutes=60, backup_keep=2)


def test_hub_backup_pushes_snapshots_and_uploaded_media_never_the_live_database(settings):
    hub = FakeHub()
    settings = _hub_settings(settings)
    ctx = build_context(settings)
    auth.add_user(ctx.database, "ada", "admin", "password1")
    (settings.media_dir / "uploads").mkdir(parents=True)
    (settings.media_dir / "uploads" / "clip.mp4").write_bytes(b"video bytes")
    (settings.media_dir / "demo").mkdir(parents=True)
    (settings.media_dir / "demo" / "demo.mp4").write_bytes(b"regenerated on start")
    service = BackupService(ctx.settings, ctx.database, hf_api=hub)
    service.hub = HubBackup(settings, ctx.database, api=hub)
    try:
        assert hub.private[REPO] is True
        for _ in range(3):
            service.snapshot_now()  # waits for the push
        assert service.run_once(skip_unchanged=True) is not None  # first look from this thread
        assert service.run_once(skip_unchanged=True) is None  # recording the pushes is not a change to back up
    finally:
        service.hub.scheduler.stop()
    files = sorted(hub.repos[REPO])
    snapshots = hub_snapshots(files)
    assert len(snapshots) == 2  # backup_keep on the Hub too (4 were pushed)
    assert files == sorted([*snapshots, "media/uploads/clip.mp4"])
    assert hub.repos[REPO][snapshots[0]] == (settings.data_dir / snapshots[0]).read_bytes()
    status = backup.backup_status(ctx.database, settings)
    assert status.last_hub_ok_at is not None and status.hub_repo == REPO


def _backed_up_hub(settings: Settings) -> tuple[FakeHub, Settings]:
    """A fake Hub holding two snapshots (one user, then two) and one media file."""
    hub = FakeHub()
    settings = _hub_settings(settings)
    ctx = build_context(settings)
    (settings.media_dir / "uploads").mkdir(parents=True)
    (settings.media_dir / "uploads" / "clip.mp4").write_bytes(b"video bytes")
    backup_hub = HubBackup(settings, ctx.database, api=hub)
    try:
        for name in ("ada", "bob"):
            auth.add_user(ctx.database, name, "annotator", "password1")
            backup.take_snapshot(ctx.database, backup.backups_dir(settings))
            backup_hub.push().result(timeout=60)
    finally:
        backup_hub.scheduler.stop()
    return hub, settings


def test_empty_data_folder_is_restored_from_the_newest_hub_snapshot(tmp_path, settings):
    hub, old = _backed_up_hub(settings)
    fresh = old.replace(data_dir=tmp_path / "fresh")
    report = restore_from_hub_if_empty(fresh, api=hub)
    assert report.snapshot.startswith(f"{REPO}/backups/compstudio-")
    assert report.rows["users"] == 2 and report.media_files == 1 and report.skipped == []
    assert "Restored" in report.message() and "2 users" in report.message()
    assert (fresh.media_dir / "uploads" / "clip.mp4").read_bytes() == b"video bytes"
    assert sorted(u.username for u in auth.list_users(build_context(fresh).database)) == ["ada", "bob"]
    assert restore_from_hub_if_empty(fresh, api=hub) is None  # not empty any more


def test_a_corrupted_newest_snapshot_is_skipped_for_the_one_before(tmp_path, settings):
    hub, old = _backed_up_hub(settings)
    newest = hub_snapshots(list(hub.repos[REPO]))[0]
    hub.repos[REPO][newest] = hub.repos[REPO][newest][:8192]  # truncated upload
    fresh = old.replace(data_dir=tmp_path / "fresh")
    report = restore_from_hub_if_empty(fresh, api=hub)
    assert [s["snapshot"] for s in report.skipped] == [newest]
    assert report.rows["users"] == 1
    assert newest in report.message()


def test_restore_with_no_repo_or_no_usable_snapshot_starts_empty_but_an_unreachable_hub_stops(tmp_path):
    settings = Settings(data_dir=tmp_path / "a", hub_backup_repo=REPO)
    hub = FakeHub()
    report = restore_from_hub_if_empty(settings, api=hub)
    assert report.snapshot is None and "does not exist yet" in report.message()

    hub.create_repo(REPO, repo_type="dataset", private=True)
    hub.repos[REPO]["backups/compstudio-20261129T120000000000Z.db"] = b"garbage" * 100
    report = restore_from_hub_if_empty(settings, api=hub)
    assert report.snapshot is None and len(report.skipped) == 1 and "no usable snapshot" in report.message()
    assert not settings.db_path.exists()

    hub.fail_list = True
    with pytest.raises(BackupError, match="could not list the Hub backup repo"):
        restore_from_hub_if_empty(settings, api=hub)
    assert restore_from_hub_if_empty(Settings(data_dir=tmp_path / "b"), api=hub) is None  # no repo set


def test_a_hub_that_refuses_at_start_leaves_local_snapshots_running_and_admins_told(settings):
    class ReadOnlyToken(FakeHub):
        def create_repo(self, repo_id, **kwargs):
            raise PermissionError("403: this token cannot write to ada")

    settings = _hub_settings(settings)
    ctx = build_context(settings)
    auth.add_user(ctx.database, "ada", "admin", "password1")
    service = BackupService(ctx.settings, ctx.database, hf_api=ReadOnlyToken()).start()
    assert service.hub is None
    service.stop()
    status = service.status("ada")
    assert status["last_local_ok_at"] is not None
    assert "403" in status["last_failure"]["detail"] and status["last_failure"]["kind"] == "hub"
