"""Shapes the vendors' APIs and SDKs accept, read by rule (issue 31): documented fragments
with a ``fragment_assumed`` warning, streams as loggers keep them, tool types by the facts."""

from __future__ import annotations

import json

import pytest

from flowdebug.errors import CodecError
from flowdebug.model import Text, Thinking, ToolCall, ToolResult
from flowdebug.protocols import PROTOCOLS
from flowdebug.protocols.convert import decode, encode
from tests.paths import FIXTURES, REAL
from tests.sdkcheck import validate_wire


def test_anthropic_message_as_the_docs_print_it_is_read_as_a_response() -> None:
    got = decode(
        {
            "content": [
                {"type": "thinking", "thinking": "Weather first.", "signature": "EqQB"},
                {"type": "text", "text": "Let me check."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "get_weather",
                    "input": {"city": "SF"},
                },
            ],
            "stop_reason": "tool_use",
        }
    )
    assert (got.protocol, got.kind) == ("anthropic", "response")
    assert [w.code for w in got.warnings] == ["fragment_assumed"]
    assert "without id, type, role" in got.warnings[0].message
    thinking, text, call = got.response.message.parts  # type: ignore[union-attr]
    assert isinstance(thinking, Thinking) and thinking.signature == "EqQB"
    assert isinstance(text, Text) and text.text == "Let me check."
    assert isinstance(call, ToolCall) and (call.id, call.arguments) == ("toolu_1", {"city": "SF"})
    assert got.response.stop_reason == "tool_use"  # type: ignore[union-attr]


def test_content_of_openai_shaped_text_alone_is_not_claimed_as_anthropic() -> None:
    from flowdebug.protocols.anthropic.fragment import fragment

    assert fragment({"content": [{"type": "text", "text": "hi"}]}) is None


def _bedrock_bare_stream() -> list[dict[str, object]]:
    return [
        {"role": "assistant"},
        {"delta": {"text": "Checking."}, "contentBlockIndex": 0},
        {"contentBlockIndex": 0},
        {
            "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather"}},
            "contentBlockIndex": 1,
        },
        {"delta": {"toolUse": {"input": '{"city": '}}, "contentBlockIndex": 1},
        {"delta": {"toolUse": {"input": '"SF"}'}}, "contentBlockIndex": 1},
        {"contentBlockIndex": 1},
        {"stopReason": "tool_use"},
        {
            "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
            "metrics": {"latencyMs": 9},
        },
    ]


def test_bedrock_stream_event_bodies_without_their_type_keys_are_read_as_a_stream() -> None:
    got = decode(_bedrock_bare_stream())
    assert (got.protocol, got.kind) == ("bedrock", "stream")
    assert [w.code for w in got.warnings] == ["fragment_assumed"]
    text, call = got.response.message.parts  # type: ignore[union-attr]
    assert isinstance(text, Text) and text.text == "Checking."
    assert isinstance(call, ToolCall) and (call.id, call.arguments) == ("tooluse_1", {"city": "SF"})
    assert got.response.stop_reason == "tool_use"  # type: ignore[union-attr]
    assert got.response.usage == {"input_tokens": 10, "output_tokens": 5}  # type: ignore[union-attr]


def test_a_list_without_a_content_block_event_is_not_claimed_as_bedrock_events() -> None:
    from flowdebug.protocols.bedrock.fragment import bare_events

    assert bare_events([{"role": "assistant"}, {"stopReason": "end_turn"}]) is None
    assert bare_events([{"delta": {"text": "x"}, "contentBlockIndex": 0}, {"other": 1}]) is None


