"""The MCP codec: transcripts of tools/list and tools/call over JSON-RPC 2.0."""

from __future__ import annotations

import json
from typing import Any

import mcp.types as sdk
import mcp_types._v2025_11_25 as wire
import mcp_types._v2026_07_28 as wire_next
import pytest

from flowdebug.errors import CodecError
from flowdebug.model import (
    Conversation,
    Image,
    Message,
    ModelResponse,
    Text,
    Thinking,
    Tool,
    ToolCall,
    ToolChoice,
    ToolResult,
)
from flowdebug.protocols import detect
from flowdebug.protocols.mcp.codec import (
    CODEC,
    result_from_mcp,
    result_to_mcp,
    tool_from_mcp,
    tool_to_mcp,
)
from tests import cases
from tests.goldens import check_golden
from tests.paths import WIRE as REFERENCE
from tests.sdkcheck import assert_params

META_KEY = "io.modelcontextprotocol/protocolVersion"
TO_SERVER, TO_CLIENT = "client->server", "server->client"


def load(name: str) -> Any:
    return json.loads((REFERENCE / f"mcp.{name}.json").read_text())


def codes(converted: Any) -> list[tuple[str, str]]:
    return [(w.code, w.path) for w in converted.warnings]


def messages(transcript: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [entry["msg"] for entry in transcript]


def carried(conv: Conversation) -> Conversation:
    """What MCP keeps of a conversation: tools, calls and results (error_type is metadata)."""
    kept = []
    for m in conv.messages:
        parts = [
            p.model_copy(update={"error_type": None}) if isinstance(p, ToolResult) else p
            for p in m.parts
            if isinstance(p, ToolCall | ToolResult)
        ]
        if parts:
            kept.append(Message(role=m.role, parts=parts))
    return Conversation(tools=conv.tools, messages=kept)


UNKNOWN_TOOL = Conversation(
    tools=[cases.WEATHER_TOOL],
    messages=[
        Message(
            role="assistant",
            parts=[ToolCall(id="call_oslo", name="get_wether", arguments={"location": "Oslo"})],
        ),
        Message(
            role="tool",
            parts=[
                ToolResult(
                    call_id="call_oslo",
                    name="get_wether",
                    content="Unknown tool: get_wether",
                    is_error=True,
                    error_type="unknown_tool",
                )
            ],
        ),
    ],
)
STRUCTURED = Conversation(
    tools=[
        cases.WEATHER_TOOL.model_copy(
            update={
                "title": "Get weather",
                "annotations": {"readOnlyHint": True},
                "output_schema": {
                    "type": "object",
                    "properties": {"temperature": {"type": "number"}},
                },
            }
        )
    ],
    messages=[
        Message(role="assistant", parts=[cases.PARIS]),
        Message(
            role="tool",
            parts=[cases.PARIS_RESULT.model_copy(update={"structured": {"temperature": 18}})],
        ),
    ],
)
ALL_CONVERSATIONS = {**cases.CONVERSATIONS, "unknown_tool": UNKNOWN_TOOL, "structured": STRUCTURED}


# --- goldens --------------------------------------------------------------------------------


def test_golden_weather_initial_is_the_tools_list_exchange() -> None:
    out = CODEC.encode_request(cases.WEATHER_INITIAL)
    check_golden("mcp", "weather_initial", out.value)
    assert [m.get("method") for m in messages(out.value)] == ["tools/list", None]
    assert codes(out) == [
        ("system_dropped", "system"),
        ("tool_choice_dropped", "tool_choice"),
        ("text_dropped", "messages[0].parts[0]"),
        ("messages_regrouped", "messages"),  # the only message (user text) is not carried
    ]


def test_golden_weather_continuation_pairs_calls_and_results_by_jsonrpc_id() -> None:
    out = CODEC.encode_request(cases.WEATHER_CONTINUATION)
    check_golden("mcp", "weather_continuation", out.value)
    msgs = messages(out.value)
    # Both parallel requests go out before either answer comes back.
    directions = [e["dir"] for e in out.value]
    assert directions == [TO_SERVER, TO_CLIENT, TO_SERVER, TO_SERVER, TO_CLIENT, TO_CLIENT]
    assert [m["id"] for m in msgs[2:]] == [cases.PARIS.id, cases.TOKYO.id] * 2
    assert msgs[4]["result"] == {
        "content": [{"type": "text", "text": cases.PARIS_RESULT.content}],
        "isError": False,
    }
    assert msgs[5]["result"] == {
        "content": [{"type": "text", "text": "timeout after 10s"}],
        "isError": True,
    }


def test_golden_weather_tool_use_is_two_tools_call_requests() -> None:
    out = CODEC.encode_response(cases.WEATHER_TOOL_USE)
    check_golden("mcp", "weather_tool_use", out.value)
    assert [m["params"] for m in out.value] == [
        {"name": "get_weather", "arguments": {"location": "Paris", "unit": "c"}},
        {"name": "get_weather", "arguments": {"location": "Tokyo", "unit": "c"}},
    ]
    assert out.warnings == []


def test_golden_weather_final_carries_nothing_and_warns_text_dropped() -> None:
    out = CODEC.encode_response(cases.WEATHER_FINAL_RESPONSE)
    check_golden("mcp", "weather_final", out.value)
    assert out.value == []
    assert codes(out) == [
        ("messages_regrouped", "message.parts"),
        ("stop_reason_dropped", "stop_reason"),
        ("text_dropped", "message.parts[0]"),
    ]


def test_golden_weather_tool_use_stream_wraps_requests_in_sse_message_events() -> None:
    out = CODEC.encode_stream(cases.WEATHER_TOOL_USE)
    check_golden("mcp", "weather_tool_use_stream", out.value)
    assert out.value == [
        {"event": "message", "data": m} for m in CODEC.encode_response(cases.WEATHER_TOOL_USE).value
    ]


def test_goldens_say_what_the_reference_capture_says() -> None:
    ours = CODEC.decode_request(CODEC.encode_request(cases.WEATHER_CONTINUATION).value).value
    ref = CODEC.decode_request(load("transcript.2025-11-25")).value
    ref_calls = [c for m in ref.messages for c in m.tool_calls][:2]
    ref_results = [r for m in ref.messages for r in m.tool_results][:2]
    our_calls = [c for m in ours.messages for c in m.tool_calls]
    our_results = [r for m in ours.messages for r in m.tool_results]
    assert [(c.name, c.arguments) for c in our_calls] == [(c.name, c.arguments) for c in ref_calls]
    assert [(r.text, r.is_error) for r in our_results] == [
        (r.text, r.is_error) for r in ref_results
    ]
    assert ours.tools[0].parameters == ref.tools[0].parameters
    assert ours.tools[0].description == ref.tools[0].description


# --- reference files ------------------------------------------------------------------------


REFERENCE_KINDS = {
    "initialize.request": "transcript",
    "initialize.response": "transcript",
    "tools_list.request": "tools_list",
    "tools_list.response": "tools_list",
    "tools_call.request.paris": "tools_call",
    "tools_call.request.tokyo": "tools_call",
    "tools_call.response.paris": "call_result",
    "tools_call.response.tokyo_error": "call_result",
    "tools_call.response.protocol_error_unknown_tool": "call_result",
    "transcript.2025-11-25": "transcript",
    "transcript.2026-07-28": "transcript",
}


def test_every_reference_file_is_decoded_here() -> None:
    tested = {f"mcp.{name}.json" for name in REFERENCE_KINDS}
    assert {p.name for p in REFERENCE.glob("mcp.*.json")} == tested


@pytest.mark.parametrize("name", sorted(REFERENCE_KINDS))
def test_detect_names_the_kind_of_every_reference_file(name: str) -> None:
    assert detect(load(name)) == ("mcp", REFERENCE_KINDS[name])


@pytest.mark.parametrize(
    "name", ["initialize.request", "initialize.response", "tools_list.request"]
)
def test_decode_handshake_and_list_request_give_an_empty_conversation(name: str) -> None:
    out = CODEC.decode_request(load(name))
    assert out.value == Conversation()
    assert out.warnings == []


def test_decode_reference_tools_list_response() -> None:
    conv = CODEC.decode_request(load("tools_list.response")).value
    assert conv.messages == []
    (tool,) = conv.tools
    assert tool.name == "get_weather"
    assert tool.title == "Get weather"
    assert tool.description == "Get the current weather for a location."
    assert tool.parameters == cases.WEATHER_TOOL.parameters
    assert tool.output_schema is not None
    assert tool.output_schema["required"] == ["location", "temperature", "unit"]
    assert tool.annotations == {"openWorldHint": True, "readOnlyHint": True}
    assert tool.provider_details is None


@pytest.mark.parametrize(
    ("name", "call_id", "city"), [("paris", "2", "Paris"), ("tokyo", "3", "Tokyo")]
)
def test_decode_reference_tools_call_request(name: str, call_id: str, city: str) -> None:
    conv = CODEC.decode_request(load(f"tools_call.request.{name}")).value
    assert conv.messages == [
        Message(
            role="assistant",
            parts=[
                ToolCall(id=call_id, name="get_weather", arguments={"location": city, "unit": "c"})
            ],
        )
    ]
    response = CODEC.decode_response(load(f"tools_call.request.{name}")).value
    assert response.message.tool_calls == conv.messages[0].tool_calls
    assert response.stop_reason == "tool_use"


def test_decode_reference_paris_result_keeps_text_and_structured_content() -> None:
    (msg,) = CODEC.decode_request(load("tools_call.response.paris")).value.messages
    (result,) = msg.tool_results
    assert msg.role == "tool"
    assert result.call_id == "2"
    assert result.name is None  # no request in the payload to take the name from
    assert (
        json.loads(result.text)
        == result.structured
        == {"location": "Paris", "temperature": 18, "unit": "c", "conditions": "partly cloudy"}
    )
    assert result.is_error is False


def test_decode_reference_tokyo_timeout_is_a_tool_error_result() -> None:
    (msg,) = CODEC.decode_request(load("tools_call.response.tokyo_error")).value.messages
    assert msg.tool_results == [ToolResult(call_id="3", content="timeout after 10s", is_error=True)]


def test_decode_reference_unknown_tool_is_a_protocol_error_result() -> None:
    (msg,) = CODEC.decode_request(
        load("tools_call.response.protocol_error_unknown_tool")
    ).value.messages
    assert msg.tool_results == [
        ToolResult(
            call_id="4",
            content="Unknown tool: get_wether",
            is_error=True,
            error_type="protocol",
            provider_details={
                "mcp": {"error": {"code": -32602, "message": "Unknown tool: get_wether"}}
            },
        )
    ]


def test_decode_reference_transcript_2025_11_25() -> None:
    out = CODEC.decode_request(load("transcript.2025-11-25"))
    conv = out.value
    assert out.warnings == []
    assert [t.name for t in conv.tools] == ["get_weather"]
    # The capture calls sequentially: each call and its answer is its own turn.
    assert [m.role for m in conv.messages] == ["assistant", "tool"] * 3
    calls = [c for m in conv.messages for c in m.tool_calls]
    results = [r for m in conv.messages for r in m.tool_results]
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("2", "get_weather", {"location": "Paris", "unit": "c"}),
        ("3", "get_weather", {"location": "Tokyo", "unit": "c"}),
        ("4", "get_wether", {"location": "Oslo"}),
    ]
    assert [(r.call_id, r.name, r.is_error, r.error_type) for r in results] == [
        ("2", "get_weather", False, None),
        ("3", "get_weather", True, None),
        ("4", "get_wether", True, "protocol"),
    ]
    assert results[1].content == "timeout after 10s"
    assert results[2].content == "Unknown tool: get_wether"
    assert results[0].structured == json.loads(cases.PARIS_RESULT.text)


