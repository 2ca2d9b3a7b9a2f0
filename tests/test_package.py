"""The installed package: ``pip install -e .`` (scripts/install.sh) gives the ``compstudio`` command, run here from
a folder outside the repository as an operator would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = pytest.mark.slow  # over ~10 s a file: out of the quick loop (scripts/test.sh --quick)


def compstudio_command() -> Path:
    command = Path(sys.executable).parent / "compstudio"
    if not command.exists():
        pytest.fail(
            f"{command} is missing: install the package with scripts/install.sh (or `pip install --no-deps -e .`)",
            pytrace=False,
        )
    return command


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [str(compstudio_command()), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=240
    )


def test_pyproject_declares_the_command_and_the_packages():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"] == {"compstudio": "backend.cli:main"}
    assert project["tool"]["setuptools"]["py-modules"] == ["app"]
    assert "pip install -q --no-deps -e ." in (ROOT / "scripts" / "install.sh").read_text(encoding="utf-8")


def test_compstudio_help_lists_every_command(tmp_path):
    out = run("--help", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: compstudio")
    for command in ("app", "users", "import", "export", "eval", "backup", "planning", "icl", "vqa"):
        assert command in out.stdout


def test_compstudio_users_on_a_fresh_data_dir(tmp_path):
    data = tmp_path / "data"
    added = run(
        "users", "add", "alice", "--role", "annotator", "--password", "password1", "--data-dir", str(data), cwd=tmp_path
    )
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["username"] == "alice"
    listed = run("users", "list", "--data-dir", str(data), cwd=tmp_path)
    assert [(u["username"], u["role"]) for u in json.loads(listed.stdout)] == [("alice", "annotator")]
    assert (data / "compstudio.db").exists()
    duplicate = run(
        "users", "add", "alice", "--role", "admin", "--password", "password1", "--data-dir", str(data), cwd=tmp_path
    )
    assert duplicate.returncode == 2 and duplicate.stderr.startswith("error:")


def test_compstudio_app_takes_the_flags_of_app_py(tmp_path):
    out = run("app", "--help", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: compstudio app")
    for flag in ("--host", "--port", "--data-dir"):
        assert flag in out.stdout
    direct = subprocess.run([sys.executable, "app.py", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert direct.returncode == 0 and all(flag in direct.stdout for flag in ("--host", "--port", "--data-dir"))


def test_installed_modules_find_the_shipped_assets(tmp_path):
    """Run from outside the repository, the installed backend still reads assets/ from the source tree."""
    script = (
        "import app, backend.vilpact.demo as demo, backend.icl.demo as icl, backend.vqa.demo as vqa; "
        "print(app.__file__); print(demo.VILPACT); print(icl.ASSETS); print(vqa.DEMO_FILE)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": ""},
    )
    assert out.returncode == 0, out.stderr
    app_file, *assets = [Path(line) for line in out.stdout.splitlines()]
    assert app_file.resolve() == (ROOT / "app.py").resolve()
    assert all(path.exists() and ROOT.resolve() in path.resolve().parents for path in assets)
