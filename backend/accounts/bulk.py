"""Bulk accounts for lab annotators: ``python -m backend users import FILE.csv`` (issue 16 §4).

* Columns ``username,role[,password]`` with a header row. A row without a password gets a generated one
  (16 URL-safe characters); the generated passwords go to a CSV file only its owner can read (mode 0600,
  created exclusively: an existing file is never overwritten).
* All or nothing: every row is checked first (name, role, password length, duplicates in the file, names
  already taken) and every problem is reported with its line; the accounts are then written in one
  transaction, and the passwords file appears only once that transaction has committed.
* The hash strength is that of every other account (scrypt, backend/accounts/auth.py). The hashing, not
  SQLite, is what takes time (~50-130 ms an account on this project's 2-core machine), so it runs on a thread
  pool with one thread per core: ``hashlib.scrypt`` releases the GIL while it works.
"""

from __future__ import annotations

import csv
import os
import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.accounts import auth
from backend.errors import ImportFileError, ValidationError
from backend.storage import Database, audit

MAX_ROWS = 10_000


@dataclass(frozen=True)
class AccountRow:
    line: int
    username: str
    role: str
    password: str | None  # None: generate one


def read_rows(path: Path) -> list[AccountRow]:
    """Parse and check the file; ImportFileError listing every problem (with its line) when any row is bad."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            header = [h.strip().lower() for h in reader.fieldnames or []]
            if header[:2] != ["username", "role"] or not set(header) <= {"username", "role", "password"}:
                raise ImportFileError(str(path), 1, "the header must be username,role or username,role,password")
            reader.fieldnames = header
            rows = [
                AccountRow(
                    reader.line_num,
                    (r.get("username") or "").strip(),
                    (r.get("role") or "").strip().lower(),
                    r.get("password") or None,
                )
                for r in reader
            ]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ImportFileError(str(path), None, f"cannot read it as UTF-8 CSV ({exc})") from exc
    if not rows:
        raise ImportFileError(str(path), None, "it has no accounts")
    if len(rows) > MAX_ROWS:
        raise ImportFileError(str(path), None, f"it has {len(rows)} accounts; at most {MAX_ROWS} at once")
    return rows


def _problems(database: Database, rows: list[AccountRow]) -> list[str]:
    problems: list[str] = []
    seen: dict[str, int] = {}
    taken = {r["username"].lower() for r in database.query("SELECT username FROM users")}
    for row in rows:
        try:
            auth.check_new_account(row.username, row.role, row.password)
        except ValidationError as exc:
            problems.append(f"line {row.line}: {exc}")
        key = row.username.lower()
        if key in seen:
            problems.append(f"line {row.line}: {row.username!r} is also on line {seen[key]}")
        elif key in taken:
            problems.append(f"line {row.line}: an account named {row.username!r} already exists")
        seen.setdefault(key, row.line)
    return problems


def _write_private(path: Path, lines: list[list[str]]) -> None:
    """Create ``path`` readable and writable by its owner only (0600 from the start, never wider)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows(lines)


def import_users(database: Database, path: Path, passwords_out: Path, *, actor: str = "cli") -> dict[str, Any]:
    """Create every account in ``path`` or none; generated passwords go to ``passwords_out`` (0600)."""
    started = time.perf_counter()
    rows = read_rows(path)
    problems = _problems(database, rows)
    if problems:
        raise ImportFileError(str(path), None, "; ".join(problems[:20]) + (" …" if len(problems) > 20 else ""))
    passwords = [row.password or secrets.token_urlsafe(12) for row in rows]
    generated = [[row.username, row.role, pw] for row, pw in zip(rows, passwords, strict=True) if not row.password]
    if generated and passwords_out.exists():
        raise ImportFileError(str(passwords_out), None, "the passwords file exists already; name a new one")
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        hashes = list(pool.map(auth.hash_password, passwords))
    hashed_at = time.perf_counter()
    pending = passwords_out.with_name(f".{passwords_out.name}.{secrets.token_hex(4)}.part")
    if generated:
        _write_private(pending, [["username", "role", "password"], *generated])
    try:
        with database.write() as db:
            for row, hashed in zip(rows, hashes, strict=True):
                if not auth.insert_user(db.conn, row.username, row.role, password_hash=hashed):
                    raise ValidationError(f"line {row.line}: {row.username!r} was created meanwhile; nothing imported")
            audit(db, actor, "users.import", str(path), {"accounts": len(rows), "generated": len(generated)})
        if generated:
            os.replace(pending, passwords_out)
    finally:
        pending.unlink(missing_ok=True)
    return {
        "created": len(rows),
        "generated_passwords": len(generated),
        "passwords_file": str(passwords_out) if generated else None,
        "hash_seconds": round(hashed_at - started, 2),
        "seconds": round(time.perf_counter() - started, 2),
    }