def test_decode_reference_transcript_2026_07_28_keeps_meta_and_result_type() -> None:
    out = CODEC.decode_request(load("transcript.2026-07-28"))
    conv = out.value
    assert out.warnings == []  # server/discover is the handshake of this revision
    assert [t.name for t in conv.tools] == ["get_weather"]
    calls = [c for m in conv.messages for c in m.tool_calls]
    results = [r for m in conv.messages for r in m.tool_results]
    assert [(c.id, c.arguments.get("location")) for c in calls] == [
        ("3", "Paris"),
        ("4", "Tokyo"),
        ("5", "Tokyo"),
    ]
    assert calls[0].provider_details is not None
    assert calls[0].provider_details["mcp"]["_meta"][META_KEY] == "2026-07-28"  # type: ignore[index]
    assert calls[2].provider_details is None  # the request that forgot its _meta
    assert results[0].provider_details is not None
    assert results[0].provider_details["mcp"]["resultType"] == "complete"  # type: ignore[index]
    assert [(r.call_id, r.is_error, r.error_type) for r in results] == [
        ("3", False, None),
        ("4", True, None),
        ("5", True, "protocol"),
    ]
    assert results[2].text.startswith("params._meta must be an object")


def test_reencoded_2026_transcript_keeps_every_call_and_result_message() -> None:
    ref = messages(load("transcript.2026-07-28"))
    again = messages(CODEC.encode_request(CODEC.decode_request(ref).value).value)
    cycle = [m for m in ref if m.get("method") == "tools/call" or m["id"] in (3, 4, 5)]
    # The same messages, except that integer JSON-RPC ids come back as strings.
    assert again[2:] == [{**m, "id": str(m["id"])} for m in cycle]


