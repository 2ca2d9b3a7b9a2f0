"""The access table: who may call each endpoint of the web app (issue 15 §1).

Every Gradio event is also an HTTP endpoint (by name, and by ``fn_index`` for the private ones), so every
one of them is listed here with the least identity that may call it:

* ``anyone``: no sign-in needed;
* ``annotator``: any signed-in, enabled account;
* ``author``: an annotator holding the VQA ``author`` permission, a reviewer or an admin
  (backend/vqa/permissions.py);
* ``reviewer``, ``admin``: that role or a higher one (backend/accounts/auth.py).

There is no separate role for planning-question authors: writing planning questions needs ``reviewer``.

``EVENTS`` is keyed by :func:`event_key`: the ``api_name`` of a public (documented) endpoint, else the
handler's module and qualified name without ``<locals>`` (stable when other events are added, unlike
Gradio's numbered names ``on_submit_2``). Handlers that share one function share one row.
``ROUTES`` lists the plain HTTP routes (ours and Gradio's) by path.

The web app consults this table before every event handler runs (components/access.py); a handler
missing from the table is refused to everyone. The services' own ``require_role`` checks stay the
enforcement beneath it. tests/test_access_table.py calls every endpoint as every identity and fails for
an endpoint missing here (naming it and this file) and for any outcome that differs from the table.

Adding an endpoint: add one row below, in the block of its tab, with the least identity that may call it.
"""

from __future__ import annotations

from backend.accounts import auth
from backend.errors import PermissionDenied
from backend.storage import Database

#: identities, from the least to the most trusted (each includes the rights of those before it)
IDENTITIES: tuple[str, ...] = ("anyone", "annotator", "author", "reviewer", "admin")

