"""OpenAI Responses codec, issue 11: hosted (vendor-run) items, custom tools, refusals, the
echoed request fields of a Response, previous_response_id, usage and fragments."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.types.responses import Response, ResponseStreamEvent
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import TypeAdapter

from flowdebug.model import (
    Conversation,
    HostedCall,
    HostedResult,
    Message,
    ModelResponse,
    Text,
    ToolCall,
    ToolResult,
)
from flowdebug.protocols.openai_responses.codec import CODEC
from tests.paths import REAL
from tests.sdkcheck import assert_model, assert_params

NAME = "openai-responses"
EVENTS: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)


def real(name: str) -> Any:
    return json.loads((REAL / f"openai-responses.{name}.json").read_text(encoding="utf-8"))


def codes(converted: Any) -> list[str]:
    return [w.code for w in converted.warnings]


def _hosted_items(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [i for i in items if i.get("type") not in (None, "message", "reasoning")]


def hosted(resp: ModelResponse) -> list[HostedCall | HostedResult]:
    return resp.message.hosted


# --- hosted items from the API ------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "response.pydantic-ai-cassette-web-search",
        "response.pydantic-ai-cassette-mcp-list-tools-and-call",
        "response.pydantic-ai-cassette-file-search",
        "response.pydantic-ai-cassette-code-interpreter",
    ],
)
def test_a_response_with_hosted_items_re_encodes_them_byte_identical(name: str) -> None:
    payload = real(name)
    decoded = CODEC.decode_response(payload)
    assert codes(decoded) == []
    again = CODEC.encode_response(decoded.value).value["output"]
    assert _hosted_items(again) == _hosted_items(payload["output"]) != []


@pytest.mark.parametrize(
    "name",
    ["request.pydantic-ai-cassette-web-search-replay", "request.pydantic-ai-cassette-mcp-replay"],
)
def test_a_request_replaying_hosted_items_re_encodes_them_byte_identical(name: str) -> None:
    payload = real(name)
    decoded = CODEC.decode_request(payload)
    assert codes(decoded) == []
    again = CODEC.encode_request(decoded.value).value["input"]
    assert _hosted_items(again) == _hosted_items(payload["input"]) != []


def test_web_search_call_decodes_to_a_hosted_call_and_its_result_in_the_assistant_turn() -> None:
    resp = CODEC.decode_response(real("response.pydantic-ai-cassette-web-search")).value
    call, result = hosted(resp)
    assert isinstance(call, HostedCall) and isinstance(result, HostedResult)
    assert (call.name, call.arguments, call.source) == (
        "web_search",
        {"query": "weather: San Francisco, CA"},
        NAME,
    )
    assert result.call_id == call.id == "ws_028829e50fbcad090068c9c8306aec8195ae9451d32175ed69"
    assert call.provider_details[NAME]["item"]["type"] == "web_search_call"  # type: ignore[index]


def test_mcp_call_names_the_remote_tool_and_the_server_label() -> None:
    resp = CODEC.decode_response(real("response.pydantic-ai-cassette-mcp-list-tools-and-call"))
    listing, tools, call, result = hosted(resp.value)
    assert (listing.name, listing.server) == ("mcp_list_tools", None)  # type: ignore[union-attr]
    assert tools.text == "ask_question"  # type: ignore[union-attr]
    assert isinstance(call, HostedCall) and isinstance(result, HostedResult)
    assert (call.name, call.server) == ("ask_question", "deepwiki")
    assert call.arguments["repoName"] == "pydantic/pydantic-ai"
    assert result.text.startswith("Pydantic AI is a Python agent framework")
    assert result.is_error is False


def test_code_interpreter_call_carries_its_code_and_logs() -> None:
    resp = CODEC.decode_response(real("response.pydantic-ai-cassette-code-interpreter")).value
    call, result = hosted(resp)
    assert call.arguments["code"].startswith("# compute the value")  # type: ignore[union-attr]
    assert result.text == "-428330955.97745"  # type: ignore[union-attr]


def test_a_stream_with_hosted_events_decodes_like_its_items() -> None:
    resp = CODEC.decode_stream(real("stream.pydantic-ai-cassette-web-search")).value
    assert [p.name for p in hosted(resp)] == ["web_search", "web_search"]


def test_an_encoded_hosted_stream_validates_and_decodes_to_the_same_turn() -> None:
    resp = CODEC.decode_response(real("response.pydantic-ai-cassette-mcp-list-tools-and-call"))
    events = CODEC.encode_stream(resp.value).value
    for event in events:
        EVENTS.validate_python(event)
    kinds = [e["type"] for e in events]
    assert "response.mcp_call_arguments.delta" in kinds
    assert "response.mcp_list_tools.completed" in kinds
    assert CODEC.decode_stream(events).value == resp.value


# --- hosted calls from other vendors ------------------------------------------------------


def _anthropic_turn(*parts: Any) -> ModelResponse:
    return ModelResponse(
        message=Message(role="assistant", parts=list(parts)), model="claude-x", id="msg_1"
    )


def test_an_anthropic_web_search_becomes_a_web_search_call() -> None:
    call = HostedCall(id="srvtoolu_1", name="web_search", arguments={"query": "paris"})
    result = HostedResult(call_id="srvtoolu_1", name="web_search", content="...", source="x")
    encoded = CODEC.encode_response(
        _anthropic_turn(call.model_copy(update={"source": "x"}), result)
    )
    item = encoded.value["output"][0]
    assert item == {
        "id": "srvtoolu_1",
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search", "query": "paris"},
    }
    assert codes(encoded) == [
        "hosted_call_mapped",
        "hosted_result_mapped",
        "model_replaced",
        "stop_reason_filled_in",
    ]
    # claude-x is not a Responses model: the default replaced it (protocols/models.py)
    assert [w.path for w in encoded.warnings] == [
        "message.parts[0]",
        "message.parts[1]",
        "model",
        "stop_reason",
    ]
    assert_model(Response, encoded.value)


def test_an_mcp_connector_call_becomes_an_mcp_call_with_its_output_or_error() -> None:
    call = HostedCall(id="mcptoolu_1", name="ask", arguments={"q": 1}, server="wiki", source="x")
    ok = HostedResult(call_id="mcptoolu_1", content="fine", source="x")
    item = CODEC.encode_response(_anthropic_turn(call, ok)).value["output"][0]
    assert (item["name"], item["server_label"], item["arguments"], item["output"]) == (
        "ask",
        "wiki",
        '{"q":1}',
        "fine",
    )
    failed = ok.model_copy(update={"is_error": True, "content": "boom"})
    encoded = CODEC.encode_response(_anthropic_turn(call, failed))
    assert_model(Response, encoded.value)
    back = CODEC.decode_response(encoded.value).value
    assert [(p.kind, getattr(p, "is_error", None)) for p in back.message.parts] == [
        ("hosted_call", None),
        ("hosted_result", True),
    ]
    assert back.message.parts[1].text == "boom"  # type: ignore[union-attr]


def test_a_hosted_tool_responses_lacks_is_dropped_with_warnings_naming_it() -> None:
    call = HostedCall(id="srvtoolu_2", name="code_execution", arguments={"code": "1"}, source="x")
    result = HostedResult(call_id="srvtoolu_2", name="code_execution", content="1", source="x")
    encoded = CODEC.encode_response(_anthropic_turn(call, result, Text(text="done")))
    assert [i["type"] for i in encoded.value["output"]] == ["message"]
    assert codes(encoded) == [
        "hosted_call_dropped",
        "hosted_result_dropped",
        "parts_shifted",
        "model_replaced",
        "stop_reason_filled_in",
    ]
    assert "code_execution" in encoded.warnings[0].message
    assert [w.path for w in encoded.warnings] == [
        "message.parts[0]",
        "message.parts[1]",
        "message",
        "model",
        "stop_reason",
    ]


# --- custom tools, refusals ---------------------------------------------------------------


def test_a_custom_tool_call_is_a_client_call_with_raw_input() -> None:
    payload = {
        "model": "gpt-5",
        "input": [
            {"type": "custom_tool_call", "call_id": "call_1", "name": "sql", "input": "SELECT 1"},
            {"type": "custom_tool_call_output", "call_id": "call_1", "output": "1"},
        ],
    }
    decoded = CODEC.decode_request(payload)
    (call,) = decoded.value.messages[0].parts
    (result,) = decoded.value.messages[1].parts
    assert isinstance(call, ToolCall) and isinstance(result, ToolResult)
    assert (call.id, call.name, call.arguments, call.raw_arguments) == (
        "call_1",
        "sql",
        {},
        "SELECT 1",
    )
    assert result.call_id == "call_1" and result.name == "sql"
    encoded = CODEC.encode_request(decoded.value).value
    assert encoded["input"] == payload["input"]
    assert_params(ResponseCreateParamsNonStreaming, encoded)


def test_a_refusal_part_decodes_as_a_refusal_and_goes_back_as_one() -> None:
    item = {
        "type": "message",
        "id": "msg_1",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "refusal", "refusal": "I can't help with that."}],
    }
    payload = {"id": "resp_1", "object": "response", "model": "gpt-4.1", "output": [item]}
    resp = CODEC.decode_response(payload).value
    (part,) = resp.message.parts
    assert isinstance(part, Text) and (part.text, part.refusal) == ("I can't help with that.", True)
    assert resp.stop_reason == "refusal"
    assert CODEC.encode_response(resp).value["output"][0]["content"] == item["content"]


# --- echoed request fields, previous_response_id ------------------------------------------


def test_a_response_keeps_its_echoed_request_fields_in_canonical_form() -> None:
    payload = real("response.pydantic-ai-cassette-mcp-list-tools-and-call")
    resp = CODEC.decode_response(payload).value
    echo = resp.provider_details[NAME]["echo"]  # type: ignore[index]
    conv = Conversation.model_validate(echo)
    assert conv.system == "You are a helpful assistant."
    assert conv.tool_choice is None  # "auto" is what the API echoes by default
    assert conv.provider_details[NAME]["hosted_tools"][0]["type"] == "mcp"  # type: ignore[index]


def test_a_previous_response_id_request_names_the_results_whose_calls_are_stored() -> None:
    decoded = CODEC.decode_request(real("request.pydantic-ai-cassette-previous-response-id-output"))
    (warning,) = decoded.warnings
    assert warning.code == "previous_response_needed"
    assert warning.path == "messages[0].parts[0]"
    assert "call_N2BikjqNxghwNIwHl2XKfb0F" in warning.message
    own = decoded.value.provider_details[NAME]  # type: ignore[index]
    assert own["previous_response_id"] == "resp_0435eb6c2aa8e9eb0069e1600000608195818a61245c018620"


# --- model, usage --------------------------------------------------------------------------


def test_a_model_filled_in_is_named() -> None:
    encoded = CODEC.encode_request(Conversation(messages=[Message(role="user")]))
    assert encoded.value["model"] == "gpt-4.1"
    assert [(w.code, w.path) for w in encoded.warnings] == [("model_filled_in", "model")]


def test_anthropic_cache_counts_are_folded_into_input_tokens_with_a_warning() -> None:
    usage = {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 0,
        "server_tool_use": 1,
    }
    resp = _anthropic_turn(Text(text="hi")).model_copy(update={"usage": usage})
    encoded = CODEC.encode_response(resp)
    wire = encoded.value["usage"]
    assert wire["input_tokens"] == 110
    assert wire["input_tokens_details"]["cached_tokens"] == 100
    assert {(w.code, w.path) for w in encoded.warnings} >= {
        ("usage_rewritten", "usage"),
        ("usage_dropped", "usage.server_tool_use"),
    }


# --- fragments -----------------------------------------------------------------------------


def test_one_function_call_item_is_read_as_a_request_holding_it() -> None:
    item = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
    payload, note = CODEC.fragment(item)  # type: ignore[misc]
    assert payload == {"model": "gpt-4.1", "input": [item]}
    assert "function_call" in note and "\n" not in note
    assert CODEC.decode_request(payload).value.messages[0].tool_calls[0].id == "c1"


def test_a_bare_output_array_is_read_as_a_response() -> None:
    output = real("response.pydantic-ai-cassette-file-search")["output"]
    payload, note = CODEC.fragment(output)  # type: ignore[misc]
    assert payload["object"] == "response" and payload["output"] == output
    assert "Response" in note
    assert CODEC.decode_response(payload).value.message.text == "The capital of France is Paris."


@pytest.mark.parametrize(
    "payload",
    [
        {"role": "assistant", "tool_calls": [{"id": "c", "type": "function"}]},  # OpenAI Chat
        {"role": "user", "content": "hi"},  # Chat or Responses: ambiguous, not claimed
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f"}]},
        [{"type": "text", "text": "hi"}],  # Anthropic content blocks
        {"role": "model", "parts": [{"text": "hi"}]},  # Gemini
        [{"functionCall": {"name": "f"}}],
        {"model": "gpt-4.1", "input": "hi"},  # a whole request: detect() handles it
    ],
)
def test_fragments_of_other_vendors_are_not_claimed(payload: Any) -> None:
    assert CODEC.fragment(payload) is None
