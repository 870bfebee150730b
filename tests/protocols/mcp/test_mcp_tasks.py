"""MCP tasks (spec 2025-11-25), fragments and what MCP cannot carry (hosted tools, refusals).

The task exchange is assembled in the tests from the spec's own example messages (the real
payloads in ``tests/fixtures/real``, plus the ``tasks/result`` request shown on the same page).
"""

from __future__ import annotations

import json
from typing import Any

import mcp.types as sdk
import mcp_types._v2025_11_25 as wire
import pytest

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
from flowdebug.protocols import detect
from flowdebug.protocols.mcp.codec import CODEC
from tests.paths import REAL
from tests.sdkcheck import assert_params

TO_SERVER, TO_CLIENT = "client->server", "server->client"
TASK_ID = "786512e2-9e0d-44bd-8f29-789f320fe840"
NEW_YORK = "Current weather in New York:\nTemperature: 72°F\nConditions: Partly cloudy"


def real(name: str) -> Any:
    return json.loads((REAL / f"mcp.{name}.json").read_text("utf-8"))


CALL = real("tools_call.spec-tasks-augmented-get-weather")  # id 1, params.task.ttl
CREATED = real("call_result.spec-tasks-create-task-result")  # id 1, CreateTaskResult
RESULT = real("call_result.spec-tasks-result-new-york")  # id 4, CallToolResult
STATUS = real("transcript.spec-tasks-status-notification")
CANCELLED = real("transcript.spec-tasks-cancel-response")  # id 6
# The spec's "Retrieving Task Results" request.
ASK = {"jsonrpc": "2.0", "id": 4, "method": "tasks/result", "params": {"taskId": TASK_ID}}
GET = {"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": TASK_ID}}
CANCEL = {"jsonrpc": "2.0", "id": 6, "method": "tasks/cancel", "params": {"taskId": TASK_ID}}


def transcript(*msgs: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"dir": TO_SERVER if "method" in m else TO_CLIENT, "msg": m} for m in msgs]


def codes(converted: Any) -> list[tuple[str, str]]:
    return [(w.code, w.path) for w in converted.warnings]


def results(conv: Conversation) -> list[ToolResult]:
    return [r for m in conv.messages for r in m.tool_results]


# --- tasks ----------------------------------------------------------------------------------


def test_task_result_pairs_with_the_originating_call_not_the_tasks_result_id() -> None:
    out = CODEC.decode_request(transcript(CALL, CREATED, GET, STATUS, ASK, RESULT))
    conv = out.value
    assert codes(out) == []
    assert [m.role for m in conv.messages] == ["assistant", "tool"]
    (call,) = conv.messages[0].tool_calls
    assert (call.id, call.name, call.arguments) == ("1", "get_weather", {"city": "New York"})
    assert call.provider_details == {"mcp": {"task": {"ttl": 60000}}}
    (result,) = results(conv)
    assert (result.call_id, result.name, result.content) == ("1", "get_weather", NEW_YORK)
    task = result.provider_details["mcp"]["task"]
    assert task == {"created": CREATED["result"], "request": {"id": 4, "params": ASK["params"]}}


def test_related_task_meta_links_a_result_whose_tasks_result_request_is_missing() -> None:
    conv = CODEC.decode_request(transcript(CALL, CREATED, RESULT)).value
    assert [r.call_id for r in results(conv)] == ["1"]


def test_a_task_that_fails_with_a_json_rpc_error_is_an_error_result_of_the_call() -> None:
    error = {"jsonrpc": "2.0", "id": 4, "error": {"code": -32603, "message": "boom"}}
    (result,) = results(CODEC.decode_request(transcript(CALL, CREATED, ASK, error)).value)
    assert (result.call_id, result.is_error, result.error_type) == ("1", True, "protocol")


def test_a_cancelled_task_leaves_its_call_without_result_and_says_so() -> None:
    out = CODEC.decode_request(transcript(CALL, CREATED, CANCEL, CANCELLED, STATUS))
    assert results(out.value) == []
    (warning,) = out.warnings
    assert warning.code == "task_without_result"
    assert "cancelled" in warning.message and TASK_ID in warning.message


def test_a_lone_create_task_result_says_the_result_comes_later() -> None:
    out = CODEC.decode_request(CREATED)
    assert out.value.messages == []
    assert [w.code for w in out.warnings] == ["task_pending"]


def test_task_exchange_encodes_back_and_reads_back_the_same() -> None:
    first = CODEC.decode_request(transcript(CALL, CREATED, GET, STATUS, ASK, RESULT)).value
    out = CODEC.encode_request(first)
    assert codes(out) == []
    msgs = [e["msg"] for e in out.value[2:]]
    assert msgs == [
        {**CALL, "id": "1"},
        {**CREATED, "id": "1"},
        ASK,
        RESULT,
    ]
    assert CODEC.decode_request(out.value).value == first


def test_encoded_task_exchange_validates_against_the_sdk_types() -> None:
    first = CODEC.decode_request(transcript(CALL, CREATED, ASK, RESULT)).value
    call, created, ask, result = (e["msg"] for e in CODEC.encode_request(first).value[2:])
    assert_params(wire.CallToolRequest, call)
    assert_params(sdk.CreateTaskResult, created["result"])
    assert_params(wire.CreateTaskResult, created["result"])
    assert_params(sdk.GetTaskPayloadRequest, {"method": ask["method"], "params": ask["params"]})
    assert_params(wire.GetTaskPayloadRequest, ask)
    assert_params(sdk.CallToolResult, result["result"])
    assert_params(wire.CallToolResult, result["result"])