def test_decode_of_encode_of_reference_transcript_is_a_fixed_point() -> None:
    first = CODEC.decode_request(load("transcript.2025-11-25")).value
    assert CODEC.decode_request(CODEC.encode_request(first).value).value == first


# --- SDK validation -------------------------------------------------------------------------


def validate_message(msg: dict[str, Any], method: str | None) -> None:
    """One JSON-RPC message against the SDK's envelope and the method's own types."""
    if "method" in msg:
        assert_params(sdk.JSONRPCRequest, msg)
        assert_params(wire.JSONRPCRequest, msg)
        body = {"method": msg["method"], "params": msg["params"]}
        if msg["method"] == "tools/call":
            assert_params(sdk.CallToolRequest, body)
            assert_params(wire.CallToolRequest, msg)
        else:
            assert_params(sdk.ListToolsRequest, body)
            assert_params(wire.ListToolsRequest, msg)
    elif "error" in msg:
        assert_params(sdk.JSONRPCError, msg)
        assert_params(wire.JSONRPCErrorResponse, msg)
    else:
        assert_params(sdk.JSONRPCResponse, msg)
        result_type = sdk.ListToolsResult if method == "tools/list" else sdk.CallToolResult
        wire_type = wire.ListToolsResult if method == "tools/list" else wire.CallToolResult
        assert_params(result_type, msg["result"])
        assert_params(wire_type, msg["result"])


