"""The step debugger: every scenario to its end, phases, undo, fork, edits, breakpoints."""

from __future__ import annotations

import json

import pytest

from flowdebug import protocols
from flowdebug.engine.execution.approval import Approve, Edit, Reject
from flowdebug.engine.execution.faults import parse_fault
from flowdebug.engine.session import scenarios
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.edits import EditError
from flowdebug.engine.session.session_state import Breakpoint
from flowdebug.engine.tracing.trace import sequence
from flowdebug.errors import UsageError
from flowdebug.views.encodings import encode_all
from tests.scenario_runs import ran

C, R, F, H = "tool_call", "result", "final_answer", "halt"

# (kind, tool, error_type) of every call, result, answer and halt, in order.
EXPECTED = {
    "weather": (
        "finished",
        [
            (C, "get_weather", None),
            (C, "get_weather", None),
            (R, "get_weather", None),
            (R, "get_weather", "timeout"),
            (F, None, None),
        ],
    ),
    "tasks": (
        "finished",
        [
            (C, "create_task", None),
            (R, "create_task", None),
            (C, "update_task", None),
            (R, "update_task", None),
            (C, "complete_task", None),
            (R, "complete_task", None),
            (C, "list_tasks", None),
            (R, "list_tasks", None),
            (F, None, None),
        ],
    ),
    "files": (
        "finished",
        [
            (C, "list_dir", None),
            (R, "list_dir", None),
            (C, "read_file", None),
            (C, "read_file", None),
            (R, "read_file", None),
            (R, "read_file", "permission"),
            (F, None, None),
        ],
    ),
    "unknown_tool": (
        "finished",
        [
            (C, "get_wether", None),
            (R, "get_wether", "unknown_tool"),
            (C, "get_weather", None),
            (R, "get_weather", None),
            (F, None, None),
        ],
    ),
    "schema_retry": (
        "finished",
        [
            (C, "get_weather", None),
            (R, "get_weather", "validation"),
            (C, "get_weather", None),
            (R, "get_weather", None),
            (F, None, None),
        ],
    ),
    "runaway": (
        "halted",
        [*[(k, "list_tasks", None) for _ in range(4) for k in (C, R)], (H, None, "round_cap")],
    ),
    "destructive": (
        "awaiting_approval",
        [(C, "create_task", None), (R, "create_task", None), (C, "delete_task", None)],
    ),
    "shell": ("awaiting_approval", [(C, "run_command", None)]),
    # The same cycle with the tools served by the sample MCP server over stdio.
    "mcp_weather": (
        "finished",
        [
            (C, "get_weather", None),
            (C, "get_weather", None),
            (R, "get_weather", None),
            (R, "get_weather", "timeout"),
            (F, None, None),
        ],
    ),
}
PHASES = {
    "user_message": "declaration",
    "discover": "declaration",
    "declare": "declaration",
    C: "request",
    "text": "request",
    F: "request",
    "answer": "request",
    "dispatch": "execution",
    R: "execution",
    "approval": "execution",
    "continuation": "continuation",
    H: "continuation",
}


def outline(session: Session) -> list[tuple]:
    return [(e.kind, e.tool, e.error_type) for e in session.state.events if e.kind in (C, R, F, H)]


def test_every_sample_scenario_has_an_expected_end():
    assert set(scenarios.names()) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_scenario_runs_to_its_expected_end(name):
    session = ran(name)
    status, expected = EXPECTED[name]
    assert session.state.status == status
    assert outline(session) == expected
    assert all(PHASES[e.kind] == e.phase for e in session.state.events)


@pytest.mark.parametrize("protocol", list(protocols.PROTOCOLS))
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_scenario_history_encodes_and_decodes_in_every_protocol(name, protocol):
    session = ran(name)
    conv = session.conversation
    codec = protocols.get(protocol)
    back = codec.decode_request(codec.encode_request(conv).value).value
    calls = [(c.name, c.arguments) for m in conv.messages for c in m.tool_calls]
    assert [(c.name, c.arguments) for m in back.messages for c in m.tool_calls] == calls
    results = [(r.is_error, r.text) for m in conv.messages for r in m.tool_results]
    assert [(r.is_error, r.text) for m in back.messages for r in m.tool_results] == results
    arrows = sequence(session.state.events, protocol)
    assert [a.error for a in arrows if a.kind == R] == [
        e is not None for k, _, e in EXPECTED[name][1] if k == R
    ]
    payloads = encode_all(conv, [protocol], stream=False)[protocol]
    pending = conv.messages[-1].role != "assistant"  # halted: the request not sent is shown
    assert len(payloads) == 2 * sum(m.role == "assistant" for m in conv.messages) + pending


