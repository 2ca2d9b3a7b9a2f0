"""The access table: who may call each endpoint of the web app (issue 15 §1).

Every Gradio event is also an HTTP endpoint (by name, and by ``fn_index`` for the private ones), so every
one of them is listed here with the least identity that may call it:

* ``anyone``: no sign-in needed;
* ``annotator``: any signed-in, enabled account;
* ``author``: an annotator holding the VQA ``author`` permission, a reviewer or an admin
  (backend/vqa/permissions.py);
* ``reviewer``, ``admin``: that role or a higher one (backend/accounts/auth.py).

There is no separate role for planning-question authors: writing planning questions needs ``reviewer``.

``EVENTS`` is keyed by each event's ``api_name``, one row per endpoint: the public names scripts call
(docs/api.md) and the ``<tab>_ui_<action>`` names of the page's own (private) events. Every event is
registered with an explicit ``api_name`` through ``components.access.listen`` / ``endpoint``, so a key never
derives from a Python function's name: renaming a handler changes nothing. Which HTTP routes need a
sign-in is the web shell's (web/gate.py guards every route under a mount).

The guard that ``listen``/``endpoint`` put in front of each handler (components/access.py) resolves the
caller once and checks them against the row of the event's ``api_name``; an ``api_name`` with no row is
refused to everyone (and logged). The services' own ``require_role`` checks stay the enforcement beneath
it. tests/test_access_table.py calls every endpoint as every identity and fails for an endpoint missing here
(naming it and this file) and for any outcome that differs from the table.

Adding an endpoint: give it an ``api_name`` (``listen(ctx, button.click, fn, ..., api_name="tab_ui_action")``)
and add one row below, in the block of its tab, with the least identity that may call it.
"""

from __future__ import annotations

from backend.accounts import auth
from backend.errors import PermissionDenied
from backend.storage import Database

#: identities, from the least to the most trusted (each includes the rights of those before it)
IDENTITIES: tuple[str, ...] = ("anyone", "annotator", "author", "reviewer", "admin")