def validate_transcript(transcript: list[dict[str, Any]]) -> None:
    methods: dict[Any, str] = {}
    for entry in transcript:
        msg = entry["msg"]
        assert entry["dir"] == (TO_SERVER if "method" in msg else TO_CLIENT)
        if "method" in msg:
            methods[msg["id"]] = msg["method"]
        validate_message(msg, methods.get(msg["id"]))


@pytest.mark.parametrize(
    ("model", "payload"),
    [
        (wire.CallToolResult, {"content": [], "is_error": True}),
        (sdk.CallToolResult, {"content": [{"type": "text", "txt": "x"}]}),
        (wire.ListToolsResult, {"tools": [{"name": "t", "input_schema": {"type": "object"}}]}),
    ],
)
def test_sdk_validation_catches_misspelled_keys(model: Any, payload: Any) -> None:
    with pytest.raises((AssertionError, ValueError)):
        assert_params(model, payload)


@pytest.mark.parametrize("name", sorted(ALL_CONVERSATIONS))
def test_encoded_request_validates_with_mcp_sdk_types(name: str) -> None:
    validate_transcript(CODEC.encode_request(ALL_CONVERSATIONS[name]).value)


@pytest.mark.parametrize("name", sorted(cases.RESPONSES))
def test_encoded_response_and_stream_validate_with_mcp_sdk_types(name: str) -> None:
    resp = cases.RESPONSES[name]
    for msg in CODEC.encode_response(resp).value:
        validate_message(msg, None)
    for event in CODEC.encode_stream(resp).value:
        assert set(event) == {"event", "data"}
        assert event["event"] == "message"
        validate_message(event["data"], None)


