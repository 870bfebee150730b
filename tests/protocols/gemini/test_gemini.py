"""Gemini generateContent codec: goldens, the verified reference payloads, SDK types, rules.

SDK validation uses google-genai's own pydantic types (``extra='forbid'``) through
``model_validate_json``: only JSON-mode validation decodes base64 into the ``bytes`` fields
(``thoughtSignature``, ``inlineData.data``); ``model_validate`` would take the base64 text
as raw bytes. Each payload must also dump back (camelCase, by alias) to the same JSON, with
bytes compared as bytes (the SDK re-encodes them URL-safe).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

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
from flowdebug.protocols.base import safe_name
from flowdebug.protocols.gemini.codec import CODEC
from tests import cases
from tests.goldens import check_golden
from tests.paths import WIRE
from tests.sdkcheck import assert_genai
from tests.sdkcheck import gemini_request as assert_request_valid

NAME = "gemini"
SIGNATURE = (
    "yMnKy8zNzs/Q0dLT1NXW19jZ2tvc3d7f4OHi4+Tl5ufo6err7O3u7/Dx8vP09fb3+Pn6+/z9/v93ZWF0aGVyLWRl"
    "bW8tc2lnbmF0dXJl+//+"
)


def ref(name: str) -> Any:
    return json.loads((WIRE / f"gemini.{name}.json").read_text())


def codes(converted: Any) -> list[str]:
    return [w.code for w in converted.warnings]


def user(text: str) -> Message:
    return Message(role="user", parts=[Text(text=text)])


def without_ids(messages: list[Message]) -> list[Message]:
    """Messages with call ids replaced by their order of appearance (vendors differ), and
    the canonical-only or vendor-only fields cleared."""
    order: dict[str, str] = {}

    def new(old: str) -> str:
        return order.setdefault(old, f"id{len(order)}")

    out = []
    for msg in messages:
        parts = []
        for part in msg.parts:
            if isinstance(part, ToolCall):
                part = part.model_copy(update={"id": new(part.id), "provider_details": None})
            elif isinstance(part, ToolResult):
                part = part.model_copy(
                    update={
                        "call_id": new(part.call_id),
                        "error_type": None,
                        "provider_details": None,
                    }
                )
            parts.append(part)
        out.append(msg.model_copy(update={"parts": parts}))
    return out


def no_error_type(messages: list[Message]) -> list[Message]:
    return [
        m.model_copy(
            update={
                "parts": [
                    p.model_copy(update={"error_type": None}) if isinstance(p, ToolResult) else p
                    for p in m.parts
                ]
            }
        )
        for m in messages
    ]


# Conversations beyond tests/cases.py that exercise the rest of the codec.
RICH_SCHEMA = {
    "type": "object",
    "properties": {
        "when": {"oneOf": [{"type": "string", "format": "date"}, {"type": "integer"}]},
        "mode": {"const": "fast"},
        "level": {"type": "integer", "enum": [1, 2, 3]},
        "tags": {"type": "array", "items": {"$ref": "#/$defs/tag"}},
    },
    "required": ["when"],
    "additionalProperties": False,
    "$defs": {"tag": {"type": "string", "minLength": 1}},
}
EXTRA_CONVERSATIONS = {
    "thinking_history": Conversation(
        tools=[cases.WEATHER_TOOL],
        messages=[
            user("Paris?"),
            cases.THINKING_CALL.message,
            Message(
                role="tool",
                parts=[ToolResult(call_id="toolu_think_1", name="get_weather", content="18C")],
            ),
        ],
    ),
    "images_and_rich_schema": Conversation(
        system="Look closely.",
        tools=[Tool(name="lookup", description="Rich schema.", parameters=RICH_SCHEMA)],
        tool_choice=ToolChoice(mode="required"),
        max_tokens=256,
        temperature=0.2,
        messages=[
            Message(
                role="user",
                parts=[
                    Text(text="Compare these."),
                    Image(media_type="image/png", data=cases.PIXEL),
                    Image(media_type="image/jpeg", url="https://example.com/cat.jpg"),
                ],
            )
        ],
    ),
    "none_choice": Conversation(
        tools=[cases.WEATHER_TOOL],
        tool_choice=ToolChoice(mode="none"),
        messages=[user("Just chat.")],
    ),
}
ALL_CONVERSATIONS = {**cases.CONVERSATIONS, **EXTRA_CONVERSATIONS}
ALL_RESPONSES = {
    **cases.RESPONSES,
    "reference_function_calls": CODEC.decode_response(ref("response.function_calls")).value,
    "reference_final": CODEC.decode_response(ref("response.final")).value,
    "texts_around_call": ModelResponse(
        message=Message(
            role="assistant",
            parts=[
                Text(text="First I will look this up for you, one moment please."),
                Text(text="A second text part, kept apart from the first one."),
                ToolCall(id="c1", name="get_weather", arguments={"location": "Oslo"}),
                Text(text="And a closing remark after the call, long enough to split."),
            ],
        ),
        stop_reason="tool_use",
        id="resp-1",
        model="gemini-3-flash-preview",
        usage={"input_tokens": 10, "output_tokens": 20, "total_tokens": 30},
    ),
}


# --- goldens ----------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["weather_initial", "weather_continuation"])
def test_golden_requests(case: str) -> None:
    out = CODEC.encode_request(cases.CONVERSATIONS[case])
    assert out.warnings == []
    check_golden(NAME, case, out.value)


@pytest.mark.parametrize("case", ["weather_tool_use", "weather_final"])
def test_golden_responses(case: str) -> None:
    out = CODEC.encode_response(cases.RESPONSES[case])
    assert out.warnings == []
    check_golden(NAME, case, out.value)


def test_golden_stream() -> None:
    out = CODEC.encode_stream(cases.WEATHER_TOOL_USE)
    assert out.warnings == []
    check_golden(NAME, "weather_tool_use_stream", out.value)


def test_initial_request_equals_reference() -> None:
    assert CODEC.encode_request(cases.WEATHER_INITIAL).value == ref("request.initial")


def _strip(payload: Any) -> Any:
    """The payload without call ids, thought signatures and the response envelope."""
    if isinstance(payload, dict):
        drop = {"thoughtSignature", "usageMetadata", "modelVersion", "responseId"}
        return {
            k: _strip(
                {x: y for x, y in v.items() if x != "id"}
                if k in ("functionCall", "functionResponse")
                else v
            )
            for k, v in payload.items()
            if k not in drop
        }
    if isinstance(payload, list):
        return [_strip(v) for v in payload]
    return payload


def test_continuation_request_matches_reference_modulo_ids_and_signature() -> None:
    ours = CODEC.encode_request(cases.WEATHER_CONTINUATION).value
    assert _strip(ours) == _strip(ref("request.continuation"))


def test_tool_use_response_matches_reference_modulo_envelope() -> None:
    ours = CODEC.encode_response(cases.WEATHER_TOOL_USE).value
    assert _strip(ours) == _strip(ref("response.function_calls"))


def test_stream_has_the_reference_chunk_shape() -> None:
    ours = CODEC.encode_stream(cases.WEATHER_TOOL_USE).value
    theirs = ref("stream.function_calls")
    assert [_strip(c)["candidates"] for c in ours] == [_strip(c)["candidates"] for c in theirs]


# --- the reference payloads -----------------------------------------------------------


@pytest.mark.parametrize("name", ["request.initial", "request.continuation"])
def test_reference_requests_reencode_byte_for_byte(name: str) -> None:
    decoded = CODEC.decode_request(ref(name))
    assert decoded.warnings == []
    again = CODEC.encode_request(decoded.value)
    assert again.warnings == []
    assert again.value == ref(name)


@pytest.mark.parametrize("name", ["response.function_calls", "response.final"])
def test_reference_responses_reencode_byte_for_byte(name: str) -> None:
    decoded = CODEC.decode_response(ref(name))
    assert decoded.warnings == []
    assert CODEC.encode_response(decoded.value).value == ref(name)


def test_decode_reference_initial_request() -> None:
    conv = CODEC.decode_request(ref("request.initial")).value
    assert conv.system == "You are a weather assistant."
    assert conv.tools == [cases.WEATHER_TOOL]
    assert conv.tool_choice == ToolChoice(mode="auto")
    assert conv.messages == [cases.WEATHER_USER]
    assert conv.model is None


def test_decode_reference_continuation_gives_the_cases_calls_and_results() -> None:
    conv = CODEC.decode_request(ref("request.continuation")).value
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool"]
    paris, tokyo = conv.messages[1].tool_calls
    assert (paris.id, paris.name, paris.arguments) == (
        "call_4162774a",
        "get_weather",
        {"location": "Paris", "unit": "c"},
    )
    assert (tokyo.id, tokyo.arguments) == ("call_4162775b", {"location": "Tokyo", "unit": "c"})
    # Gemini: only the first call of a parallel batch carries the thought signature.
    assert paris.provider_details == {"gemini": {"thoughtSignature": SIGNATURE}}
    assert tokyo.provider_details is None
    ok, err = conv.messages[2].tool_results
    assert (ok.call_id, ok.name, ok.is_error) == ("call_4162774a", "get_weather", False)
    assert json.loads(ok.content) == {
        "location": "Paris",
        "temperature": 18,
        "unit": "c",
        "conditions": "partly cloudy",
    }
    assert ok.content == cases.PARIS_RESULT.content
    assert (err.call_id, err.is_error, err.content) == ("call_4162775b", True, "timeout after 10s")
    assert without_ids(conv.messages) == without_ids(cases.WEATHER_CONTINUATION.messages)


def test_decode_reference_function_calls_response() -> None:
    resp = CODEC.decode_response(ref("response.function_calls")).value
    assert resp.stop_reason == "tool_use"  # although the wire says STOP
    assert [(c.id, c.arguments["location"]) for c in resp.message.tool_calls] == [
        ("call_4162774a", "Paris"),
        ("call_4162775b", "Tokyo"),
    ]
    assert without_ids([resp.message]) == without_ids([cases.WEATHER_CALLS])
    assert resp.id == "kX9bab2fN4uL-8YPq7ri2Qo"
    assert resp.model == "gemini-3-flash-preview"
    # candidatesTokenCount 40 leaves out the 76 thought tokens; canonical output counts them.
    assert resp.usage == {
        "input_tokens": 74,
        "output_tokens": 116,
        "total_tokens": 190,
        "reasoning_tokens": 76,
    }
    assert resp.provider_details is None


def test_decode_reference_final_response_keeps_the_text_signature() -> None:
    resp = CODEC.decode_response(ref("response.final")).value
    assert resp.stop_reason == "end_turn"
    [text] = resp.message.parts
    assert isinstance(text, Text)
    assert text.text.startswith("Paris is 18 degrees C and partly cloudy.")
    assert text.provider_details == {
        "gemini": {"thoughtSignature": "ZmluYWwtYW5zd2VyLXNpZ25hdHVyZS1kZW1v"}
    }


def test_decode_reference_stream_equals_the_reference_response() -> None:
    streamed = CODEC.decode_stream(ref("stream.function_calls"))
    assert streamed.warnings == []
    assert streamed.value == CODEC.decode_response(ref("response.function_calls")).value


def test_decode_reference_parameters_json_schema_variant() -> None:
    variant = ref("variant.tool_parametersJsonSchema")
    assert_genai(types.Tool, variant)
    conv = CODEC.decode_request({"contents": [], "tools": [variant]}).value
    assert conv.tools == [cases.WEATHER_TOOL]


@pytest.mark.parametrize("path", sorted(WIRE.glob("*.json")), ids=lambda p: p.name)
def test_detect_claims_only_gemini_reference_files(path: Path) -> None:
    kind = CODEC.detect(json.loads(path.read_text()))
    expected = None
    if path.name.startswith("gemini."):
        expected = {"request": "request", "response": "response", "stream": "stream"}.get(
            path.name.split(".")[1]
        )
    assert kind == expected


# --- SDK validation ---------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(ALL_CONVERSATIONS))
def test_every_request_validates_with_sdk_types(case: str) -> None:
    assert_request_valid(CODEC.encode_request(ALL_CONVERSATIONS[case]).value)


@pytest.mark.parametrize("case", sorted(ALL_RESPONSES))
def test_every_response_and_stream_chunk_validates_with_sdk_types(case: str) -> None:
    resp = ALL_RESPONSES[case]
    assert_genai(types.GenerateContentResponse, CODEC.encode_response(resp).value)
    for chunk in CODEC.encode_stream(resp).value:
        assert_genai(types.GenerateContentResponse, chunk)


def test_reference_payloads_pass_our_sdk_check() -> None:
    assert_request_valid(ref("request.continuation"))
    model = assert_genai(types.GenerateContentResponse, ref("response.function_calls"))
    assert model.candidates[0].content.parts[0].thought_signature == base64.b64decode(SIGNATURE)


# --- round trips ------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(ALL_CONVERSATIONS))
def test_request_round_trip_keeps_ids_names_arguments_pairing_and_errors(case: str) -> None:
    conv = ALL_CONVERSATIONS[case]
    back = CODEC.decode_request(CODEC.encode_request(conv).value)
    assert back.warnings == []
    assert back.value.messages == cases.issued_by(no_error_type(conv.messages), "gemini")
    assert back.value.system == conv.system
    assert [t.model_copy(update={"annotations": None}) for t in back.value.tools] == [
        t.model_copy(update={"annotations": None}) for t in conv.tools
    ]
    expected_choice = conv.tool_choice and conv.tool_choice.model_copy(update={"parallel": None})
    assert back.value.tool_choice == expected_choice
    assert (back.value.max_tokens, back.value.temperature) == (conv.max_tokens, conv.temperature)


@pytest.mark.parametrize("case", sorted(ALL_RESPONSES))
def test_response_round_trip(case: str) -> None:
    resp = ALL_RESPONSES[case]
    encoded = CODEC.encode_response(resp)
    back = CODEC.decode_response(encoded.value).value
    expected = resp
    if "raw_arguments_dropped" in codes(encoded):
        expected = resp.model_copy(
            update={
                "message": resp.message.model_copy(
                    update={
                        "parts": [
                            p.model_copy(update={"raw_arguments": None}) for p in resp.message.parts
                        ]
                    }
                )
            }
        )
    assert back == cases.issued_by(expected, "gemini")


@pytest.mark.parametrize("case", sorted(ALL_RESPONSES))
def test_decoded_stream_equals_decoded_response(case: str) -> None:
    resp = ALL_RESPONSES[case]
    streamed = CODEC.decode_stream(CODEC.encode_stream(resp).value).value
    assert streamed == CODEC.decode_response(CODEC.encode_response(resp).value).value


def test_unknown_wire_fields_survive_a_round_trip() -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "hi", "thought": False}]}],
        "tools": [
            {"functionDeclarations": [{"name": "f", "behavior": "NON_BLOCKING"}]},
            {"googleSearch": {}},
        ],
        "toolConfig": {"functionCallingConfig": {"mode": "VALIDATED"}},
        "generationConfig": {"topP": 0.5, "maxOutputTokens": 10},
        "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
    }
    conv = CODEC.decode_request(body).value
    assert conv.max_tokens == 10
    assert conv.tool_choice == ToolChoice(mode="auto")
    again = CODEC.encode_request(conv).value
    assert again == {
        **body,
        "tools": [
            {"functionDeclarations": [{"name": "f", "behavior": "NON_BLOCKING"}]},
            {"googleSearch": {}},
        ],
    }


def test_unknown_response_fields_and_finish_reasons_survive_a_round_trip() -> None:
    payload = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": "..."}]},
                "finishReason": "RECITATION",
                "index": 0,
                "safetyRatings": [
                    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"}
                ],
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 3,
            "toolUsePromptTokenCount": 1,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 3}],
        },
        "promptFeedback": {"blockReason": "OTHER"},
    }
    resp = CODEC.decode_response(payload).value
    assert resp.stop_reason == "content_filter"
    assert resp.usage == {"input_tokens": 3, "toolUsePromptTokenCount": 1}
    assert CODEC.encode_response(resp).value == payload
    assert_genai(types.GenerateContentResponse, payload)


# --- vendor rules -------------------------------------------------------------------------


def _weather_batch(results: list[ToolResult]) -> Conversation:
    return cases.WEATHER_INITIAL.model_copy(
        update={
            "messages": [
                cases.WEATHER_USER,
                cases.WEATHER_CALLS,
                Message(role="tool", parts=results),
            ]
        }
    )


def test_encode_puts_all_parallel_results_in_one_user_turn_in_call_order() -> None:
    out = CODEC.encode_request(_weather_batch([cases.TOKYO_RESULT, cases.PARIS_RESULT]))
    last = out.value["contents"][-1]
    assert last["role"] == "user"
    assert [p["functionResponse"]["id"] for p in last["parts"]] == [cases.PARIS.id, cases.TOKYO.id]
    assert codes(out) == ["results_reordered"]


def test_encode_merges_consecutive_tool_messages_into_one_user_turn_and_says_so() -> None:
    conv = cases.WEATHER_INITIAL.model_copy(
        update={
            "messages": [
                cases.WEATHER_USER,
                cases.WEATHER_CALLS,
                Message(role="tool", parts=[cases.PARIS_RESULT]),
                Message(role="tool", parts=[cases.TOKYO_RESULT]),
            ]
        }
    )
    out = CODEC.encode_request(conv)
    assert out.value == CODEC.encode_request(cases.WEATHER_CONTINUATION).value
    # Read back, the two tool messages are one.
    assert [(w.code, w.path) for w in out.warnings] == [("messages_merged", "messages")]


def test_encode_maps_assistant_to_model_and_tool_to_user() -> None:
    body = CODEC.encode_request(cases.WEATHER_COMPLETE).value
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user", "model"]


def test_encode_result_name_is_the_calls_name() -> None:
    nameless = ToolResult(call_id=cases.PARIS.id, content="ok", name="something_else")
    out = CODEC.encode_request(_weather_batch([nameless, cases.TOKYO_RESULT]))
    assert out.value["contents"][-1]["parts"][0]["functionResponse"]["name"] == "get_weather"


@pytest.mark.parametrize(
    ("content", "is_error", "response"),
    [
        ('{"a": 1}', False, {"output": {"a": 1}}),
        ("[1, 2]", False, {"output": [1, 2]}),
        ('{"a":1}', False, {"output": '{"a":1}'}),  # not json.dumps's own spelling: kept as text
        ('"quoted"', False, {"output": '"quoted"'}),
        ("42", False, {"output": "42"}),
        ("plain", False, {"output": "plain"}),
        ("timeout after 10s", True, {"error": "timeout after 10s"}),
        ('{"code": 7}', True, {"error": '{"code": 7}'}),
    ],
)
def test_encode_result_response_is_always_an_object(
    content: str, is_error: bool, response: dict[str, Any]
) -> None:
    result = ToolResult(call_id=cases.PARIS.id, content=content, is_error=is_error)
    body = CODEC.encode_request(_weather_batch([result, cases.TOKYO_RESULT])).value
    assert body["contents"][-1]["parts"][0]["functionResponse"]["response"] == response
    back = CODEC.decode_request(body).value.messages[-1].tool_results[0]
    assert (back.content, back.is_error) == (content, is_error)


@pytest.mark.parametrize(
    ("response", "content", "is_error"),
    [
        ({"result": {"t": 18}}, '{"t": 18}', False),  # the SDK's automatic function calling
        ({"temperature": 18, "unit": "c"}, '{"temperature": 18, "unit": "c"}', False),
        ({"error": {"code": 500}}, '{"code": 500}', True),
        ({"output": "Zürich"}, "Zürich", False),
    ],
)
def test_decode_result_response_shapes(
    response: dict[str, Any], content: str, is_error: bool
) -> None:
    body = {
        "contents": [
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": response}}]},
        ]
    }
    conv = CODEC.decode_request(body).value
    [result] = conv.messages[1].tool_results
    assert (result.content, result.is_error) == (content, is_error)
    if not is_error:  # an error goes back as {"error": text}
        assert CODEC.encode_request(conv).value == body


def test_calls_without_ids_get_deterministic_ids_and_pair_by_name_and_order() -> None:
    body = _strip(ref("request.continuation"))  # Gemini <= 2.5: no ids, no signatures
    decoded = CODEC.decode_request(body)
    assert decoded.warnings == []
    calls = decoded.value.messages[1].tool_calls
    results = decoded.value.messages[2].tool_results
    assert [c.id for c in calls] == ["gemini_call_1_0", "gemini_call_1_1"]
    assert [r.call_id for r in results] == ["gemini_call_1_0", "gemini_call_1_1"]
    assert [r.is_error for r in results] == [False, True]
    # The invented ids never reach the wire.
    assert CODEC.encode_request(decoded.value).value == body


def test_decode_pairs_by_name_across_different_tools() -> None:
    body = {
        "contents": [
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "a", "args": {}}},
                    {"functionCall": {"name": "b", "args": {}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "b", "response": {"output": "B"}}},
                    {"functionResponse": {"name": "a", "response": {"output": "A"}}},
                ],
            },
        ]
    }
    conv = CODEC.decode_request(body).value
    by_call = {r.call_id: r.content for r in conv.messages[1].tool_results}
    assert by_call == {"gemini_call_0_0": "A", "gemini_call_0_1": "B"}


def test_decode_pairs_by_id_when_present_whatever_the_order() -> None:
    body = ref("request.continuation")
    body["contents"][2]["parts"].reverse()
    conv = CODEC.decode_request(body).value
    tokyo, paris = conv.messages[2].tool_results
    assert (tokyo.call_id, tokyo.is_error) == ("call_4162775b", True)
    assert (paris.call_id, paris.is_error) == ("call_4162774a", False)


def test_decode_warns_about_a_result_with_no_matching_call() -> None:
    body = ref("request.continuation")
    body["contents"][2]["parts"][1]["functionResponse"]["id"] = "call_wrong"
    decoded = CODEC.decode_request(body)
    assert decoded.value.messages[2].tool_results[1].call_id == "call_wrong"
    assert [(w.code, w.path) for w in decoded.warnings] == [
        ("result_unpaired", "$.contents[2].parts[1]")
    ]


def test_decode_splits_a_user_turn_into_tool_and_user_messages() -> None:
    body = ref("request.continuation")
    body["contents"][2]["parts"].append({"text": "Be brief."})
    conv = CODEC.decode_request(body).value
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool", "user"]
    assert conv.messages[3].text == "Be brief."


def test_thought_signature_goes_back_on_the_first_call_part() -> None:
    resp = CODEC.decode_response(ref("response.function_calls")).value
    conv = cases.WEATHER_INITIAL.model_copy(update={"messages": [cases.WEATHER_USER, resp.message]})
    model_turn = CODEC.encode_request(conv).value["contents"][1]
    assert model_turn == ref("request.continuation")["contents"][1]
    assert [("thoughtSignature" in p) for p in model_turn["parts"]] == [True, False]


def test_encode_thinking_as_thought_part_with_signature() -> None:
    out = CODEC.encode_response(cases.THINKING_CALL)
    parts = out.value["candidates"][0]["content"]["parts"]
    assert parts[0] == {
        "text": "The user wants Paris weather; call the tool.",
        "thought": True,
        "thoughtSignature": "c2lnbmF0dXJl",
    }
    assert parts[1] == {"text": "Let me check."}
    assert out.value["candidates"][0]["finishReason"] == "STOP"


def test_encode_warns_for_thinking_gemini_cannot_carry() -> None:
    resp = ModelResponse(
        message=Message(
            role="assistant",
            parts=[
                Thinking(text="hmm", signature="not base64!"),
                Thinking(text="EncryptedBlob", redacted=True),
                Text(text="Done."),
            ],
        ),
        stop_reason="end_turn",
    )
    out = CODEC.encode_response(resp)
    assert out.value["candidates"][0]["content"]["parts"] == [
        {"text": "hmm", "thought": True},
        {"text": "Done."},
    ]
    # "Done." moves up from parts[2] to parts[1]: that is named too.
    assert codes(out) == ["thinking_signature_dropped", "thinking_dropped", "parts_renumbered"]


def test_encode_chooses_parameters_or_parameters_json_schema_per_tool() -> None:
    conv = EXTRA_CONVERSATIONS["images_and_rich_schema"].model_copy(
        update={"tools": [cases.WEATHER_TOOL, *EXTRA_CONVERSATIONS["images_and_rich_schema"].tools]}
    )
    out = CODEC.encode_request(conv)
    weather, rich = out.value["tools"][0]["functionDeclarations"]
    assert weather["parameters"]["type"] == "OBJECT"
    assert "parametersJsonSchema" not in weather
    assert rich["parametersJsonSchema"] == RICH_SCHEMA  # verbatim: nothing dropped
    assert "parameters" not in rich
    assert "schema_keyword_dropped" not in codes(out)
    assert CODEC.decode_request(out.value).value.tools == conv.tools


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"x": {"type": "integer", "enum": [1, 2]}}},
        {"type": "object", "properties": {"x": {"type": ["string", "null"]}}},
        {"type": "object", "properties": {"x": {"type": "string", "format": "email"}}},
        {"type": "object", "properties": {"x": {"type": "number", "exclusiveMinimum": 0}}},
        {"type": "object", "properties": {"x": {"type": "object", "properties": {}}}},
        {"type": "object", "properties": {"x": {"const": 1}}, "additionalProperties": False},
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"x": {"type": "string"}},
        },
    ],
)
def test_schemas_beyond_the_openapi_subset_go_as_parameters_json_schema(
    schema: dict[str, Any],
) -> None:
    conv = Conversation(tools=[Tool(name="f", parameters=schema)], messages=[user("hi")])
    [decl] = CODEC.encode_request(conv).value["tools"][0]["functionDeclarations"]
    assert decl == {"name": "f", "parametersJsonSchema": schema}
    assert_genai(types.FunctionDeclaration, decl)


def test_openapi_subset_schema_goes_as_parameters_and_decodes_back() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "format": "int64", "minimum": 1, "maximum": 9},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "either": {"anyOf": [{"type": "string"}, {"type": "number"}]},
            "maybe": {"type": "string", "nullable": True, "default": "x", "title": "Maybe"},
        },
        "required": ["n"],
        "propertyOrdering": ["n", "tags", "either", "maybe"],
    }
    conv = Conversation(tools=[Tool(name="f", parameters=schema)], messages=[user("hi")])
    body = CODEC.encode_request(conv).value
    params = body["tools"][0]["functionDeclarations"][0]["parameters"]
    assert params["properties"]["tags"]["items"] == {"type": "STRING"}
    assert params["properties"]["either"]["anyOf"] == [{"type": "STRING"}, {"type": "NUMBER"}]
    assert_genai(types.Tool, body["tools"][0])
    assert CODEC.decode_request(body).value.tools[0].parameters == schema


def test_decode_accepts_the_sdk_snake_case_declaration_spelling() -> None:
    body = {
        "contents": [],
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "f",
                        "parameters": {
                            "type": "OBJECT",
                            "properties": {
                                "q": {"type": "STRING", "min_length": 1},
                                "v": {"any_of": [{"type": "STRING"}, {"type": "NULL"}]},
                            },
                        },
                    },
                    {"name": "g", "parameters_json_schema": {"type": "object", "properties": {}}},
                ]
            }
        ],
    }
    f, g = CODEC.decode_request(body).value.tools
    assert f.parameters == {
        "type": "object",
        "properties": {
            "q": {"type": "string", "minLength": 1},
            "v": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
    }
    assert g.parameters == {"type": "object", "properties": {}}


def test_tool_without_parameters_sends_no_schema() -> None:
    body = CODEC.encode_request(cases.IMAGE_RESULT).value
    assert body["tools"][0]["functionDeclarations"] == [
        {"name": "camera.snapshot", "description": "Take a picture."}
    ]


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        (ToolChoice(mode="auto"), {"mode": "AUTO"}),
        (ToolChoice(mode="none"), {"mode": "NONE"}),
        (ToolChoice(mode="required"), {"mode": "ANY"}),
        (
            ToolChoice(mode="tool", name="get_weather"),
            {"mode": "ANY", "allowedFunctionNames": ["get_weather"]},
        ),
    ],
)
def test_tool_choice_maps_to_function_calling_config(
    choice: ToolChoice, config: dict[str, Any]
) -> None:
    conv = cases.WEATHER_INITIAL.model_copy(update={"tool_choice": choice})
    body = CODEC.encode_request(conv).value
    assert body["toolConfig"] == {"functionCallingConfig": config}
    assert CODEC.decode_request(body).value.tool_choice == choice


def test_parallel_false_has_no_gemini_field_and_warns() -> None:
    out = CODEC.encode_request(cases.TASKS)
    assert out.value["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["create_task"]}
    }
    assert ("tool_choice_dropped", "tool_choice.parallel") in [
        (w.code, w.path) for w in out.warnings
    ]


def test_generation_config_only_when_set() -> None:
    assert "generationConfig" not in CODEC.encode_request(cases.WEATHER_INITIAL).value
    conv = cases.WEATHER_INITIAL.model_copy(update={"max_tokens": 500, "temperature": 0.0})
    body = CODEC.encode_request(conv).value
    assert body["generationConfig"] == {"maxOutputTokens": 500, "temperature": 0.0}


def test_model_goes_in_the_url_not_the_body() -> None:
    out = CODEC.encode_request(
        cases.WEATHER_INITIAL.model_copy(update={"model": "gemini-3-flash-preview"})
    )
    assert "model" not in out.value
    assert codes(out) == ["model_dropped"]


def test_images_go_as_inline_data_or_file_data() -> None:
    body = CODEC.encode_request(EXTRA_CONVERSATIONS["images_and_rich_schema"]).value
    assert body["contents"][0]["parts"][1:] == [
        {"inlineData": {"mimeType": "image/png", "data": cases.PIXEL}},
        {"fileData": {"fileUri": "https://example.com/cat.jpg", "mimeType": "image/jpeg"}},
    ]


def test_image_in_a_result_rides_in_function_response_parts() -> None:
    out = CODEC.encode_request(cases.IMAGE_RESULT)
    assert "image_in_result_dropped" not in codes(out)
    response = out.value["contents"][2]["parts"][0]["functionResponse"]
    assert response["response"] == {"output": "snapshot taken"}
    assert response["parts"] == [{"inlineData": {"mimeType": "image/png", "data": cases.PIXEL}}]
    model = assert_genai(types.FunctionResponse, response)
    assert model.parts[0].inline_data.data == base64.b64decode(cases.PIXEL)


def test_tool_names_are_renamed_consistently_and_named_at_every_place() -> None:
    bad = "get weather!"
    conv = Conversation(
        tools=[Tool(name=bad)],
        tool_choice=ToolChoice(mode="tool", name=bad),
        messages=[
            user("go"),
            Message(role="assistant", parts=[ToolCall(id="c1", name=bad)]),
            Message(role="tool", parts=[ToolResult(call_id="c1", name=bad, content="x")]),
        ],
    )
    out = CODEC.encode_request(conv)
    safe = safe_name("gemini", bad)
    assert safe != bad
    body = out.value
    assert body["tools"][0]["functionDeclarations"][0]["name"] == safe
    assert body["contents"][1]["parts"][0]["functionCall"]["name"] == safe
    assert body["contents"][2]["parts"][0]["functionResponse"]["name"] == safe
    assert body["toolConfig"]["functionCallingConfig"]["allowedFunctionNames"] == [safe]
    assert [(w.code, w.path) for w in out.warnings] == [
        ("tool_name_renamed", "messages[1].parts[0].name"),
        ("tool_name_renamed", "messages[2].parts[0].name"),
        ("tool_name_renamed", "tools[0].name"),
        ("tool_name_renamed", "tool_choice.name"),
    ]


def test_other_protocols_details_are_reported_once_per_part() -> None:
    call = cases.PARIS.model_copy(
        update={
            "provider_details": {
                "openai-responses": {"id": "fc_1"},
                "gemini": {"thoughtSignature": "c2ln"},
            }
        }
    )
    conv = cases.WEATHER_INITIAL.model_copy(
        update={"messages": [cases.WEATHER_USER, Message(role="assistant", parts=[call])]}
    )
    out = CODEC.encode_request(conv)
    assert out.value["contents"][1]["parts"][0]["thoughtSignature"] == "c2ln"
    assert [(w.code, w.path) for w in out.warnings] == [
        ("provider_details_dropped", "messages[1].parts[0]")
    ]


def test_response_finish_reason_is_stop_even_with_calls() -> None:
    body = CODEC.encode_response(cases.WEATHER_TOOL_USE).value
    assert body["candidates"][0]["finishReason"] == "STOP"
    assert CODEC.decode_response(body).value.stop_reason == "tool_use"


def test_stream_sends_each_call_whole_and_finishes_on_the_last_chunk() -> None:
    resp = cases.WEATHER_TOOL_USE.model_copy(
        update={"usage": {"input_tokens": 74, "output_tokens": 40, "total_tokens": 190}}
    )
    chunks = CODEC.encode_stream(resp).value
    assert len(chunks) == 2
    calls = [c["candidates"][0]["content"]["parts"] for c in chunks]
    assert [[p["functionCall"]["args"]["location"] for p in parts] for parts in calls] == [
        ["Paris"],
        ["Tokyo"],
    ]
    assert ["finishReason" in c["candidates"][0] for c in chunks] == [False, True]
    assert ["usageMetadata" in c for c in chunks] == [False, True]
    assert chunks[-1]["usageMetadata"] == {
        "promptTokenCount": 74,
        "candidatesTokenCount": 40,
        "totalTokenCount": 190,
    }


def test_stream_splits_text_into_pieces_with_the_signature_on_the_last() -> None:
    resp = CODEC.decode_response(ref("response.final")).value
    chunks = CODEC.encode_stream(resp).value
    pieces = [c["candidates"][0]["content"]["parts"] for c in chunks]
    assert len(pieces) > 1 and all(len(p) == 1 for p in pieces)
    assert "".join(p[0]["text"] for p in pieces) == resp.message.text
    assert ["thoughtSignature" in p[0] for p in pieces] == [False] * (len(pieces) - 1) + [True]
    assert CODEC.decode_stream(chunks).value == resp


def test_decode_stream_joins_text_pieces_of_the_same_kind() -> None:
    def chunk(*parts: dict[str, Any]) -> dict[str, Any]:
        return {"candidates": [{"content": {"role": "model", "parts": list(parts)}}]}

    events = [
        chunk({"text": "Thinking ", "thought": True}),
        chunk({"text": "hard.", "thought": True, "thoughtSignature": "c2ln"}),
        chunk({"text": "Hello "}),
        chunk({"text": "world"}),
        chunk({"text": "", "thoughtSignature": "ZW5k"}),
        chunk({"text": "Next."}),
    ]
    parts = CODEC.decode_stream(events).value.message.parts
    assert parts == [
        Thinking(text="Thinking hard.", signature="c2ln", source="gemini"),
        Text(text="Hello world", provider_details={"gemini": {"thoughtSignature": "ZW5k"}}),
        Text(text="Next."),
    ]


def test_detect_kinds() -> None:
    assert CODEC.detect({"contents": []}) == "request"
    assert CODEC.detect({"candidates": []}) == "response"
    assert CODEC.detect([{"candidates": []}, {"usageMetadata": {}}]) == "stream"
    assert CODEC.detect([]) is None
    assert CODEC.detect({"messages": []}) is None
    assert CODEC.detect([{"type": "message_start"}]) is None


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ([], "$"),
        ({"systemInstruction": {"parts": []}}, "$.contents"),
        ({"contents": [{"role": "assistant", "parts": []}]}, "$.contents[0].role"),
        ({"contents": [{"role": "user"}]}, "$.contents[0].parts"),
        (
            {
                "contents": [
                    {"role": "model", "parts": [{"functionCall": {"name": "f", "args": [1]}}]}
                ]
            },
            "$.contents[0].parts[0].functionCall.args",
        ),
        (
            {"contents": [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}]},
            "$.contents[0].parts[0].functionCall.name",
        ),
        (
            {"contents": [{"parts": [{"functionResponse": {"name": "f", "response": "ok"}}]}]},
            "$.contents[0].parts[0].functionResponse.response",
        ),
        (
            {
                "contents": [],
                "tools": [
                    {
                        "functionDeclarations": [
                            {
                                "name": "f",
                                "parameters": {"type": "OBJECT"},
                                "parametersJsonSchema": {},
                            }
                        ]
                    }
                ],
            },
            "$.tools[0].functionDeclarations[0].parametersJsonSchema",
        ),
        (
            {
                "contents": [],
                "tools": [
                    {"functionDeclarations": [{"name": "f", "parameters": {"type": "TEXT"}}]}
                ],
            },
            "$.tools[0].functionDeclarations[0].parameters.type",
        ),
        (
            {"contents": [], "generationConfig": {"maxOutputTokens": "many"}},
            "$.generationConfig.maxOutputTokens",
        ),
    ],
)
def test_decode_request_rejects_malformed_payloads_with_their_path(payload: Any, path: str) -> None:
    with pytest.raises(CodecError) as err:
        CODEC.decode_request(payload)
    assert err.value.path == path
    assert err.value.protocol == "gemini"


def test_decode_response_rejects_malformed_payloads_with_their_path() -> None:
    with pytest.raises(CodecError) as err:
        CODEC.decode_response({"candidates": "many"})
    assert err.value.path == "$.candidates"


def test_decode_response_reads_one_candidate_object_as_a_list_of_one() -> None:
    got = CODEC.decode_response(
        {"candidates": {"content": {"role": "model", "parts": {"text": "hi"}}}}
    )
    assert [p.text for p in got.value.message.parts] == ["hi"]  # type: ignore[union-attr]
    with pytest.raises(CodecError) as err:
        CODEC.decode_response({"candidates": [{"content": {"parts": [{"inlineData": {}}]}}]})
    assert err.value.path == "$.candidates[0].content.parts[0].inlineData.mimeType"


def test_decode_stream_names_the_bad_chunk() -> None:
    events = ref("stream.function_calls")
    del events[1]["candidates"][0]["content"]["parts"][0]["functionCall"]["name"]
    with pytest.raises(CodecError) as err:
        CODEC.decode_stream(events)
    assert err.value.path == "$[1].candidates[0].content.parts[0].functionCall.name"
    with pytest.raises(CodecError) as err:
        CODEC.decode_stream([])
    assert err.value.path == "$"


def test_system_messages_join_the_one_system_instruction() -> None:
    conv = Conversation(
        system="A",
        messages=[
            Message(role="system", parts=[Text(text="B")]),
            user("hi"),
            Message(role="system", parts=[Text(text="C")]),
        ],
    )
    out = CODEC.encode_request(conv)
    assert out.value["systemInstruction"] == {
        "parts": [{"text": "A"}, {"text": "B"}, {"text": "C"}]
    }
    assert out.value["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]
    assert [(w.code, w.path) for w in out.warnings] == [
        ("system_moved", "messages[2]"),
        ("system_moved", "system"),
        ("messages_renumbered", "messages"),
    ]
    assert CODEC.decode_request(out.value).value.system == "A\nB\nC"


def test_structured_content_is_reported_because_it_comes_back_as_text() -> None:
    same = ToolResult(call_id=cases.PARIS.id, content='{"t": 18}', structured={"t": 18})
    other = ToolResult(call_id=cases.TOKYO.id, content="18 degrees", structured={"t": 18})
    out = CODEC.encode_request(_weather_batch([same, other]))
    assert [(w.code, w.path) for w in out.warnings] == [
        ("structured_content_dropped", "messages[2].parts[0]"),
        ("structured_content_dropped", "messages[2].parts[1]"),
    ]
    back = CODEC.decode_request(out.value).value.messages[2].tool_results
    assert [r.structured for r in back] == [None, None]
    assert back[0].text == '{"t": 18}'


@pytest.mark.parametrize(
    "content",
    [
        {"role": "model", "parts": [{"functionCall": {"name": "f", "argz": {}}}]},
        {"role": "model", "parts": [{"text": "x", "thoughtSignature": "%%%"}]},
    ],
)
def test_the_sdk_check_rejects_misspelled_keys_and_bad_base64(content: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        assert_genai(types.Content, content)
