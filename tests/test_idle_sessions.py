"""Gradio sessions nobody uses any more give their memory back (issue 15, part 6; components/idle_sessions.py)."""

from __future__ import annotations

import datetime

import gradio as gr
from gradio.state_holder import StateHolder

from components.idle_sessions import sweep_idle_sessions

IDLE = datetime.timedelta(minutes=30)


def _holder() -> tuple[StateHolder, int]:
    with gr.Blocks() as demo:
        state = gr.State(0)
        gr.Textbox()
    demo.state_session_capacity = 1000
    holder = StateHolder()
    holder.set_blocks(demo)
    return holder, state._id


def test_idle_stateless_and_closed_sessions_go_and_open_tabs_with_state_stay():
    holder, state_id = _holder()
    for name in ("api-client", "closed-tab", "open-tab", "recent-client"):
        holder[name]  # noqa: B018 - creates the session as a request does
    holder["closed-tab"][state_id] = 5
    holder["closed-tab"].is_closed = True  # its heartbeat ended
    holder["open-tab"][state_id] = 7
    later = datetime.datetime.now() + IDLE + datetime.timedelta(minutes=1)
    holder.time_last_used["recent-client"] = later  # used just now, as seen from `later`
    assert sweep_idle_sessions(holder, IDLE, now=later) == 2
    assert set(holder.session_data) == {"open-tab", "recent-client"}
    assert set(holder.time_last_used) == {"open-tab", "recent-client"}
    assert holder["open-tab"][state_id] == 7  # the open tab kept its state


def test_a_soak_of_new_api_sessions_stays_bounded_by_the_sweep():
    holder, _ = _holder()
    later = datetime.datetime.now() + IDLE + datetime.timedelta(minutes=1)
    for round_ in range(5):  # five waves of 40 new clients, each wave idle by the time of the next sweep
        for index in range(40):
            holder[f"client-{round_}-{index}"]  # noqa: B018
        sweep_idle_sessions(holder, IDLE, now=later + datetime.timedelta(hours=round_))
        assert len(holder.session_data) == 0
