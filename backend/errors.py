"""Named errors users can cause. Each message says what went wrong and what to do about it.

The UI turns a ``CompStudioError`` into ``gr.Error(message)``; the CLI prints it and exits 2.
"""

from __future__ import annotations


class CompStudioError(Exception):
    """Base class: an error a person can act on (never a raw traceback in the browser)."""


class SettingsError(CompStudioError):
    pass


class PermissionDenied(CompStudioError):
    """The caller is not signed in, is disabled, or lacks the role for this action."""


class NotFound(CompStudioError):
    pass


class ValidationError(CompStudioError):
    """Input that breaks a rule; ``problems`` lists every failed check, one message each."""

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))


class WatchTooShort(ValidationError):
    """The video was not played enough (or not long enough since the task was handed out) to submit: the page
    shows it beside the fields until the watching meets the floor (backend/intents/service.py)."""


class ImportFileError(CompStudioError):
    """A malformed import file. The message names the file, the line and the problem."""

    def __init__(self, path: str, line: int | None, problem: str):
        self.path, self.line, self.problem = path, line, problem
        where = f"{path}, line {line}" if line is not None else path
        super().__init__(f"{where}: {problem}. Nothing was imported.")


class LeaseLost(CompStudioError):
    """The task's lease ran out and its slot went to someone else."""


class MediaError(CompStudioError):
    """A missing or unreadable video or image."""


class BackupError(CompStudioError):
    """A snapshot that could not be taken, checked, pushed or restored."""


class InferenceError(CompStudioError):
    """A model call failed (server error, timeout, out of memory) after its retries."""


class ModelBusy(InferenceError):
    """A caller gave up waiting for the model queue (cancelled, or its wait timed out); it holds no slot."""


class StudyLinkRefused(PermissionDenied):
    """A crowd-study link that is forged, altered, for another study, or missing the worker's id."""


class StorageFull(CompStudioError):
    """The server could not write to its disk (the file system is full, or a file reached its size limit).

    Raised by ``Database.write()`` in place of SQLite's "database or disk is full" / disk I/O error; the
    transaction was rolled back, so nothing was half-written, and the next write works once space returns."""

    def __init__(self, detail: str = ""):
        self.detail = detail
        super().__init__(
            "Nothing was saved: the server's disk is full (or a file reached its size limit). "
            "Your entry is still here: try again in a few minutes, and tell an admin to free space in the data folder."
        )


class StudyFull(PermissionDenied):
    """A study link's latecomer: the study's places are taken (issue 26 §5). ``return_link`` sends them back."""

    def __init__(self, message: str, return_link: str = ""):
        self.return_link = return_link
        super().__init__(message)


class TooManyArrivals(PermissionDenied):
    """Too many new worker ids from one client address in one study (issue 26 §5); ``retry_after`` in seconds."""

    def __init__(self, message: str, retry_after: float):
        self.retry_after = retry_after
        super().__init__(message)


class ParticipantUnknown(PermissionDenied):
    """A study link's worker id that the platform does not know in this study (issue 40 §1: Prolific's API)."""


class WebhookRefused(CompStudioError):
    """An incoming platform webhook that is not signed, forged, replayed or malformed (issue 26 §6)."""

    def __init__(self, message: str, status: int = 401):
        self.status = status
        super().__init__(message)
