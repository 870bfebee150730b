"""Real Bedrock Converse payloads recorded by others (tests/fixtures/real/README.md):
what they decode to, exact re-encoding, and botocore's verdict on them and on our output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowdebug.model import Thinking, ToolCall, ToolResult
from flowdebug.protocols.bedrock import CODEC
from tests.paths import REAL
from tests.protocols.bedrock.botocheck import (
    request_problems,
    response_problems,
    stream_event_problems,
)
from tests.protocols.bedrock.helpers import real

# What the live service sends beyond botocore's model (see the fixtures' README).
UNDECLARED_USAGE = [
    "$.usage.cacheReadInputTokenCount: not a member of TokenUsage",
    "$.usage.cacheWriteInputTokenCount: not a member of TokenUsage",
]


def load(name: str):
    return json.loads((REAL / name).read_text())


def test_there_are_real_payloads_of_every_kind():
    assert len(real("request")) >= 2 and len(real("response")) >= 3 and len(real("stream")) >= 2


@pytest.mark.parametrize("path", real("request"), ids=lambda p: p.name)
def test_real_requests_pass_botocore_and_round_trip_exactly(path: Path):
    body = json.loads(path.read_text())
    assert request_problems(body) == ""
    assert CODEC.detect(body) == "request"
    decoded = CODEC.decode_request(body)
    assert decoded.warnings == []
    again = CODEC.encode_request(decoded.value)
    assert again.warnings == [] and again.value == body


@pytest.mark.parametrize("path", real("response"), ids=lambda p: p.name)
def test_real_responses_round_trip_exactly_and_differ_from_botocore_only_in_usage(path: Path):
    body = json.loads(path.read_text())
    assert response_problems(body) in ([], UNDECLARED_USAGE)
    assert CODEC.detect(body) == "response"
    decoded = CODEC.decode_response(body)
    assert decoded.warnings == []
    again = CODEC.encode_response(decoded.value)
    assert again.warnings == [] and again.value == body


@pytest.mark.parametrize("path", real("stream"), ids=lambda p: p.name)
def test_real_streams_differ_from_botocore_only_in_padding_and_assemble_cleanly(path: Path):
    events = json.loads(path.read_text())
    problems = {p for e in events for p in stream_event_problems(e)}
    assert problems and all(p.endswith(".p: not a member of " + p.split()[-1]) for p in problems)
    assert CODEC.detect(events) == "stream"
    decoded = CODEC.decode_stream(events)
    assert decoded.warnings == []
    # Our own stream for the same turn is valid and assembles to the same turn.
    ours = CODEC.encode_stream(decoded.value).value
    assert all(stream_event_problems(e) == [] for e in ours)
    assert CODEC.decode_stream(ours).value == decoded.value


def test_claude_thinking_tool_use_response():
    r = CODEC.decode_response(load("bedrock.response.pydantic_ai_claude_thinking_tool_use.json"))
    thinking, text, call = r.value.message.parts
    assert isinstance(thinking, Thinking) and thinking.source == "bedrock"
    assert thinking.text.startswith("The user is asking for the largest city")
    assert thinking.signature is not None and thinking.signature.startswith("ErcBCkgIBhAB")
    assert text.text.startswith("I'll need to check what country")
    assert call == ToolCall(id="tooluse_W9DaUFg4Tj2cRPpndqxWSg", name="get_user_country")
    assert r.value.stop_reason == "tool_use"
    assert r.value.usage is not None and r.value.usage["input_tokens"] == 397


def test_claude_thinking_continuation_sends_the_signed_reasoning_back():
    body = load("bedrock.request.pydantic_ai_claude_thinking_continuation.json")
    c = CODEC.decode_request(body).value
    assert [m.role for m in c.messages] == ["user", "assistant", "tool"]
    thinking = c.messages[1].parts[0]
    response = load("bedrock.response.pydantic_ai_claude_thinking_tool_use.json")
    sent = response["output"]["message"]["content"][0]["reasoningContent"]["reasoningText"]
    assert isinstance(thinking, Thinking) and thinking.signature == sent["signature"]
    (result,) = c.messages[2].tool_results
    assert result.call_id == c.messages[1].tool_calls[0].id == "tooluse_W9DaUFg4Tj2cRPpndqxWSg"
    assert (result.name, result.content, result.is_error) == ("get_user_country", "Mexico", False)
    assert c.tool_choice is None  # this recording sends no toolChoice
    assert c.provider_details == {
        "bedrock": {
            "additionalModelRequestFields": {
                "thinking": {"type": "enabled", "budget_tokens": 1024}
            },
            "system": [],
            "inferenceConfig": {},
        }
    }


def test_nova_tool_use_and_continuation():
    r = CODEC.decode_response(load("bedrock.response.pydantic_ai_nova_tool_use.json")).value
    assert r.message.parts[0].text.startswith("<thinking> To find the temperature in London")
    assert r.message.tool_calls == [
        ToolCall(
            id="tooluse_xTYmv3jIR0yGxOYLOxSLJg",
            name="temperature",
            arguments={"city": "London", "date": "2022-01-01"},
        )
    ]
    c = CODEC.decode_request(load("bedrock.request.pydantic_ai_nova_continuation.json")).value
    assert [t.name for t in c.tools] == ["temperature", "final_result"]
    assert c.tools[0].parameters["required"] == ["city", "date"]
    assert c.system == "You are a helpful chatbot."
    assert c.messages[2].tool_results == [
        ToolResult(
            call_id="tooluse_xTYmv3jIR0yGxOYLOxSLJg",
            name="temperature",
            content="30°C",
            provider_details={"bedrock": {"status": "success"}},
        )
    ]


def test_redacted_reasoning_response():
    body = load("bedrock.response.pydantic_ai_claude_redacted_thinking.json")
    r = CODEC.decode_response(body).value
    redacted = r.message.parts[0]
    assert isinstance(redacted, Thinking) and redacted.redacted and redacted.source == "bedrock"
    assert (
        redacted.text
        == body["output"]["message"]["content"][0]["reasoningContent"]["redactedContent"]
    )
    assert r.stop_reason == "end_turn"


def test_nova_stream_assembles_text_then_the_tool_use_input_fragments():
    events = load("bedrock.stream.pydantic_ai_nova_tool_use.json")
    # Text blocks come without a contentBlockStart; the toolUse opens with one.
    starts = [
        e["contentBlockStart"]["contentBlockIndex"] for e in events if "contentBlockStart" in e
    ]
    assert starts == [1]
    fragments = [
        e["contentBlockDelta"]["delta"]["toolUse"]["input"]
        for e in events
        if "toolUse" in e.get("contentBlockDelta", {}).get("delta", {})
    ]
    assert len(fragments) >= 1
    r = CODEC.decode_stream(events).value
    assert r.message.tool_calls == [
        ToolCall(
            id="tooluse_lAG_zP8QRHmSYOwZzzaCqA", name="get_temperature", arguments={"city": "Paris"}
        )
    ]
    assert json.loads("".join(fragments)) == {"city": "Paris"}
    assert r.stop_reason == "tool_use" and r.usage == {"input_tokens": 471, "output_tokens": 91}


def test_claude_stream_assembles_reasoning_with_its_signature():
    events = load("bedrock.stream.pydantic_ai_claude_thinking.json")
    r = CODEC.decode_stream(events).value
    thinking, text = r.message.parts
    signature = "".join(
        e["contentBlockDelta"]["delta"]["reasoningContent"].get("signature", "")
        for e in events
        if "reasoningContent" in e.get("contentBlockDelta", {}).get("delta", {})
    )
    assert isinstance(thinking, Thinking) and thinking.signature == signature != ""
    assert thinking.text.startswith('The user has greeted me with a simple "Hello".')
    assert text.text == "Hello! It's nice to meet you. How can I help you today?"
