"""Tokens as the pages show them: each vendor's reported usage per model turn, and the
tools' footprint per vendor (counted by the emulator's endpoints, else estimated)."""

from __future__ import annotations

import math

import pytest

from flowdebug import protocols
from flowdebug.engine.execution import toolsets
from flowdebug.engine.session import scenarios
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.player_choice import PlayerChoice
from flowdebug.exchange.imports import import_session
from flowdebug.model import Conversation
from flowdebug.players.base import PlayerTurn
from flowdebug.players.live.player import live_player
from flowdebug.protocols.token_estimate import compact, declarations
from flowdebug.views.tokens import footprints, turn_usage, usage_rows
from tests.paths import REAL

WEATHER = toolsets.load("weather").tools


@pytest.fixture(autouse=True)
def _no_tiktoken_cache(monkeypatch):
    """The estimate by characters everywhere, whatever tiktoken cache this machine has."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")


def test_the_offline_estimate_is_chars_over_four_of_each_vendors_tools_json():
    rows = {f.protocol: f for f in footprints(WEATHER)}
    assert list(rows) == protocols.model_protocols()
    for name, found in rows.items():
        text = compact(declarations(name, WEATHER))
        assert '"get_weather"' in text
        assert found.tokens == math.ceil(len(text) / 4)
        assert (found.how, found.row()["tokens"]) == ("estimated", f"≈ {found.tokens}")
        assert found.note.startswith("chars/4 of the encoded tools JSON")


def test_the_estimate_says_why_nothing_was_counted():
    rows = {f.protocol: f.note for f in footprints(WEATHER)}
    assert rows["openai-chat"].endswith("the vendor has no count-tokens endpoint")
    assert rows["anthropic"].endswith("no key for it here")


def test_no_tools_cost_nothing():
    assert {f.tokens for f in footprints([])} == {0}


def test_the_live_players_vendor_is_counted_by_its_endpoint(emulator):
    choice = PlayerChoice(
        kind="live", protocol="anthropic", base_url=emulator.base_url("anthropic"), api_key="k1"
    )
    rows = {f.protocol: f for f in footprints(WEATHER, choice=choice)}
    with_tools, without = (r["body"] for r in list(emulator.requests)[-2:])
    counted = rows["anthropic"]
    assert (counted.how, counted.note) == ("counted", "counted by POST /v1/messages/count_tokens")
    assert counted.tokens == math.ceil(len(compact(with_tools)) / 4) - math.ceil(
        len(compact(without)) / 4
    )
    assert counted.row()["tokens"] == str(counted.tokens)
    assert {rows[n].how for n in rows if n != "anthropic"} == {"estimated"}


def test_a_count_the_vendor_refuses_falls_back_to_the_estimate_with_its_words(emulator):
    choice = PlayerChoice(
        kind="live",
        protocol="gemini",
        model="error-429",
        base_url=emulator.base_url("gemini"),
        api_key="k1",
    )
    found = {f.protocol: f for f in footprints(WEATHER, choice=choice)}["gemini"]
    assert found.how == "estimated"
    assert "the count failed: gemini" in found.note and "429" in found.note


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        (
            "anthropic.response.sdk-runner-sf-weather.json",
            {"input_tokens": 659, "output_tokens": 74},
        ),
        ("openai-chat.stream.sdk-get-weather-nyc.json", {"input_tokens": 44, "output_tokens": 16}),
        (
            "gemini.response.pydantic-ai-cassette-three-parallel-calls.json",
            {"input_tokens": 83, "output_tokens": 322, "reasoning_tokens": 292},
        ),
        (
            "bedrock.stream.pydantic_ai_nova_tool_use.json",
            {"input_tokens": 471, "output_tokens": 91},
        ),
    ],
)
def test_an_imported_answer_keeps_the_usage_its_vendor_reported(fixture, expected):
    imported = import_session((REAL / fixture).read_text())
    [usage] = turn_usage(imported.state)
    assert usage.source == "imported"
    assert expected.items() <= usage.usage.items()
    assert usage.step == 2


class Metered:
    """The weather scenario's model, reporting 10 input tokens per message and 7 output."""

    name = "metered"
    local = True

    def __init__(self) -> None:
        self.inner = scenarios.load("weather").player()

    def respond(self, conv: Conversation) -> PlayerTurn:
        turn = self.inner.respond(conv)
        usage = {"input_tokens": 10 * len(conv.messages), "output_tokens": 7}
        return PlayerTurn(turn.response.model_copy(update={"usage": usage}))


EMULATOR = {"player": Metered()}


@pytest.mark.parametrize("protocol", ["anthropic", "openai-chat", "gemini", "bedrock"])
def test_each_live_model_turn_has_the_vendors_usage_and_a_total(emulator, protocol):
    key = "AKID:SECRET" if protocol == "bedrock" else "k1"
    session = Session.from_scenario("weather")
    session.player = live_player(protocol, base_url=emulator.base_url(protocol), api_key=key)
    while session.state.status not in ("finished", "halted"):
        session.step()
    rows = usage_rows(session.state)
    turns = [e["step"] for e in session.state.exchanges]
    assert [r["step"] for r in rows] == [*turns, None]
    assert [r["from"] for r in rows] == ["live call", "live call", ""]
    assert [(r["input_tokens"], r["output_tokens"]) for r in rows] == [(10, 7), (30, 7), (40, 14)]
    assert rows[-1]["vendor"] == "total"


def test_a_session_no_vendor_answered_reports_no_usage():
    session = Session.from_scenario("weather")
    while session.state.status not in ("finished", "halted"):
        session.step()
    assert usage_rows(session.state) == []
