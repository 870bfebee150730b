"""Replaying a history rebuilds the trace the debugger would have drawn for it."""

from __future__ import annotations

import pytest

from flowdebug.debugger import Session
from flowdebug.model import Conversation, Message, Text, ToolCall, ToolResult
from flowdebug.replay import replay


def _essence(events):
    return [
        (e.step, e.round, e.phase, e.kind, e.source, e.target, e.label, e.call_id, e.error)
        for e in events
    ]


@pytest.mark.parametrize("name", ["weather", "tasks", "files", "schema_retry", "unknown_tool"])
def test_a_stepped_scenario_replays_to_the_same_arrows(name):
    session = Session.from_scenario(name)
    session.run()
    state = session.state
    assert state.status == "finished"
    past = replay(state.conversation)
    live = [e for e in state.events if e.kind not in ("approval", "halt")]
    assert _essence(past.events) == _essence(live)
    assert (past.step, past.round) == (state.step, state.round)


def test_a_history_without_a_model_turn_replays_to_nothing():
    conv = Conversation(messages=[Message(role="user", parts=[Text(text="hi")])])
    assert replay(conv).events == []
    assert (replay(conv).step, replay(conv).round) == (0, 0)


def test_results_followed_by_user_text_are_sent_back_before_the_next_turn():
    # Anthropic puts text after the tool_result blocks of the same user turn.
    call = ToolCall(id="c1", name="get_weather", arguments={"location": "Paris"})
    conv = Conversation(
        messages=[
            Message(role="user", parts=[Text(text="Paris?")]),
            Message(role="assistant", parts=[call]),
            Message(role="tool", parts=[ToolResult(call_id="c1", content="18")]),
            Message(role="user", parts=[Text(text="and in F?")]),
            Message(role="assistant", parts=[Text(text="64 F")]),
        ]
    )
    kinds = [(e.kind, e.round) for e in replay(conv).events]
    assert kinds == [
        ("user_message", 1),
        ("discover", 1),
        ("declare", 1),
        ("tool_call", 1),
        ("dispatch", 1),
        ("result", 1),
        ("user_message", 1),
        ("continuation", 2),
        ("final_answer", 2),
        ("answer", 2),
    ]


def test_an_error_result_without_an_error_type_is_labelled_as_an_error():
    call = ToolCall(id="c1", name="get_weather", arguments={})
    conv = Conversation(
        messages=[
            Message(role="assistant", parts=[call]),
            Message(
                role="tool",
                parts=[ToolResult(call_id="c1", name="get_weather", content="boom", is_error=True)],
            ),
        ]
    )
    result = next(e for e in replay(conv).events if e.kind == "result")
    assert (result.label, result.error) == ("error: boom", True)
