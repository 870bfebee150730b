"""OpenAI Chat as OpenAI-compatible servers speak it: reasoning, Gemini's thought signatures,
legacy functions, name-only tool results, refusals, usage, fragments (issue 11)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from flowdebug.errors import CodecError
from flowdebug.model import (
    HostedCall,
    HostedResult,
    Message,
    ModelResponse,
    Text,
    Thinking,
    ToolCall,
)
from flowdebug.protocols import get
from flowdebug.protocols.openai_chat.codec import CODEC
from tests.paths import REAL

GEMINI = get("gemini")


def real(name: str) -> Any:
    return json.loads((REAL / f"openai-chat.{name}.json").read_text())


def codes(converted: Any) -> list[str]:
    return [w.code for w in converted.warnings]


CALL = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}


# --- reasoning ----------------------------------------------------------------------------


def test_deepseek_reasoning_comes_back_on_every_assistant_turn_of_the_request() -> None:
    body = real("request.pydantic-ai-cassette-deepseek-reasoning-echo")
    conv = CODEC.decode_request(body).value
    thinking = [p for m in conv.messages for p in m.parts if isinstance(p, Thinking)]
    assert [t.source for t in thinking] == ["openai-chat"] * 3
    assert thinking[1].text == ""  # DeepSeek's empty reasoning_content is kept too
    again = CODEC.encode_request(conv).value
    sent = [m for m in again["messages"] if m["role"] == "assistant"]
    wire = [m for m in body["messages"] if m["role"] == "assistant"]
    assert [m["reasoning_content"] for m in sent] == [m["reasoning_content"] for m in wire]


def test_reasoning_spelled_reasoning_keeps_its_spelling() -> None:
    payload = real("response.pydantic-ai-cassette-ollama-reasoning-tool-call")
    resp = CODEC.decode_response(payload).value
    assert isinstance(resp.message.parts[0], Thinking)
    message = CODEC.encode_response(resp).value["choices"][0]["message"]
    assert message["reasoning"] == payload["choices"][0]["message"]["reasoning"]
    assert "reasoning_content" not in message


def test_reasoning_stream_decodes_like_the_response_and_streams_back() -> None:
    events = real("stream.pydantic-ai-cassette-deepseek-reasoning")
    resp = CODEC.decode_stream(events).value
    assert resp.message.parts[0].text.startswith('Hmm, the user just said "Hello".')
    chunks = CODEC.encode_stream(resp).value
    assert CODEC.decode_stream(chunks).value.message == resp.message


def test_another_vendors_thinking_is_dropped_not_sent_as_reasoning_content() -> None:
    thinking = Thinking(text="hm", signature="sig", source="anthropic")
    resp = ModelResponse(
        message=Message(role="assistant", parts=[thinking, Text(text="hi")]), model="gpt-4.1"
    )
    encoded = CODEC.encode_response(resp)
    assert "reasoning_content" not in encoded.value["choices"][0]["message"]
    assert {"thinking_dropped", "thinking_signature_dropped"} <= set(codes(encoded))


# --- Gemini's OpenAI endpoint ---------------------------------------------------------------


def gemini_call_payload() -> dict[str, Any]:
    call = {**CALL, "extra_content": {"google": {"thought_signature": "c2ln"}}}
    return {
        "model": "gemini-3-pro-preview",
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
        ],
    }


def test_extra_content_signature_is_the_gemini_thought_signature() -> None:
    body = gemini_call_payload()
    conv = CODEC.decode_request(body).value
    call = conv.messages[1].tool_calls[0]
    assert call.provider_details == {"gemini": {"thoughtSignature": "c2ln"}}
    encoded = CODEC.encode_request(conv)
    assert encoded.value == body and encoded.warnings == []


def test_thought_signature_survives_native_gemini_and_back() -> None:
    conv = CODEC.decode_request(gemini_call_payload()).value
    native = GEMINI.encode_request(conv).value
    assert native["contents"][1]["parts"][0]["thoughtSignature"] == "c2ln"
    back = GEMINI.decode_request(native).value.model_copy(update={"model": conv.model})
    call = CODEC.encode_request(back).value["messages"][1]["tool_calls"][0]
    assert call["extra_content"] == {"google": {"thought_signature": "c2ln"}}


def test_thought_signature_is_reported_when_the_model_is_not_gemini() -> None:
    conv = CODEC.decode_request(gemini_call_payload()).value.model_copy(update={"model": "gpt-5"})
    encoded = CODEC.encode_request(conv)
    assert "extra_content" not in encoded.value["messages"][1]["tool_calls"][0]
    [warning] = encoded.warnings
    assert (warning.code, warning.path) == (
        "provider_details_dropped",
        "messages[1].parts[0].provider_details.gemini",
    )


def test_streamed_extra_content_is_kept() -> None:
    first = {"index": 0, **CALL, "extra_content": {"google": {"thought_signature": "c2ln"}}}
    events = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [first]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    call = CODEC.decode_stream(events).value.message.tool_calls[0]
    assert call.provider_details == {"gemini": {"thoughtSignature": "c2ln"}}


def test_message_level_extra_content_of_the_older_endpoint_round_trips() -> None:
    payload = real("response.pydantic-ai-cassette-gemini-compat-thought-signature")
    resp = CODEC.decode_response(payload).value
    message = CODEC.encode_response(resp).value["choices"][0]["message"]
    wire = payload["choices"][0]["message"]
    assert message["extra_content"] == wire["extra_content"]
    assert message["thought_signature"] == wire["thought_signature"]


# --- legacy functions -----------------------------------------------------------------------

LEGACY_HISTORY = {
    "model": "gpt-4",
    "messages": [
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
        },
        {"role": "function", "name": "get_weather", "content": "18 C"},
    ],
    "functions": [{"name": "get_weather", "parameters": {"type": "object", "properties": {}}}],
    "function_call": "auto",
}


def test_legacy_request_decodes_as_tools_calls_and_results_and_encodes_back_exactly() -> None:
    conv = CODEC.decode_request(LEGACY_HISTORY).value
    [call] = conv.messages[1].tool_calls
    [result] = conv.messages[2].tool_results
    assert (call.name, call.arguments) == ("get_weather", {"city": "Paris"})
    assert (result.call_id, result.name, result.content) == (call.id, "get_weather", "18 C")
    assert [t.name for t in conv.tools] == ["get_weather"]
    assert conv.tool_choice is not None and conv.tool_choice.mode == "auto"
    encoded = CODEC.encode_request(conv)
    assert encoded.value == LEGACY_HISTORY and encoded.warnings == []


def test_legacy_is_given_up_with_a_warning_when_a_turn_has_two_calls() -> None:
    conv = CODEC.decode_request(LEGACY_HISTORY).value
    two = conv.messages[1].model_copy(
        update={"parts": [*conv.messages[1].parts, ToolCall(id="c2", name="get_weather")]}
    )
    conv = conv.model_copy(update={"messages": [conv.messages[0], two]})
    encoded = CODEC.encode_request(conv)
    assert "tools" in encoded.value and "functions" not in encoded.value
    assert "legacy_functions_dropped" in codes(encoded)


def test_legacy_function_call_response_round_trips() -> None:
    payload = real("response.openllmetry-cassette-legacy-function-call")
    resp = CODEC.decode_response(payload).value
    assert resp.stop_reason == "tool_use"
    choice = CODEC.encode_response(resp).value["choices"][0]
    assert choice["finish_reason"] == "function_call"
    sent, wire = (
        choice["message"]["function_call"],
        payload["choices"][0]["message"]["function_call"],
    )
    assert sent["name"] == wire["name"]
    assert json.loads(sent["arguments"]) == json.loads(wire["arguments"])
    chunks = CODEC.encode_stream(resp).value
    assert CODEC.decode_stream(chunks).value.message == resp.message


# --- name-only tool results (Ollama) --------------------------------------------------------


@pytest.mark.parametrize("key", ["name", "tool_name"])
def test_a_tool_message_without_id_pairs_by_name_with_a_warning(key: str) -> None:
    body = {
        "model": "llama3.2",
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "", "tool_calls": [CALL]},
            {"role": "tool", key: "f", "content": "11 degrees"},
        ],
    }
    decoded = CODEC.decode_request(body)
    [result] = decoded.value.messages[2].tool_results
    assert (result.call_id, result.name) == ("call_1", "f")
    [warning] = decoded.warnings
    assert warning.code == "tool_call_id_missing" and "api.openai.com" in warning.message
    assert CODEC.encode_request(decoded.value).value["messages"][2] == body["messages"][2]


def test_a_name_only_result_without_an_earlier_call_is_an_error() -> None:
    body = {"messages": [{"role": "tool", "name": "f", "content": "x"}]}
    with pytest.raises(CodecError, match="no earlier unanswered call"):
        CODEC.decode_request(body)


# --- refusals, hosted tools, envelope -------------------------------------------------------


def test_refusal_is_a_refusal_part_and_stops_as_refusal() -> None:
    payload = real("response.sdk-refusal-anthrax")
    resp = CODEC.decode_response(payload).value
    assert resp.message.parts[0].refusal is True and resp.stop_reason == "refusal"
    assert CODEC.encode_response(resp).value["choices"][0]["message"]["refusal"] == (
        "I'm very sorry, but I can't assist with that."
    )


def test_refusal_in_a_user_turn_is_flattened_with_a_warning() -> None:
    conv = CODEC.decode_request({"model": "m", "messages": [{"role": "user", "content": "x"}]})
    refusal = Message(role="user", parts=[Text(text="no", refusal=True)])
    encoded = CODEC.encode_request(conv.value.model_copy(update={"messages": [refusal]}))
    assert codes(encoded) == ["refusal_flattened"]


def test_hosted_calls_and_results_are_dropped_by_name() -> None:
    parts = [
        HostedCall(id="ws_1", name="web_search", source="openai-responses"),
        HostedResult(call_id="ws_1", name="web_search", content="found"),
        Text(text="done"),
    ]
    resp = ModelResponse(message=Message(role="assistant", parts=parts), model="gpt-4.1", id="x")
    encoded = CODEC.encode_response(resp)
    dropped = [w for w in encoded.warnings if w.code.startswith("hosted")]
    assert [w.code for w in dropped] == ["hosted_call_dropped", "hosted_result_dropped"]
    assert all("web_search" in w.message and w.path == "message.parts" for w in dropped)


def test_the_envelope_names_what_it_fills_in() -> None:
    resp = ModelResponse(message=Message(role="assistant", parts=[Text(text="hi")]))
    encoded = CODEC.encode_response(resp)
    assert {"model_filled_in", "created_filled_in", "response_id_replaced"} <= set(codes(encoded))
    assert encoded.value["model"] == "gpt-4.1"


def test_deepseek_usage_round_trips_and_foreign_usage_is_rewritten_consistently() -> None:
    payload = real("response.pydantic-ai-cassette-deepseek-reasoning-tool-call")
    resp = CODEC.decode_response(payload).value
    assert resp.usage == {
        "input_tokens": 563,
        "output_tokens": 116,
        "cached_tokens": 512,
        "reasoning_tokens": 60,
    }
    assert CODEC.encode_response(resp).value["usage"] == payload["usage"]
    # Gemini counts thoughts apart from the answer; OpenAI counts them in completion_tokens.
    gemini = resp.model_copy(
        update={
            "usage": {
                "input_tokens": 10,
                "output_tokens": 5,
                "reasoning_tokens": 7,
                "total_tokens": 22,
            },
            "provider_details": None,
        }
    )
    encoded = CODEC.encode_response(gemini)
    usage = encoded.value["usage"]
    assert (usage["completion_tokens"], usage["total_tokens"]) == (12, 22)
    rewritten = {w.path for w in encoded.warnings if w.code == "usage_rewritten"}
    assert "usage.output_tokens" in rewritten


# --- fragments ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fragment", "kind"),
    [
        ({"role": "user", "content": "hi"}, "request"),
        ({"role": "tool", "tool_call_id": "call_1", "content": "ok"}, "request"),
        ({"role": "assistant", "content": None, "tool_calls": [CALL]}, "response"),
        ([CALL], "response"),
    ],
)
def test_fragment_stands_for_a_whole_payload(fragment: Any, kind: str) -> None:
    whole, note = CODEC.fragment(fragment)
    assert CODEC.detect(whole) == kind and "\n" not in note and "OpenAI Chat" in note
    decode = CODEC.decode_request if kind == "request" else CODEC.decode_response
    assert decode(whole).value is not None


@pytest.mark.parametrize(
    "fragment",
    [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]},
        {"role": "model", "parts": [{"text": "hi"}]},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {}}]},
        {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]},
    ],
)
def test_fragment_does_not_claim_other_vendors_or_whole_payloads(fragment: Any) -> None:
    assert CODEC.fragment(fragment) is None
