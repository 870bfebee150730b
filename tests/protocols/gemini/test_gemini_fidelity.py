"""Gemini codec, issue 11: proto-JSON spellings, streamed call arguments, hosted code
execution parts, fragments, usage and the warnings of what Gemini cannot carry."""

from __future__ import annotations

import json
from typing import Any

from flowdebug.model import (
    HostedCall,
    HostedResult,
    Message,
    ModelResponse,
    Text,
    Thinking,
    ToolCall,
    ToolResult,
)
from flowdebug.protocols import detect
from flowdebug.protocols.gemini.codec import CODEC
from tests.paths import REAL


def real(name: str) -> Any:
    return json.loads((REAL / name).read_text(encoding="utf-8"))


def codes(converted: Any) -> list[str]:
    return [w.code for w in converted.warnings]


SNAKE = "gemini.request.pydantic-ai-cassette-vertex-snake-case-call-signature.json"
NESTED = "gemini.stream.vercel-ai-fixture-vertex-partial-args-nested.json"
CODE = "gemini.response.pydantic-ai-cassette-code-execution.json"


# --- spellings --------------------------------------------------------------------------------


def test_snake_case_request_decodes_like_its_camel_case_spelling() -> None:
    snake = real(SNAKE)
    camel = CODEC.encode_request(CODEC.decode_request(snake).value).value
    part = camel["contents"][1]["parts"][0]
    assert "functionCall" in part and "thoughtSignature" in part  # encoded camelCase
    assert part["thoughtSignature"] == snake["contents"][1]["parts"][0]["thought_signature"]
    # A re-spelling: both decode to the same canonical conversation, without a warning.
    assert CODEC.decode_request(camel).value == CODEC.decode_request(snake).value
    assert CODEC.decode_request(snake).warnings == []


def test_snake_case_keeps_user_data_keys_as_sent() -> None:
    body = {
        "contents": {"role": "user", "parts": [{"text": "hi"}]},
        "tools": [
            {
                "function_declarations": [
                    {
                        "name": "f",
                        "parameters_json_schema": {
                            "type": "object",
                            "properties": {"snake_key": {"type": "string"}},
                        },
                    }
                ]
            }
        ],
        "tool_config": {
            "function_calling_config": {"mode": "ANY", "allowed_function_names": ["f"]}
        },
    }
    conv = CODEC.decode_request(body).value
    assert conv.messages == [Message(role="user", parts=[Text(text="hi")])]
    assert list(conv.tools[0].parameters["properties"]) == ["snake_key"]
    assert conv.tool_choice is not None and (conv.tool_choice.mode, conv.tool_choice.name) == (
        "tool",
        "f",
    )


def test_detect_a_request_whose_only_tool_field_is_tool_config() -> None:
    for key in ("toolConfig", "tool_config"):
        body = {
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            key: {"functionCallingConfig": {"mode": "NONE"}},
        }
        assert detect(body) == ("gemini", "request")
    assert detect({"contents": {"parts": [{"text": "hi"}]}}) == ("gemini", "request")


# --- streamed function-call arguments ---------------------------------------------------------


def test_partial_args_assemble_into_one_call_with_its_signature() -> None:
    chunks = real(NESTED)
    out = CODEC.decode_stream(chunks)
    [call] = out.value.message.tool_calls
    assert call.name == "cookRecipe"
    assert call.arguments["recipe"]["steps"][4] == (
        "In a 9x13 baking dish, spread a thin layer of meat sauce."  # two string pieces
    )
    signature = chunks[0]["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    assert (call.provider_details or {})["gemini"]["thoughtSignature"] == signature
    assert "arguments_incomplete" not in codes(out)


def test_a_stream_that_ends_with_the_call_open_is_reported() -> None:
    chunks = real(NESTED)[:20]  # cut before the model said the arguments were done
    out = CODEC.decode_stream(chunks)
    [call] = out.value.message.tool_calls
    assert len(call.arguments["recipe"]["ingredients"]) < 10
    [warning] = [w for w in out.warnings if w.code == "arguments_incomplete"]
    assert warning.path == "message.parts[0]" and "cookRecipe" in warning.message


def test_streamed_call_encodes_whole_and_decodes_back_the_same() -> None:
    resp = CODEC.decode_stream(real(NESTED)).value
    again = CODEC.decode_stream(CODEC.encode_stream(resp).value).value
    assert again.message.tool_calls == resp.message.tool_calls


# --- hosted code execution --------------------------------------------------------------------


def test_code_execution_parts_are_a_hosted_call_and_result_and_round_trip() -> None:
    body = real(CODE)
    resp = CODEC.decode_response(body).value
    call, result, text = resp.message.parts
    assert isinstance(call, HostedCall) and call.name == "code_execution"
    assert call.arguments["language"] == "PYTHON"
    assert isinstance(result, HostedResult) and result.call_id == call.id
    assert result.content == "Today in Utrecht is Tuesday, September 16, 2025.\n"
    assert not result.is_error
    assert isinstance(text, Text)
    again = CODEC.encode_response(resp).value
    assert again["candidates"][0]["content"] == body["candidates"][0]["content"]


def test_another_vendors_hosted_call_is_left_out_with_warnings() -> None:
    resp = ModelResponse(
        message=Message(
            role="assistant",
            parts=[
                HostedCall(id="srvtoolu_1", name="web_search", source="anthropic"),
                HostedResult(call_id="srvtoolu_1", name="web_search", source="anthropic"),
                Text(text="Found it."),
            ],
        )
    )
    out = CODEC.encode_response(resp)
    assert out.value["candidates"][0]["content"]["parts"] == [{"text": "Found it."}]
    assert [(w.code, w.path) for w in out.warnings] == [
        ("hosted_call_dropped", "message.parts[0]"),
        ("hosted_result_dropped", "message.parts[1]"),
        ("parts_renumbered", "message.parts"),
    ]


# --- fragments --------------------------------------------------------------------------------


def test_a_model_content_fragment_stands_for_a_response() -> None:
    entry = {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {"a": 1}}}]}
    whole, note = CODEC.fragment(entry)
    assert detect(whole) == ("gemini", "response")
    assert CODEC.decode_response(whole).value.message.tool_calls[0].arguments == {"a": 1}
    assert "model" in note and "\n" not in note


