"""``python app.py`` started the way a Gradio Space starts it: the server must listen where the proxy can reach it.

A Space's proxy connects to the container's network interface, never to its loopback, and Hugging Face tells a
Gradio app where to listen with ``GRADIO_SERVER_NAME=0.0.0.0`` / ``GRADIO_SERVER_PORT=7860``. The test reads the
listening socket from ``/proc/net/tcp`` (no traffic goes to any address but loopback), then requests ``/`` on
127.0.0.1. The environment is a Space's: ``SYSTEM=spaces``, ``SPACE_ID``, the OAuth variables, no ``HF_TOKEN``,
Hub backup configured (so the missing token must be reported, not crash the start), a temporary data folder.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from e2e_helpers import ROOT, free_port, kill_hard, wait_http_ok

from backend.operations import space
from backend.operations.start import prepare_start
from backend.settings import Settings, load_settings

LISTEN = "0A"  # TCP state code for LISTEN in /proc/net/tcp


def listening_addresses(port: int) -> set[str]:
    """Dotted IPv4 addresses with a socket listening on ``port``, read from ``/proc/net/tcp``."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        address, hex_port = fields[1].split(":")
        if int(hex_port, 16) == port and fields[3] == LISTEN:
            found.add(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
    return found


def wait_listening(port: int, process: subprocess.Popen, log: Path, timeout: float = 90) -> set[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the app exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        addresses = listening_addresses(port)
        if addresses:
            return addresses
        time.sleep(0.2)
    pytest.fail(f"nothing listened on port {port} within {timeout} s:\n{log.read_text()[-3000:]}")


def space_environment(tmp_path: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPSTUDIO_", "GRADIO_", "HF_TOKEN"))}
    env.update({
        "SYSTEM": "spaces", "SPACE_ID": "someone/compstudio", "SPACE_AUTHOR_NAME": "someone",
        "SPACE_HOST": "someone-compstudio.hf.space",
        "GRADIO_SERVER_NAME": "0.0.0.0", "GRADIO_SERVER_PORT": str(port),
        "OAUTH_CLIENT_ID": "client-id", "OAUTH_CLIENT_SECRET": "client-secret", "OAUTH_SCOPES": "openid profile",
        "OPENID_PROVIDER_URL": "https://huggingface.co",
        "COMPSTUDIO_DATA_DIR": str(tmp_path / "data"), "COMPSTUDIO_HUB_BACKUP_REPO": "someone/compstudio-backup",
        "HF_HOME": str(tmp_path / "hf-home"),  # no cached token either
        "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", "GRADIO_ANALYTICS_ENABLED": "False",
    })  # fmt: skip
    return env


def test_on_a_space_the_app_listens_on_all_interfaces_at_gradios_port(tmp_path):
    port, log = free_port(), tmp_path / "app.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, str(ROOT / "app.py")], cwd=ROOT, env=space_environment(tmp_path, port),
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        assert wait_listening(port, process, log) == {"0.0.0.0"}
        wait_http_ok(f"http://127.0.0.1:{port}/", timeout=60)
    finally:
        kill_hard(process)
    output = log.read_text()
    assert f"listening on 0.0.0.0:{port}" in output
    assert "no `HF_TOKEN` secret is set" in output  # told, and the app still came up
    assert (tmp_path / "data" / "compstudio.db").exists()


def test_the_address_comes_from_flags_then_gradio_then_the_platform():
    on_space = {"SPACE_ID": "someone/compstudio"}
    assert space.listen_address(load_settings({}), {}) == ("127.0.0.1", 7860)
    assert space.listen_address(load_settings({}), on_space) == ("0.0.0.0", 7860)
    gradio_env = {**on_space, "GRADIO_SERVER_NAME": "0.0.0.0", "GRADIO_SERVER_PORT": "7861"}
    assert space.listen_address(load_settings({}), gradio_env) == ("0.0.0.0", 7861)
    explicit = load_settings({"COMPSTUDIO_HOST": "127.0.0.1"}, port=9000)
    assert space.listen_address(explicit, gradio_env) == ("127.0.0.1", 9000)
    with pytest.raises(Exception, match="GRADIO_SERVER_PORT='http' is not a port number"):
        space.listen_address(load_settings({}), {"GRADIO_SERVER_PORT": "http"})


def test_hub_backup_without_a_token_is_turned_off_with_a_notice(tmp_path, monkeypatch):
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)
    settings = Settings(data_dir=tmp_path / "data", hub_backup_repo="someone/backup")
    start = prepare_start(settings, {"SPACE_ID": "someone/compstudio"}, persistent_root=tmp_path / "none")
    assert start.settings.hub_backup_repo == "" and start.restored is None
    notices = "\n".join(start.notices())
    assert "Hub backup to `someone/backup` is OFF" in notices
    assert "no persistent storage (`/data`) and no Hub backup" in notices  # the banner says the truth too
    assert (start.settings.host, start.settings.port) == ("0.0.0.0", 7860)

    monkeypatch.setattr(huggingface_hub, "get_token", lambda: "hf_token")  # with a token the restore is tried
    with pytest.raises(Exception, match="could not list the Hub backup repo someone/backup"):
        prepare_start(settings, {"SPACE_ID": "someone/compstudio"}, persistent_root=tmp_path / "none")


def test_a_persistent_folder_left_unwritable_falls_back_with_the_banner(tmp_path, monkeypatch):
    """``/data/compstudio`` left by an earlier container under another user id: writable ``/data`` is not enough."""
    persistent = tmp_path / "data-disk"
    (persistent / space.DATA_SUBDIR).mkdir(parents=True)
    writable = space._writable  # root may write anywhere, so the other user's folder is simulated
    monkeypatch.setattr(
        space, "_writable", lambda folder: folder != persistent / space.DATA_SUBDIR and writable(folder)
    )
    settings = Settings(data_dir=tmp_path / "ephemeral")
    data_dir, banner = space.resolve_data_dir(settings, {"SPACE_ID": "a/b"}, persistent)
    assert data_dir == tmp_path / "ephemeral"
    assert banner and "Data will be lost on restart" in banner
