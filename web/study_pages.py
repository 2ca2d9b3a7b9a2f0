"""The pages a crowd worker sees around the app (issue 16 §1-2): arriving by a study link, the
qualification, the completion or screen-out code. Plain server-rendered pages like the login page
(web/page.py): no scripts, every text escaped, one form post each.

* ``GET /study/<id>?<platform parameters>&sig=...``: checks the link (backend/campaigns/links.py), creates
  or continues the worker (backend/campaigns/workers.py), sets the session cookie and sends them on to
  ``/study/<id>/here``; a refused link gets a page saying why (403), and a worker whose part has ended gets
  their final page without being signed in;
* ``GET /study/<id>/here``: where the signed-in worker stands: the study's instructions and then
  (``?quiz=1``) the qualification, the way to their tasks, or the completion code with the platform's return
  link (the page bodies added in issue 26 are web/study_views.py);
* ``POST /study/<id>/qualification`` and ``POST /study/<id>/leave``;
* ``POST /webhooks/prolific``: Prolific's submission events, signed (backend/campaigns/prolific.py).

A latecomer gets a "study full" page, an address past the arrival limit a "come back at" page (429), and a
study worker who logs out their own link to continue (:func:`signed_out_page`, called by /logout).

The tabs show a worker's quota and completion code through components/study_status.py.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import anyio
import httpx
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from backend.accounts import sessions
from backend.campaigns import prolific, waiting, workers
from backend.campaigns.links import verify_visit
from backend.campaigns.prolific_api import ProlificApi, participant_check
from backend.campaigns.studies import Study, get_study
from backend.campaigns.workers import StudyWorker
from backend.context import AppContext
from backend.errors import (
    CompStudioError,
    NotFound,
    ParticipantUnknown,
    PermissionDenied,
    StudyFull,
    TooManyArrivals,
    WebhookRefused,
)
from web import page as template
from web import study_views
from web.client_address import client_address
from web.signin import set_session_cookie

MTURK_HOSTS = ("https://www.mturk.com", "https://workersandbox.mturk.com")


def page(title: str, body: str, *, state: str, status: int = 200, form_hosts: tuple[str, ...] = ()) -> HTMLResponse:
    """A study page (web/page.py's template): ``title`` is escaped there, ``body`` must already be escaped HTML;
    the study link (with its signature) is not passed on as a referrer."""
    return template.render(
        title, body, status=status, main_id="study-page", state=state, wide=True, form_hosts=form_hosts,
        referrer="no-referrer",
    )  # fmt: skip


def refused(message: str, status: int) -> HTMLResponse:
    return page(
        "This study link cannot be used",
        f'<p class="error" role="alert" id="study-message">{html.escape(message)}</p>',
        state="refused",
        status=status,
    )


def _code_block(label: str, code: str, link: str, link_text: str) -> str:
    parts = []
    if code:
        parts.append(f'<p>{html.escape(label)}</p><p><span class="code" id="study-code">{html.escape(code)}</span></p>')
    if link:
        parts.append(
            f'<p><a class="button" id="study-return" href="{html.escape(link)}">{html.escape(link_text)}</a></p>'
        )
    return "".join(parts)


def _mturk_submit(study: Study, worker: StudyWorker) -> tuple[str, tuple[str, ...]]:
    """Mechanical Turk's ExternalQuestion: the HIT is submitted by a form post to turkSubmitTo."""
    target, assignment_id = worker.params.get("turkSubmitTo", "").rstrip("/"), worker.params.get("assignmentId", "")
    if study.platform != "mturk" or target not in MTURK_HOSTS or not assignment_id:
        return "", ()
    form = (
        f'<form method="post" action="{html.escape(target)}/mturk/externalSubmit">'
        f'<input type="hidden" name="assignmentId" value="{html.escape(assignment_id, quote=True)}">'
        f'<input type="hidden" name="completion_code" value="{html.escape(study.completion_code, quote=True)}">'
        '<button class="button" type="submit" id="study-mturk-submit">Submit the HIT on Mechanical Turk</button></form>'
    )
    return form, (target,)


def final_page(study: Study, worker: StudyWorker) -> HTMLResponse:
    """The page of a worker whose part has ended (finished, screened out, returned)."""
    if worker.status == "finished":
        form, hosts = _mturk_submit(study, worker)
        code = workers.earned_code(study, worker)
        said = "<p>You have finished this study. Thank you for your work!</p>"
        if (worker.end_reason or "").startswith("no task free"):
            said = (
                "<p>No task came free for you in time, so your part ends here. You are paid for the tasks you did. "
                "Thank you for waiting!</p>"
            )
        body = said + _code_block("Your completion code:", code, study.return_link(code), "Return to the platform")
        return page("Study complete", body + form, state="finished", form_hosts=hosts)
    if worker.status == "screened_out" and worker.turned_away_at:  # passed, but the last place had gone
        return page("This study is full", study_views.full_body(study), state="full")
    if worker.status == "screened_out" and worker.end_reason == workers.CLOSED_BEFORE_WORK:
        body = "<p>This study was closed before you did a task. Thank you for your time.</p>" + _code_block(
            "Your screen-out code (it pays you for your time):",
            study.screenout_code,
            study.return_link(study.screenout_code) if study.screenout_code else "",
            "Return to the platform",
        )
        return page("Study closed", body, state="screened_out")
    if worker.status == "screened_out":
        body = study_views.screened_out_body(study, worker) + _code_block(
            "Your screen-out code:",
            study.screenout_code,
            study.return_link(study.screenout_code),
            "Return to the platform",
        )
        return page("Thank you", body, state="screened_out")
    body = "<p>You have left this study, or its time limit passed. It cannot be started again.</p>"
    return page("Study ended", body, state="returned")


def _quiz_page(study: Study, worker: StudyWorker, quiz: bool) -> HTMLResponse:
    """The instructions first (the same text the annotation tab shows), then, asked for, the quiz."""
    if not quiz and not worker.quiz_feedback:
        return page("Before you start", study_views.instructions_body(study, worker), state="started")
    body = study_views.quiz_body(study, worker, workers.quiz_for(study, worker))
    return page("Qualification", body, state="started")


def _working_page(study: Study, worker: StudyWorker, done: int) -> HTMLResponse:
    body = (
        f"<p>You are in <strong>{html.escape(study.name)}</strong>: {done} of {study.tasks_per_worker} tasks done. "
        f"You have {study.time_limit_minutes} minutes from your first visit. When you have done your tasks, the "
        "page shows your completion code.</p>"
        '<p><a class="button" id="study-start" href="../../">Go to your tasks</a></p>'
        '<form method="post" action="leave"><button class="button secondary" type="submit" id="study-leave">'
        "Leave the study (you cannot come back)</button></form>"
    )
    return page("Your tasks", body, state="qualified")


@dataclass(frozen=True)
class StudyPages:
    ctx: AppContext
    cookie: str
    prolific: ProlificApi | None = None  # asks Prolific about new ids of studies with a token

    def _user(self, request: Request) -> str | None:
        return sessions.user_for(self.ctx.database, request.cookies.get(self.cookie))

    def _state_page(self, study: Study, worker: StudyWorker, quiz: bool = False) -> HTMLResponse:
        if worker.status == "started":
            return _quiz_page(study, worker, quiz)
        if worker.status == "qualified":
            return _working_page(study, worker, workers.submitted(self.ctx.database.db, worker.username, study))
        return final_page(study, worker)

    async def arrive(self, request: Request) -> Response:
        db, study_id = self.ctx.database, int(request.path_params["study_id"])
        address = client_address(request, self.ctx.settings.trusted_proxies)
        check = participant_check(db, self.prolific)
        try:
            study = get_study(db, study_id)
            visit = verify_visit(db, study, dict(request.query_params))
            if visit.preview:
                body = f"<p>{html.escape(study.name)}: accept the HIT to start. You will first take a short qualification.</p>"
                return page("Preview", body, state="preview")
            arrival = await anyio.to_thread.run_sync(
                workers.arrive, db, self.ctx.settings, study, visit, address, check
            )
        except NotFound as exc:
            return refused(str(exc)[:1].upper() + str(exc)[1:] + ".", 404)
        except StudyFull:
            return page("This study is full", study_views.full_body(study), state="full")
        except ParticipantUnknown as exc:
            return page(
                "Not a participant of this study", study_views.message_body(str(exc)), state="unknown", status=403
            )
        except TooManyArrivals as exc:
            reply = page("Please come back later", study_views.message_body(str(exc)), state="limited", status=429)
            reply.headers["Retry-After"] = str(int(exc.retry_after) + 1)
            return reply
        except PermissionDenied as exc:
            return refused(str(exc), 403)
        if arrival.token is None:
            return final_page(arrival.study, arrival.worker)
        response = RedirectResponse(f"{study_id}/here", status_code=303)
        return set_session_cookie(response, request, self.cookie, arrival.token, self.ctx.settings.session_hours)

    async def waiting(self, request: Request) -> Response:
        """The page of a worker who found no task free: reloads itself, says until when, then pays (waiting.py)."""
        try:
            state = await anyio.to_thread.run_sync(
                waiting.wait,
                self.ctx.database,
                self.ctx.settings,
                self._user(request),
                int(request.path_params["study_id"]),
            )
        except CompStudioError as exc:
            return refused(str(exc), 403)
        if state.state == "go":
            return RedirectResponse("../../", status_code=303)
        if state.state == "paid":
            return final_page(state.study, state.worker)
        assert state.until is not None
        reply = page(
            "Waiting for a task", study_views.waiting_body(state.study, state.done, state.until), state="waiting"
        )
        reply.headers["Refresh"] = str(waiting.RETRY_SECONDS)
        return reply

    async def here(self, request: Request) -> Response:
        if request.query_params.get("wait") == "1":
            return await self.waiting(request)
        try:
            study, worker = await anyio.to_thread.run_sync(
                workers.worker_in_study, self.ctx.database, self._user(request), int(request.path_params["study_id"])
            )
        except CompStudioError as exc:
            return refused(str(exc), 403)
        return self._state_page(study, worker, quiz=request.query_params.get("quiz") == "1")

    async def qualification(self, request: Request) -> Response:
        form = await request.form()
        answers = {str(key): str(value) for key, value in form.items()}
        study_id = int(request.path_params["study_id"])
        try:
            outcome = await anyio.to_thread.run_sync(
                workers.take_qualification, self.ctx.database, self._user(request), study_id, answers
            )
        except CompStudioError as exc:
            return refused(str(exc), 403)
        if outcome.worker.status == "qualified":
            return RedirectResponse("here", status_code=303)
        if outcome.worker.status == "started":  # tries left: the mistakes explained, then the next quiz
            return RedirectResponse("here?quiz=1", status_code=303)
        return final_page(get_study(self.ctx.database, study_id), outcome.worker)

    async def leave(self, request: Request) -> Response:
        study_id = int(request.path_params["study_id"])
        try:
            worker = await anyio.to_thread.run_sync(
                workers.leave_study, self.ctx.database, self._user(request), study_id
            )
        except CompStudioError as exc:
            return refused(str(exc), 403)
        return final_page(get_study(self.ctx.database, study_id), worker)

    async def prolific_event(self, request: Request) -> Response:
        """Prolific's webhook: 200 once handled (or a duplicate), 401 forged or replayed, 400 malformed."""
        if int(request.headers.get("content-length") or 0) > 65536:
            return JSONResponse({"detail": "too large for a submission event"}, status_code=413)
        body = await request.body()
        address = client_address(request, self.ctx.settings.trusted_proxies)
        try:
            done = await anyio.to_thread.run_sync(
                prolific.handle, self.ctx.database, self.ctx.settings, dict(request.headers), body, address
            )
        except WebhookRefused as exc:
            return JSONResponse({"detail": str(exc)}, status_code=exc.status)
        return JSONResponse(done)

    def routes(self) -> list[Route]:
        return [
            Route("/study/{study_id:int}", self.arrive, methods=["GET"]),
            Route("/study/{study_id:int}/here", self.here, methods=["GET"]),
            Route("/study/{study_id:int}/qualification", self.qualification, methods=["POST"]),
            Route("/study/{study_id:int}/leave", self.leave, methods=["POST"]),
            Route("/webhooks/prolific", self.prolific_event, methods=["POST"]),
        ]


def study_routes(ctx: AppContext, prolific_client: httpx.Client | None = None) -> list[Route]:
    """The study routes; ``prolific_client`` stands in for the HTTP client that asks Prolific (tests)."""
    api = ProlificApi(ctx.settings.prolific_api_url, prolific_client or httpx.Client())
    return StudyPages(ctx, sessions.cookie_name(ctx.database), api).routes()
