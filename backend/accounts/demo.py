"""Demo accounts for a fresh start (``demo_content``): one per role, with random passwords written once to
``<data>/demo-accounts.json``. Idempotent: re-running changes nothing that exists."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from pathlib import Path

from backend.accounts import auth
from backend.context import AppContext

DEMO_ACCOUNTS = (("demo-admin", "admin"), ("demo-reviewer", "reviewer"), ("demo-annotator", "annotator"))


@dataclass(frozen=True)
class DemoAccounts:
    path: Path
    accounts: dict[str, str]  # user name -> password


def ensure_demo_accounts(ctx: AppContext) -> DemoAccounts:
    """Demo accounts with random passwords, written once to ``<data>/demo-accounts.json``."""
    path = ctx.settings.data_dir / "demo-accounts.json"
    accounts: dict[str, str] = json.loads(path.read_text()) if path.exists() else {}
    for username, role in DEMO_ACCOUNTS:
        if auth.get_user(ctx.database, username) is None:
            accounts[username] = accounts.get(username) or secrets.token_urlsafe(9)
            auth.add_user(ctx.database, username, role, accounts[username], actor="demo", source="demo")
    path.write_text(json.dumps(accounts, indent=2))
    path.chmod(0o600)
    return DemoAccounts(path, accounts)
