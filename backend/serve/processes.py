"""Managed engine processes: each replica in a process group of its own, with its own port, log and health wait,
and none left behind.

* :func:`spawn` starts a command in a new session (its own process group: the engine's workers are in it too) with
  its output in a log file. With ``tied=True`` the kernel sends it SIGTERM when the process that started it dies,
  however it dies (``prctl(PR_SET_PDEATHSIG)``, set between fork and exec; a child whose parent is already gone by
  then exits at once): a crash of CompStudio leaves no orphan engine. ``compstudio serve --detach`` starts untied
  processes, stopped later with ``serve --stop``.
* :func:`wait_healthy` polls the replica's health route until it answers 200, the process exits (its log's tail
  in the error) or the time is up.
* :func:`stop_group` sends SIGTERM to the whole group, waits, then SIGKILL.

Linux only for the parent-death signal (elsewhere processes are still grouped and stopped by ``serve --stop``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from backend.errors import InferenceError

PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> Callable[[], None]:
    """The pre-exec hook of a tied child: SIGTERM when ``parent`` dies, and exit now if it already has."""

    def hook() -> None:
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:
            os._exit(1)

    return hook


def spawn(argv: Sequence[str], log: Path, env: Mapping[str, str] | None = None, tied: bool = True) -> subprocess.Popen:
    """Start ``argv`` in its own process group, output to ``log`` (see the module docstring for ``tied``)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        try:
            return subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, **(env or {})},
                start_new_session=True,
                preexec_fn=_die_with(os.getpid()) if tied else None,  # noqa: PLW1509 - no threads run in the hook
            )
        except OSError as exc:
            raise InferenceError(f"cannot start {argv[0]!r}: {exc}") from exc


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie of ours is reaped and counts as gone)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    except ChildProcessError:
        pass  # not our child: ask the kernel
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _state(pid) != "Z"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def healthy(url: str, timeout_s: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:  # noqa: S310 - a URL we built
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def log_tail(log: Path, lines: int = 15) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def wait_healthy(process: subprocess.Popen, url: str, log: Path, timeout_s: float, poll_s: float = 0.5) -> float:
    """Seconds until ``url`` answered 200; ``InferenceError`` when the process exits first or time runs out."""
    began = time.monotonic()
    while True:
        if healthy(url):
            return time.monotonic() - began
        code = process.poll()
        if code is not None:
            raise InferenceError(
                f"the engine exited with code {code} before it was ready; its log ({log}):\n{log_tail(log)}"
            )
        if time.monotonic() - began > timeout_s:
            raise InferenceError(
                f"the engine was not ready after {timeout_s:.0f} s ({url}); its log ({log}):\n{log_tail(log)}"
            )
        time.sleep(poll_s)


def stop_group(pgid: int, grace_s: float = 15.0) -> str:
    """Stop a replica's whole process group: SIGTERM, then SIGKILL after ``grace_s``; how it ended."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return "already stopped"
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not alive(pgid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)  # workers the engine left behind, if any
            return "stopped"
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    return "killed"