EVENTS: dict[str, str] = {
    # -- Review (components/review/)
    "review_next": "reviewer",
    "review_submit": "reviewer",
    "review_skip": "reviewer",
    "review_dashboard": "reviewer",
    "review_export": "admin",
    "dataset_publish": "admin",
    "review_ui_open": "reviewer",
    "review_ui_next": "reviewer",
    "review_ui_names": "reviewer",
    "review_ui_concrete_from": "reviewer",
    "review_ui_high_from": "reviewer",
    "review_ui_submit": "reviewer",
    "review_ui_skip": "reviewer",
    "review_ui_queue_poll": "reviewer",
    "review_ui_dashboard": "reviewer",
    "review_ui_dashboard_open": "reviewer",
    "review_ui_inspection_start": "reviewer",
    "review_ui_inspection_choose": "reviewer",
    "review_ui_inspection_judge": "reviewer",
    "review_ui_agreement_semantic": "reviewer",
    "review_ui_agreement_reviewers": "reviewer",
    "review_ui_agreement_compare": "reviewer",
    "review_ui_export": "admin",
    "review_ui_publish": "admin",
    # -- Worker quality (components/campaign_quality.py, a Review sub-tab; Admin's crowd workers and invitations)
    "quality_flags": "reviewer",
    "worker_resume": "reviewer",
    "gold_add": "reviewer",
    "gold_candidates": "reviewer",
    "gold_pending": "reviewer",
    "gold_judge": "reviewer",
    "quality_ui_refresh": "reviewer",
    "quality_ui_open": "reviewer",
    "quality_ui_resume": "reviewer",
    "quality_ui_gold_right": "reviewer",
    "quality_ui_gold_wrong": "reviewer",
    "worker_report": "admin",
    "worker_report_csv": "admin",
    "worker_block": "admin",
    "worker_unblock": "admin",
    "worker_return_to_pool": "admin",
    "invitation_create": "admin",
    "invitation_list": "admin",
    "admin_workers_report": "admin",
    "admin_workers_csv": "admin",
    "admin_workers_block": "admin",
    "admin_workers_unblock": "admin",
    "admin_workers_return": "admin",
    "admin_invitations_create": "admin",
    # -- Studies (components/campaigns.py): admins run studies; a study worker's own state and qualification
    #    (any signed-in account may ask; the backend answers "not in a crowd study" to others)
    "study_create": "admin",
    "study_list": "admin",
    "study_link": "admin",
    "study_close": "admin",
    "study_stats": "admin",
    "study_me": "annotator",
    "study_qualify": "annotator",
    "study_leave": "annotator",
    "studies_create": "admin",
    "studies_link": "admin",
    "studies_close_ask": "admin",
    "studies_close_confirm": "admin",
    "studies_close_cancel": "admin",
    "studies_open": "admin",
    # -- the live model registry (components/model_choices.py): every tab's model pickers, refilled when it opens
    "planning_models_open": "annotator",  # answers reviewers only
    "vqa_models_open": "annotator",
    "results_models_open": "annotator",
    # -- Results (components/results.py)
    "results_report": "reviewer",
    "results_grid": "reviewer",
    "results_ui_report": "reviewer",
    "results_ui_grid": "reviewer",
    # the Samples sub-tab (components/results_samples.py): JSON endpoints, then its events
    "results_sample_runs": "reviewer",
    "results_samples": "reviewer",
    "results_sample": "reviewer",
    "results_samples_vs": "reviewer",
    "results_samples_open": "reviewer",
    "results_samples_refresh": "reviewer",
    "results_samples_show": "reviewer",
    "results_samples_filter": "reviewer",
    "results_samples_search": "reviewer",
    "results_samples_prev": "reviewer",
    "results_samples_next": "reviewer",
    "results_samples_item": "reviewer",
    "results_samples_compare": "reviewer",
    "results_samples_compare_item": "reviewer",
    # -- Planning (components/planning.py)
    "planning_questions": "annotator",
    "planning_question": "annotator",
    "planning_next_check": "annotator",
    "planning_submit_check": "annotator",
    "planning_results": "annotator",
    "planning_author": "reviewer",
    "planning_ask": "reviewer",
    "planning_run": "reviewer",
    "planning_ui_next_check": "annotator",
    "planning_ui_submit_check": "annotator",
    "planning_ui_show": "annotator",
    "planning_ui_results_refresh": "annotator",
    "planning_results_open": "annotator",
    "planning_ui_author": "reviewer",
    "planning_ui_ask": "reviewer",
    "planning_ui_run": "reviewer",
    # -- Compositional VQA (components/vqa*.py)
    "vqa_next_answer": "annotator",
    "vqa_submit_answer": "annotator",
    "vqa_next_verification": "author",
    "vqa_submit_verification": "author",
    "vqa_leaderboard": "annotator",
    "vqa_comparison": "annotator",
    "vqa_position_bias": "reviewer",
    "vqa_levels": "annotator",
    "vqa_export": "reviewer",
    "vqa_model_answer": "reviewer",
    "vqa_model_run": "reviewer",
    "vqa_vote": "reviewer",
    "vqa_ui_open": "annotator",
    "vqa_ui_answer_open": "annotator",
    "vqa_ui_submit_answer": "annotator",
    "vqa_ui_leaderboard_refresh": "annotator",
    "vqa_leaderboard_open": "annotator",
    "vqa_ui_analyse": "reviewer",
    "vqa_ui_author_options": "author",
    "vqa_ui_author_build": "author",
    "vqa_ui_author_probe": "author",
    "vqa_ui_author_create": "author",
    "vqa_ui_author_refresh": "author",
    "vqa_ui_verify_fetch": "author",
    "vqa_ui_verify_accept": "author",
    "vqa_ui_verify_reject": "author",
    "vqa_ui_verify_edit": "author",
    "vqa_ui_disputes": "reviewer",
    "vqa_ui_dispute_pick": "reviewer",
    "vqa_ui_dispute_accept": "reviewer",
    "vqa_ui_dispute_reject": "reviewer",
    "vqa_ui_items": "reviewer",
    "vqa_ui_ask": "reviewer",
    "vqa_ui_run": "reviewer",
    "vqa_ui_vote": "reviewer",
    "vqa_ui_votes_show": "reviewer",
    "vqa_ui_compose": "reviewer",
    "vqa_ui_author_grant": "admin",
    "vqa_ui_author_revoke": "admin",
    "vqa_ui_import": "admin",
    "vqa_ui_export": "reviewer",
    # -- In-context examples: the two events other modules wire into the tab (components/icl/ declares the rest)
    "icl_ask": "reviewer",  # its "Ask a model" panel (components/models.py, build_ask_model)
    "icl_models_open": "annotator",  # refills the Ask-a-model picker for reviewers (components/model_choices.py)
    # -- Models (components/models.py)
    "model_list": "reviewer",
    "models_ui_open": "reviewer",  # the tab's select event
    "model_runs": "reviewer",
    "model_answer": "reviewer",
    "model_run": "reviewer",
    "model_save": "admin",
    "model_delete": "admin",
    "model_unload": "admin",
    "models_ui_refresh": "reviewer",
    "models_ui_replicas": "reviewer",  # compstudio serve's replicas (components/served_replicas.py)
    "models_ui_run": "reviewer",
    "models_ui_save": "admin",
    "models_ui_delete": "admin",
    "models_ui_unload": "admin",
    "models_ui_form_from": "reviewer",  # the registry editor (components/model_form.py)
    "models_ui_form_edit": "reviewer",
    "models_ui_json_to_form": "reviewer",
    "models_ui_test": "reviewer",  # a registered model as registered; an entry not saved: admins (the service)
    "models_ui_form_save": "admin",
    # -- Admin (components/admin.py)
    "admin_import_vilpact": "admin",
    "admin_export_intents": "admin",
    "admin_users": "admin",
    "admin_user_add": "admin",
    "admin_user_set_role": "admin",
    "admin_user_disable": "admin",
    "admin_ui_open": "admin",
    "admin_ui_import": "admin",
    "admin_ui_export": "admin",
    "admin_ui_user_add": "admin",
    "admin_ui_user_role": "admin",
    "admin_ui_user_disable": "admin",
    "admin_ui_user_enable": "admin",
    "admin_ui_backup_status": "admin",
    "admin_ui_backup_now": "admin",
    "admin_ui_audit": "admin",
    # Admin's Charades panel (components/admin_charades.py); api_names admin_charades_import/_preview/_accept/_export
    "admin_charades_import": "admin",
    "admin_charades_preview": "admin",
    "admin_charades_accept": "admin",
    "admin_charades_export": "admin",
    # -- Webhooks (components/webhooks_panel.py, an Admin panel): admins only
    "webhook_add": "admin",
    "webhook_list": "admin",
    "webhook_remove": "admin",
    "webhook_test": "admin",
    "webhook_deliveries": "admin",
    "webhook_resend": "admin",
    "admin_webhook_add": "admin",
    "admin_webhook_refresh": "admin",
    "admin_webhook_test": "admin",
    "admin_webhook_remove": "admin",
    "admin_webhook_resend": "admin",
}


def allows(least: str, identity: str) -> bool:
    """Whether ``identity`` (one of IDENTITIES) may call an endpoint whose row says ``least``.

    >>> allows("author", "reviewer"), allows("reviewer", "author"), allows("annotator", "anyone")
    (True, False, False)
    """
    return IDENTITIES.index(identity) >= IDENTITIES.index(least)


def identity(database: Database, username: str | None) -> str:
    """The most trusted identity of ``username`` (one of IDENTITIES): "anyone" when not signed in or disabled,
    "author" for an annotator with the VQA author right, else the account's role."""
    user = auth.get_user(database, username) if username else None
    if user is None or user.disabled:
        return "anyone"
    if user.role == "annotator":
        from backend.vqa.permissions import is_author

        return "author" if is_author(database, user) else "annotator"
    return user.role


def check(database: Database, username: str | None, least: str) -> None:
    """Raise PermissionDenied unless ``username`` may call an endpoint whose row says ``least``."""
    if least == "anyone":
        return
    if least == "author":
        from backend.vqa.permissions import require_author

        require_author(database, username)
        return
    if least not in IDENTITIES:
        raise PermissionDenied(f"This action is not in the access table (backend/accounts/access.py): {least!r}.")
    auth.require_role(database, username, least)