def test_weather_steps_one_phase_at_a_time():
    session = Session.from_scenario("weather")
    phases = []
    while not session.done:
        phases.append(session.state.next_phase)
        session.step()
    assert phases == ["declaration", "request", "execution", "continuation", "request"]
    assert session.conversation.messages[-1].text.startswith("Paris is 18 degrees C")
    tokyo = session.conversation.messages[2].tool_results[1]
    assert tokyo.is_error and tokyo.error_type == "timeout"


def test_only_steps_that_run_no_tool_and_call_no_remote_model_are_local():
    """The app runs a local Step in the page's own thread; the others in a background job."""
    session = Session.from_scenario("weather")
    local = []
    while not session.done:
        local.append((session.state.next_phase, session.next_step_is_local()))
        session.step()
    assert local == [
        ("declaration", True),
        ("request", True),  # the scripted player answers from memory
        ("execution", False),  # the tools run
        ("continuation", True),
        ("request", True),
    ]
    assert not session.next_step_is_local()  # over: nothing to step

    class Remote:  # a player that says nothing about itself is taken to wait on a network
        name = "remote"

        def respond(self, conv):
            raise AssertionError("not called")

    session = Session.from_scenario("weather")
    session.step()
    session.player = Remote()  # type: ignore[assignment]
    assert session.state.next_phase == "request" and not session.next_step_is_local()


def test_a_destructive_call_waiting_for_approval_is_not_a_local_step():
    session = Session.from_scenario("destructive")
    session.run()
    assert session.state.status == "awaiting_approval"
    assert not session.next_step_is_local()


def test_step_turn_runs_a_whole_model_turn_with_its_execution():
    session = Session.from_scenario("weather")
    first = session.step_turn()
    assert [e.kind for e in first if e.kind in (C, R)] == [C, C, R, R]
    assert first[-1].kind == "continuation"
    second = session.step_turn()
    assert [e.kind for e in second] == [F, "answer"]
    assert session.done


def test_step_after_the_end_is_refused_and_changes_nothing():
    session = Session.from_scenario("unknown_tool")
    session.run()
    before = session.state.model_dump_json()
    with pytest.raises(UsageError, match="session is over"):
        session.step()
    assert session.state.model_dump_json() == before


def test_undo_returns_to_the_exact_earlier_state():
    session = Session.from_scenario("tasks")
    session.step_turn()
    mid = session.state.model_dump_json()
    mid_tasks = json.dumps(session.state.tool_state)
    session.run()
    assert session.done
    session.undo_to(4)
    assert session.state.model_dump_json() == mid
    assert json.dumps(session.state.tool_state) == mid_tasks
    session.undo()
    assert session.state.step == 3
    assert session.state.next_phase == "continuation"


def test_undo_then_run_replays_deterministically():
    session = Session.from_scenario("tasks")
    session.run()
    final = session.conversation.model_dump_json()
    session.undo_to(0)
    assert session.state.step == 0 and session.state.tool_state == {}
    session.run()
    assert session.conversation.model_dump_json() == final


def test_undo_keeps_the_last_steps_and_the_start(monkeypatch):
    import flowdebug.engine.session.debugger as debugger

    monkeypatch.setattr(debugger, "UNDO_LIMIT", 3)
    session = Session.from_scenario("tasks")
    for _ in range(6):
        session.step()
    assert [s.step for s in session.undo_stack] == [0, 3, 4, 5]  # the start, the last three
    session.undo(3)
    assert session.state.step == 3
    session.undo()
    assert session.state.step == 0 and session.state.tool_state == {}  # older steps: the start
    for _ in range(6):
        session.step()
    session.undo_to(0)
    assert session.state.step == 0 and not session.undo_stack


