"""The offline model that reads the request (players/reading.py) and its score
(players/similarity.py), shared with the keyword rule of the offline A/B."""

from __future__ import annotations

import math

from flowdebug.engine.execution.canned_handlers import FixedHandler
from flowdebug.engine.execution.handlers import ToolEntry, Toolset
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.player_choice import (
    PlayerChoice,
    default_kind,
    default_player,
    make_player,
)
from flowdebug.engine.session.session_state import SessionState
from flowdebug.model import Conversation, Message, Text, Tool, ToolChoice, ToolResult
from flowdebug.players.keyword import KeywordPlayer, KeywordRule
from flowdebug.players.reading import ReadingPlayer, fill_arguments
from flowdebug.players.similarity import THRESHOLD, score_tools, stem, words

FLIGHT_PARAMS = {
    "type": "object",
    "properties": {
        "origin": {"type": "string"},
        "destination": {"type": "string"},
        "date": {"type": "string"},
    },
    "required": ["origin", "destination", "date"],
}
VAGUE = Tool(name="search_flights", description="Searches stuff", parameters=FLIGHT_PARAMS)
PRECISE = VAGUE.model_copy(
    update={
        "description": "Find airline tickets to fly between two cities: plane fares and "
        "departure times for a trip on a given day."
    }
)
WEATHER = Tool(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "the city"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
            "days": {"type": "integer"},
        },
        "required": ["location"],
    },
)


def _conv(text: str, *tools: Tool, **kw) -> Conversation:
    return Conversation(
        tools=list(tools), messages=[Message(role="user", parts=[Text(text=text)])], **kw
    )


def _parts(conv: Conversation):
    return ReadingPlayer().respond(conv).response.message.parts


def test_a_session_of_your_own_plays_the_offline_model_which_calls_your_tool_from_the_prompt():
    conv = _conv("Find flights from Paris to Tokyo on 2026-12-01", VAGUE)
    entry = ToolEntry(tool=VAGUE, handler=FixedHandler(result={"flights": ["AF276"]}))
    state = SessionState(conversation=conv, toolset=Toolset(entries=[entry]))
    assert default_kind(None) == "offline" and default_kind("weather") == "scripted"
    session = Session(state, default_player(state.scenario))
    assert session.player.name == "offline"
    session.step()  # declaration
    session.step()  # the model's turn
    turn = session.state.conversation.messages[-1]
    assert turn.role == "assistant" and turn.text == ""
    [call] = turn.tool_calls
    assert call.name == "search_flights"
    assert call.arguments == {"origin": "Paris", "destination": "Tokyo", "date": "2026-12-01"}
    while session.state.status != "finished":  # execution, continuation, the answer
        session.step()
    last = session.state.conversation.messages[-1]
    assert last.role == "assistant" and last.tool_calls == []
    assert last.text == 'Here is what I found. search_flights: {"flights": ["AF276"]}'


def test_make_player_builds_the_offline_model_and_scenarios_keep_their_scripts():
    assert isinstance(make_player(PlayerChoice(kind="offline"), None), ReadingPlayer)
    assert default_player("weather").name != "offline"


def test_a_vague_and_a_precise_description_get_different_choices_over_phrasings():
    phrasings = [
        "I need to fly from Paris to Tokyo on 2026-12-01",
        "Any plane tickets from Paris to Tokyo?",
        "What are the fares for a trip from Lyon to Oslo on 2026-12-03?",
        "Book me an airline seat from Rome to Madrid",
        "Find flights from Paris to Tokyo on 2026-12-01",
    ]

    def chosen(tool: Tool) -> list[str]:
        out = []
        for text in phrasings:
            calls = [p for p in _parts(_conv(text, tool, WEATHER)) if p.kind == "tool_call"]
            out.append(calls[0].name if calls else "(text)")
        return out

    assert chosen(VAGUE) == ["(text)", "(text)", "(text)", "(text)", "search_flights"]
    assert chosen(PRECISE) == ["search_flights"] * 5


