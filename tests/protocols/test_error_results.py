"""An error result read from a tool's text (flowdebug/protocols/error_results.py): one rule,
the same in every vendor that has no error flag, and no guessing in the vendors that have one."""

from __future__ import annotations

import pytest

from flowdebug import protocols
from flowdebug.model import Conversation, Message, Text, ToolCall, ToolResult
from flowdebug.protocols.error_results import error_message, error_output

CALL = ToolCall(id="call_1", name="get_weather", arguments={"location": "Paris"})


def chat_request(output: str) -> dict:
    return {
        "model": "m",
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": output},
        ],
    }


def responses_request(output: str) -> dict:
    return {
        "model": "m",
        "input": [
            {"role": "user", "content": "hi"},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "get_weather",
                "arguments": "{}",
            },
            {"type": "function_call_output", "call_id": "call_1", "output": output},
        ],
    }


# The vendors that carry an error as text, each with the request that holds one tool output.
TEXT_VENDORS = {"openai-chat": chat_request, "openai-responses": responses_request}
# Every vendor whose request carries a history (an MCP request is one JSON-RPC call).
WITH_HISTORY = [p for p in protocols.PROTOCOLS if p != "mcp"]

READ_AS = [
    ('{"error": "boom"}', "boom"),
    (' {"error": "boom"}', "boom"),
    ('\n\t{"error":"boom"}\r\n', "boom"),
    ('{"error": "bo\\u006fm"}', "boom"),
    ('{"error": 1}', None),
    ('{"error": "boom", "code": 1}', None),
    ('[{"error": "boom"}]', None),
    ("error: boom", None),
    ('{"error": "boom"', None),
    ("", None),
]


def result_of(protocol: str, output: str) -> ToolResult:
    conv = protocols.get(protocol).decode_request(TEXT_VENDORS[protocol](output)).value
    (result,) = [p for m in conv.messages for p in m.parts if isinstance(p, ToolResult)]
    return result


@pytest.mark.parametrize("protocol", TEXT_VENDORS)
@pytest.mark.parametrize(("output", "message"), READ_AS)
def test_a_tool_output_reads_as_an_error_by_one_rule_in_every_vendor_without_a_flag(
    protocol, output, message
):
    result = result_of(protocol, output)
    assert error_message(output) == message
    assert result.is_error is (message is not None)
    assert result.content == (output if message is None else message)


@pytest.mark.parametrize("protocol", WITH_HISTORY)
def test_an_error_result_comes_back_as_the_same_error_in_every_vendor(protocol):
    codec = protocols.get(protocol)
    conv = _one_result(ToolResult(call_id=CALL.id, name=CALL.name, content="boom", is_error=True))
    back = codec.decode_request(codec.encode_request(conv).value).value
    (result,) = [p for m in back.messages for p in m.parts if isinstance(p, ToolResult)]
    assert (result.content, result.is_error) == ("boom", True)
    if protocol in TEXT_VENDORS:
        assert error_output("boom") in str(codec.encode_request(conv).value)


@pytest.mark.parametrize("protocol", WITH_HISTORY)
def test_a_result_that_only_looks_like_an_error_stays_one_or_is_warned(protocol):
    """Vendors with an error flag guess nothing from text; the others say the flag changes."""
    codec = protocols.get(protocol)
    text = ' {"error": "boom"}'
    conv = _one_result(ToolResult(call_id=CALL.id, name=CALL.name, content=text))
    there = codec.encode_request(conv)
    back = codec.decode_request(there.value).value
    (result,) = [p for m in back.messages for p in m.parts if isinstance(p, ToolResult)]
    warned = [w for w in there.warnings if w.code == "error_flag_added"]
    if protocol in TEXT_VENDORS:
        assert (result.content, result.is_error) == ("boom", True)
        assert [w.path for w in warned] == ["messages[2].parts[0]"]
    else:
        assert (result.content, result.is_error) == (text, False)
        assert warned == []


def _one_result(result: ToolResult) -> Conversation:
    return Conversation(
        messages=[
            Message(role="user", parts=[Text(text="hi")]),
            Message(role="assistant", parts=[CALL]),
            Message(role="user", parts=[result]),
        ]
    )