def test_reencoded_2026_calls_and_results_validate_with_2026_wire_models() -> None:
    conv = CODEC.decode_request(load("transcript.2026-07-28")).value
    msgs = messages(CODEC.encode_request(conv).value)
    assert_params(wire_next.CallToolRequest, msgs[2])
    assert_params(wire_next.CallToolResult, msgs[3]["result"])
    assert_params(wire_next.JSONRPCErrorResponse, msgs[7])


# --- round trips ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ALL_CONVERSATIONS))
def test_round_trip_keeps_tools_calls_results_and_batches(name: str) -> None:
    conv = ALL_CONVERSATIONS[name]
    back = CODEC.decode_request(CODEC.encode_request(conv).value).value
    expected = carried(conv)
    if name == "unknown_tool":
        (result,) = back.messages[1].tool_results
        assert result.error_type == "protocol"
        plain = result.model_copy(update={"error_type": None, "provider_details": None})
        tool_turn = Message(role="tool", parts=[plain])
        back = back.model_copy(update={"messages": [back.messages[0], tool_turn]})
    assert back == expected


@pytest.mark.parametrize("name", sorted(cases.RESPONSES))
def test_stream_decodes_to_the_same_response_as_the_request_array(name: str) -> None:
    resp = cases.RESPONSES[name]
    from_array = CODEC.decode_response(CODEC.encode_response(resp).value).value
    assert CODEC.decode_stream(CODEC.encode_stream(resp).value).value == from_array
    calls = [c.model_copy(update={"raw_arguments": None}) for c in resp.message.tool_calls]
    assert from_array.message.tool_calls == calls


def test_decode_stream_accepts_data_as_json_text() -> None:
    events = [
        {"event": "message", "data": json.dumps(m)}
        for m in CODEC.encode_response(cases.WEATHER_TOOL_USE).value
    ]
    assert CODEC.decode_stream(events).value == cases.WEATHER_TOOL_USE


# --- MCP rules ------------------------------------------------------------------------------


def test_encode_unknown_tool_result_as_jsonrpc_protocol_error() -> None:
    msgs = messages(CODEC.encode_request(UNKNOWN_TOOL).value)
    assert msgs[-1] == {
        "jsonrpc": "2.0",
        "id": "call_oslo",
        "error": {"code": -32602, "message": "Unknown tool: get_wether"},
    }


@pytest.mark.parametrize(
    "error_type", ["timeout", "exception", "validation", "malformed_arguments", None]
)
def test_encode_tool_and_argument_failures_as_is_error_results(error_type: str | None) -> None:
    result = ToolResult(call_id="c1", content="bad", is_error=True, error_type=error_type)
    conv = Conversation(messages=[Message(role="tool", parts=[result])])
    (response,) = messages(CODEC.encode_request(conv).value)[2:]
    assert response["result"] == {"content": [{"type": "text", "text": "bad"}], "isError": True}


def test_protocol_error_keeps_its_code_and_data_through_a_round_trip() -> None:
    msg = {
        "jsonrpc": "2.0",
        "id": "c9",
        "error": {"code": -32603, "message": "boom", "data": {"trace": "x"}},
    }
    conv = CODEC.decode_request(msg).value
    assert messages(CODEC.encode_request(conv).value)[2:] == [msg]


def test_integer_jsonrpc_ids_become_string_call_ids() -> None:
    call = CODEC.decode_request(load("tools_call.request.paris")).value.messages[0].parts[0]
    assert isinstance(call, ToolCall)
    assert call.id == "2"
    turn = ModelResponse(message=Message(role="assistant", parts=[call]))
    assert CODEC.encode_response(turn).value[0]["id"] == "2"


