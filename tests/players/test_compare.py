"""Side-by-side comparison and description A/B tests, driven through the emulator."""

from __future__ import annotations

import threading

import pytest

from flowdebug.emulator.server import Emulator
from flowdebug.errors import UsageError
from flowdebug.model import Message, ModelResponse, ToolCall
from flowdebug.players.base import PlayerTurn
from flowdebug.players.keyword import KeywordPlayer, KeywordRule
from flowdebug.players.live.player import live_player
from flowdebug.players.scripted import ScriptedCall, ScriptedPlayer, ScriptedTurn
from flowdebug.views.compare import (
    NO_TOOL,
    ToolVariant,
    ab_test,
    apply_variant,
    check_calls,
    compare,
)
from tests import cases

LIVE = ["anthropic", "openai-chat", "openai-responses", "gemini"]
WEATHER = [
    ("get_weather", {"location": "Paris", "unit": "c"}),
    ("get_weather", {"location": "Tokyo", "unit": "c"}),
]


@pytest.fixture(scope="module")
def keyword_emulator():
    """Calls get_weather only when its description mentions "weather"."""
    rule = KeywordRule(tool="get_weather", word="weather", arguments={"location": "Paris"})
    with Emulator(KeywordPlayer([rule])) as emu:
        yield emu


def scripted(*calls: tuple[str, dict]) -> ScriptedPlayer:
    turn = ScriptedTurn(calls=[ScriptedCall(name=n, arguments=a) for n, a in calls])
    return ScriptedPlayer([turn], repeat_last=True)


def test_compare_sends_one_history_to_every_player_and_reports_each(emulator):
    players = [
        live_player(p, base_url=emulator.base_url(p), api_key="k", stream=p == "gemini")
        for p in LIVE
    ]
    players.append(scripted(("get_weather", {"location": "Paris", "unit": "kelvin"})))
    players.append(
        live_player(
            "anthropic", base_url=emulator.base_url("anthropic"), api_key="k", model="error-404"
        )
    )

    rows = compare(cases.WEATHER_INITIAL, players)

    assert [r.player for r in rows] == [
        "anthropic:claude-sonnet-4-6",
        "openai-chat:gpt-4.1",
        "openai-responses:gpt-4.1",
        "gemini:gemini-2.5-flash",
        "scripted",
        "anthropic:error-404",
    ]
    for row in rows[:4]:
        assert [(c.name, c.arguments) for c in row.calls] == WEATHER
        assert row.valid is True and row.error is None
        assert row.turn.exchange.status == 200 and row.elapsed_ms > 0
    bad = rows[4]
    assert bad.valid is False
    assert bad.calls[0].errors == ["arguments.unit: 'kelvin' is not one of ['c', 'f']"]
    failed = rows[5]
    assert failed.chosen == [] and failed.valid is None
    assert "returned 404" in failed.error and "check the model name" in failed.error
    summary = rows[4].summary()
    assert summary["chosen"] == "get_weather" and summary["valid"] is False
    assert "kelvin" in summary["problems"]


def test_compare_runs_the_players_concurrently():
    barrier = threading.Barrier(3, timeout=5)

    class Waits:
        name = "waits"

        def respond(self, conv):
            barrier.wait()  # only passes when all three players are asking at once
            return scripted(("get_weather", {"location": "Oslo"})).respond(conv)

    rows = compare(cases.WEATHER_INITIAL, [Waits(), Waits(), Waits()])
    assert [r.error for r in rows] == [None, None, None]


def test_a_text_answer_is_tallied_as_no_tool(emulator):
    (row,) = compare(
        cases.WEATHER_CONTINUATION,
        [live_player("openai-chat", base_url=emulator.base_url("openai-chat"), api_key="k")],
    )
    assert row.chosen == [NO_TOOL] and row.valid is None
    assert row.text.startswith("Paris is 18 degrees C")


def test_a_player_that_crashes_becomes_an_error_row():
    class Broken:
        name = "broken"

        def respond(self, conv):
            raise RuntimeError("boom")

    (row,) = compare(cases.WEATHER_INITIAL, [Broken()])
    assert row.error == "RuntimeError: boom"


def test_check_calls_names_unknown_tools_and_unparsable_arguments():
    message = Message(
        role="assistant",
        parts=[
            ToolCall(id="1", name="get_wether", arguments={}),
            ToolCall(id="2", name="get_weather", raw_arguments='{"location": "Par'),
            ToolCall(id="3", name="get_weather", arguments={"unit": "c"}),
        ],
    )
    unknown, raw, missing = check_calls(cases.WEATHER_INITIAL, message)
    assert not unknown.known and "Did you mean 'get_weather'?" in unknown.errors[0]
    assert raw.errors == ['arguments are not a JSON object: {"location": "Par']
    assert missing.errors == ["arguments: 'location' is a required property"]


# -- description A/B ----------------------------------------------------------------------

