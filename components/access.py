"""The access guard in front of every event handler, attached where the event is registered (components/events.py
``wire``).

The handler is wrapped by :func:`guarded`: the wrapper's signature (``__signature__``) is the handler's with a
``request: gr.Request`` in front, so Gradio injects the request by type hint (its public way). On each call the
wrapper takes the caller of the request (:func:`request_caller`): the ``Caller(name, identity, audience)`` the gate
resolved once for the HTTP request and keeps in its scope (web/gate.py; Gradio's ``gr.Request`` wraps that request,
for a queued event the one that joined the queue), so the guard reads no identity from the database; only when
there is none (a handler called from a test, a ``gr.Request`` made by hand) is it resolved here, once. The guard
checks the caller's identity against the event's least identity (:func:`admit`: ``access.allows``; a refusal
reads the account to say why, in the services' words), stores the name on the request
(``components.common.CALLER_ATTRIBUTE``) and calls the handler: handlers that call ``caller(ctx, request)`` get
that name without resolving it again. An event with no least identity is refused to everyone (and logged), so an
endpoint added without one fails closed. The services' own ``require_role`` checks still run underneath (the
command line and scripts call the services directly).

Keys never derive from a Python name: renaming a handler changes nothing. ``web.access_table.check_events`` runs
once the Blocks are built and refuses to start an app with a server-side event that was not wired through the
guard, or whose name Gradio changed (a duplicate ``api_name`` gets a suffix).
"""

from __future__ import annotations

import functools
import inspect
import logging
import typing
from collections.abc import Callable
from typing import Any

import gradio as gr

from backend.accounts import access
from backend.context import AppContext
from backend.errors import PermissionDenied
from components.common import CALLER_ATTRIBUTE, Caller, resolve_caller, scope_caller

log = logging.getLogger("compstudio.access")

#: the attributes of a guarded wrapper: the name of its row and the least identity that may call it (read by
#: web/access_table.py, which checks the built pages and collects the access table from them)
ACCESS_NAME = "access_name"
ACCESS_LEAST = "access_least"


def _request_position(fn: Callable[..., Any], hints: dict[str, Any]) -> int | None:
    """The position of ``fn``'s own ``gr.Request`` parameter, if it has one."""
    for position, param in enumerate(inspect.signature(fn).parameters.values()):
        if param.kind not in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            break
        if hints.get(param.name) in (gr.Request, typing.Optional[gr.Request]):  # noqa: UP045 (Gradio's test)
            return position
    return None


def _hints(api_name: str, fn: Callable[..., Any]) -> dict[str, Any]:
    """``fn``'s resolved type hints; Gradio reads them to inject the request (and derive gr.api's types)."""
    try:
        return typing.get_type_hints(fn) if inspect.isfunction(inspect.unwrap(fn)) else {}
    except (NameError, TypeError) as exc:
        raise TypeError(f"{api_name}: the handler's type hints do not resolve ({exc}); Gradio needs them") from exc


def _with_request(api_name: str, fn: Callable[..., Any]) -> tuple[inspect.Signature, dict[str, Any], int | None]:
    """The signature and type hints Gradio is to see for ``fn``'s guard (a ``request: gr.Request`` in front when
    ``fn`` takes none), and the position of ``fn``'s own request parameter (None: it has none)."""
    hints = _hints(api_name, fn)
    own = _request_position(fn, hints)
    signature = inspect.signature(fn)
    if own is None:  # add one in front: Gradio inserts specials at their positions, so position 0 is always right
        request_param = inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=gr.Request)
        signature = signature.replace(parameters=[request_param, *signature.parameters.values()])
        hints = {**hints, "request": gr.Request}
    return signature, hints, own


def request_caller(ctx: AppContext, request: gr.Request | None) -> Caller:
    """The caller of ``request``: the :class:`~components.common.Caller` the gate resolved for its HTTP request
    (web/gate.py; no database read), or, when there is none (a handler called from a test, a ``gr.Request`` made
    by hand), resolved here once from ``request.username``."""
    found = scope_caller(request)
    if found is not None:
        return found
    name = resolve_caller(ctx, request)
    return Caller(name, access.identity(ctx.database, name), None)


def admit(ctx: AppContext, found: Caller, least: str | None, api_name: str) -> None:
    """Raise PermissionDenied unless ``found`` may call the event ``api_name`` whose row says ``least`` (None: not in
    the table, so nobody). The answer is the caller's identity against the row; the database is read only to say
    why a refusal is one (the services' own words, ``access.check``)."""
    if least is None:
        raise PermissionDenied(f"The action {api_name!r} is not in the access table; refused.")
    if access.allows(least, found.identity):
        return
    access.check(ctx.database, found.name, least)  # raises with the reason
    # the account has the right now, but this request was resolved before it changed: the next one gets it
    raise PermissionDenied("Your role changed: reload the page.")


def guarded(ctx: AppContext, api_name: str, fn: Callable[..., Any], least: str | None) -> Callable[..., Any]:
    """``fn`` behind the access-table row ``api_name`` (the event's api_name), callable by ``least`` and above
    (None: by nobody); see the module docstring."""
    if least is None:
        log.error("event %s declares no identity that may call it: refused to everyone", api_name)
    signature, hints, own = _with_request(api_name, fn)
    position = 0 if own is None else own

    def enter(args: tuple[Any, ...]) -> tuple[Any, ...]:
        request = args[position] if len(args) > position else None
        found = request_caller(ctx, request)  # afresh on every call, even if Gradio handed this request before
        try:
            admit(ctx, found, least, api_name)
        except PermissionDenied as exc:
            log.warning("refused %s for %s: %s", api_name, found.name or "(not signed in)", exc)
            raise gr.Error(str(exc), print_exception=False) from None
        if request is not None:
            setattr(request, CALLER_ATTRIBUTE, found.name)  # handlers' caller(ctx, request) answers from it
        return args[1:] if own is None else args

    target = inspect.unwrap(fn)
    if inspect.iscoroutinefunction(target) or inspect.isasyncgenfunction(target):
        raise TypeError(f"{api_name}: the access guard wraps plain functions and generators; add a wrapper here")
    if inspect.isgeneratorfunction(target):

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            yield from fn(*enter(args), **kwargs)

    else:

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return fn(*enter(args), **kwargs)

    wrapper.__signature__ = signature  # type: ignore[attr-defined]
    wrapper.__annotations__ = {**hints, "return": signature.return_annotation}
    if signature.return_annotation is inspect.Signature.empty:
        del wrapper.__annotations__["return"]
    setattr(wrapper, ACCESS_NAME, api_name)
    setattr(wrapper, ACCESS_LEAST, least)
    return wrapper