def test_result_takes_its_name_from_the_paired_call() -> None:
    transcript = [load("tools_call.request.tokyo"), load("tools_call.response.tokyo_error")]
    conv = CODEC.decode_request(transcript).value
    assert conv.messages[1].tool_results[0].name == "get_weather"


def test_requests_sent_before_their_responses_decode_as_one_parallel_batch() -> None:
    transcript = [
        load("tools_call.request.paris"),
        load("tools_call.request.tokyo"),
        load("tools_call.response.tokyo_error"),
        load("tools_call.response.paris"),
    ]
    conv = CODEC.decode_request(transcript).value
    assert [m.role for m in conv.messages] == ["assistant", "tool"]
    assert [c.id for c in conv.messages[0].tool_calls] == ["2", "3"]
    assert [r.call_id for r in conv.messages[1].tool_results] == ["3", "2"]


def test_encode_warns_for_everything_mcp_cannot_carry() -> None:
    conv = Conversation(
        system="be brief",
        tool_choice=ToolChoice(mode="tool", name="get_weather"),
        model="m",
        temperature=0.5,
        messages=[
            Message(role="user", parts=[Text(text="hi"), Image(data=cases.PIXEL)]),
            Message(
                role="assistant",
                parts=[Thinking(text="hmm", signature="s"), Text(text="calling"), cases.PARIS],
            ),
        ],
    )
    assert codes(CODEC.encode_request(conv)) == [
        ("system_dropped", "system"),
        ("tool_choice_dropped", "tool_choice"),
        ("model_settings_dropped", "model"),
        ("model_settings_dropped", "temperature"),
        ("text_dropped", "messages[0].parts[0]"),
        ("image_dropped", "messages[0].parts[1]"),
        ("thinking_dropped", "messages[1].parts[0]"),
        ("text_dropped", "messages[1].parts[1]"),
        # the user message leaves nothing: two messages read back as one
        ("messages_regrouped", "messages"),
    ]


def test_any_tool_choice_is_warned_because_decoding_cannot_bring_it_back() -> None:
    assert codes(CODEC.encode_request(Conversation(tool_choice=ToolChoice()))) == [
        ("tool_choice_dropped", "tool_choice")
    ]
    assert codes(CODEC.encode_request(Conversation())) == []


def test_call_id_that_looks_like_the_tools_list_id_still_pairs() -> None:
    call = ToolCall(id="1", name="get_weather", arguments={"location": "Oslo"})
    result = ToolResult(call_id="1", name="get_weather", content="4 degrees")
    conv = Conversation(
        tools=[cases.WEATHER_TOOL],
        messages=[
            Message(role="assistant", parts=[call]),
            Message(role="tool", parts=[result]),
        ],
    )
    assert CODEC.decode_request(CODEC.encode_request(conv).value).value == conv


def test_thinking_and_text_in_a_model_turn_are_warned() -> None:
    out = CODEC.encode_response(cases.THINKING_CALL)
    assert codes(out) == [
        ("messages_regrouped", "message.parts"),  # the call moves from parts[2] to parts[0]
        ("thinking_dropped", "message.parts[0]"),
        ("text_dropped", "message.parts[1]"),
    ]
    assert [m["id"] for m in out.value] == ["toolu_think_1"]


def test_encode_raw_arguments_warns_and_sends_object_arguments() -> None:
    out = CODEC.encode_response(cases.MALFORMED_ARGS)
    assert out.value[0]["params"] == {"name": "get_weather", "arguments": {}}
    assert codes(out) == [("raw_arguments_dropped", "message.parts[0]")]


def test_encode_renames_an_illegal_tool_name_consistently_and_warns_at_each_path() -> None:
    tool = Tool(name="get weather")
    call = ToolCall(id="c1", name="get weather")
    conv = Conversation(tools=[tool], messages=[Message(role="assistant", parts=[call])])
    out = CODEC.encode_request(conv)
    msgs = messages(out.value)
    assert msgs[1]["result"]["tools"][0]["name"] == msgs[2]["params"]["name"] == "get_weather"
    assert codes(out) == [
        ("tool_name_renamed", "tools[0].name"),
        ("tool_name_renamed", "messages[0].parts[0].name"),
    ]