STRICT_CITY = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
VARIANTS = [
    ToolVariant("A: says weather", description="Get the current weather for a location."),
    ToolVariant("B: says forecast", description="Look up a city's forecast."),
    ToolVariant("C: weather, city schema", description="Weather by city.", parameters=STRICT_CITY),
]


@pytest.mark.parametrize("protocol", LIVE)
def test_ab_test_tallies_choices_and_validity_per_description_variant(keyword_emulator, protocol):
    def factory():
        return live_player(protocol, base_url=keyword_emulator.base_url(protocol), api_key="k")

    result = ab_test(cases.WEATHER_INITIAL, "get_weather", VARIANTS, factory, runs=3)

    a, b, c = result.variants
    assert (a.runs, dict(a.chosen), a.valid_calls, a.invalid_calls) == (3, {"get_weather": 3}, 3, 0)
    assert (b.runs, dict(b.chosen), b.valid_calls, b.invalid_calls) == (3, {NO_TOOL: 3}, 0, 0)
    assert (c.runs, dict(c.chosen), c.valid_calls, c.invalid_calls) == (3, {"get_weather": 3}, 0, 3)
    assert c.rows[0].calls[0].errors == [
        "arguments: 'city' is a required property",
        "arguments: Additional properties are not allowed ('location' was unexpected)",
    ]
    assert result.table() == [
        {"variant": "A: says weather", "runs": 3, "get_weather": 3, NO_TOOL: 0,
         "valid calls": 3, "invalid calls": 0, "errors": 0},
        {"variant": "B: says forecast", "runs": 3, "get_weather": 0, NO_TOOL: 3,
         "valid calls": 0, "invalid calls": 0, "errors": 0},
        {"variant": "C: weather, city schema", "runs": 3, "get_weather": 3, NO_TOOL: 0,
         "valid calls": 0, "invalid calls": 3, "errors": 0},
    ]  # fmt: skip


def test_ab_test_counts_failed_runs_as_errors(keyword_emulator):
    def factory():
        url = keyword_emulator.base_url("anthropic")
        return live_player("anthropic", base_url=url, api_key="k", model="error-429")

    result = ab_test(cases.WEATHER_INITIAL, "get_weather", VARIANTS[:1], factory, runs=2)
    (tally,) = result.variants
    assert tally.runs == 2 and not tally.chosen
    ((message, count),) = tally.errors.items()
    assert count == 2 and "returned 429" in message
    assert result.table()[0]["errors"] == 2


def test_ab_test_calls_the_factory_once_per_run():
    made = []

    def factory():
        made.append(1)
        return KeywordPlayer([KeywordRule(tool="get_weather", word="weather")])

    ab_test(cases.WEATHER_INITIAL, "get_weather", VARIANTS, factory, runs=4, workers=2)
    assert len(made) == 12


def test_apply_variant_changes_only_the_named_tool():
    extra = cases.WEATHER_TOOL.model_copy(update={"name": "other"})
    conv = cases.WEATHER_INITIAL.model_copy(update={"tools": [cases.WEATHER_TOOL, extra]})
    out = apply_variant(conv, "get_weather", VARIANTS[2])
    assert out.tools[0].description == "Weather by city."
    assert out.tools[0].parameters == STRICT_CITY
    assert out.tools[1] == extra
    assert conv.tools[0] == cases.WEATHER_TOOL  # the original is untouched
    kept = apply_variant(conv, "get_weather", ToolVariant("same"))
    assert kept.tools == conv.tools


def test_ab_test_refuses_an_unknown_tool_and_zero_runs():
    with pytest.raises(UsageError, match="no tool 'nope'"):
        ab_test(cases.WEATHER_INITIAL, "nope", VARIANTS, lambda: None, runs=1)
    with pytest.raises(UsageError, match="at least 1"):
        ab_test(cases.WEATHER_INITIAL, "get_weather", VARIANTS, lambda: None, runs=0)


def test_compare_accepts_any_player_including_offline_ones():
    class Fixed:
        name = "fixed"

        def respond(self, conv):
            message = Message(role="assistant", parts=[ToolCall(id="x", name="get_weather")])
            return PlayerTurn(ModelResponse(message=message, stop_reason="tool_use"))

    (row,) = compare(cases.WEATHER_INITIAL, [Fixed()])
    assert row.chosen == ["get_weather"] and row.valid is False


def test_example_arguments_come_from_the_history_then_the_script():
    from flowdebug.model import Conversation
    from flowdebug.views.compare import example_arguments

    assert example_arguments("weather", Conversation(), "get_weather") == {
        "location": "Paris",
        "unit": "c",
    }
    assert example_arguments(None, cases.WEATHER_CONTINUATION, "get_weather") == {
        "location": "Paris",
        "unit": "c",
    }
    assert example_arguments("tasks", Conversation(), "update_task") == {}
    assert example_arguments(None, Conversation(), "nope") == {}