EVENTS: dict[str, str] = {
    # -- Annotate intents (components/intents.py); the same names are served by components/fastpath.py
    "intent_next": "annotator",
    "intent_submit": "annotator",
    "intent_skip": "annotator",
    "intent_viewed": "annotator",
    "intent_draft": "annotator",
    "components.intents.build_intents_tab.on_start": "annotator",
    "components.intents._wire_work.on_submit": "annotator",
    "components.intents._wire_work.on_skip": "annotator",
    "components.intents._wire_work.on_check": "annotator",
    "components.intents._wire_drafts.on_draft": "annotator",
    # -- Review (components/review/)
    "review_next": "reviewer",
    "review_submit": "reviewer",
    "review_skip": "reviewer",
    "review_dashboard": "reviewer",
    "review_export": "admin",
    "dataset_publish": "admin",
    "components.review.build_review_tab.on_open": "reviewer",
    "components.review.queue.build_queue_panel.on_next": "reviewer",
    "components.review.queue.build_queue_panel.on_names": "reviewer",
    "components.review.queue.build_queue_panel.<lambda>": "reviewer",
    "components.review.queue.build_queue_panel.on_submit": "reviewer",
    "components.review.queue.build_queue_panel.on_skip": "reviewer",
    "components.review.queue.build_queue_panel.on_poll": "reviewer",  # api_name review_queue_poll (private)
    "components.review.dashboard.build_dashboard_panel.on_dashboard": "reviewer",
    "components.review.inspection.build_inspection_panel.on_start": "reviewer",
    "components.review.inspection.build_inspection_panel.on_choose": "reviewer",
    "components.review.inspection.build_inspection_panel.on_judge": "reviewer",
    "components.review.agreement.build_agreement_panel.on_semantic": "reviewer",
    "components.review.agreement.build_agreement_panel.on_reviewers": "reviewer",
    "components.review.agreement.build_agreement_panel.on_compare": "reviewer",
    "components.review.publish.build_publish_panel.on_export": "admin",
    "components.review.publish.build_publish_panel.on_publish": "admin",
    # -- Worker quality (components/campaign_quality.py, a Review sub-tab; Admin's crowd workers and invitations)
    "quality_flags": "reviewer",
    "worker_resume": "reviewer",
    "gold_add": "reviewer",
    "gold_candidates": "reviewer",
    "gold_pending": "reviewer",
    "gold_judge": "reviewer",
    "components.campaign_quality.build_flags_panel.on_refresh": "reviewer",
    "components.campaign_quality.build_flags_panel.on_resume": "reviewer",
    "components.campaign_quality.build_flags_panel.judged.handler": "reviewer",
    "worker_report": "admin",
    "worker_report_csv": "admin",
    "worker_block": "admin",
    "worker_unblock": "admin",
    "worker_return_to_pool": "admin",
    "invitation_create": "admin",
    "invitation_list": "admin",
    "components.campaign_quality.build_workers_panel.on_report": "admin",  # api_name admin_workers_report
    "components.campaign_quality.build_workers_panel.on_download": "admin",  # admin_workers_csv
    "components.campaign_quality.build_workers_panel.on_block": "admin",
    "components.campaign_quality.build_workers_panel.on_unblock": "admin",
    "components.campaign_quality.build_workers_panel.on_return": "admin",
    "components.campaign_quality.build_invitations_panel.on_create": "admin",
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
    "components.campaigns.build_studies_tab.on_create": "admin",  # api_name studies_create
    "components.campaigns.build_studies_tab.on_link": "admin",  # studies_link
    "components.campaigns.build_studies_tab.on_close_ask": "admin",  # studies_close_ask (the confirmation)
    "components.campaigns.build_studies_tab.on_close_confirm": "admin",  # studies_close_confirm
    "components.campaigns.build_studies_tab.on_close_cancel": "admin",  # studies_close_cancel
    "components.campaigns.build_studies_tab.on_open": "admin",  # studies_open
    # -- the live model registry (components/model_choices.py): every tab's model pickers, refilled when it opens
    "components.model_choices.offer_models_on_open.on_open": "annotator",  # answers reviewers only
    # -- Results (components/results.py)
    "results_report": "reviewer",
    "results_grid": "reviewer",
    "components.results._report_panel.on_build": "reviewer",
    "components.results._grid_panel.on_run": "reviewer",
    # the Samples sub-tab (components/results_samples.py): JSON endpoints, then its events
    "results_sample_runs": "reviewer",
    "results_samples": "reviewer",
    "results_sample": "reviewer",
    "results_samples_vs": "reviewer",
    "components.results_samples.build_samples_tab.on_open": "reviewer",
    "components.results_samples.build_samples_tab.on_show": "reviewer",
    "components.results_samples.build_samples_tab.on_prev": "reviewer",
    "components.results_samples.build_samples_tab.on_next": "reviewer",
    "components.results_samples.build_samples_tab.on_pick": "reviewer",
    "components.results_samples.build_samples_tab.on_compare": "reviewer",
    "components.results_samples.build_samples_tab.on_compare_pick": "reviewer",
    # -- Planning (components/planning.py)
    "planning_questions": "annotator",
    "planning_question": "annotator",
    "planning_next_check": "annotator",
    "planning_submit_check": "annotator",
    "planning_results": "annotator",
    "planning_author": "reviewer",
    "planning_ask": "reviewer",
    "planning_run": "reviewer",
    "components.planning._check_panel.on_next": "annotator",
    "components.planning._check_panel.on_submit": "annotator",
    "components.planning._browse_panel.on_show": "annotator",
    "components.planning._results_panel.on_refresh": "annotator",
    "components.planning.reviewer_tools.on_author": "reviewer",
    "components.planning.reviewer_tools.on_ask": "reviewer",
    "components.planning.reviewer_tools.on_run": "reviewer",
    # -- Compositional VQA (components/vqa*.py)
    "vqa_next_answer": "annotator",
    "vqa_submit_answer": "annotator",
    "vqa_next_verification": "author",
    "vqa_submit_verification": "author",
    "vqa_leaderboard": "annotator",
    "vqa_levels": "annotator",
    "vqa_export": "reviewer",
    "vqa_model_answer": "reviewer",
    "vqa_model_run": "reviewer",
    "vqa_vote": "reviewer",
    "components.vqa._answer_panel.on_open": "annotator",
    "components.vqa._answer_panel.on_submit": "annotator",
    "components.vqa._leaderboard_panel.on_refresh": "annotator",
    "components.vqa._leaderboard_panel.on_analyse": "reviewer",
    "components.vqa_authoring._on_options": "author",
    "components.vqa_authoring.author_panel.on_build": "author",
    "components.vqa_authoring.author_panel.on_probe": "author",
    "components.vqa_authoring.author_panel.on_create": "author",
    "components.vqa_authoring.author_panel.on_refresh": "author",
    "components.vqa_verify.verify_panel.on_fetch": "author",
    "components.vqa_verify._decide.handler": "author",
    "components.vqa_verify._disputes_panel.on_disputes": "reviewer",
    "components.vqa_verify._disputes_panel.on_dispute_pick": "reviewer",
    "components.vqa_verify._disputes_panel.resolve.handler": "reviewer",
    "components.vqa._ask_section.on_items": "reviewer",
    "components.vqa._ask_section.on_ask": "reviewer",
    "components.vqa._ask_section.on_run": "reviewer",
    "components.vqa._voting_section.on_vote": "reviewer",
    "components.vqa._voting_section.on_show": "reviewer",
    "components.vqa._compose_section.on_compose": "reviewer",
    "components.vqa._admin_panel.change.handler": "admin",
    "components.vqa._admin_panel.on_import": "admin",
    "components.vqa._admin_panel.on_export": "reviewer",
    # -- In-context examples (components/icl.py)
    "icl_sets": "annotator",
    "icl_cases": "annotator",
    "icl_select": "annotator",
    "icl_table": "annotator",
    "icl_answer": "reviewer",
    "components.models.build_ask_model.on_ask": "reviewer",  # the Ask panel, api_name icl_ask (private)
    "components.icl.build_icl_tab.on_tests": "annotator",
    "components.icl._preset_fields": "annotator",
    "components.icl.build_icl_tab.on_run": "annotator",
    "components.icl.build_icl_tab.on_set_table": "annotator",
    "components.icl.build_icl_tab.on_upload": "reviewer",
    # -- Models (components/models.py)
    "model_list": "reviewer",
    "components.models.build_models_tab.on_load": "reviewer",  # the tab's select event
    "model_runs": "reviewer",
    "model_answer": "reviewer",
    "model_run": "reviewer",
    "model_save": "admin",
    "model_delete": "admin",
    "model_unload": "admin",
    "components.models.build_models_tab.on_refresh": "reviewer",
    "components.models.build_models_tab.on_run": "reviewer",
    "components.models.build_models_tab.on_save": "admin",
    "components.models.build_models_tab.on_delete": "admin",
    "components.models.build_models_tab.on_unload": "admin",
    # -- Admin (components/admin.py)
    "admin_import_vilpact": "admin",
    "admin_export_intents": "admin",
    "admin_users": "admin",
    "admin_user_add": "admin",
    "admin_user_set_role": "admin",
    "admin_user_disable": "admin",
    "components.admin.build_admin_tab.on_open": "admin",
    "components.admin._import_panel.admin_ui_import": "admin",
    "components.admin._export_panel.on_export": "admin",
    "components.admin._accounts_panel.on_add": "admin",
    "components.admin._accounts_panel.change.handler": "admin",
    "components.admin._backup_panel.on_backup_status": "admin",
    "components.admin._backup_panel.on_backup_now": "admin",
    "components.admin._audit_panel.on_audit": "admin",
    # Admin's Charades panel (components/admin_charades.py); api_names admin_charades_import/_preview/_accept/_export
    "components.admin_charades.build_charades_panel.on_import": "admin",
    "components.admin_charades.build_charades_panel.on_preview": "admin",
    "components.admin_charades.build_charades_panel.on_accept": "admin",
    "components.admin_charades.build_charades_panel.on_export": "admin",
    # -- Webhooks (components/webhooks_panel.py, an Admin panel): admins only
    "webhook_add": "admin",
    "webhook_list": "admin",
    "webhook_remove": "admin",
    "webhook_test": "admin",
    "webhook_deliveries": "admin",
    "webhook_resend": "admin",
    "components.webhooks_panel.build_webhooks_panel.on_add": "admin",  # api_name admin_webhook_add
    "components.webhooks_panel.build_webhooks_panel.on_refresh": "admin",  # admin_webhook_refresh
    "components.webhooks_panel.build_webhooks_panel.on_test": "admin",  # admin_webhook_test
    "components.webhooks_panel.build_webhooks_panel.on_remove": "admin",  # admin_webhook_remove
    "components.webhooks_panel.build_webhooks_panel.on_resend": "admin",  # admin_webhook_resend
    # -- the page itself (app.py)
    # the one page load: anyone (a visitor not signed in on a Space is told to sign in with Hugging Face);
    # each tab's part runs only for a signed-in role that sees the tab
    "components.pages.page_load.on_load": "anyone",
}