def test_encode_tool_carries_title_output_schema_and_annotations() -> None:
    listed = messages(CODEC.encode_request(STRUCTURED).value)[1]["result"]["tools"][0]
    assert listed["title"] == "Get weather"
    assert listed["outputSchema"]["properties"] == {"temperature": {"type": "number"}}
    assert listed["annotations"] == {"readOnlyHint": True}


def test_structured_result_becomes_structured_content() -> None:
    response = messages(CODEC.encode_request(STRUCTURED).value)[3]
    assert response["result"]["structuredContent"] == {"temperature": 18}


def test_strict_tool_is_warned() -> None:
    out = CODEC.encode_request(Conversation(tools=[Tool(name="t", strict=True)]))
    assert codes(out) == [("strict_dropped", "tools[0]")]


def test_image_result_encodes_as_inline_image_block() -> None:
    msgs = messages(CODEC.encode_request(cases.IMAGE_RESULT).value)
    assert msgs[1]["result"]["tools"][0]["name"] == "camera.snapshot"  # dots are legal in MCP
    assert msgs[3]["result"]["content"] == [
        {"type": "text", "text": "snapshot taken"},
        {"type": "image", "data": cases.PIXEL, "mimeType": "image/png"},
    ]


def test_image_url_result_travels_as_resource_link_and_back() -> None:
    result = ToolResult(call_id="c1", content=[Image(url="https://x.test/a.png")])
    block = result_to_mcp(result)["content"][0]
    assert block == {
        "type": "resource_link",
        "uri": "https://x.test/a.png",
        "name": "image",
        "mimeType": "image/png",
    }
    assert_params(wire.ResourceLink, block)
    assert result_from_mcp("c1", None, result_to_mcp(result)) == result


def test_unsupported_content_blocks_are_kept_and_written_back() -> None:
    audio = {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}
    text = {"type": "text", "text": "hi", "annotations": {"priority": 1}}
    wire_result = {"content": [audio, text], "isError": False}
    result = result_from_mcp("c1", "t", wire_result)
    assert isinstance(result.content, list)
    assert [p.text for p in result.content if isinstance(p, Text)] == ["[audio audio/wav]", "hi"]
    assert result_to_mcp(result) == wire_result


def test_provider_details_of_other_protocols_are_warned() -> None:
    details = {"gemini": {"thoughtSignature": "x"}}
    call = cases.PARIS.model_copy(update={"provider_details": details})
    out = CODEC.encode_response(ModelResponse(message=Message(role="assistant", parts=[call])))
    assert ("provider_details_dropped", "message.parts[0]") in codes(out)
    assert "provider_details" not in json.dumps(out.value)


