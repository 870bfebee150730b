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


def test_a_turn_says_its_fallback_when_its_text_cannot_be_filled():
    from flowdebug.debugger import Session
    from flowdebug.faults import parse_fault

    s = Session.from_scenario("weather")
    s.set_faults([parse_fault("timeout")])  # neither city answers: no temperature to quote
    s.run()
    answer = s.conversation.messages[-1].text
    assert answer == (
        "I couldn't get the weather. Paris: timeout after 1s. Tokyo: timeout after 1s."
    )
    # executed faults reach the tool: drawn as a call and a red result, not a refusal
    kinds = [(e.kind, e.source, e.error) for e in s.state.events if e.phase == "execution"]
    assert kinds == [("dispatch", "runtime", False)] * 2 + [("result", "tool", True)] * 2


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