#: Plain HTTP routes: ``anyone`` answers without a sign-in; ``annotator`` needs one (401/403 or a redirect to
#: /login otherwise). Paths are the routes' templates as Starlette lists them.
#: events only the "Sign in with Hugging Face" page has (Gradio's LoginButton checks the visitor's session);
#: tests/test_space_e2e.py loads that page as a visitor who has not signed in
OAUTH_EVENTS: dict[str, str] = {"_check_login_status": "anyone"}

ROUTES: dict[str, str] = {
    # ours: components/signin.py (the login page and sign-out) and components/fastpath.py (the lean API routes)
    "/login": "anyone",
    "/login/": "anyone",
    "/logout": "anyone",
    "/logout/": "anyone",
    # crowd studies (components/study_pages.py): the signed study link signs a worker in; the rest needs that
    # session. Invitation links (components/invitations.py): the one-time token is the credential.
    "/study/{study_id:int}": "anyone",
    "/study/{study_id:int}/here": "annotator",
    "/study/{study_id:int}/qualification": "annotator",
    "/study/{study_id:int}/leave": "annotator",
    # Prolific's submission events: Prolific's signature is the credential (backend/campaigns/prolific.py)
    "/webhooks/prolific": "anyone",
    "/invite": "anyone",
    "/gradio_api/run/intent_draft": "annotator",
    "/gradio_api/run/intent_draft/": "annotator",
    "/gradio_api/run/intent_next": "annotator",
    "/gradio_api/run/intent_next/": "annotator",
    "/gradio_api/run/intent_skip": "annotator",
    "/gradio_api/run/intent_skip/": "annotator",
    "/gradio_api/run/intent_submit": "annotator",
    "/gradio_api/run/intent_submit/": "annotator",
    "/gradio_api/run/intent_viewed": "annotator",
    "/gradio_api/run/intent_viewed/": "annotator",
    # Gradio's page, configuration and API description
    "/": "annotator",  # anonymous visitors are sent to /login
    "/config": "annotator",
    "/config/": "annotator",
    "/gradio_api/info": "annotator",
    "/gradio_api/info/": "annotator",
    "/gradio_api/openapi.json": "annotator",
    "/gradio_api/deep_link": "annotator",
    "/gradio_api/login_check": "annotator",
    "/gradio_api/login_check/": "annotator",
    "/openapi.json": "anyone",  # FastAPI's list of the routes above (paths only, no data)
    # Gradio's calls, queue, uploads and files (each also checks the session: Depends(login_check))
    "/gradio_api/api/{api_name}": "annotator",
    "/gradio_api/api/{api_name}/": "annotator",
    "/gradio_api/run/{api_name}": "annotator",
    "/gradio_api/run/{api_name}/": "annotator",
    "/gradio_api/call/{api_name}": "annotator",
    "/gradio_api/call/{api_name}/": "annotator",
    "/gradio_api/call/v2/{api_name}": "annotator",
    "/gradio_api/call/v2/{api_name}/": "annotator",
    "/gradio_api/call/{api_name}/{event_id}": "annotator",
    "/gradio_api/call/v2/{api_name}/{event_id}": "annotator",
    "/gradio_api/queue/join": "annotator",
    "/gradio_api/queue/data": "annotator",
    "/gradio_api/queue/status": "annotator",
    "/gradio_api/component_server": "annotator",
    "/gradio_api/component_server/": "annotator",
    "/gradio_api/upload": "annotator",
    "/gradio_api/upload_progress": "annotator",
    "/gradio_api/process_recording": "annotator",
    "/gradio_api/file={path_or_url:path}": "annotator",  # and only below allowed_paths (the media folder)
    "/gradio_api/file/{path:path}": "annotator",
    "/gradio_api/proxy={url_path:path}": "annotator",
    "/gradio_api/runs": "annotator",
    "/gradio_api/runs/": "annotator",
    "/gradio_api/run-history/connect": "annotator",
    "/gradio_api/run-history/buckets": "annotator",
    "/gradio_api/run-history/records": "annotator",
    "/gradio_api/run-history/records/{endpoint}/{record_id}/assets/{asset_id}": "annotator",
    "/gradio_api/dev/reload": "annotator",
    "/monitoring": "annotator",
    "/monitoring/summary": "annotator",
    "/monitoring/{key}": "annotator",  # also needs the per-process monitoring key
    # Gradio's routes keyed by a session hash or event id the browser was given (random; no sign-in check in
    # Gradio): streaming, cancelling, resetting and the heartbeat of one's own session
    "/gradio_api/stream/{event_id}": "anyone",
    "/gradio_api/stream/{event_id}/close": "anyone",
    "/gradio_api/stream/{session_hash}/{run}/{component_id}/playlist.m3u8": "anyone",
    "/gradio_api/stream/{session_hash}/{run}/{component_id}/{segment_id}.{ext}": "anyone",
    "/gradio_api/stream/{session_hash}/{run}/{component_id}/playlist-file": "anyone",
    "/gradio_api/reset": "anyone",
    "/gradio_api/reset/": "anyone",
    "/gradio_api/cancel": "anyone",
    "/gradio_api/heartbeat/{session_hash}": "anyone",
    # Gradio's page assets, and what a browser asks of any site
    "/svelte/{path:path}": "anyone",
    "/static/{path:path}": "anyone",
    "/assets/{path:path}": "anyone",
    "/assets/{name:path}": "anyone",  # the same files from memory (components/frontend_assets.py)
    "/gradio_api/custom_component/{id}/{environment}/{type}/{file_name}": "anyone",
    "/favicon.ico": "anyone",
    "/theme.css": "anyone",
    "/gradio_api/theme.css": "anyone",
    "/robots.txt": "anyone",
    "/pwa_icon": "anyone",
    "/pwa_icon/{size}": "anyone",
    "/manifest.json": "anyone",
    "/gradio_api/startup-events": "anyone",
    "/gradio_api/user": "anyone",  # the caller's own name (null when not signed in)
    "/gradio_api/user/": "anyone",
    "/gradio_api/token": "anyone",  # the caller's own Gradio token (none with our sign-in)
    "/gradio_api/token/": "anyone",
    "/gradio_api/app_id": "anyone",
    "/gradio_api/app_id/": "anyone",
    # Gradio's live editor: answers 403 unless Gradio runs with --vibe (never in this app)
    "/gradio_api/vibe-edit": "anyone",
    "/gradio_api/vibe-edit/": "anyone",
    "/gradio_api/undo-vibe-edit": "anyone",
    "/gradio_api/undo-vibe-edit/": "anyone",
    "/gradio_api/vibe-code": "anyone",
    "/gradio_api/vibe-code/": "anyone",
    "/gradio_api/vibe-starter-queries": "anyone",
    "/gradio_api/vibe-starter-queries/": "anyone",
}


def event_key(api_name: str | None, public: bool, module: str, qualname: str) -> str:
    """The table key of one event: its public API name, else ``module.qualname`` without ``<locals>``.

    >>> event_key("on_submit_2", False, "components.planning", "_check_panel.<locals>.on_submit")
    'components.planning._check_panel.on_submit'
    >>> event_key("intent_next", True, "components.intents", "api_endpoints.<locals>.intent_next")
    'intent_next'
    """
    if public and api_name:
        return api_name
    return f"{module}.{qualname}".replace(".<locals>", "")


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
