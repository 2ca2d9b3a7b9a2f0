"""The one model queue (``ModelPool.slot``, backend/inference/slots.py): every model call takes it, from any page.

Each audience's page is its own ``gr.Blocks``, and Gradio's ``concurrency_id`` does not reach across Blocks, so
these tests call the services two different pages call (an admin's batch run on the Models tab, a reviewer's
live answer) from two threads, with a backend that holds each call until the test lets it go. No timing: every
wait is on an event, a queue or a state the pool reports, with a generous deadline that only stops a hang.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from backend.accounts import auth
from backend.context import AppContext, build_context
from backend.errors import ModelBusy, SettingsError
from backend.inference import service
from backend.inference.registry import ModelPool, ModelSpec
from backend.inference.request import GenerationParams, Request
from backend.inference.slots import FairSlots
from backend.inference.toy import load_toy_items
from backend.settings import Settings, load_settings

HANG = 30.0  # seconds: only how long a broken pool may hang a test before it fails


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + HANG
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting: {what}")
        time.sleep(0.005)


class Gate:
    """Shared by every gated backend: each call reports its model's name on ``entered``, then waits for one
    ``let(name)``; a model named ``*-boom`` fails instead."""

    def __init__(self) -> None:
        self.entered: queue.Queue[str] = queue.Queue()
        self.done: list[str] = []
        self._go: dict[str, threading.Semaphore] = {}
        self._lock = threading.Lock()

    def go(self, name: str) -> threading.Semaphore:
        with self._lock:
            return self._go.setdefault(name, threading.Semaphore(0))

    def let(self, name: str) -> None:
        self.go(name).release()

    def next_entered(self) -> str:
        return self.entered.get(timeout=HANG)


class GatedBackend:
    def __init__(self, spec: ModelSpec, gate: Gate) -> None:
        self.name, self.gate = spec.name, gate

    def generate(self, requests: list[Request], params: GenerationParams) -> list[str]:
        self.gate.entered.put(self.name)
        if not self.gate.go(self.name).acquire(timeout=HANG):
            raise AssertionError(f"{self.name} was never let go")
        self.gate.done.append(self.name)
        if self.name.endswith("-boom"):
            raise RuntimeError("CUDA out of memory (simulated)")
        return ["The answer is (A)."] * len(requests)

    def score_options(self, request, options):  # pragma: no cover - generate-scored models only
        raise NotImplementedError

    def unload(self) -> None:
        return None


def gated_context(tmp_path: Path, limit: int) -> tuple[AppContext, Gate]:
    ctx = build_context(Settings(data_dir=tmp_path / "data", demo_content=False, model_concurrency=limit))
    gate = Gate()
    ctx.models.register_backend("gated", lambda spec: GatedBackend(spec, gate))
    for name in ("gated-a", "gated-b", "gated-boom"):
        ctx.models.register_model(ModelSpec(name, "gated"))
        ctx.pool.get(ctx.models.get_spec(ctx.settings, name))  # loaded: each call below waits for its answer only
    auth.add_user(ctx.database, "boss", "admin", "password123")  # the admin page (Models tab)
    auth.add_user(ctx.database, "rev", "reviewer", "password123")  # the reviewer page (VQA, Planning tabs)
    return ctx, gate


def admin_batch_run(ctx: AppContext, model: str, items: int) -> Callable[[], object]:
    return lambda: service.start_run(ctx, "boss", "toy-colors", model, limit=items)


def reviewer_live_answer(ctx: AppContext, model: str, index: int = 5) -> Callable[[], object]:
    item = load_toy_items(ctx)[index]
    return lambda: service.ask_model(ctx, "rev", "toy-colors", model, item)


@pytest.fixture
def threads() -> Iterator[Callable[[Callable[[], object]], Future]]:
    with ThreadPoolExecutor(max_workers=4) as pool:
        yield pool.submit


def test_the_setting_sizes_the_pool(tmp_path):
    assert build_context(Settings(data_dir=tmp_path / "one")).pool.slots.limit == 1  # as Gradio's "models" queue
    assert build_context(Settings(data_dir=tmp_path / "two", model_concurrency=2)).pool.slots.limit == 2
    assert load_settings({"COMPSTUDIO_MODEL_CONCURRENCY": "3"}).model_concurrency == 3
    with pytest.raises(SettingsError, match="model_concurrency must be at least 1"):
        load_settings({"COMPSTUDIO_MODEL_CONCURRENCY": "0"})


def test_two_pages_share_one_slot(tmp_path, threads):
    """Limit 1: a reviewer's live answer waits until the admin's batch call is done, though the models differ."""
    ctx, gate = gated_context(tmp_path, limit=1)
    batch = threads(admin_batch_run(ctx, "gated-a", items=1))
    assert gate.next_entered() == "gated-a"
    live = threads(reviewer_live_answer(ctx, "gated-b"))
    wait_until(lambda: ctx.pool.slots.waiting() == 1, "the live answer queues")
    assert gate.entered.empty() and not live.done()  # it waits for the slot, not inside its model
    gate.let("gated-a")
    assert gate.next_entered() == "gated-b"
    gate.let("gated-b")
    assert batch.result(timeout=HANG).newly_computed == 1
    assert live.result(timeout=HANG).status == "ok"
    assert gate.done == ["gated-a", "gated-b"]
    assert ctx.pool.slots.in_use() == 0


def test_limit_two_lets_two_pages_run_at_once(tmp_path, threads):
    ctx, gate = gated_context(tmp_path, limit=2)
    batch = threads(admin_batch_run(ctx, "gated-a", items=1))
    live = threads(reviewer_live_answer(ctx, "gated-b"))
    assert {gate.next_entered(), gate.next_entered()} == {"gated-a", "gated-b"}  # both inside their models
    assert ctx.pool.slots.in_use() == 2 and ctx.pool.slots.waiting() == 0
    gate.let("gated-b")
    gate.let("gated-a")
    assert live.result(timeout=HANG).status == "ok" and batch.result(timeout=HANG).newly_computed == 1
    assert ctx.pool.slots.in_use() == 0


def test_a_live_answer_gets_in_between_two_chunks_of_a_batch_run(tmp_path, threads):
    """First come, first served per call: a batch run takes a slot per chunk (batch_size 1 here)."""
    ctx, gate = gated_context(tmp_path, limit=1)
    batch = threads(admin_batch_run(ctx, "gated-a", items=2))
    assert gate.next_entered() == "gated-a"
    live = threads(reviewer_live_answer(ctx, "gated-b"))
    wait_until(lambda: ctx.pool.slots.waiting() == 1, "the live answer queues")
    gate.let("gated-a")  # the first chunk ends: the slot goes to the waiting live answer, not to chunk two
    assert gate.next_entered() == "gated-b"
    wait_until(lambda: ctx.pool.slots.waiting() == 1, "the batch run's second chunk queues")
    gate.let("gated-b")
    assert gate.next_entered() == "gated-a"
    gate.let("gated-a")
    assert batch.result(timeout=HANG).newly_computed == 2 and live.result(timeout=HANG).status == "ok"
    assert gate.done == ["gated-a", "gated-b", "gated-a"]


def test_a_failing_call_frees_the_slot(tmp_path, threads):
    ctx, gate = gated_context(tmp_path, limit=1)
    failing = threads(reviewer_live_answer(ctx, "gated-boom"))
    assert gate.next_entered() == "gated-boom"
    other = threads(reviewer_live_answer(ctx, "gated-b", index=6))
    wait_until(lambda: ctx.pool.slots.waiting() == 1, "the second answer queues")
    gate.let("gated-boom")
    assert failing.result(timeout=HANG).status == "error"  # the runner reports the failure as the answer
    assert gate.next_entered() == "gated-b"
    gate.let("gated-b")
    assert other.result(timeout=HANG).status == "ok"
    assert ctx.pool.slots.in_use() == 0


def test_an_exception_inside_the_slot_frees_it(tmp_path):
    pool = ModelPool(build_context(Settings(data_dir=tmp_path / "data")).models, limit=1)
    with pytest.raises(RuntimeError, match="simulated"):
        with pool.slot():
            raise RuntimeError("simulated")
    assert pool.slots.in_use() == 0 and not pool.slots.held_here()
    with pool.slot(timeout=HANG):  # free again: no wait
        assert pool.slots.in_use() == 1


def test_a_model_that_fails_to_load_frees_the_slot(tmp_path):
    ctx = build_context(Settings(data_dir=tmp_path / "data", demo_content=False))

    def broken(spec: ModelSpec) -> None:
        raise OSError("no such model folder (simulated)")

    ctx.models.register_backend("broken", broken)
    ctx.models.register_model(ModelSpec("broken-model", "broken"))
    with pytest.raises(OSError, match="simulated"):
        ctx.pool.get(ctx.models.get_spec(ctx.settings, "broken-model"))
    assert ctx.pool.slots.in_use() == 0


def hold(slots: FairSlots, name: str, order: list[str], **wait) -> Callable[[], None]:
    def run() -> None:
        with slots.slot(**wait):
            order.append(name)

    return run


def test_waiters_are_served_in_arrival_order(threads):
    slots, order = FairSlots(1), []
    with slots.slot():
        waiters = []
        for count, name in enumerate(["first", "second", "third"], start=1):
            waiters.append(threads(hold(slots, name, order)))
            wait_until(lambda count=count: slots.waiting() == count, f"{name} queues")
        assert order == []
    for waiter in waiters:
        waiter.result(timeout=HANG)
    assert order == ["first", "second", "third"]
    assert slots.in_use() == 0 and slots.waiting() == 0


def test_a_cancelled_waiter_leaves_the_queue_and_leaks_nothing(threads):
    slots, order, cancel = FairSlots(1), [], threading.Event()
    with slots.slot():
        cancelled = threads(hold(slots, "cancelled", order, cancel=cancel))
        wait_until(lambda: slots.waiting() == 1, "the first waiter queues")
        later = threads(hold(slots, "later", order))
        wait_until(lambda: slots.waiting() == 2, "the second waiter queues")
        cancel.set()
        with pytest.raises(ModelBusy, match="cancelled"):
            cancelled.result(timeout=HANG)
        assert slots.waiting() == 1 and slots.in_use() == 1  # only the holder's slot is taken
    later.result(timeout=HANG)
    assert order == ["later"]
    assert slots.in_use() == 0 and slots.waiting() == 0


def test_a_waiter_that_times_out_holds_nothing(threads):
    slots = FairSlots(1)
    with slots.slot():
        with pytest.raises(ModelBusy, match="no model slot freed within"):
            threads(hold(slots, "impatient", [], timeout=0.01)).result(timeout=HANG)
        assert slots.waiting() == 0 and slots.in_use() == 1
    assert slots.in_use() == 0


def test_a_generator_closed_inside_the_slot_frees_it(threads):
    """Gradio closes a cancelled generator event; the close may come from another thread."""
    slots = FairSlots(1)

    def answers() -> Iterator[int]:
        with slots.slot():
            yield 1
            yield 2

    here = answers()
    assert next(here) == 1 and slots.in_use() == 1
    here.close()
    assert slots.in_use() == 0
    elsewhere = answers()
    assert next(elsewhere) == 1
    threads(elsewhere.close).result(timeout=HANG)
    assert slots.in_use() == 0 and not slots.held_here()


def test_a_holder_may_ask_again_without_a_second_slot(tmp_path):
    """A batch run that loads its judge model while inside a call: limit 1 does not deadlock on itself."""
    ctx = build_context(Settings(data_dir=tmp_path / "data", demo_content=False))
    with ctx.pool.slot():
        backend = ctx.pool.get(ctx.models.get_spec(ctx.settings, "random"))
        with ctx.pool.slot():
            assert ctx.pool.slots.in_use() == 1
        assert ctx.pool.slots.held_here()
    assert backend is ctx.pool.get(ctx.models.get_spec(ctx.settings, "random"))
    assert ctx.pool.slots.in_use() == 0 and ctx.pool.unload() == ["random"]


def test_at_least_one_slot():
    with pytest.raises(ValueError, match="model_concurrency >= 1"):
        FairSlots(0)


def test_an_edited_transport_option_reloads_the_model_on_its_next_call(tmp_path):
    """The pool keys a backend by ModelSpec.load_key: a transport option (not in the fingerprint, which keys
    stored answers) is still what the backend was built with, so editing it builds the backend anew."""
    import dataclasses

    ctx = build_context(Settings(data_dir=tmp_path / "data"))
    spec = ModelSpec("served", "openai", "m", options={"base_url": "http://127.0.0.1:9/v1", "timeout_s": 60})
    first = ctx.pool.get(spec)
    assert ctx.pool.get(dataclasses.replace(spec, description="the same model")) is first
    edited = dataclasses.replace(spec, options={**spec.options, "timeout_s": 5})
    assert edited.fingerprint() == spec.fingerprint()  # its stored answers stay its own
    second = ctx.pool.get(edited)
    assert second is not first and second.transport.options.timeout_s == 5
    assert ctx.pool.get(dataclasses.replace(edited, concurrency=4)) is not second
    assert ctx.pool.loaded() == ["served"]
