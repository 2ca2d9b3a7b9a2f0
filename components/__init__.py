"""Gradio UI: one module per tab, each exposing ``build_<tab>_tab(ctx) -> TabHandle``.

``TABS`` fixes their order, and says each tab's id and the least identity that sees it (the access table's,
backend/accounts/access.py), so that the web shell (web/audiences.py) builds each audience's page from the tabs
that audience may open, and a crowd-study worker's page from their study's tab alone. Add a tab by appending a
``TabSpec``: a tab's role is written here and nowhere else.

``API`` lists the functions that register a tab's named endpoints for scripts (``gr.api``); the web shell calls
them once, inside the scripts mount (web/scripts.py), never on the people's pages.
"""

from typing import NamedTuple


class TabSpec(NamedTuple):
    module: str
    builder: str
    tab_id: str
    label: str  # the tab's label (its builder's tab_frame reads it; a tab built on first visit shows it before)
    min_role: str


TABS: tuple[TabSpec, ...] = (
    TabSpec("components.intents", "build_intents_tab", "intents", "Annotate intents", "annotator"),
    TabSpec("components.review", "build_review_tab", "review", "Review", "reviewer"),
    TabSpec("components.planning", "build_planning_tab", "planning", "Planning", "annotator"),
    TabSpec("components.vqa", "build_vqa_tab", "vqa", "Compositional VQA", "annotator"),
    TabSpec("components.icl", "build_icl_tab", "icl", "In-context examples", "annotator"),
    TabSpec("components.results", "build_results_tab", "results", "Results", "reviewer"),
    TabSpec("components.models", "build_models_tab", "models", "Models", "reviewer"),
    TabSpec("components.admin", "build_admin_tab", "admin", "Admin", "admin"),
    TabSpec("components.studies", "build_studies_tab", "studies", "Studies", "admin"),
)

#: (module, function(ctx)) registering that module's named endpoints with ``gr.api``
API: tuple[tuple[str, str], ...] = (
    ("components.intents.api", "register"),
    ("components.review.api", "register"),
    ("components.planning.api", "register"),
    ("components.vqa.api", "register"),
    ("components.icl.api", "register"),
    ("components.results.api", "register"),
    ("components.models.api", "register"),
    ("components.admin.api", "register"),
    ("components.studies.quality_api", "register"),
    ("components.studies.api", "register"),
)
