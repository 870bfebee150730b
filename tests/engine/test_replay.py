"""Replaying a history rebuilds the trace the debugger would have drawn for it."""

from __future__ import annotations

import pytest

from flowdebug.engine.session.debugger import Session
from flowdebug.engine.tracing.replay import replay
from flowdebug.engine.tracing.trace import sequence
from flowdebug.model import (
    Conversation,
    HostedCall,
    HostedResult,
    Message,
    Text,
    ToolCall,
    ToolResult,
)


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


def _kinds(state):
    return [e.kind for e in state.events]


def test_deleting_the_final_answer_takes_its_arrows_away():
    s = Session.from_scenario("weather")
    s.run()
    recorded = list(s.state.events)
    s.delete_message(len(s.conversation.messages) - 1)
    # everything up to the results going back is kept exactly as it was recorded
    assert s.state.events == recorded[:-2]
    assert s.state.next_phase == "request" and s.state.status == "ready"
    s.step()
    assert _kinds(s.state).count("final_answer") == 1
    assert [e.seq for e in s.state.events] == list(range(len(s.state.events)))


def test_an_edited_result_is_redrawn_with_everything_after_it():
    s = Session.from_scenario("weather")
    s.run()
    recorded = list(s.state.events)
    tokyo = {"kind": "tool_result", "call_id": "call_2", "name": "get_weather", "content": "9"}
    s.edit_part(2, 1, tokyo)
    assert s.state.events[:5] == recorded[:5]  # declaration and calls, with their timings
    assert _kinds(s.state) == _kinds_of(recorded)
    results = [e for e in s.state.events if e.kind == "result"]
    assert [(r.label, r.error) for r in results][1] == ("9", False)
    assert all(e.duration_ms is None for e in s.state.events[5:])  # redrawn, not re-run
    assert [e.step for e in s.state.events[5:]] == [3, 3, 3, 3, 4, 5, 5]  # steps renumbered on
    assert s.state.status == "finished" and s.state.round == 2


def test_an_edited_result_at_the_end_goes_back_to_the_model_again():
    s = Session.from_scenario("weather")
    for _ in range(4):
        s.step()  # the results have gone back; the model has not answered yet
    tokyo = {"kind": "tool_result", "call_id": "call_2", "name": "get_weather", "content": "9"}
    s.edit_part(2, 1, tokyo)
    assert _kinds(s.state)[-1] == "result"
    assert s.state.next_phase == "continuation" and s.state.round == 1
    s.step()
    assert s.state.events[-1].kind == "continuation" and s.state.round == 2


def _kinds_of(events):
    return [e.kind for e in events]


def test_a_follow_up_question_is_drawn_and_the_model_asked_again():
    s = Session.from_scenario("weather")
    s.run()
    recorded = list(s.state.events)
    n = len(s.conversation.messages)
    s.insert_message(n, {"role": "user", "parts": [{"kind": "text", "text": "And Rome?"}]})
    assert s.state.events[:-1] == recorded
    assert (s.state.events[-1].kind, s.state.events[-1].label) == ("user_message", "And Rome?")
    assert s.state.next_phase == "request" and s.state.status == "ready"


def test_changes_that_leave_the_history_alone_keep_the_trace():
    s = Session.from_scenario("weather")
    s.run()
    recorded = list(s.state.events)
    s.set_faults([])
    assert s.state.events == recorded


def test_a_fork_keeps_the_recorded_head_of_the_trace():
    s = Session.from_scenario("weather")
    s.run()
    fork = s.fork(2)  # user, calls, results (already sent back)
    assert fork.state.events == [e for e in s.state.events if e.messages <= 3]
    assert fork.state.events[-1].kind == "continuation"
    assert fork.state.next_phase == "request"


def test_events_recorded_without_message_counts_are_redrawn_after_an_edit():
    s = Session.from_scenario("weather")
    s.run()
    legacy = [e.model_copy(update={"messages": None}) for e in s.state.events]
    s.state.events = legacy
    s.delete_message(len(s.conversation.messages) - 1)
    assert _essence(s.state.events) == _essence(replay(s.conversation).events)


HOSTED = Conversation(
    messages=[
        Message(role="user", parts=[Text(text="What is new in Paris today?")]),
        Message(
            role="assistant",
            parts=[
                HostedCall(id="srvtoolu_1", name="web_search", arguments={"query": "Paris news"}),
                HostedResult(call_id="srvtoolu_1", name="web_search", content="3 results"),
                Text(text="Here is what happened in Paris."),
            ],
        ),
    ]
)


def test_hosted_calls_are_drawn_as_notes_on_the_model_lane_in_each_vendors_terms():
    events = replay(HOSTED).events
    hosted = [e for e in events if e.kind in ("hosted_call", "hosted_result")]
    assert [(e.kind, e.source, e.target, e.call_id) for e in hosted] == [
        ("hosted_call", "model", "model", "srvtoolu_1"),
        ("hosted_result", "model", "model", "srvtoolu_1"),
    ]
    assert hosted[0].label == 'web_search(query="Paris news")'
    # the turn still ends in its answer: the runtime ran nothing
    assert [e.kind for e in events][-2:] == ["final_answer", "answer"]
    assert not [e for e in events if e.kind in ("dispatch", "result")]

    labels = {
        p: [a.label for a in sequence(events, p) if a.kind == "hosted_call"]
        for p in ("anthropic", "openai-responses", "openai-chat")
    }
    assert labels["anthropic"] == ['server_tool_use · web_search(query="Paris news")']
    assert labels["openai-responses"] == ['web_search_call · web_search(query="Paris news")']
    assert labels["openai-chat"] == ['hosted tool (not carried) · web_search(query="Paris news")']
    results = [a.label for a in sequence(events, "anthropic") if a.kind == "hosted_result"]
    assert results == ["web_search_tool_result · 3 results"]


def test_a_hosted_call_renders_in_every_format():
    from flowdebug.engine.tracing.trace import lanes
    from flowdebug.render import to_dot, to_mermaid

    arrows = sequence(replay(HOSTED).events, "anthropic")
    assert "server_tool_use" in to_dot(arrows, lanes("anthropic"), "t")
    assert "server_tool_use" in to_mermaid(arrows, lanes("anthropic"), "t")