def _chunk(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
    return {
        "id": "cmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "mistral-large-latest",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def test_openai_compatible_tool_call_deltas_without_index_are_one_call_per_id() -> None:
    def whole(call_id: str, city: str) -> dict[str, object]:
        arguments = json.dumps({"city": city})
        return {"id": call_id, "function": {"name": "get_weather", "arguments": arguments}}

    got = decode(
        [
            _chunk({"role": "assistant", "content": ""}),
            _chunk({"tool_calls": [whole("abc123", "Paris")]}),
            _chunk({"tool_calls": [whole("def456", "Rome")]}, "tool_calls"),
        ]
    )
    assert (got.protocol, got.kind, got.warnings) == ("openai-chat", "stream", [])
    calls = got.response.message.parts  # type: ignore[union-attr]
    assert [(c.id, c.arguments) for c in calls] == [  # type: ignore[union-attr]
        ("abc123", {"city": "Paris"}),
        ("def456", {"city": "Rome"}),
    ]


def test_index_less_fragments_with_a_repeated_id_extend_their_call() -> None:
    got = decode(
        [
            _chunk({"tool_calls": [{"id": "a1", "function": {"name": "f", "arguments": '{"x"'}}]}),
            _chunk({"tool_calls": [{"id": "a1", "function": {"arguments": ": 1}"}}]}, "tool_calls"),
        ]
    )
    [call] = got.response.message.parts  # type: ignore[union-attr]
    assert (call.id, call.arguments) == ("a1", {"x": 1})  # type: ignore[union-attr]


def _anthropic_request(tools: list[dict[str, object]]) -> dict[str, object]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "tools": tools,
        "messages": [{"role": "user", "content": "Remember my city."}],
    }


def test_anthropic_memory_tool_is_a_client_declaration_and_goes_back_by_type() -> None:
    from flowdebug.protocols.convert import convert

    payload = _anthropic_request([{"type": "memory_20250818", "name": "memory"}])
    got = decode(payload)
    assert [t.name for t in got.conversation.tools] == ["memory"]  # type: ignore[union-attr]
    assert [(w.code, w.path) for w in got.warnings] == [
        ("tool_schema_vendor_defined", "$.tools[0].parameters")
    ]
    back, _ = convert(payload, "anthropic")
    assert back["tools"] == [{"name": "memory", "type": "memory_20250818"}]
    validate_wire("anthropic", "request", back)
    chat, _ = convert(payload, "openai-chat")
    assert [t["function"]["name"] for t in chat["tools"]] == ["memory"]


def test_anthropic_tool_types_are_client_tools_unless_documented_server_tools() -> None:
    from flowdebug.protocols.anthropic.tools import is_server_tool

    servers = [
        "web_search_20250305",
        "web_fetch_20250910",
        "code_execution_20250825",
        "tool_search_tool_regex_20251119",
        "tool_search_tool_bm25",
        "mcp_toolset",
    ]
    clients = [
        "memory_20250818",
        "bash_20250124",
        "text_editor_20250728",
        "computer_20251124",
        "gardening_20300101",
        "custom",
    ]
    assert [is_server_tool({"type": t, "name": "x"}) for t in servers] == [True] * len(servers)
    assert [is_server_tool({"type": t, "name": "x"}) for t in clients] == [False] * len(clients)
    got = decode(_anthropic_request([{"type": "gardening_20300101", "name": "garden"}]))
    assert [t.name for t in got.conversation.tools] == ["garden"]  # type: ignore[union-attr]


def _shape(name: str) -> object:
    return json.loads((FIXTURES / "shapes" / name).read_text())


def test_responses_item_references_with_or_without_type_are_left_out_by_name() -> None:
    got = decode(_shape("openai-responses.request.item-reference.json"))
    assert (got.protocol, got.kind) == ("openai-responses", "request")
    assert [(w.code, w.path) for w in got.warnings] == [
        ("item_reference_dropped", "$.input[0]"),
        ("item_reference_dropped", "$.input[1]"),
    ]
    assert "msg_67cb5c4b0e0c8190a9b3e8b4a6f6c7d8" in got.warnings[0].message
    [message] = got.conversation.messages  # type: ignore[union-attr]
    assert (message.role, message.parts) == ("user", [Text(text="And in Tokyo?")])


def _outputs(*items: dict[str, object]) -> dict[str, object]:
    def call(call_id: str, name: str) -> dict[str, object]:
        return {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"}

    return {"model": "gpt-4.1", "input": [call("c1", "a"), call("c2", "b"), *items]}


def test_responses_output_without_call_id_answers_the_earliest_unanswered_call() -> None:
    got = decode(_shape("openai-responses.request.function-call-output-without-call-id.json"))
    assert [(w.code, w.path) for w in got.warnings] == [("tool_call_id_missing", "$.input[2]")]
    assert "call_12345xyz" in got.warnings[0].message
    [result] = got.conversation.messages[-1].parts  # type: ignore[union-attr]
    assert isinstance(result, ToolResult)
    assert (result.call_id, result.name) == ("call_12345xyz", "get_weather")
    # Without a name, the earliest call no output answered; with one, the earliest of that name.
    output = {"type": "function_call_output", "output": "ok"}
    got = decode(_outputs({**output, "call_id": "c1"}, output), "openai-responses")
    assert [p.call_id for p in got.conversation.messages[-1].parts] == ["c1", "c2"]  # type: ignore[union-attr]
    got = decode(_outputs({**output, "name": "b"}, output), "openai-responses")
    assert [p.call_id for p in got.conversation.messages[-1].parts] == ["c2", "c1"]  # type: ignore[union-attr]


def test_responses_output_without_call_id_and_nothing_to_answer_is_refused_by_path() -> None:
    output = {"type": "function_call_output", "output": "ok"}
    with pytest.raises(CodecError) as err:
        decode(_outputs(output, output, output), "openai-responses")
    assert err.value.path == "$.input[4].call_id"
    assert "no earlier call is unanswered" in str(err.value)


def test_chat_completion_without_choices_reads_as_an_empty_turn_and_says_so() -> None:
    got = decode(_shape("openai-chat.response.no-choices.json"))
    assert (got.protocol, got.kind) == ("openai-chat", "response")
    assert [(w.code, w.path) for w in got.warnings] == [("no_choices", "$.choices")]
    assert got.response.message.parts == []  # type: ignore[union-attr]
    assert got.response.stop_reason is None  # type: ignore[union-attr]


SHAPES = sorted(p.name for p in (FIXTURES / "shapes").glob("*.json"))
# Real payloads whose conversion the target's SDK rejected (issue 31): Anthropic web search
# with citations streamed to Responses, a Responses answer with MCP items and reasoning.
CROSSED = [
    "anthropic.stream.pydantic-ai-cassette-web-search.json",
    "anthropic.response.pydantic-ai-cassette-web-search-citations.json",
    "openai-responses.response.pydantic-ai-cassette-mcp-list-tools-and-call.json",
]


@pytest.mark.parametrize("target", [t for t in PROTOCOLS])
@pytest.mark.parametrize("name", SHAPES)
def test_every_shape_is_read_and_converts_to_every_protocol_as_its_sdk_accepts(
    name: str, target: str
) -> None:
    payload = json.loads((FIXTURES / "shapes" / name).read_text())
    protocol, kind, _ = name.split(".", 2)
    decoded = decode(payload)
    assert (decoded.protocol, decoded.kind) == (protocol, kind)
    out, _ = encode(decoded, target)
    if target == "mcp" and isinstance(out, list) and not any("msg" in m for m in out):
        # A model turn in MCP is its calls as JSON-RPC requests (SSE messages when streamed).
        from tests.protocols.mcp.test_mcp import validate_message

        assert len(out) == len(decoded.response.message.tool_calls)  # type: ignore[union-attr]
        for message in out:
            validate_message(message.get("data", message), None)
        return
    validate_wire(target, kind, out)


@pytest.mark.parametrize("target", [t for t in PROTOCOLS if t != "mcp"])
@pytest.mark.parametrize("name", CROSSED)
@pytest.mark.parametrize("kind", ["response", "stream"])
def test_hosted_parts_and_citations_convert_to_other_vendors_as_their_sdk_accepts(
    name: str, target: str, kind: str
) -> None:
    if target == name.split(".")[0]:
        pytest.skip("the source's own fields pass through to itself")
    decoded = decode(json.loads((REAL / name).read_text()))
    decoded.kind = kind
    out, _ = encode(decoded, target)
    validate_wire(target, kind, out)
