"""Content digests of media and weights files, computed once per file version.

A digest is a SHA-256 of the file's bytes. Files up to :data:`FULL_HASH_LIMIT` (64 MiB: every image and
nearly every video clip) are hashed whole; a larger file (model weights, a long video) is hashed from its
size and :data:`SAMPLES` blocks of 1 MiB spread evenly over it, first and last included, so a batch run
never reads gigabytes to key its rows. Fine-tuned weights change everywhere, so the sampled blocks change.

:class:`FileDigests` (``AppContext.digests``) caches each digest under the file's (path, size, mtime, inode):
a run over a thousand items hashes each video once per process, and a file that is rewritten (new size,
modification time or inode) is hashed again.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

FULL_HASH_LIMIT = 64 * 1024 * 1024
BLOCK = 1024 * 1024
SAMPLES = 16


def file_digest(path: Path) -> str:
    """SHA-256 (16 hex digits) of the file: whole up to 64 MiB, else of its size and 16 sampled blocks."""
    size = path.stat().st_size
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        if size <= FULL_HASH_LIMIT:
            for block in iter(lambda: handle.read(BLOCK), b""):
                digest.update(block)
        else:
            digest.update(f"sampled:{size}:".encode())
            for index in range(SAMPLES):
                handle.seek((size - BLOCK) * index // (SAMPLES - 1))
                digest.update(handle.read(BLOCK))
    return digest.hexdigest()[:16]


class FileDigests:
    """Digests cached by (resolved path, size, mtime_ns, inode); safe to share across threads."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, int, int, int], str] = {}
        self._lock = threading.Lock()

    def digest(self, path: str | os.PathLike[str]) -> str:
        """The file's digest; raises ``OSError`` when it cannot be read."""
        resolved = Path(path).resolve()
        stat = resolved.stat()
        key = (str(resolved), stat.st_size, stat.st_mtime_ns, stat.st_ino)
        with self._lock:
            known = self._cache.get(key)
        if known is not None:
            return known
        value = file_digest(resolved)
        with self._lock:
            self._cache[key] = value
        return value

    def folder_digest(self, folder: str | os.PathLike[str]) -> str:
        """One digest of every file under ``folder`` (names and contents; hidden files and folders left out)."""
        root = Path(folder)
        digest = hashlib.sha256()
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            relative = path.relative_to(root)
            if any(part.startswith(".") for part in relative.parts):
                continue
            digest.update(f"{relative.as_posix()}:{self.digest(path)}\n".encode())
        return digest.hexdigest()[:16]
