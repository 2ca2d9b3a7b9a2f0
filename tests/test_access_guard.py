"""The access guard attached where an event is registered (components/access.py, issue 25 Must 4), and events
declared once as data (components/events.py, issue 43 §2).

Keys are the events' api_names, never a Python name: renaming a handler changes nothing; a guard with no
identity is refused to everyone; the caller is resolved once per call and handed on; the access table is read
from the built Blocks (web/access_table.py), so it holds exactly what was declared.
"""

from __future__ import annotations

import inspect

import gradio as gr
import pytest
from e2e_helpers import free_port
from gradio_client import Client
from starlette.requests import Request

from backend.accounts import auth
from backend.context import build_context
from backend.settings import Settings
from components import common
from components.access import ACCESS_LEAST, ACCESS_NAME, guarded
from components.events import Event, wire
from web.access_table import access_table, check_events

PASSWORD = "guard-password-1"
ADMIN_ROW = "guard_test_admin"
ANNOTATOR_ROW = "guard_test_annotator"
MISSING = "guard_test_event_with_no_row"


@pytest.fixture(scope="module")
def guard_ctx(tmp_path_factory):
    ctx = build_context(Settings(data_dir=tmp_path_factory.mktemp("guard") / "data", demo_content=False))
    for name, role in (("ann", "annotator"), ("boss", "admin")):
        auth.add_user(ctx.database, name, role, PASSWORD)
    return ctx


def _whoami_in(ctx):
    def whoami(text: str, request: gr.Request) -> str:
        return f"{text}:{common.caller(ctx, request)}"

    return whoami


def test_renaming_a_handler_changes_nothing(guard_ctx):
    outcomes = []
    for python_name in ("on_audit", "a_completely_different_name"):
        handler = _whoami_in(guard_ctx)
        handler.__name__ = handler.__qualname__ = python_name
        with gr.Blocks() as demo:
            box = gr.Textbox()
            wire(guard_ctx, [Event(ADMIN_ROW, "admin", handler, box.submit, [box], [box])])
        assert check_events(demo) == []  # the row is found by api_name whatever the function is called
        (block_fn,) = demo.fns.values()
        assert block_fn.api_name == ADMIN_ROW and getattr(block_fn.fn, ACCESS_NAME) == ADMIN_ROW
        assert getattr(block_fn.fn, ACCESS_LEAST) == "admin" and block_fn.api_visibility == "private"
        assert access_table([demo]) == {ADMIN_ROW: "admin"}
        allowed = block_fn.fn("x", gr.Request(username="boss"))
        with pytest.raises(gr.Error, match="admin role"):
            block_fn.fn("x", gr.Request(username="ann"))
        outcomes.append(allowed)
    assert outcomes == ["x:boss", "x:boss"]


def test_an_event_is_declared_once_with_an_identity_and_pages_must_agree(guard_ctx):
    with pytest.raises(ValueError, match="not one of"):
        Event("guard_test_typo", "reviewers", str)
    with pytest.raises(ValueError, match="public=True"):
        Event("guard_test_public", "admin", str, options={"api_visibility": "public"})
    pages = []
    for least in ("annotator", "admin"):
        with gr.Blocks() as page:
            box = gr.Textbox()
            wire(guard_ctx, [Event(ANNOTATOR_ROW, least, _whoami_in(guard_ctx), box.submit, [box], [box])])
        pages.append(page)
    assert access_table(pages[:1]) == {ANNOTATOR_ROW: "annotator"}
    with pytest.raises(ValueError, match=ANNOTATOR_ROW):
        access_table(pages)


def test_an_event_without_a_row_is_refused_to_everyone(guard_ctx, caplog):
    with caplog.at_level("ERROR", logger="compstudio.access"):
        fn = guarded(guard_ctx, MISSING, _whoami_in(guard_ctx), None)
    assert MISSING in caplog.text  # logged when it is registered
    for name in (None, "ann", "boss"):
        with pytest.raises(gr.Error, match="not in the access table"):
            fn("x", gr.Request(username=name))


def test_the_build_check_refuses_unguarded_and_renamed_events(guard_ctx):
    with gr.Blocks() as bypass:
        box = gr.Textbox()
        box.submit(lambda text: text, [box], [box], api_name=ADMIN_ROW)  # not through wire: no guard
    with pytest.raises(RuntimeError, match=ADMIN_ROW):
        check_events(bypass)
    with gr.Blocks() as duplicate:
        box = gr.Textbox()
        for _ in range(2):  # Gradio serves the second as admin_ui_audit_1, which the guard does not know
            wire(guard_ctx, [Event(ADMIN_ROW, "admin", _whoami_in(guard_ctx), box.submit, [box], [box])])
    with pytest.raises(RuntimeError, match=f"{ADMIN_ROW}_1"):
        check_events(duplicate)
    with gr.Blocks() as unknown:
        box = gr.Textbox()
        box.submit(guarded(guard_ctx, MISSING, _whoami_in(guard_ctx), None), [box], [box], api_name=MISSING)
    assert check_events(unknown) == [MISSING] and access_table([unknown]) == {}