def test_no_tool_that_matches_well_enough_gets_a_text_answer_with_the_best_score():
    [part] = _parts(_conv("Tell me a joke about Paris", VAGUE, WEATHER))
    assert part.kind == "text"
    assert part.text == (
        "No tool matches this request well enough: the best is search_flights "
        f"(score 0, words none; a call needs {THRESHOLD:g})."
    )


def test_the_turn_says_which_required_arguments_it_could_not_find():
    text, call = _parts(_conv("search flights to Tokyo", VAGUE))
    assert text.text == "I could not find origin, date in the request."
    assert call.arguments == {"destination": "Tokyo"}
    text, call = _parts(_conv("search flights please", VAGUE))
    assert text.text == "I found no arguments for search_flights in the request."
    assert call.arguments == {}


def test_enums_numbers_defaults_and_multi_word_names_are_filled_from_the_schema():
    filled = fill_arguments("Weather in New York for 3 days in fahrenheit", WEATHER)
    assert filled.arguments == {"location": "New York", "unit": "fahrenheit", "days": 3}
    filled = fill_arguments('What is the weather in "São Paulo"?', WEATHER)
    assert filled.arguments == {"location": "São Paulo", "unit": "celsius"}
    assert filled.missing == []


def test_tool_choice_is_obeyed():
    required = _conv("Tell me a joke", VAGUE, tool_choice=ToolChoice(mode="required"))
    assert [p.kind for p in _parts(required)] == ["text", "tool_call"]
    none = _conv("Find flights from Paris", VAGUE, tool_choice=ToolChoice(mode="none"))
    assert [p.kind for p in _parts(none)] == ["text"]
    named = _conv(
        "Find flights from Paris",
        VAGUE,
        WEATHER,
        tool_choice=ToolChoice(mode="tool", name="get_weather"),
    )
    assert [p.name for p in _parts(named) if p.kind == "tool_call"] == ["get_weather"]


def test_an_error_result_is_summed_up_as_a_failure():
    conv = _conv("Weather in Oslo", WEATHER)
    call = _parts(conv)[0]
    conv = conv.model_copy(
        update={
            "messages": [
                *conv.messages,
                Message(role="assistant", parts=[call]),
                Message(
                    role="tool",
                    parts=[ToolResult(call_id=call.id, content="timed out", is_error=True)],
                ),
            ]
        }
    )
    assert _parts(conv)[0].text == "Here is what I found. get_weather failed: timed out"


def test_the_score_stems_splits_names_and_weighs_rare_words_more():
    assert [stem(w) for w in ("flights", "searches", "searching", "cities", "class")] == [
        "flight",
        "search",
        "search",
        "city",
        "class",
    ]
    assert words("searchFlights get_weather on 2026") == ["search", "flight", "weather"]
    one = score_tools("flight", [VAGUE])[0]
    assert one.score == 2.079 and one.matched == ("flight",)  # name weight 3 * ln 2
    # "weather" in both descriptions is worth less than "flight", in one tool's name only.
    both = VAGUE.model_copy(update={"description": "Flights, whatever the weather."})
    scores = {s.tool: s.score for s in score_tools("flight weather", [both, WEATHER])}
    ln2, ln3 = math.log(2), math.log(3)
    assert scores == {
        "search_flights": round(3 * ln3 + 2 * ln2, 3),  # flight: name, 1 of 2 tools
        "get_weather": round(3 * ln2, 3),  # weather: name, 2 of 2 tools
    }


def test_the_keyword_rule_of_the_offline_ab_uses_the_same_score():
    rule = KeywordRule(tool="search_flights", word="flights", arguments={"origin": "Paris"})
    stemmed = VAGUE.model_copy(update={"description": "Find a flight."})
    calls = KeywordPlayer([rule]).respond(_conv("go", stemmed)).response.message.tool_calls
    assert [c.arguments for c in calls] == [{"origin": "Paris"}]
    # The tool's name holds the word, its description does not: the A/B judges descriptions.
    assert KeywordPlayer([rule]).respond(_conv("go", VAGUE)).response.message.tool_calls == []
