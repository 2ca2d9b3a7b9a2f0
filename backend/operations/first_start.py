"""What the app's first start writes into a data folder, as one function the app and ``compstudio init`` share.

:func:`prepare_data_folder` applies the migrations (building the context does), writes the demo content when the
``demo_content`` setting is on (ViLPAct sequences and demo videos, the planning questions, the VQA demo items, the
in-context demo bank), and with password sign-in the demo accounts (one per role, random passwords in
``<data>/demo-accounts.json``), so that from the command line alone planning has questions and ``vqa run`` has an
admin to run as. Idempotent: a second call changes nothing that exists.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from backend.context import AppContext


def write_demo_content(ctx: AppContext) -> None:
    """The demo content of every benchmark (what ``python app.py`` writes on its first start)."""
    from backend.icl.demo import ensure_icl_demo
    from backend.vilpact.demo import ensure_demo_content, ensure_vilpact_demo
    from backend.vqa.demo import ensure_vqa_demo

    ensure_demo_content(ctx)
    ensure_vilpact_demo(ctx)
    ensure_vqa_demo(ctx)
    ensure_icl_demo(ctx)


def prepare_data_folder(ctx: AppContext, accounts: bool = True) -> dict[str, Any]:
    """The data folder as the app's first start leaves it (see the module docstring); what it now holds."""
    out: dict[str, Any] = {"data_dir": str(ctx.settings.data_dir), "demo_content": ctx.settings.demo_content}
    if ctx.settings.demo_content:
        write_demo_content(ctx)
    if accounts and ctx.settings.demo_content and ctx.settings.effective_auth_mode != "oauth":
        from backend.accounts.demo import ensure_demo_accounts

        demo = ensure_demo_accounts(ctx)
        out["accounts"] = {"file": str(demo.path), "users": sorted(demo.accounts)}
    for table in ("sequences", "planning_questions", "vqa_items", "users"):
        out[table] = ctx.database.scalar(f"SELECT count(*) FROM {table}")
    return out
