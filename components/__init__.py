"""Gradio UI: one module per tab, each exposing ``build_<tab>_tab(ctx) -> TabHandle``.

``TABS`` fixes their order; app.py builds them inside one ``gr.Tabs``. Add a tab by appending
``("module", "builder")``.
"""

TABS: tuple[tuple[str, str], ...] = (
    ("components.intents", "build_intents_tab"),
    ("components.review", "build_review_tab"),
    ("components.planning", "build_planning_tab"),
    ("components.vqa", "build_vqa_tab"),
    ("components.icl", "build_icl_tab"),
    ("components.results", "build_results_tab"),
    ("components.models", "build_models_tab"),
    ("components.admin", "build_admin_tab"),
    ("components.campaigns", "build_studies_tab"),
)