@pytest.mark.parametrize(
    ("msg", "kind"),
    [
        (CALL, "tools_call"),
        (CREATED, "call_result"),
        (RESULT, "call_result"),
        (ASK, "transcript"),
        (GET, "transcript"),
        (STATUS, "transcript"),
        (CANCELLED, "transcript"),
    ],
)
def test_task_messages_are_detected_as_mcp(msg: dict[str, Any], kind: str) -> None:
    assert detect(msg) == ("mcp", kind)


def test_a_transcript_with_task_messages_is_detected() -> None:
    assert detect([CALL, CREATED, ASK, RESULT]) == ("mcp", "transcript")
    assert detect(transcript(CALL, CREATED, ASK, RESULT)) == ("mcp", "transcript")


# --- fragments ------------------------------------------------------------------------------


def test_a_bare_call_tool_result_is_read_as_the_response_to_request_1() -> None:
    whole, note = CODEC.fragment(RESULT["result"])
    assert whole == {"jsonrpc": "2.0", "id": 1, "result": RESULT["result"]}
    assert "\n" not in note and "CallToolResult" in note


def test_a_bare_tool_is_read_as_a_tools_list_result() -> None:
    tool = real("fragment.spec-tool-get-weather-data-output-schema")
    whole, note = CODEC.fragment(tool)
    assert whole == {"tools": [tool]} and detect(whole) == ("mcp", "tools_list")
    assert "\n" not in note


@pytest.mark.parametrize(
    "payload",
    [
        RESULT,  # a whole JSON-RPC message: detect's business
        {"type": "text", "text": "a bare content block"},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},  # Anthropic message
        {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "x"}]},
        {"name": "t", "input_schema": {"type": "object"}},  # Anthropic tool
        {"role": "assistant", "tool_calls": []},  # OpenAI Chat message
        {"role": "model", "parts": [{"text": "hi"}]},  # Gemini content
        {"content": [{"type": "output_text", "text": "x"}]},  # not MCP block types
        {"content": [], "role": "tool"},
        [{"type": "text", "text": "x"}],
    ],
)
def test_fragment_claims_nothing_but_bare_mcp_objects(payload: Any) -> None:
    assert CODEC.fragment(payload) is None


# --- what MCP cannot carry ------------------------------------------------------------------

HOSTED_CALL = HostedCall(
    id="srvtoolu_1",
    name="web_search",
    arguments={"query": "weather"},
    source="anthropic",
    provider_details={"anthropic": {"type": "server_tool_use"}},
)
HOSTED_RESULT = HostedResult(call_id="srvtoolu_1", name="web_search", source="anthropic")


def test_hosted_parts_of_a_conversation_are_warned_by_path_and_type() -> None:
    conv = Conversation(messages=[Message(role="assistant", parts=[HOSTED_CALL, HOSTED_RESULT])])
    out = CODEC.encode_request(conv)
    assert codes(out)[:2] == [
        ("hosted_call_dropped", "messages[0].parts[0]"),
        ("hosted_result_dropped", "messages[0].parts[1]"),
    ]
    assert "server_tool_use" in out.warnings[0].message
    assert len(out.value) == 2  # the tools/list exchange only


def test_hosted_parts_of_a_model_turn_are_warned() -> None:
    call = ToolCall(id="c1", name="get_weather")
    resp = ModelResponse(
        message=Message(role="assistant", parts=[HOSTED_CALL, HOSTED_RESULT, call]),
        stop_reason="tool_use",
    )
    out = CODEC.encode_response(resp)
    assert [m["id"] for m in out.value] == ["c1"]
    assert codes(out) == [
        ("messages_regrouped", "message.parts"),
        ("hosted_call_dropped", "message.parts[0]"),
        ("hosted_result_dropped", "message.parts[1]"),
    ]


def test_a_refusal_is_text_mcp_does_not_carry() -> None:
    refusal = Text(text="I can't help with that.", refusal=True)
    conv = Conversation(messages=[Message(role="assistant", parts=[refusal])])
    assert ("text_dropped", "messages[0].parts[0]") in codes(CODEC.encode_request(conv))


def test_a_refusal_flag_in_result_content_is_warned() -> None:
    result = ToolResult(
        call_id="c1", name="t", content=[Text(text="no", refusal=True), Text(text="more")]
    )
    conv = Conversation(
        messages=[
            Message(role="assistant", parts=[ToolCall(id="c1", name="t")]),
            Message(role="tool", parts=[result]),
        ]
    )
    assert codes(CODEC.encode_request(conv)) == [
        ("refusal_flattened", "messages[1].parts[0].content[0]")
    ]


def test_a_response_envelope_mcp_cannot_carry_is_warned_by_path() -> None:
    resp = ModelResponse(
        message=Message(role="assistant", parts=[ToolCall(id="c1", name="t")]),
        stop_reason="max_tokens",
        id="msg_1",
        model="m",
        usage={"input_tokens": 3, "reasoning_tokens": 1},
    )
    assert codes(CODEC.encode_response(resp)) == [
        ("stop_reason_dropped", "stop_reason"),
        ("response_id_dropped", "id"),
        ("model_settings_dropped", "model"),
        ("usage_dropped", "usage"),
    ]


def test_a_message_that_changes_shape_in_place_is_warned_at_its_own_path() -> None:
    call = ToolCall(id="c1", name="t")
    result = ToolResult(call_id="c1", name="t", content="ok")
    conv = Conversation(
        messages=[
            Message(role="assistant", parts=[Text(text="let me check"), call]),
            Message(role="tool", parts=[result]),
        ]
    )
    assert codes(CODEC.encode_request(conv)) == [
        ("text_dropped", "messages[0].parts[0]"),
        ("messages_regrouped", "messages[0]"),  # the call moves to parts[0]
    ]
