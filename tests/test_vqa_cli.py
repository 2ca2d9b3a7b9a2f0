"""``python -m backend import vqa`` / ``export vqa`` / ``vqa grant-author``: one JSON object each."""

from __future__ import annotations

import json

from backend import auth
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
