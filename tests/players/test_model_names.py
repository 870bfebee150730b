"""Model names per vendor (issue 30 item 5): a model id is never carried into another vendor."""

from __future__ import annotations

import pytest

from flowdebug import protocols
from flowdebug.exchange.exports import sdk_snippet
from flowdebug.exchange.imports import import_session
from flowdebug.model import Conversation, Message, ModelResponse, Text
from flowdebug.protocols.base import Warnings
from flowdebug.protocols.models import keeps, model_for, own_model, owners
from flowdebug.views.protocols import step_view

GPT4O_REQUEST = {
    "model": "gpt-4o",
    "messages": [{"role": "user", "content": "Weather in Paris?"}],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather for a city.",
                "parameters": {
                    "type": "object",
                    "properties": {"location": {"type": "string"}},
                    "required": ["location"],
                },
            },
        }
    ],
}


def _replaced(warnings) -> list[str]:
    return [w.message for w in warnings if w.code == "model_replaced"]


def test_an_imported_gpt4o_request_gets_each_vendors_own_model_with_one_warning():
    state = import_session(GPT4O_REQUEST).state
    assert state.conversation.model == "gpt-4o"
    anthropic = protocols.get("anthropic").encode_request(state.conversation)
    assert anthropic.value["model"] == "claude-sonnet-4-6"
    assert _replaced(anthropic.warnings) == [
        "gpt-4o names a model of OpenAI Chat, not of Anthropic: claude-sonnet-4-6 (its "
        "default) replaced it"
    ]
    assert "model_filled_in" not in [w.code for w in anthropic.warnings]
    bedrock = protocols.get("bedrock").encode_request(state.conversation)
    bedrock_default = protocols.facts("bedrock").default_model
    assert _replaced(bedrock.warnings) == [
        f"gpt-4o names a model of OpenAI Chat, not of Bedrock: {bedrock_default} (its "
        f"default) replaced it in the URL (/model/{bedrock_default}/converse)"
    ]
    gemini = protocols.get("gemini").encode_request(state.conversation)
    assert _replaced(gemini.warnings) == [
        "gpt-4o names a model of OpenAI Chat, not of Gemini: gemini-2.5-flash (its default) "
        "replaced it in the URL (models/gemini-2.5-flash:generateContent; the body names none)"
    ]
    code, _ = sdk_snippet(state, "gemini")
    assert "MODEL = 'gemini-2.5-flash'" in code and "gpt-4o" not in code
    code, _ = sdk_snippet(state, "bedrock")
    assert f"MODEL = {bedrock_default!r}" in code and "gpt-4o" not in code
    # The OpenAI vendors keep it.
    assert protocols.get("openai-chat").encode_request(state.conversation).value["model"] == (
        "gpt-4o"
    )
    responses = protocols.get("openai-responses").encode_request(state.conversation)
    assert responses.value["model"] == "gpt-4o" and _replaced(responses.warnings) == []


def test_the_protocols_view_lists_request_and_response_warnings_apart():
    state = import_session(GPT4O_REQUEST).state
    apart = step_view(state, "anthropic").warnings_apart()
    assert [(w.code, w.path) for w in apart["request"] if w.path == "model"] == [
        ("model_replaced", "model")
    ]
    assert not any(w.code == "model_replaced" for w in apart["response"])


def test_a_vendor_claims_its_ids_by_its_facts_and_only_another_vendors_id_is_replaced():
    assert owners("gpt-4o") == ["openai-chat", "openai-responses"]
    assert owners("o3-mini") == ["openai-chat", "openai-responses"]
    assert owners("claude-opus-4-1") == ["anthropic"]
    assert owners("gemini-2.5-pro") == ["gemini"]
    assert owners("us.amazon.nova-micro-v1:0") == ["bedrock"]
    assert owners("anthropic.claude-3-haiku-20240307-v1:0") == ["bedrock"]
    assert owners("llama3") == []
    # An id no vendor claims may be the one a person chose for this vendor: kept everywhere.
    assert keeps("openai-chat", "llama3") and keeps("anthropic", "llama3")
    assert keeps("bedrock", "error-404")
    # Another vendor's id is kept only where OpenAI-compatible servers (theirs too) answer.
    assert keeps("openai-chat", "gemini-3-pro-preview")
    assert not keeps("openai-responses", "claude-opus-4-1")
    w = Warnings("anthropic")
    assert own_model("llama3", w) == "llama3" and w.items == []
    assert own_model("us.amazon.nova-micro-v1:0", w) == "claude-sonnet-4-6"
    assert w.items[0].message == (
        "us.amazon.nova-micro-v1:0 names a model of Bedrock, not of Anthropic: "
        "claude-sonnet-4-6 (its default) replaced it"
    )


@pytest.mark.parametrize(
    ("protocol", "expected"),
    [("anthropic", "claude-opus-4-1"), ("gemini", "gemini-2.5-flash"), ("openai-chat", "gpt-4o")],
)
def test_the_sessions_choice_for_a_vendor_wins_over_its_default(protocol, expected):
    chosen = {"anthropic": "claude-opus-4-1"}
    assert model_for(protocol, "gpt-4o", chosen) == expected
    w = Warnings("anthropic")
    own_model("gpt-4o", w, chosen)
    assert "claude-opus-4-1 (the session's choice for it) replaced it" in w.items[0].message


def test_a_vendors_own_model_is_kept_and_named_in_its_url():
    conv = Conversation(
        model="gemini-2.5-pro", messages=[Message(role="user", parts=[Text(text="hi")])]
    )
    out = protocols.get("gemini").encode_request(conv)
    assert [(w.code, w.message) for w in out.warnings] == [
        (
            "model_dropped",
            "Gemini names the model in the URL (models/gemini-2.5-pro:generateContent), not "
            "in the request body",
        )
    ]
    assert model_for("gemini", "gemini-2.5-pro") == "gemini-2.5-pro"


def test_a_response_names_the_vendors_own_model_too():
    resp = ModelResponse(
        message=Message(role="assistant", parts=[Text(text="hi")]), model="gpt-4o", id="r1"
    )
    for protocol, field, expected in [
        ("gemini", "modelVersion", "gemini-2.5-flash"),
        ("anthropic", "model", "claude-sonnet-4-6"),
        ("openai-chat", "model", "gpt-4o"),
    ]:
        out = protocols.get(protocol).encode_response(resp)
        assert out.value[field] == expected
        replaced = [w.path for w in out.warnings if w.code == "model_replaced"]
        assert replaced == ([] if expected == "gpt-4o" else ["model"])
