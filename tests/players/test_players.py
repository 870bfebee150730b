"""Offline players: the scripted model's references and the manual player."""

from __future__ import annotations

import pytest

from flowdebug.errors import UsageError
from flowdebug.model import Conversation, Message, Text, ToolCall, ToolResult
from flowdebug.players import ManualPlayer, ScriptedPlayer, ScriptedTurn
from flowdebug.players.scripted import ScriptError, resolve

RESULTS = [{"id": "T-1", "tags": ["a", "b"]}, "plain text"]


def test_a_whole_reference_keeps_the_values_type():
    assert resolve("{{results[0].tags}}", RESULTS) == ["a", "b"]
    assert resolve({"id": "{{results[-2].id}}"}, RESULTS) == {"id": "T-1"}


def test_references_inside_text_are_formatted():
    assert (
        resolve("task {{results[0].id}} / {{results[1]}} / {{results[0].tags[1]}}", RESULTS)
        == "task T-1 / plain text / b"
    )


def test_a_reference_the_results_lack_becomes_a_visible_placeholder():
    assert resolve("{{results[0].missing}}", RESULTS) == "<results[0].missing unavailable>"
    assert resolve("x {{results[5]}}", RESULTS) == "x <results[5] unavailable>"


def test_the_answer_is_written_from_the_results_when_they_are_not_the_expected_ones():
    from flowdebug.engine.execution.faults import parse_fault
    from flowdebug.engine.session.debugger import Session

    s = Session.from_scenario("weather")
    s.set_faults([parse_fault("timeout")])  # neither city answers: no temperature to quote
    s.run()
    answer = s.conversation.messages[-1].text
    assert answer == (
        "get_weather(Paris, c) failed: timeout after 1s. "
        "get_weather(Tokyo, c) failed: timeout after 1s."
    )
    # executed faults reach the tool: drawn as a call and a red result, not a refusal
    kinds = [(e.kind, e.source, e.error) for e in s.state.events if e.phase == "execution"]
    assert kinds == [("dispatch", "runtime", False)] * 2 + [("result", "tool", True)] * 2


def test_the_weather_answer_keeps_its_scripted_words_for_the_expected_results():
    from flowdebug.engine.session.debugger import Session

    s = Session.from_scenario("weather")
    s.run()
    answer = s.conversation.messages[-1].text
    assert answer.startswith("Paris is ") and "I couldn't get the weather for Tokyo" in answer


def test_a_tokyo_result_edited_to_a_success_is_reported_by_the_scripted_answer():
    from flowdebug.engine.session.debugger import Session

    s = Session.from_scenario("weather")
    while not any(m.role == "tool" for m in s.conversation.messages):
        s.step()
    tool_msg = next(i for i, m in enumerate(s.conversation.messages) if m.role == "tool")
    tokyo = s.conversation.messages[tool_msg].parts[1]
    edited = tokyo.model_dump(mode="json") | {
        "content": '{"temperature": 24, "conditions": "clear"}',
        "is_error": False,
        "error_type": None,
    }
    s.edit_part(tool_msg, 1, edited)
    s.run()
    answer = s.conversation.messages[-1].text
    assert "couldn't" not in answer
    assert "get_weather(Tokyo, c): temperature 24, conditions clear." in answer
    assert "get_weather(Paris, c): location Paris, temperature 18" in answer


def test_a_dropped_result_is_said_to_be_missing_not_a_placeholder():
    from flowdebug.engine.execution.faults import parse_fault
    from flowdebug.engine.session.debugger import Session

    s = Session.from_scenario("weather")
    s.set_faults([parse_fault("drop_result@#1")])
    s.run()
    answer = s.conversation.messages[-1].text
    assert "unavailable" not in answer and "<" not in answer
    assert "I got no result for get_weather(Paris, c)." in answer


def _conv(*messages: Message) -> Conversation:
    return Conversation(messages=[Message(role="user", parts=[Text(text="hi")]), *messages])


def test_scripted_player_numbers_calls_and_reads_earlier_results():
    player = ScriptedPlayer(
        [
            ScriptedTurn.model_validate({"calls": [{"name": "a"}, {"name": "b"}]}),
            ScriptedTurn.model_validate({"text": "got {{results[-1].v}}"}),
        ]
    )
    first = player.respond(_conv()).response
    assert [c.id for c in first.message.tool_calls] == ["call_1", "call_2"]
    assert first.stop_reason == "tool_use"
    results = Message(
        role="tool",
        parts=[
            ToolResult(call_id="call_1", content='{"v": 1}'),
            ToolResult(call_id="call_2", content='{"v": 2}'),
        ],
    )
    second = player.respond(_conv(first.message, results)).response
    assert second.message.text == "got 2" and second.stop_reason == "end_turn"
    with pytest.raises(ScriptError, match="all have been played"):
        player.respond(_conv(first.message, results, second.message))


def test_manual_player_plays_the_turn_the_person_wrote_once():
    player = ManualPlayer()
    with pytest.raises(UsageError, match="write the model's turn first"):
        player.respond(_conv())
    turn = Message(
        role="assistant",
        parts=[ToolCall(id="m1", name="get_weather", arguments={"location": "Oslo"})],
    )
    player.write(turn)
    assert player.respond(_conv()).response.message == turn
    with pytest.raises(UsageError):
        player.respond(_conv())
    with pytest.raises(UsageError, match="assistant"):
        player.write(Message(role="user", parts=[Text(text="x")]))
