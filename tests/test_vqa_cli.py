"""``python -m backend import vqa`` / ``export vqa`` / ``vqa grant-author``: one JSON object each."""

from __future__ import annotations

import json

from backend.accounts import auth
from backend.cli import main
from backend.context import build_context
from backend.vqa.demo import DEMO_FILE
from backend.vqa.permissions import has_permission


def _run(capsys, *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_import_export_and_grant_commands(settings, tmp_path, capsys):
    data = str(settings.data_dir)
    imported = _run(capsys, "import", "vqa", str(DEMO_FILE), "--format", "jsonl", "--data-dir", data)
    assert imported["imported"] == 17 and imported["to_verify"] == 2
    out = tmp_path / "export"
    exported = _run(capsys, "export", "vqa", "--out", str(out), "--status", "verified", "--data-dir", data)
    assert exported["exported"] == 15 and (out / "questions.json").is_file()
    other = str(tmp_path / "other")
    assert _run(capsys, "import", "vqa", str(out), "--data-dir", other)["imported"] == 15
    assert main(["import", "vqa", str(out), "--data-dir", other]) == 2
    assert "already exists" in capsys.readouterr().err
    ctx = build_context(settings)
    auth.add_user(ctx.database, "writer", "annotator", "password123")
    assert _run(capsys, "vqa", "grant-author", "writer", "--data-dir", data)["author"] is True
    assert has_permission(ctx.database, "writer", "author")


def test_admins_import_and_reviewers_export_through_the_tab(ctx, tmp_path):
    import pytest

    from backend.errors import ImportFileError, PermissionDenied
    from backend.vqa.io import export_download, import_upload

    for name, role in (("boss", "admin"), ("rev", "reviewer")):
        auth.add_user(ctx.database, name, role, "password123")
    with pytest.raises(PermissionDenied):
        import_upload(ctx.database, ctx.settings, "rev", DEMO_FILE)
    assert import_upload(ctx.database, ctx.settings, "boss", DEMO_FILE)["imported"] == 17
    archive = export_download(ctx.database, ctx.settings, "rev", tmp_path)
    other = build_context(ctx.settings.replace(data_dir=tmp_path / "other"))
    auth.add_user(other.database, "boss", "admin", "password123")
    assert import_upload(other.database, other.settings, "boss", archive)["imported"] == 15
    bogus = tmp_path / "bogus.zip"
    bogus.write_text("not a zip")
    with pytest.raises(ImportFileError, match="not a valid zip"):
        import_upload(other.database, other.settings, "boss", bogus)
