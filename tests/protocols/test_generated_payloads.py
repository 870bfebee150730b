"""Payloads generated from each vendor SDK's own types, read and converted to every protocol
(issue 31 item 3).

A request (the messages or items with the tools) and a response are drawn from the vendor's
types cut to the tool-calling subset (``tests/protocols/sdk_strategies.py``): text, tool calls
and results, thinking, images. Each is read as its vendor; its conversion to every protocol
validates against the target SDK's types (``tests/sdkcheck.py``) and, read back, changes no
canonical path that no warning names (``tests/protocols/test_no_silent_change.py``). A
response is also streamed. ``FLOWDEBUG_HYPOTHESIS=long`` runs thousands of examples per vendor.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from flowdebug.errors import CodecError
from flowdebug.model import dump
from flowdebug.protocols import PROTOCOLS, get
from flowdebug.protocols.convert import decode
from tests.hypothesis_profiles import examples, profile
from tests.protocols.sdk_strategies import PNG, schema_of, shape_schema, strategy
from tests.protocols.test_no_silent_change import silent
from tests.sdkcheck import validate_wire

PROFILE = settings(
    max_examples=examples(10, long=2000),
    # CI draws the same examples every run (a failure there repeats); the long run draws new
    # ones each time.
    derandomize=profile() != "long",
    # Shrinking a conversation through every target takes minutes: the failing example is
    # reported as drawn.
    phases=[Phase.explicit, Phase.generate],
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
TARGETS = list(PROTOCOLS)
# The tool-calling subset: these tags are kept in every union, and these optional fields are
# never drawn (caching, citations, audio, files and the vendors' other features).
KEEP = {
    "text", "tool_use", "tool_result", "thinking", "redacted_thinking", "image", "base64",
    "url", "function", "function_call", "function_call_output", "message", "input_text",
    "output_text", "input_image", "reasoning", "summary_text", "reasoning_text", "image_url",
    "user", "assistant", "tool", "system", "developer", "object",
}  # fmt: skip
DROP = {
    "cache_control", "citations", "caller", "container", "context_management", "audio",
    "annotations", "logprobs", "refusal", "function_call", "name", "prompt_cache_key",
    "media_resolution", "code_execution_result", "executable_code", "file_data",
    "video_metadata", "tool_call", "tool_response", "part_metadata", "audio_transcription",
    "media_processing", "speech_metadata", "document_metadata", "spreadsheet_metadata",
    "audio_metadata", "mediaResolution", "codeExecutionResult", "executableCode", "fileData",
    "videoMetadata", "toolCall", "toolResponse", "partMetadata", "audioTranscription",
    "mediaProcessing", "speechMetadata", "documentMetadata", "spreadsheetMetadata",
    "audioMetadata", "partialArgs", "willContinue", "scheduling", "sdkHttpResponse",
    "automaticFunctionCallingHistory", "parsed", "groundingMetadata", "citationMetadata",
    "logprobsResult", "safetyRatings", "urlContextMetadata", "promptFeedback", "modelStatus",
    "continuationToken", "usageMetadata", "service_tier", "system_fingerprint", "status",
    "incomplete_details", "error", "conversation", "prompt", "reasoning", "text", "truncation",
    "background", "max_output_tokens", "previous_response_id", "tool_choice", "top_logprobs",
    "metadata", "user", "safety_identifier", "instructions", "output_text", "usage",
    "stop_details", "file_id", "detail", "stop_sequence",
}  # fmt: skip


def _drawn(
    fixed: dict[str, Any], typed: dict[str, Any], response: Any
) -> dict[str, st.SearchStrategy[Any]]:
    """A request (``fixed`` values, and each field of ``typed`` drawn from its SDK type) and
    a response drawn from the SDK's response type."""
    fields = {k: st.just(v) for k, v in fixed.items()}
    fields |= {k: strategy(schema_of(tp, KEEP | {"custom"}, DROP)) for k, tp in typed.items()}
    return {
        "request": st.fixed_dictionaries(fields),
        "response": strategy(schema_of(response, KEEP, DROP)),
    }


def anthropic() -> dict[str, st.SearchStrategy[Any]]:
    from anthropic.types import Message, MessageParam, ToolParam

    typed = {"messages": list[MessageParam], "tools": list[ToolParam]}
    return _drawn({"model": "claude-x", "max_tokens": 1024}, typed, Message)


def openai_chat() -> dict[str, st.SearchStrategy[Any]]:
    from openai.types.chat import (
        ChatCompletion,
        ChatCompletionFunctionToolParam,
        ChatCompletionMessageParam,
    )

    typed = {
        "messages": list[ChatCompletionMessageParam],
        "tools": list[ChatCompletionFunctionToolParam],
    }
    return _drawn({"model": "gpt-4o"}, typed, ChatCompletion)


