"""The Studies tab's list: every study with its counts and link (or one sentence before there is any), and what
the open studies reserve of each pool. Filled when the tab opens (``studies_open``) and after a study is created or
closed (components/studies/create.py, manage.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from backend.campaigns import links, studies, waiting
from backend.campaigns.qualification import pool_for
from backend.context import AppContext
from backend.errors import ValidationError

# the table's columns: (what the admin reads, the study's key)
SHOWN = (
    ("id", "id"),
    ("name", "name"),
    ("state", "status"),
    ("kind", "kind"),
    ("platform", "platform"),
    ("completion code", "completion_code"),
    ("screen-out code", "screenout_code"),
    ("places", "places"),
    ("gold rate", "gold_rate"),
    ("qualifying", "qualifying"),
    ("working", "working"),
    ("finished", "finished"),
    ("screened out", "screened_out"),
    ("full", "full"),
    ("returned", "returned"),
    ("tasks each", "tasks_per_worker"),
    ("tries", "tries"),
    ("median min", "median_minutes"),
    ("link", "link"),
)
COLUMNS = [label for label, _ in SHOWN]
HELP = (
    "A study sends crowd workers (Prolific, CloudResearch Connect, or any platform that can put a worker id into a "
    "link: SONA, Clickworker, a lab's own pool) straight to their tasks: the link signs them in without a password, "
    "they read the instructions, take a short qualification, do their quota, and get the completion code. A study "
    "needs a completion code, a screen-out code when it has a qualification, and a name no other open study has. "
    "**Places**: at most that many workers doing tasks at once (0: what the pool needs); a worker takes a place "
    "when they start work, not when they open the link, and the study's places reserve their tasks from lab "
    "annotators. Mechanical Turk closed on 2026-09-30: its studies stay for their records and reports, and no new "
    "one can be made. Paste the link into the platform's study page; docs/crowd.md walks through it. "
    "Qualification questions available: " + ", ".join(f"{kind} {len(pool_for(kind))}" for kind in studies.KINDS) + "."
)
NO_STUDY = "No study yet: create one below, and it shows here with its counts and link."


@dataclass(frozen=True)
class ListPanel:
    """The studies table, the sentence shown instead of it before there is a study, and the pools' reservations."""

    none_yet: gr.Markdown
    table: gr.Dataframe
    pool: gr.Markdown


def layout() -> ListPanel:
    gr.Markdown(HELP)
    none_yet = gr.Markdown(elem_id="studies-none")
    table = gr.Dataframe(
        headers=COLUMNS, interactive=False, label="Studies", elem_id="studies-table", visible=False
    )  # shown once there is a study (studies_shown)
    pool = gr.Markdown(elem_id="studies-pool")
    return ListPanel(none_yet=none_yet, table=table, pool=pool)


def public_address(request: gr.Request | None) -> str:
    """The app's address as the admin's browser reached it (a proxy's X-Forwarded-Host/-Proto first)."""
    if request is None:
        return ""
    headers = request.headers
    host = (headers.get("x-forwarded-host") or headers.get("host") or "").split(",")[0].strip()
    inner = getattr(request, "request", None)
    scheme = (headers.get("x-forwarded-proto") or (inner.url.scheme if inner is not None else "http")).split(",")[0]
    return f"{scheme.strip()}://{host}" if host else ""


def _row(ctx: AppContext, study: dict[str, Any], base: str) -> dict[str, Any]:
    link = ""
    if base:
        try:
            link = links.study_link(ctx.database, studies.get_study(ctx.database, study["id"]), base)
        except ValidationError:  # an address the browser gave that is no http(s) URL: no link shown
            link = ""
    places = study["places"] if study["places"] else "auto"
    platform = f"{study['platform']} (archived)" if study["platform"] in studies.ARCHIVED else study["platform"]
    if study["platform"] == "generic":
        platform = f"generic ({study['worker_param']}=)"
    gold = study["gold_rate"] if study["gold_rate"] is not None else "server's"
    return {
        **study,
        "platform": platform,
        "places": places,
        "gold_rate": gold,
        "tries": study["qualification_attempts"],
        "link": link,
    }


def pool_words(ctx: AppContext) -> str:
    """What the open studies reserve of each pool, and what is left for lab annotators."""
    rows = waiting.reservations(ctx.database)
    parts = [
        f"**{row['kind']}**: {row['unclaimed']} open tasks not handed out, {row['reserved']} reserved by studies, "
        f"{row['free']} free for lab annotators"
        for row in rows
    ]
    return "Tasks now: " + " · ".join(parts) + "."


def studies_frame(ctx: AppContext, me: str | None, base: str = "") -> pd.DataFrame:
    rows = [_row(ctx, study, base) for study in studies.list_studies(ctx.database, me)]
    return pd.DataFrame([[row[key] for _, key in SHOWN] for row in rows], columns=COLUMNS)


def studies_shown(ctx: AppContext, me: str | None, p: ListPanel, base: str = "") -> dict:
    """The table of studies, or, before there is any, one sentence saying so: an empty table of nineteen columns
    is only headers that scroll sideways with nothing a keyboard can reach (axe: scrollable-region-focusable);
    and the pools' reservations."""
    frame = studies_frame(ctx, me, base)
    empty = frame.empty
    return {
        p.table: gr.update(value=frame, visible=not empty),
        p.none_yet: NO_STUDY if empty else "",
        p.pool: pool_words(ctx),
    }