def test_user_content_and_bare_parts_fragments() -> None:
    answer = [{"functionResponse": {"name": "f", "response": {"output": 1}}}]
    whole, _ = CODEC.fragment(answer)
    assert detect(whole) == ("gemini", "request")
    whole, _ = CODEC.fragment({"parts": [{"text": "hi"}]})
    assert whole == {"contents": [{"parts": [{"text": "hi"}]}]}
    whole, _ = CODEC.fragment([{"text": "hi"}])
    assert detect(whole) == ("gemini", "response")


def test_fragment_claims_no_other_vendors_message_and_no_whole_payload() -> None:
    others = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f"}]},
        {"role": "assistant", "tool_calls": [{"id": "c", "type": "function"}]},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
        [{"type": "text", "text": "hi"}],
        {"contents": [{"parts": [{"text": "hi"}]}]},
        {"role": "model", "parts": [{"text": "hi"}], "extra": 1},
        [],
    ]
    assert [CODEC.fragment(p) for p in others] == [None] * len(others)


# --- no silent change as a target -------------------------------------------------------------


def test_usage_output_counts_include_thoughts_like_the_other_vendors() -> None:
    body = real(CODE)
    resp = CODEC.decode_response(body).value
    meta = body["usageMetadata"]
    assert resp.usage is not None
    assert resp.usage["output_tokens"] == (
        meta["candidatesTokenCount"] + meta["thoughtsTokenCount"]
    )
    assert CODEC.encode_response(resp).value["usageMetadata"] == meta


def test_usage_whose_reasoning_exceeds_output_is_named() -> None:
    resp = ModelResponse(
        message=Message(role="assistant", parts=[Text(text="x")]),
        usage={"output_tokens": 3, "reasoning_tokens": 5},
    )
    out = CODEC.encode_response(resp)
    assert out.value["usageMetadata"]["candidatesTokenCount"] == 0
    assert ("usage_rewritten", "usage.output_tokens") in [(w.code, w.path) for w in out.warnings]


def test_refusal_and_joined_result_text_are_named() -> None:
    from flowdebug.model import Conversation

    conv = Conversation(
        messages=[
            Message(role="user", parts=[Text(text="q")]),
            Message(
                role="assistant",
                parts=[Text(text="No.", refusal=True), ToolCall(id="c1", name="f")],
            ),
            Message(
                role="tool",
                parts=[ToolResult(call_id="c1", name="f", content=[Text(text="a")])],
            ),
        ]
    )
    out = CODEC.encode_request(conv)
    assert ("refusal_flattened", "messages[1].parts[0]") in [(w.code, w.path) for w in out.warnings]
    assert ("result_content_flattened", "messages[2].parts[0].content") in [
        (w.code, w.path) for w in out.warnings
    ]


def test_foreign_reasoning_without_signature_goes_as_a_thought_and_says_so() -> None:
    resp = ModelResponse(
        message=Message(
            role="assistant", parts=[Thinking(text="hmm", source="openai-chat"), Text(text="a")]
        )
    )
    out = CODEC.encode_response(resp)
    assert out.value["candidates"][0]["content"]["parts"][0] == {"text": "hmm", "thought": True}
    assert codes(out) == ["thinking_source_dropped"]