def openai_responses() -> dict[str, st.SearchStrategy[Any]]:
    from openai.types.responses import FunctionToolParam, Response, ResponseInputItemParam

    typed = {"input": list[ResponseInputItemParam], "tools": list[FunctionToolParam]}
    return _drawn({"model": "gpt-4o"}, typed, Response)


GEMINI_DROP = DROP | {
    "retrieval", "googleSearch", "googleSearchRetrieval", "codeExecution", "urlContext",
    "computerUse", "fileSearch", "enterpriseWebSearch", "googleMaps", "mcpServers",
    "parallelAiSearch", "behavior", "response", "responseJsonSchema", "parametersJsonSchema",
    "retrievalConfig", "includeServerSideToolInvocations", "createTime", "responseId",
    "modelVersion", "finishMessage", "avgLogprobs", "tokenCount", "index",
}  # fmt: skip


def gemini() -> dict[str, st.SearchStrategy[Any]]:
    from google.genai import types

    content = strategy(schema_of(types.Content, KEEP, GEMINI_DROP))
    # google-genai types a tool's parameters (its Schema), which is recursive through a dozen
    # fields: four levels are plenty (ten inline 136 MB of schema).
    tools = strategy(schema_of(list[types.Tool], KEEP, GEMINI_DROP, 4, frozenset()))
    request = st.fixed_dictionaries(
        {"contents": st.lists(content, max_size=3)},
        optional={
            "tools": tools,
            "systemInstruction": content,
            "toolConfig": strategy(schema_of(types.ToolConfig, KEEP, GEMINI_DROP)),
        },
    )
    response = strategy(schema_of(types.GenerateContentResponse, KEEP, GEMINI_DROP))
    return {"request": request, "response": response}


# botocore's unions are kept by member name.
BEDROCK_KEEP = {
    "text", "toolUse", "toolResult", "reasoningContent", "reasoningText", "redactedContent",
    "image", "json", "bytes", "message", "toolSpec", "auto", "any", "tool",
}  # fmt: skip
BEDROCK_DROP = {
    "guardrailConfig", "additionalModelRequestFields", "promptVariables", "requestMetadata",
    "additionalModelResponseFieldPaths", "performanceConfig", "serviceTier", "outputConfig",
    "projectIdentifier", "trace", "additionalModelResponseFields", "error", "type",
    "cacheDetails", "cacheReadInputTokens", "cacheWriteInputTokens",
}  # fmt: skip


def bedrock() -> dict[str, st.SearchStrategy[Any]]:
    from tests.protocols.bedrock.botocheck import operation

    def drawn(shape: Any) -> Any:
        return shape_schema(shape, BEDROCK_KEEP, BEDROCK_DROP)

    request = drawn(operation("Converse").input_shape)
    # The model id travels in the URL, never in the body; a body holds its messages.
    del request["properties"]["modelId"]
    request["required"] = ["messages"]
    return {
        "request": strategy(request),
        "response": strategy(drawn(operation("Converse").output_shape)),
    }


MCP_DROP = {
    "_meta", "annotations", "icons", "outputSchema", "title", "task", "execution",
    "inputResponses", "requestState", "ttlMs", "cacheScope", "nextCursor", "resultType",
}  # fmt: skip


