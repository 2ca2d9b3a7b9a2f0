"""The few things Gradio's public API cannot do for the shell, in one place (docs/decisions.md, "Gradio gaps").

Each function here reads or sets a Gradio attribute that is public (no underscore) but not part of a documented
call; a Gradio release that changes one breaks only this module, and tests/test_web_shell.py says which.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradio as gr


def set_session_capacity(blocks: gr.Blocks, capacity: int) -> None:
    """``launch(state_session_capacity=...)`` has no ``mount_gradio_app`` counterpart; launch sets this
    attribute, which Gradio's state holder reads when the mounted app starts."""
    blocks.state_session_capacity = capacity


def written_by(blocks: gr.Blocks, path: str) -> bool:
    """Whether ``path`` is a file Gradio put in its cache (or upload folder) for ``blocks``: the files its
    components returned and the files uploaded to it (``Blocks.temp_file_sets``, which Gradio's own cache
    clean-up reads). Gradio's file route serves any cached file to whoever knows its hashed path; the gate
    (web/gate.py) serves a mount's visitors only their mount's."""
    try:
        wanted = str(Path(path).resolve())
    except (OSError, ValueError):
        return False
    for files in blocks.temp_file_sets:
        if path in files or wanted in files:
            return True
    return False


def block_functions(blocks: gr.Blocks) -> list[Any]:
    """Every event of the built ``blocks`` (Gradio's ``BlockFunction``: ``fn``, ``api_name``): ``Blocks.fns``, which
    Gradio's own routes read. The access table is read from them (web/access_table.py)."""
    return list(blocks.fns.values())


def render_function(block_fn: Any) -> Any:
    """The function a ``gr.render`` event runs (``BlockFunction.renderable.fn``: Gradio's own ``fn`` there is its
    wrapper, which builds the render's blocks around it), or None for any other event. The check of the built
    pages reads the guard on it (web/access_table.py, web/lazy_tabs.py)."""
    renderable = getattr(block_fn, "renderable", None)
    return None if renderable is None else renderable.fn


def is_running(blocks: gr.Blocks) -> bool:
    """Whether ``blocks``' queue has started (``Blocks.is_running``, which ``launch`` and the mount's start-up
    set); the warm-up (app.py) waits for it on every built mount."""
    return bool(blocks.is_running)
