"""``python -m backend`` as an operator runs it: users, import, export, settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT

pytestmark = pytest.mark.slow  # over ~10 s a file: out of the quick loop (scripts/test.sh --quick)


def cli(*args: str, data_dir) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "backend", *args, "--data-dir", str(data_dir)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_users_import_export(tmp_path, vilpact_dir):
    data = tmp_path / "data"
    added = cli("users", "add", "alice", "--role", "annotator", "--password", "password1", data_dir=data)
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["role"] == "annotator"
    assert json.loads(cli("users", "set-role", "alice", "reviewer", data_dir=data).stdout)["role"] == "reviewer"
    assert json.loads(cli("users", "disable", "alice", data_dir=data).stdout)["disabled"] is True
    listed = json.loads(cli("users", "list", data_dir=data).stdout)
    assert [(u["username"], u["role"], u["disabled"]) for u in listed] == [("alice", "reviewer", True)]
    duplicate = cli("users", "add", "alice", "--role", "admin", "--password", "password1", data_dir=data)
    assert duplicate.returncode == 2 and "already exists" in duplicate.stderr

    imported = cli("import", "vilpact", str(vilpact_dir), data_dir=data)
    assert json.loads(imported.stdout)["sequences"] == 2912
    out = tmp_path / "intents.csv"
    exported = cli("export", "intents", "--format", "csv", "--out", str(out), data_dir=data)
    assert json.loads(exported.stdout)["rows"] == 5824
    assert out.read_text().splitlines()[0].startswith("sequence_id,annotator,concrete_intent,high_level_intent,round")

    bad = cli("import", "vilpact", str(tmp_path / "missing"), data_dir=data)
    assert bad.returncode == 2 and "not a folder" in bad.stderr and "Nothing was imported" in bad.stderr