def _rpc(message_id: int, **body: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": message_id, **body}


def mcp() -> dict[str, st.SearchStrategy[Any]]:
    """A transcript (``tools/list`` and its result, then ``tools/call`` requests each
    answered by a ``CallToolResult``) and a model turn (``tools/call`` requests)."""
    import mcp.types as types

    def drawn(tp: Any) -> st.SearchStrategy[Any]:
        return strategy(schema_of(tp, {"text", "image", "object"}, MCP_DROP))

    call, result = drawn(types.CallToolRequestParams), drawn(types.CallToolResult)

    def transcript(listing: Any, exchanges: list[tuple[Any, Any]]) -> list[dict[str, Any]]:
        out = [_rpc(0, method="tools/list"), _rpc(0, result=listing)]
        for i, (params, answer) in enumerate(exchanges, 1):
            out += [_rpc(i, method="tools/call", params=params), _rpc(i, result=answer)]
        return out

    def turn(calls: list[Any]) -> list[dict[str, Any]]:
        return [_rpc(i, method="tools/call", params=c) for i, c in enumerate(calls, 1)]

    exchanges = st.lists(st.tuples(call, result), max_size=3)
    return {
        "transcript": st.builds(transcript, drawn(types.ListToolsResult), exchanges),
        "response": st.lists(call, min_size=1, max_size=3).map(turn),
    }


# Found by the generated payloads, each now converted as the target's SDK accepts.
_USAGE = {"input_tokens": 0, "output_tokens": 0}
# Found by the generated payloads, each now converted as the target's SDK accepts, with a
# warning for everything that changes.
REGRESSIONS: dict[str, dict[str, list[Any]]] = {
    "anthropic": {
        "request": [
            # An empty system message went to Bedrock as a system text of length 0 (min 1).
            {
                "model": "claude-x",
                "max_tokens": 259,
                "messages": [{"role": "system", "content": []}],
            },
            # An image whose url is "" went to Responses as an image_url its reader refused.
            {
                "model": "claude-x",
                "max_tokens": 9,
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "image", "source": {"type": "url", "url": ""}}],
                    }
                ],
            },
        ],
        # No stop_reason: every target filled one in, without a warning.
        "response": [
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-x",
                "content": [],
                "usage": _USAGE,
            },
        ],
    },
    # An empty user message after a result vanished into Anthropic's results turn.
    "openai-chat": {
        "request": [
            {
                "model": "gpt-4o",
                "messages": [
                    {"role": "assistant", "content": None, "tool_calls": []},
                    {"role": "tool", "tool_call_id": "x", "content": "True"},
                    {"role": "user", "content": []},
                ],
            }
        ]
    },
    # A reasoning item whose id is "" came back with an id made up.
    "openai-responses": {
        "response": [
            {
                "id": "resp_1",
                "object": "response",
                "created_at": 0,
                "model": "gpt-4o",
                "output": [{"type": "reasoning", "id": "", "summary": []}],
                "tools": [],
                "tool_choice": "auto",
                "parallel_tool_calls": True,
            },
        ]
    },
    # A tool result in the model's message: the parts after it moved up, unnamed.
    "bedrock": {
        "response": [
            {
                "output": {
                    "message": {
                        "role": "assistant",
                        "content": [
                            {"toolResult": {"toolUseId": "w", "content": []}},
                            {"text": "x"},
                        ],
                    }
                },
                "stopReason": "end_turn",
                "usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3},
                "metrics": {"latencyMs": 0},
            }
        ]
    },
    "mcp": {
        "transcript": [
            # A tool's inputSchema without "type": "object", which MCP's schema requires.
            [
                _rpc(0, method="tools/list"),
                _rpc(0, result={"tools": [{"name": "t", "inputSchema": {}}]}),
            ],
            # An image a target leaves out of the result moved the text after it, unnamed.
            [
                _rpc(0, method="tools/list"),
                _rpc(0, result={"tools": []}),
                _rpc(1, method="tools/call", params={"name": "f", "arguments": {}}),
                _rpc(
                    1,
                    result={
                        "content": [
                            {"type": "image", "data": PNG, "mimeType": "x/y"},
                            {"type": "text", "text": "t"},
                        ]
                    },
                ),
            ],
        ]
    },
}

VENDORS = {
    "anthropic": anthropic,
    "openai-chat": openai_chat,
    "openai-responses": openai_responses,
    "gemini": gemini,
    "bedrock": bedrock,
    "mcp": mcp,
}


def _validate(target: str, kind: str, payload: Any) -> None:
    if target == "mcp" and kind != "request":
        # A model turn in MCP is its calls as JSON-RPC requests (SSE messages when streamed).
        from tests.protocols.mcp.test_mcp import validate_message

        for message in payload:
            validate_message(message.get("data", message), None)
    else:
        validate_wire(target, kind, payload)


def _convert(decoded: Any, target: str) -> list[str]:
    """``decoded`` written as ``target``, validated against its SDK (requests; responses and
    their streams) and read back: the canonical paths changed that no warning names."""
    codec = get(target)
    if decoded.response is None:
        start = decoded.as_conversation()
        there = codec.encode_request(start)
        _validate(target, "request", there.value)
        back = codec.decode_request(there.value)
    else:
        start = decoded.response
        _validate(target, "stream", codec.encode_stream(start).value)
        there = codec.encode_response(start)
        _validate(target, "response", there.value)
        back = codec.decode_response(there.value)
    return silent(dump(start), dump(back.value), [*there.warnings, *back.warnings])


# MCP's request is a transcript of a server's side of the cycle.
CASES = [(v, "transcript" if v == "mcp" else "request") for v in VENDORS]
CASES += [(v, "response") for v in VENDORS]


@pytest.mark.parametrize(("vendor", "kind"), CASES)
def test_payloads_generated_from_the_vendor_types_convert_as_every_sdk_accepts(
    vendor: str, kind: str
) -> None:
    def check(payload: Any) -> None:
        try:
            decoded = decode(payload, vendor)
        except CodecError:
            return  # refused with the vendor and the path: the fuzz tests judge the message
        assert (decoded.protocol, decoded.kind) == (vendor, kind)
        for target in TARGETS:
            lost = _convert(decoded, target)
            assert lost == [], f"{vendor} {kind} -> {target}: changed without a warning: {lost}"

    run = given(payload=VENDORS[vendor]()[kind])(check)
    for regression in REGRESSIONS.get(vendor, {}).get(kind, []):
        run = example(payload=regression)(run)
    PROFILE(run)()