def test_undo_with_nothing_to_undo_is_a_clear_error():
    with pytest.raises(UsageError, match="nothing to undo"):
        Session.from_scenario("weather").undo()


def test_fork_keeps_history_up_to_the_message_and_diverges_independently():
    session = Session.from_scenario("tasks")
    session.run()
    fork = session.fork(2)  # user, create_task call, its result
    assert [m.role for m in fork.conversation.messages] == ["user", "assistant", "tool"]
    assert fork.state.next_phase == "request" and fork.state.status == "ready"
    assert fork.state.id != session.state.id
    fork.edit_part(
        2,
        0,
        {
            "kind": "tool_result",
            "call_id": "call_1",
            "name": "create_task",
            "content": '{"id": "T-9", "title": "Buy milk"}',
        },
    )
    # the edited result has not been sent: it goes back first, then the model reads it
    assert fork.state.next_phase == "continuation"
    fork.step()
    fork.step()
    update = fork.conversation.messages[3].tool_calls[0]
    assert update.arguments["task_id"] == "T-9"
    original = session.conversation.messages[3].tool_calls[0]
    assert original.arguments["task_id"] == "T-1"
    assert [e.kind for e in fork.state.events][:3] == ["user_message", "discover", "declare"]


def test_edit_part_with_valid_json_changes_what_the_model_sees_next():
    session = Session.from_scenario("weather")
    session.step()
    session.step()
    session.step()  # executed: results in messages[2]
    session.edit_part(
        2,
        1,
        json.dumps(
            {
                "kind": "tool_result",
                "call_id": "call_2",
                "name": "get_weather",
                "content": "22 degrees",
            }
        ),
    )
    assert session.conversation.messages[2].tool_results[1].text == "22 degrees"
    assert not session.conversation.messages[2].tool_results[1].is_error
    session.undo()
    assert session.conversation.messages[2].tool_results[1].is_error


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ('{"kind": "tool_result", "call_id": ', "not valid JSON"),
        ('{"kind": "tool_result"}', "messages[2].parts[0].call_id: Field required"),
        ('{"kind": "tool_call", "id": "x", "name": "y"}', "belongs in an assistant message"),
        ('{"kind": "nonsense"}', "messages[2].parts[0]"),
        ('{"kind": "tool_result", "call_id": "a", "is_error": "maybe"}', "is_error"),
    ],
)
def test_invalid_edit_is_refused_with_the_reason_and_the_session_is_byte_identical(data, reason):
    session = Session.from_scenario("weather")
    session.run()
    before = session.state.model_dump_json()
    undo_depth = len(session.undo_stack)
    with pytest.raises(EditError) as err:
        session.edit_part(2, 0, data)
    assert reason in str(err.value)
    assert session.state.model_dump_json() == before
    assert len(session.undo_stack) == undo_depth


def test_edit_message_insert_and_delete_are_validated_and_undoable():
    session = Session.from_scenario("weather")
    session.run()
    n = len(session.conversation.messages)
    session.insert_message(n, {"role": "user", "parts": [{"kind": "text", "text": "And Rome?"}]})
    assert session.state.status == "ready" and session.state.next_phase == "request"
    session.delete_message(n)
    assert len(session.conversation.messages) == n
    with pytest.raises(EditError, match="only tool_result"):
        session.edit_message(2, {"role": "tool", "parts": [{"kind": "text", "text": "x"}]})
    with pytest.raises(EditError, match="no message 99"):
        session.delete_message(99)
    session.undo(2)
    assert len(session.conversation.messages) == n


def test_destructive_call_waits_then_runs_on_approve():
    session = Session.from_scenario("destructive")
    assert session.run().startswith("waiting for approval: delete_task")
    with pytest.raises(UsageError, match="approve, edit or reject"):
        session.step()
    session.decide("call_2", Approve())
    session.run()
    assert session.state.status == "finished"
    assert session.state.tool_state["tasks"]["items"] == {}
    assert [e.kind for e in session.state.events].count("approval") == 1


def test_destructive_call_rejected_becomes_a_permission_error_result():
    session = Session.from_scenario("destructive")
    session.run()
    session.decide("call_2", Reject(reason="keep it"))
    session.run()
    result = session.conversation.messages[4].tool_results[0]
    assert result.is_error and result.error_type == "permission"
    assert "keep it" in result.text
    assert "T-1" in session.state.tool_state["tasks"]["items"]