def test_handshake_is_skipped_and_other_methods_are_warned() -> None:
    transcript = [
        load("initialize.request"),
        {"jsonrpc": "2.0", "method": "notifications/x"},
        {"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {}},
        load("tools_call.request.paris"),
    ]
    out = CODEC.decode_request(transcript)
    assert codes(out) == [("message_ignored", "$[2]")]
    assert [c.id for m in out.value.messages for c in m.tool_calls] == ["2"]


def test_tool_helpers_round_trip_the_reference_tool() -> None:
    listed = load("tools_list.response")["result"]["tools"][0]
    assert tool_to_mcp(tool_from_mcp(listed)) == listed
    extra = {**listed, "icons": [{"src": "https://x.test/i.png"}], "_meta": {"k": 1}}
    tool = tool_from_mcp(extra)
    assert tool.provider_details == {"mcp": {"icons": extra["icons"], "_meta": {"k": 1}}}
    assert tool_to_mcp(tool) == extra


def test_decode_bare_tools_result() -> None:
    conv = CODEC.decode_request(load("tools_list.response")["result"]).value
    assert [t.name for t in conv.tools] == ["get_weather"]


# --- detection ------------------------------------------------------------------------------


def test_detect_kinds_of_our_own_payloads() -> None:
    assert CODEC.detect(CODEC.encode_request(cases.WEATHER_CONTINUATION).value) == "transcript"
    assert CODEC.detect(CODEC.encode_response(cases.WEATHER_TOOL_USE).value) == "response"
    assert CODEC.detect(CODEC.encode_stream(cases.WEATHER_TOOL_USE).value) == "stream"
    assert CODEC.detect(load("tools_list.response")["result"]) == "tools_list"
    assert CODEC.detect(messages(load("transcript.2025-11-25"))) == "transcript"


@pytest.mark.parametrize(
    "path", sorted(p.name for p in REFERENCE.glob("*.json") if not p.name.startswith("mcp."))
)
def test_detect_does_not_claim_other_vendors_payloads(path: str) -> None:
    assert CODEC.detect(json.loads((REFERENCE / path).read_text())) is None


@pytest.mark.parametrize(
    "payload",
    [
        [],
        {},
        "x",
        {"tools": []},
        {"tools": [{"name": "t", "input_schema": {"type": "object"}}], "max_tokens": 5},
        {"tools": [{"name": "t", "inputSchema": {}}], "jsonrpc": "1.0"},
        [{"type": "message_start"}],
        [{"event": "message", "data": {"type": "response.created"}}],
    ],
)
def test_detect_ignores_shapes_that_are_not_mcp(payload: Any) -> None:
    assert CODEC.detect(payload) is None


# --- bad input ------------------------------------------------------------------------------


def transcript_with(index: int, **changes: Any) -> list[dict[str, Any]]:
    transcript = load("transcript.2025-11-25")
    transcript[index]["msg"].update(changes)
    return transcript


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ("not json-rpc", "$"),
        ({"jsonrpc": "1.0", "id": 1, "method": "tools/call"}, "$.jsonrpc"),
        ({"jsonrpc": "2.0", "id": 1}, "$"),
        ({"jsonrpc": "2.0", "id": True, "method": "tools/call", "params": {"name": "t"}}, "$.id"),
        ({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "t"}}, "$.id"),
        (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "t", "arguments": "{}"},
            },
            "$.params.arguments",
        ),
        (transcript_with(5, params={"arguments": {}}), "$[5].msg.params.name"),
        (
            transcript_with(4, result={"tools": [{"name": "t"}]}),
            "$[4].msg.result.tools[0].inputSchema",
        ),
        (transcript_with(6, result={"content": "hi"}), "$[6].msg.result.content"),
        (
            transcript_with(6, result={"content": [{"type": "image", "data": "x"}]}),
            "$[6].msg.result.content[0].mimeType",
        ),
        (transcript_with(10, error={"code": "bad", "message": "m"}), "$[10].msg.error.code"),
        ([{"dir": "sideways", "msg": {"jsonrpc": "2.0", "method": "ping"}}], "$[0].dir"),
        ([{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}}, 5], "$[1]"),
    ],
)
def test_decode_request_rejects_bad_input_with_its_path(payload: Any, path: str) -> None:
    with pytest.raises(CodecError) as err:
        CODEC.decode_request(payload)
    assert err.value.path == path
    assert err.value.protocol == "mcp"


def test_decode_response_rejects_a_message_that_is_not_a_call() -> None:
    with pytest.raises(CodecError) as err:
        CODEC.decode_response([load("tools_call.request.paris"), load("tools_list.request")])
    assert err.value.path == "$[1].method"


@pytest.mark.parametrize(
    ("events", "path"),
    [
        ({"event": "message"}, "$"),
        ([{"event": "message"}], "$[0].data"),
        ([{"event": "message", "data": "{not json"}], "$[0].data"),
        (
            [
                {
                    "event": "message",
                    "data": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}},
                }
            ],
            "$[0].data.params.name",
        ),
    ],
)
def test_decode_stream_rejects_bad_events_with_their_path(events: Any, path: str) -> None:
    with pytest.raises(CodecError) as err:
        CODEC.decode_stream(events)
    assert err.value.path == path