def test_generators_are_guarded_and_async_handlers_are_named(guard_ctx):
    def counting(n: float, request: gr.Request):
        for i in range(int(n)):
            yield f"{i}:{common.caller(guard_ctx, request)}"

    fn = guarded(guard_ctx, ANNOTATOR_ROW, counting, "annotator")
    assert list(fn(2, gr.Request(username="ann"))) == ["0:ann", "1:ann"]
    with pytest.raises(gr.Error, match="not signed in"):
        next(fn(2, gr.Request(username=None)))

    async def later(request: gr.Request) -> str:
        return "never"

    with pytest.raises(TypeError, match=ANNOTATOR_ROW):
        guarded(guard_ctx, ANNOTATOR_ROW, later, "annotator")


def test_the_caller_is_resolved_once_per_call(guard_ctx, monkeypatch):
    """The guard resolves the caller; the handler's own caller(ctx, request) reads what the guard stored."""
    resolutions = []
    real = common.resolve_caller

    def counted(ctx, request):
        resolutions.append(request)
        return real(ctx, request)

    def handler(text: str, request: gr.Request) -> str:
        return f"{common.caller(guard_ctx, request)}/{common.caller(guard_ctx, request)}"

    monkeypatch.setattr("components.access.resolve_caller", counted)
    monkeypatch.setattr(common, "resolve_caller", counted)
    fn = guarded(guard_ctx, ADMIN_ROW, handler, "admin")
    request = gr.Request(username="boss")
    assert fn("x", request) == "boss/boss"
    assert len(resolutions) == 1
    request.username = "ann"  # the same request object again (a new caller): resolved afresh, and refused
    with pytest.raises(gr.Error, match="admin role"):
        fn("x", request)
    assert len(resolutions) == 2
    # over HTTP the gate has resolved the caller already (web/gate.py): the guard reads it from the request's scope
    scope = {"type": "http", "headers": [], "state": {common.CALLER_KEY: common.Caller("boss", "admin", "admin")}}
    assert fn("x", gr.Request(request=Request(scope), username="boss")) == "boss/boss"
    assert len(resolutions) == 2


@pytest.fixture(scope="module")
def served(guard_ctx):
    """A small Blocks on a real server: Gradio injects the request into the guard by its type hint."""

    def no_request(text: str) -> str:  # the handler asks for no request: the guard adds one in front
        return text.upper()

    def with_progress(text: str, request: gr.Request, progress=gr.Progress()) -> str:  # noqa: B008 (Gradio's way)
        return f"{text}:{common.caller(guard_ctx, request)}"

    with gr.Blocks() as demo:
        box, out = gr.Textbox(), gr.Textbox()
        wire(
            guard_ctx,
            [
                Event(ANNOTATOR_ROW, "annotator", no_request, box.submit, [box], [out], public=True),
                Event(ADMIN_ROW, "admin", with_progress, box.input, [box], [out], public=True),
            ],
        )
        box.blur(guarded(guard_ctx, MISSING, no_request, None), [box], [out], api_name=MISSING)
    check_events(demo)
    port = free_port()
    demo.launch(
        server_name="127.0.0.1",
        server_port=port,
        prevent_thread_lock=True,
        quiet=True,
        ssr_mode=False,
        auth=lambda user, password: auth.authenticate(guard_ctx.database, user, password),
    )
    yield f"http://127.0.0.1:{port}"
    demo.close()


def test_over_http_each_event_follows_its_row(served):
    ann = Client(served, auth=("ann", PASSWORD), download_files=False, verbose=False)
    boss = Client(served, auth=("boss", PASSWORD), download_files=False, verbose=False)
    assert ann.predict("hi", api_name=f"/{ANNOTATOR_ROW}") == "HI"
    assert boss.predict("hi", api_name=f"/{ADMIN_ROW}") == "hi:boss"
    with pytest.raises(Exception, match="admin role"):
        ann.predict("hi", api_name=f"/{ADMIN_ROW}")
    for client in (ann, boss):
        with pytest.raises(Exception, match="not in the access table"):
            client.predict("hi", api_name=f"/{MISSING}")


def test_bind_gives_a_handler_its_first_arguments_and_keeps_the_rest_for_gradio(guard_ctx):
    """A panel's handler is a plain function (callable in a test without a browser); bind fixes ctx and the panel,
    and the guard and Gradio still see the request parameter by its type hint; named errors become the page's."""
    from backend.errors import ValidationError
    from components.events import bind

    def on_echo(ctx, panel: str, text: str, request: gr.Request) -> str:
        if text == "bad":
            raise ValidationError("a message a person can act on")
        return f"{panel}:{text}:{common.caller(ctx, request)}"

    def on_count(ctx, n: float, request: gr.Request):
        yield from (f"{i}:{common.caller(ctx, request)}" for i in range(int(n)))

    assert on_echo(guard_ctx, "p", "hi", gr.Request(username="ann")) == "p:hi:ann"  # no browser, no Blocks
    with gr.Blocks() as demo:
        box = gr.Textbox()
        wire(
            guard_ctx,
            [
                Event(ADMIN_ROW, "admin", bind(on_echo, guard_ctx, "p"), box.submit, [box], [box]),
                Event(ANNOTATOR_ROW, "annotator", bind(on_count, guard_ctx), box.input, [box], [box]),
            ],
        )
    echo, count = (fn.fn for fn in demo.fns.values())
    assert list(inspect.signature(echo).parameters) == ["text", "request"]
    assert echo("hi", gr.Request(username="boss")) == "p:hi:boss"
    with pytest.raises(gr.Error, match="a person can act on"):
        echo("bad", gr.Request(username="boss"))
    assert inspect.isgeneratorfunction(count) and list(count(2, gr.Request(username="ann"))) == ["0:ann", "1:ann"]