def test_destructive_call_edited_runs_with_the_new_arguments():
    session = Session.from_scenario("destructive")
    session.run()
    session.decide("call_2", Edit(arguments={"task_id": "T-404"}))
    session.run()
    result = session.conversation.messages[4].tool_results[0]
    assert result.is_error and "T-404" in result.text
    # the model's turn now asks for what was run, so the result answers the call it sees
    [call] = session.conversation.messages[3].tool_calls
    assert (call.id, call.arguments) == ("call_2", {"task_id": "T-404"})
    # the graph keeps what the model asked and what was sent
    labels = [e.label for e in session.state.events if e.call_id == "call_2"]
    assert labels[0] == 'delete_task(task_id="T-1")'
    assert 'delete_task(task_id="T-404") (edited)' in labels


def test_breakpoint_before_a_tool_stops_run_once():
    session = Session.from_scenario("tasks")
    session.set_breakpoints([Breakpoint(kind="tool", tool="complete_task")])
    why = session.run()
    assert why == "breakpoint: before complete_task runs"
    assert session.state.next_phase == "execution"
    assert session.conversation.messages[-1].tool_calls[0].name == "complete_task"
    session.run()
    assert session.state.status == "finished"


def test_breakpoint_on_error_stops_after_the_failing_execution():
    session = Session.from_scenario("schema_retry")
    session.set_breakpoints([Breakpoint(kind="error")])
    assert session.run() == "breakpoint: after an error result"
    assert session.state.events[-1].error_type == "validation"
    session.run()
    assert session.state.status == "finished"


def test_breakpoint_at_a_round():
    session = Session.from_scenario("runaway")
    session.set_breakpoints([Breakpoint(kind="round", round=3)])
    assert session.run() == "breakpoint: at round 3"
    assert session.state.round == 3


def test_player_failure_leaves_the_session_unchanged():
    session = Session.from_scenario("weather")
    session.run()
    session.insert_message(4, {"role": "user", "parts": [{"kind": "text", "text": "More?"}]})
    before = session.state.model_dump_json()
    with pytest.raises(Exception, match="all have been played"):
        session.step()
    assert session.state.model_dump_json() == before


def test_faults_apply_through_the_session():
    session = Session.from_scenario("weather")
    session.set_faults([parse_fault("drop_result@#2")])
    session.run()
    tool_message = session.conversation.messages[2]
    assert [r.call_id for r in tool_message.tool_results] == ["call_1"]


def test_session_state_round_trips_through_json():
    from flowdebug.engine.session.session_state import SessionState

    session = Session.from_scenario("destructive")
    session.run()
    data = session.state.model_dump_json()
    restored = SessionState.model_validate_json(data)
    assert restored.model_dump_json() == data
    again = Session(restored, scenarios.load("destructive").player())
    again.decide("call_2", Approve())
    again.run()
    assert again.state.status == "finished"


def test_every_change_is_reported_for_saving_and_a_failed_step_is_not():
    saved = []
    session = Session.from_scenario("weather")
    session.on_change = lambda state: saved.append((state.step, state.status))
    session.step()
    session.undo()
    session.run()
    assert saved[:2] == [(1, "ready"), (0, "ready")]
    assert saved[-1] == (5, "finished")
    count = len(saved)
    with pytest.raises(UsageError):
        session.step()
    session.edit_part(0, 0, {"kind": "text", "text": "Weather in Rome?"})
    assert len(saved) == count + 1


def test_run_with_the_manual_player_stops_where_the_person_must_write_the_turn():
    from flowdebug.players.manual import ManualPlayer

    session = Session(Session.from_scenario("weather").state, ManualPlayer())
    why = session.run()
    assert why == "your turn: write the model's next turn, then Step or Run"
    assert session.state.next_phase == "request" and session.state.step == 1


def test_a_final_answer_is_explained_as_one():
    from flowdebug.views.debugger import explain

    text, fields = explain("request", ["anthropic", "openai-chat"], final=True)
    assert "final answer" in text and "end_turn" in fields["anthropic"]
    assert "tool_use" in explain("request", ["anthropic"])[1]["anthropic"]
