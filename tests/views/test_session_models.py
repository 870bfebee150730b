"""A session's model per vendor (issue 30 item 5): the encodings, the step view, the request
export and SDK snippet, and a live player without a model of its own all use it; a vendor the
session chose nothing for keeps its default, and a source's own model for the vendor stays."""

from __future__ import annotations

from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.player_choice import PlayerChoice, make_player
from flowdebug.exchange.exports import request_payload, sdk_snippet
from flowdebug.model import Conversation, Message, Text
from flowdebug.protocols.base import Warnings
from flowdebug.protocols.models import choosing, own_model
from flowdebug.views.encodings import encode_all
from flowdebug.views.protocols import step_view

CHOSEN = {"anthropic": "claude-opus-4-1", "bedrock": "us.amazon.nova-pro-v1:0"}


def gpt4o() -> Conversation:
    return Conversation(
        model="gpt-4o", messages=[Message(role="user", parts=[Text(text="Weather in Paris?")])]
    )


def test_another_vendors_model_becomes_the_sessions_choice_with_one_warning_naming_both():
    payloads = encode_all(gpt4o(), ["anthropic", "openai-chat", "gemini"], models=CHOSEN)
    anthropic = payloads["anthropic"][0]
    assert anthropic.value["model"] == "claude-opus-4-1"
    [said] = [w.message for w in anthropic.warnings if w.code == "model_replaced"]
    assert said == (
        "gpt-4o names a model of OpenAI Chat, not of Anthropic: claude-opus-4-1 "
        "(the session's choice for it) replaced it"
    )
    assert payloads["openai-chat"][0].value["model"] == "gpt-4o"  # its own: kept
    gemini = [w.message for w in payloads["gemini"][0].warnings if w.code == "model_replaced"]
    assert gemini and "gemini-2.5-flash (its default)" in gemini[0]


def test_a_source_naming_no_model_gets_the_sessions_choice_and_no_filled_in_warning():
    conv = gpt4o().model_copy(update={"model": None})
    [req, *_] = encode_all(conv, ["anthropic"], models=CHOSEN)["anthropic"]
    assert req.value["model"] == "claude-opus-4-1"
    assert not [w for w in req.warnings if w.code in ("model_filled_in", "model_replaced")]


def test_the_vendors_own_model_in_the_source_stays_whatever_the_session_chose():
    with choosing(CHOSEN):
        assert own_model("claude-sonnet-4-6", Warnings("anthropic")) == "claude-sonnet-4-6"
    assert own_model("gpt-4o", Warnings("anthropic")) == "claude-sonnet-4-6"  # outside: default


def test_the_request_export_the_snippet_and_the_step_view_use_the_sessions_model():
    session = Session.from_scenario("weather")
    session.state.conversation = session.state.conversation.model_copy(update={"model": "gpt-4o"})
    session.state.models = dict(CHOSEN)
    _, warnings = request_payload(session.state, "bedrock")  # Bedrock: the model in the URL
    [said] = [w.message for w in warnings if w.code == "model_replaced"]
    assert "us.amazon.nova-pro-v1:0 (the session's choice for it) replaced it in the URL" in said
    snippet, _ = sdk_snippet(session.state, "anthropic")
    assert "'model': 'claude-opus-4-1'" in snippet and "gpt-4o" not in snippet
    view = step_view(session.state, "anthropic")
    assert view.payloads["request"].value["model"] == "claude-opus-4-1"
    session.state.models = {}
    assert step_view(session.state, "anthropic").payloads["request"].value["model"] == (
        "claude-sonnet-4-6"
    )


def test_a_live_player_without_a_model_takes_the_sessions_model_for_its_vendor():
    choice = PlayerChoice(kind="live", protocol="anthropic")
    assert make_player(choice, None, CHOSEN).settings.model == "claude-opus-4-1"
    own = PlayerChoice(kind="live", protocol="anthropic", model="claude-haiku-4-5")
    assert make_player(own, None, CHOSEN).settings.model == "claude-haiku-4-5"
    assert make_player(choice, None, {}).settings.model is None  # the vendor's default
