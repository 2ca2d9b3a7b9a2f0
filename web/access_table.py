"""The access table, read from the built pages: who may call each event (issue 43 §2).

Each event is declared once, as data, beside the panel that owns it (components/events.py: its name, the least
identity that may call it, trigger, handler, inputs, outputs); the guard in front of its handler
(components/access.py) carries its name and least identity. :func:`access_table` collects them from the built
Blocks, so the table is exactly what the app serves: ``compstudio access`` prints it and docs/access.md is
generated from it (``python scripts/access_table.py``). :func:`check_events` refuses to start a page with a
server-side event that was not wired through the guard, or whose name Gradio changed (a duplicate ``api_name``
gets a suffix).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import gradio as gr

from backend.accounts import access
from components.access import ACCESS_LEAST, ACCESS_NAME
from web.gradio_gaps import block_functions, render_function


def check_events(demo: gr.Blocks) -> list[str]:
    """Check the built ``demo``: every event that runs on the server was wired through the guard under the
    name it is served by (raises RuntimeError otherwise). Returns the names no one may call (no row)."""
    unguarded, missing = [], []
    for block_fn in block_functions(demo):
        rendered = render_function(block_fn)  # a tab built on first visit (web/lazy_tabs.py): its render is guarded
        fn = rendered or block_fn.fn
        if fn is None:  # runs in the browser only (js=...): nothing to call on the server
            continue
        name = getattr(fn, ACCESS_NAME, None)
        if name is None or (rendered is None and name != block_fn.api_name):
            unguarded.append(f"{block_fn.api_name!r} (guarded as {name!r})")
        elif getattr(fn, ACCESS_LEAST, None) is None:
            missing.append(name)
    if unguarded:
        raise RuntimeError(
            "events not wired through components.events.wire, or with a duplicate api_name: " + ", ".join(unguarded)
        )
    return missing


def access_table(blocks: Iterable[gr.Blocks]) -> dict[str, str]:
    """Every server-side event of the built ``blocks`` by name, with the least identity that may call it, as
    declared. Raises ValueError when one name is declared with two identities (pages must agree)."""
    table: dict[str, str] = {}
    for one in blocks:
        for block_fn in block_functions(one):
            name, least = getattr(block_fn.fn, ACCESS_NAME, None), getattr(block_fn.fn, ACCESS_LEAST, None)
            if block_fn.fn is None or name is None or least is None:
                continue  # browser-only, a tab's first-visit render (its row is the tab's, components.TABS), or
                # refused by check_events before the page is served
            if table.setdefault(name, least) != least:
                raise ValueError(f"event {name!r} is declared for {table[name]!r} on one page and {least!r} on another")
    return dict(sorted(table.items()))


def pages_of(table_by_page: Mapping[str, Mapping[str, str]]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """``{page: {event: least}}`` turned around: each event with its least identity and the pages that serve it."""
    rows: dict[str, tuple[str, tuple[str, ...]]] = {}
    for page, table in sorted(table_by_page.items()):
        for name, least in table.items():
            pages = rows[name][1] if name in rows else ()
            rows[name] = (least, (*pages, page))
    return dict(sorted(rows.items(), key=lambda row: (access.IDENTITIES.index(row[1][0]), row[0])))


def markdown(blocks_by_page: Mapping[str, gr.Blocks]) -> str:
    """The access table as the Markdown of docs/access.md: one row per event, by least identity."""
    rows = pages_of({page: access_table([blocks]) for page, blocks in blocks_by_page.items()})
    lines = ["| event (api_name) | least identity | pages |", "|---|---|---|"]
    lines += [f"| `{name}` | {least} | {', '.join(f'`{p}`' for p in pages)} |" for name, (least, pages) in rows.items()]
    counts = ", ".join(f"{sum(1 for least, _ in rows.values() if least == i)} {i}" for i in access.IDENTITIES)
    return "\n".join([f"{len(rows)} events: {counts}.", "", *lines])
