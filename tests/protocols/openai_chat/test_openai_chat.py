"""OpenAI Chat Completions codec: goldens, the verified reference payloads, SDK types, rules."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

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
from flowdebug.protocols.openai_chat.codec import CODEC
from tests import cases
from tests.goldens import check_golden
from tests.paths import WIRE
from tests.sdkcheck import assert_model, assert_params

NAME = "openai-chat"


def ref(name: str) -> Any:
    return json.loads((WIRE / f"openai-chat.{name}.json").read_text())


def codes(converted: Any) -> list[str]:
    """The warning codes, without those of the envelope a canonical case lacks (model,
    created, id), which tests of their own cover."""
    return [w.code for w in converted.warnings if w.code not in ENVELOPE]


ENVELOPE = {"model_filled_in", "created_filled_in", "response_id_replaced", "stop_reason_filled_in"}


def without_ids(messages: list[Message]) -> list[Message]:
    """Messages with call ids replaced by their order of appearance (vendors differ)."""
    order: dict[str, str] = {}

    def new(old: str) -> str:
        return order.setdefault(old, f"id{len(order)}")

    out = []
    for msg in messages:
        parts = []
        for part in msg.parts:
            if isinstance(part, ToolCall):
                part = part.model_copy(update={"id": new(part.id)})
            elif isinstance(part, ToolResult):
                part = part.model_copy(update={"call_id": new(part.call_id), "error_type": None})
            parts.append(part)
        out.append(msg.model_copy(update={"parts": parts}))
    return out


def sdk_accumulate(chunks: list[dict[str, Any]]) -> Any:
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    return state.get_final_completion()


def user(text: str) -> Message:
    return Message(role="user", parts=[Text(text=text)])


# --- goldens ----------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["weather_initial", "weather_continuation"])
def test_golden_requests(case: str) -> None:
    check_golden(NAME, case, CODEC.encode_request(cases.CONVERSATIONS[case]).value)


@pytest.mark.parametrize("case", ["weather_tool_use", "weather_final"])
def test_golden_responses(case: str) -> None:
    check_golden(NAME, case, CODEC.encode_response(cases.RESPONSES[case]).value)


def test_golden_tool_use_stream() -> None:
    check_golden(NAME, "weather_tool_use_stream", CODEC.encode_stream(cases.WEATHER_TOOL_USE).value)


def test_encoded_continuation_matches_reference_modulo_call_ids() -> None:
    ours = CODEC.encode_request(cases.WEATHER_CONTINUATION).value
    reference = ref("request.continuation")
    ids = {
        "toolu_01A7Pq3rT9xWcE5bLmN2kVdY": "call_8Kx2vR3mQ1pZ7tY4nW6bL0aD",
        "toolu_01B8Qr4sU0yXdF6cMnO3lWeZ": "call_5Jh9sT2cF8kN1wE3qX7yU4rM",
    }
    text = json.dumps(ours)
    for old, new in ids.items():
        text = text.replace(old, new)
    # parallel_tool_calls: the reference passed it explicitly; the canonical case leaves it
    # to the vendor default (true), so we do not send it.
    assert json.loads(text) == {k: v for k, v in reference.items() if k != "parallel_tool_calls"}


def test_encoded_tool_use_response_matches_reference_shape() -> None:
    ours = CODEC.encode_response(cases.WEATHER_TOOL_USE).value
    reference = ref("response.tool_calls")
    assert ours["object"] == "chat.completion"
    assert ours["id"].startswith("chatcmpl-")
    assert ours["choices"][0]["finish_reason"] == "tool_calls"
    assert ours["choices"][0]["message"].keys() == reference["choices"][0]["message"].keys()
    assert ours["choices"][0]["message"]["content"] is None
    assert [c["function"] for c in ours["choices"][0]["message"]["tool_calls"]] == [
        c["function"] for c in reference["choices"][0]["message"]["tool_calls"]
    ]


def test_encoded_stream_has_the_reference_chunk_shapes() -> None:
    ours = CODEC.encode_stream(cases.WEATHER_TOOL_USE).value
    reference = ref("stream.tool_calls")
    shape = [(list(c["choices"][0]["delta"]) if c["choices"] else "usage") for c in reference]
    assert [(list(c["choices"][0]["delta"]) if c["choices"] else "usage") for c in ours][
        : len(shape) - 1
    ] == shape[:-1]  # ours has no usage unless the response carries one
    assert ours[0]["choices"][0]["delta"] == reference[0]["choices"][0]["delta"]


# --- the verified reference payloads ----------------------------------------------------


def test_decode_reference_initial_request() -> None:
    conv = CODEC.decode_request(ref("request.initial")).value
    assert conv.system == "You are a weather assistant."
    assert conv.model == "gpt-4.1"
    assert conv.tools == [cases.WEATHER_TOOL]
    assert conv.tool_choice == ToolChoice(mode="auto", parallel=True)
    assert conv.messages == [cases.WEATHER_USER]


def test_decode_reference_continuation_gives_the_canonical_calls_and_results() -> None:
    converted = CODEC.decode_request(ref("request.continuation"))
    conv = converted.value
    assert converted.warnings == []
    assert without_ids(conv.messages) == without_ids(cases.WEATHER_CONTINUATION.messages)
    calls, results = conv.messages[1].tool_calls, conv.messages[2].tool_results
    assert [c.id for c in calls] == [
        "call_8Kx2vR3mQ1pZ7tY4nW6bL0aD",
        "call_5Jh9sT2cF8kN1wE3qX7yU4rM",
    ]
    assert [r.call_id for r in results] == [c.id for c in calls]
    assert [r.name for r in results] == ["get_weather", "get_weather"]
    assert [r.is_error for r in results] == [False, True]
    assert results[1].content == "timeout after 10s"
    assert json.loads(results[0].content)["temperature"] == 18  # type: ignore[arg-type]


def test_decode_reference_tool_calls_response() -> None:
    resp = CODEC.decode_response(ref("response.tool_calls")).value
    assert resp.stop_reason == "tool_use"
    assert resp.id == "chatcmpl-Bx7kQ2mZ9vP4rT1yW8nL3sD6fH0aJ"
    assert resp.model == "gpt-4.1-2025-04-14"
    assert resp.usage == {"input_tokens": 88, "output_tokens": 52}
    assert resp.provider_details == {
        NAME: {
            "created": 1767225600,
            "service_tier": "default",
            "system_fingerprint": "fp_3f58d112f7",
        }
    }
    assert without_ids([resp.message]) == without_ids([cases.WEATHER_CALLS])


def test_decode_reference_final_response() -> None:
    resp = CODEC.decode_response(ref("response.final")).value
    assert resp.stop_reason == "end_turn"
    assert resp.message.role == "assistant"
    assert resp.message.text.startswith("Paris is 18 degrees C and partly cloudy.")
    assert resp.message.tool_calls == []


def test_decode_reference_stream_equals_reference_response() -> None:
    stream = CODEC.decode_stream(ref("stream.tool_calls"))
    assert stream.warnings == []
    assert stream.value == CODEC.decode_response(ref("response.tool_calls")).value


def test_reference_responses_round_trip_exactly() -> None:
    for name in ("response.tool_calls", "response.final"):
        payload = ref(name)
        assert CODEC.encode_response(CODEC.decode_response(payload).value).value == payload
    stream = ref("stream.tool_calls")
    again = CODEC.encode_stream(CODEC.decode_stream(stream).value).value
    assert (
        sdk_accumulate(again).choices[0].message.tool_calls
        == sdk_accumulate(stream).choices[0].message.tool_calls
    )


def test_reference_requests_round_trip_exactly() -> None:
    for name in ("request.initial", "request.continuation"):
        payload = ref(name)
        assert CODEC.encode_request(CODEC.decode_request(payload).value).value == payload


def test_decode_reference_strict_tool_keeps_strict_and_schema() -> None:
    variant = ref("variant.strict_tool")
    body = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}], "tools": [variant]}
    conv = CODEC.decode_request(body).value
    assert conv.tools[0].strict is True
    assert conv.tools[0].parameters["additionalProperties"] is False
    assert CODEC.encode_request(conv).value["tools"] == [variant]


# --- SDK validation ---------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(cases.CONVERSATIONS))
def test_every_encoded_request_validates_with_the_sdk(case: str) -> None:
    assert_params(
        CompletionCreateParamsNonStreaming, CODEC.encode_request(cases.CONVERSATIONS[case]).value
    )


@pytest.mark.parametrize("case", sorted(cases.RESPONSES))
def test_every_encoded_response_validates_with_the_sdk(case: str) -> None:
    assert_model(ChatCompletion, CODEC.encode_response(cases.RESPONSES[case]).value)


@pytest.mark.parametrize("case", sorted(cases.RESPONSES))
def test_every_encoded_stream_chunk_validates_with_the_sdk(case: str) -> None:
    resp = cases.RESPONSES[case].model_copy(
        update={"usage": {"input_tokens": 5, "output_tokens": 7}}
    )
    chunks = CODEC.encode_stream(resp).value
    for chunk in chunks:
        assert_model(ChatCompletionChunk, chunk)
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}


@pytest.mark.parametrize("case", sorted(cases.RESPONSES))
def test_sdk_stream_accumulator_reaches_the_same_turn_as_our_decode(case: str) -> None:
    chunks = CODEC.encode_stream(cases.RESPONSES[case]).value
    final = sdk_accumulate(chunks)
    ours = CODEC.decode_stream(chunks).value
    sdk_calls = final.choices[0].message.tool_calls or []
    assert [(c.id, c.function.name, c.function.arguments) for c in sdk_calls] == [
        (c.id, c.name, c.raw_arguments or json.dumps(c.arguments, separators=(",", ":")))
        for c in ours.message.tool_calls
    ]
    assert (final.choices[0].message.content or "") == ours.message.text
    assert (
        final.choices[0].finish_reason
        == CODEC.encode_response(cases.RESPONSES[case]).value["choices"][0]["finish_reason"]
    )


# --- round trips ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "case", ["weather_initial", "weather_continuation", "weather_complete", "tasks"]
)
def test_request_round_trip_keeps_calls_results_and_error_flags(case: str) -> None:
    conv = cases.CONVERSATIONS[case]
    encoded = CODEC.encode_request(conv)
    back = CODEC.decode_request(encoded.value).value
    assert back.messages == without_error_type(conv.messages)
    assert back.system == conv.system
    assert back.tool_choice == conv.tool_choice
    assert [(t.name, t.description, t.parameters) for t in back.tools] == [
        (t.name, t.description, t.parameters) for t in conv.tools
    ]


def without_error_type(messages: list[Message]) -> list[Message]:
    """error_type is debugger metadata that no vendor carries."""
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


def test_image_result_round_trip_reports_what_it_lost() -> None:
    encoded = CODEC.encode_request(cases.IMAGE_RESULT)
    assert sorted(set(codes(encoded))) == ["image_in_result_dropped", "tool_name_renamed"]
    back = CODEC.decode_request(encoded.value).value
    call = back.messages[1].tool_calls[0]
    result = back.messages[2].tool_results[0]
    assert call.name == back.tools[0].name == result.name == "camera_snapshot"
    assert result.call_id == call.id == "call_cam"
    assert result.content == [Text(text="snapshot taken")]


@pytest.mark.parametrize("case", sorted(cases.RESPONSES))
def test_response_round_trip_keeps_the_turn(case: str) -> None:
    resp = cases.RESPONSES[case]
    back = CODEC.decode_response(CODEC.encode_response(resp).value).value
    kept = [p for p in resp.message.parts if not isinstance(p, Thinking)]
    assert back.message.parts == kept
    assert back.stop_reason == resp.stop_reason


@pytest.mark.parametrize("case", sorted(cases.RESPONSES))
def test_stream_decodes_to_the_same_turn_as_the_response(case: str) -> None:
    resp = cases.RESPONSES[case].model_copy(
        update={"usage": {"input_tokens": 3, "output_tokens": 4}}
    )
    assert (
        CODEC.decode_stream(CODEC.encode_stream(resp).value).value
        == CODEC.decode_response(CODEC.encode_response(resp).value).value
    )


# --- vendor rules -----------------------------------------------------------------------


def test_encode_puts_system_prompt_in_a_leading_system_message() -> None:
    messages = CODEC.encode_request(cases.WEATHER_INITIAL).value["messages"]
    assert messages[0] == {"role": "system", "content": "You are a weather assistant."}
    assert messages[1] == {"role": "user", "content": "Weather in Paris and Tokyo?"}


def test_encode_sends_one_tool_message_per_result_right_after_the_assistant_turn() -> None:
    messages = CODEC.encode_request(cases.WEATHER_COMPLETE).value["messages"]
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert [m["tool_call_id"] for m in messages[3:5]] == [cases.PARIS.id, cases.TOKYO.id]


def test_encode_sets_assistant_content_null_when_the_turn_is_only_tool_calls() -> None:
    assistant = CODEC.encode_request(cases.WEATHER_CONTINUATION).value["messages"][2]
    assert assistant["content"] is None
    assert list(assistant) == ["role", "content", "tool_calls"]


def test_encode_sends_arguments_as_a_compact_json_string() -> None:
    call = CODEC.encode_request(cases.WEATHER_CONTINUATION).value["messages"][2]["tool_calls"][0]
    assert call == {
        "id": cases.PARIS.id,
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"location":"Paris","unit":"c"}'},
    }


def test_encode_error_result_as_error_json_text() -> None:
    tool_message = CODEC.encode_request(cases.WEATHER_CONTINUATION).value["messages"][4]
    assert tool_message["content"] == '{"error": "timeout after 10s"}'


def test_decode_error_json_text_as_error_result_and_other_json_as_success() -> None:
    body = {
        "model": "gpt-4.1",
        "messages": [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                    {"id": "b", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "a", "content": '{"error":"denied"}'},
            {"role": "tool", "tool_call_id": "b", "content": '{"error": "x", "code": 3}'},
            {"role": "tool", "tool_call_id": "c", "content": '{"error": 42}'},
        ],
    }
    results = CODEC.decode_request(body).value.messages[1].tool_results
    assert [(r.is_error, r.content) for r in results] == [
        (True, "denied"),
        (False, '{"error": "x", "code": 3}'),
        (False, '{"error": 42}'),
    ]


def test_decode_consecutive_tool_messages_become_one_tool_turn_named_from_calls() -> None:
    conv = CODEC.decode_request(ref("request.continuation")).value
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool"]
    assert len(conv.messages[2].parts) == 2
    assert all(r.name == "get_weather" for r in conv.messages[2].tool_results)


def test_decode_unpaired_result_has_no_name() -> None:
    body = {"model": "m", "messages": [{"role": "tool", "tool_call_id": "x", "content": "ok"}]}
    assert CODEC.decode_request(body).value.messages[0].tool_results[0].name is None


def test_decode_tool_content_as_list_of_text_parts() -> None:
    body = {
        "model": "m",
        "messages": [
            {
                "role": "tool",
                "tool_call_id": "x",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            }
        ],
    }
    result = CODEC.decode_request(body).value.messages[0].tool_results[0]
    assert result.content == [Text(text="a"), Text(text="b")]
    assert CODEC.encode_request(CODEC.decode_request(body).value).value == body


def test_decode_developer_message_counts_as_system_and_round_trips() -> None:
    body = {
        "model": "o3",
        "messages": [
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": "hi"},
            {"role": "developer", "content": [{"type": "text", "text": "Later rule."}]},
        ],
    }
    conv = CODEC.decode_request(body).value
    assert conv.system == "Be brief."
    assert conv.messages[1].role == "system"
    assert conv.messages[1].text == "Later rule."
    assert CODEC.encode_request(conv).value["messages"] == [
        body["messages"][0],
        body["messages"][1],
        {"role": "developer", "content": "Later rule."},
    ]


def test_encode_drops_image_in_tool_result_with_a_warning() -> None:
    encoded = CODEC.encode_request(cases.IMAGE_RESULT)
    tool_message = encoded.value["messages"][2]
    assert tool_message == {
        "role": "tool",
        "tool_call_id": "call_cam",
        "content": [{"type": "text", "text": "snapshot taken"}],
    }
    [warning] = [w for w in encoded.warnings if w.code == "image_in_result_dropped"]
    assert warning.path == "messages[2].parts[0].content[1]"


def test_encode_drops_thinking_and_its_signature_with_warnings() -> None:
    encoded = CODEC.encode_response(cases.THINKING_CALL)
    assert codes(encoded) == ["thinking_dropped", "thinking_signature_dropped"]
    # The dropped part shifts the parts after it.
    assert {w.path for w in encoded.warnings if w.code not in ENVELOPE} == {"message.parts"}
    message = encoded.value["choices"][0]["message"]
    assert message["content"] == "Let me check."
    assert message["tool_calls"][0]["function"]["arguments"] == '{"location":"Paris"}'


def test_encode_user_image_as_data_url_part() -> None:
    conv = Conversation(
        messages=[
            Message(
                role="user",
                parts=[Text(text="What is this?"), Image(media_type="image/png", data=cases.PIXEL)],
            )
        ]
    )
    body = CODEC.encode_request(conv).value
    assert body["messages"][0]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{cases.PIXEL}"},
    }
    assert CODEC.decode_request(body).value.messages == conv.messages


def test_encode_named_tool_choice_and_parallel_flag() -> None:
    body = CODEC.encode_request(cases.TASKS).value
    assert body["tool_choice"] == {"type": "function", "function": {"name": "create_task"}}
    assert body["parallel_tool_calls"] is False


def test_encode_omits_parallel_tool_calls_when_parallel_is_unset() -> None:
    body = CODEC.encode_request(cases.WEATHER_INITIAL).value
    assert body["tool_choice"] == "auto"
    assert "parallel_tool_calls" not in body


@pytest.mark.parametrize("mode", ["auto", "none", "required"])
def test_encode_tool_choice_modes_as_strings(mode: str) -> None:
    conv = cases.WEATHER_INITIAL.model_copy(update={"tool_choice": ToolChoice(mode=mode)})
    body = CODEC.encode_request(conv).value
    assert body["tool_choice"] == mode
    assert CODEC.decode_request(body).value.tool_choice == ToolChoice(mode=mode)


def test_encode_drops_tool_choice_when_no_tools_are_declared() -> None:
    conv = Conversation(tool_choice=ToolChoice(mode="required"), messages=[user("hi")])
    encoded = CODEC.encode_request(conv)
    assert "tool_choice" not in encoded.value
    assert "tools" not in encoded.value
    assert codes(encoded) == ["tool_choice_dropped"]


def test_encode_max_tokens_as_max_completion_tokens_and_temperature() -> None:
    conv = cases.WEATHER_INITIAL.model_copy(
        update={"max_tokens": 300, "temperature": 0.2, "model": "gpt-5"}
    )
    body = CODEC.encode_request(conv).value
    assert (body["model"], body["max_completion_tokens"], body["temperature"]) == (
        "gpt-5",
        300,
        0.2,
    )
    assert "max_tokens" not in body
    back = CODEC.decode_request(body).value
    assert (back.model, back.max_tokens, back.temperature) == ("gpt-5", 300, 0.2)


def test_decode_legacy_max_tokens() -> None:
    body = {"model": "m", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}
    assert CODEC.decode_request(body).value.max_tokens == 50


def test_encode_renames_an_illegal_tool_name_everywhere_with_one_warning() -> None:
    body = CODEC.encode_request(
        cases.IMAGE_RESULT.model_copy(
            update={"tool_choice": ToolChoice(mode="tool", name="camera.snapshot")}
        )
    ).value
    new = safe_name(NAME, "camera.snapshot")
    assert new == "camera_snapshot"
    assert body["tools"][0]["function"]["name"] == new
    assert body["tool_choice"]["function"]["name"] == new
    assert body["messages"][1]["tool_calls"][0]["function"]["name"] == new
    warnings = CODEC.encode_request(cases.IMAGE_RESULT).warnings
    # Named where declared, and wherever else the name changes (the call, the result).
    assert [w.path for w in warnings if w.code == "tool_name_renamed"] == [
        "tools[0]",
        "messages[1].parts[0]",
        "messages[2].parts[0]",
    ]


def test_encode_rewrites_an_empty_call_id_on_call_and_result_alike() -> None:
    conv = Conversation(
        messages=[
            Message(role="assistant", parts=[ToolCall(id="", name="f")]),
            Message(role="tool", parts=[ToolResult(call_id="", content="ok")]),
        ]
    )
    encoded = CODEC.encode_request(conv)
    call_id = encoded.value["messages"][0]["tool_calls"][0]["id"]
    assert call_id and encoded.value["messages"][1]["tool_call_id"] == call_id
    assert codes(encoded) == ["call_id_renamed", "call_id_renamed"]  # the call and its result


def test_encode_sends_raw_arguments_verbatim() -> None:
    call = CODEC.encode_response(cases.MALFORMED_ARGS).value["choices"][0]["message"]["tool_calls"][
        0
    ]
    assert call["function"]["arguments"] == '{"location": "Paris"'


@pytest.mark.parametrize(
    ("arguments", "expected", "raw"),
    [
        ("", {}, None),
        ('{"a": 1}', {"a": 1}, None),
        ('{"a": 1', {}, '{"a": 1'),
        ("[1, 2]", {}, "[1, 2]"),
        ('"text"', {}, '"text"'),
    ],
)
def test_decode_arguments(arguments: str, expected: dict[str, Any], raw: str | None) -> None:
    payload = ref("response.tool_calls")
    payload["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = arguments
    call = CODEC.decode_response(payload).value.message.tool_calls[0]
    assert (call.arguments, call.raw_arguments) == (expected, raw)


@pytest.mark.parametrize(
    ("finish", "stop"),
    [
        ("stop", "end_turn"),
        ("tool_calls", "tool_use"),
        ("length", "max_tokens"),
        ("content_filter", "content_filter"),
    ],
)
def test_decode_finish_reason(finish: str, stop: str) -> None:
    payload = ref("response.final")
    payload["choices"][0]["finish_reason"] = finish
    resp = CODEC.decode_response(payload).value
    assert resp.stop_reason == stop
    assert CODEC.encode_response(resp).value["choices"][0]["finish_reason"] == finish


def test_decode_refusal_round_trips() -> None:
    payload = ref("response.final")
    payload["choices"][0]["message"] |= {"content": None, "refusal": "I can't help with that."}
    resp = CODEC.decode_response(payload).value
    assert resp.message.parts[0].text == "I can't help with that."
    assert CODEC.encode_response(resp).value == payload


def test_encode_response_keeps_an_openai_id_and_derives_one_otherwise() -> None:
    ours = CODEC.encode_response(cases.WEATHER_FINAL_RESPONSE).value
    assert ours["id"] == CODEC.encode_response(cases.WEATHER_FINAL_RESPONSE).value["id"]
    foreign = cases.WEATHER_FINAL_RESPONSE.model_copy(update={"id": "msg_01XYZ"})
    assert CODEC.encode_response(foreign).value["id"].startswith("chatcmpl-")
    kept = cases.WEATHER_FINAL_RESPONSE.model_copy(update={"id": "chatcmpl-abc"})
    assert CODEC.encode_response(kept).value["id"] == "chatcmpl-abc"


def test_encode_warns_once_per_part_with_foreign_provider_details() -> None:
    call = cases.PARIS.model_copy(
        update={
            "provider_details": {
                "gemini": {"thoughtSignature": "c2ln"},
                "openai-responses": {"id": "fc_1"},
            }
        }
    )
    resp = ModelResponse(message=Message(role="assistant", parts=[call]))
    encoded = CODEC.encode_response(resp.model_copy(update={"model": "gpt-4.1"}))
    assert [(w.code, w.path) for w in encoded.warnings if w.code not in ENVELOPE] == [
        ("provider_details_dropped", "message.parts[0].provider_details.openai-responses"),
        ("provider_details_dropped", "message.parts[0].provider_details.gemini"),
    ]


def test_encode_warns_for_tool_metadata_openai_cannot_carry() -> None:
    encoded = CODEC.encode_request(cases.TASKS)
    assert [(w.code, w.path) for w in encoded.warnings if w.code not in ENVELOPE] == [
        ("tool_metadata_dropped", "tools[1]")
    ]


def test_decode_keeps_unmapped_body_fields_for_the_round_trip() -> None:
    body = {**ref("request.initial"), "seed": 7, "response_format": {"type": "text"}}
    conv = CODEC.decode_request(body).value
    assert conv.provider_details == {
        NAME: {"body": {"seed": 7, "response_format": {"type": "text"}}}
    }
    assert CODEC.encode_request(conv).value == body


# --- streams ----------------------------------------------------------------------------


def test_encode_stream_first_delta_per_call_carries_index_id_name_and_empty_arguments() -> None:
    chunks = CODEC.encode_stream(cases.WEATHER_TOOL_USE).value
    deltas = [c["choices"][0]["delta"] for c in chunks]
    assert deltas[0] == {"role": "assistant", "content": None, "refusal": None}
    firsts = [
        d["tool_calls"][0] for d in deltas if "tool_calls" in d and "id" in d["tool_calls"][0]
    ]
    assert firsts == [
        {
            "index": 0,
            "id": cases.PARIS.id,
            "type": "function",
            "function": {"name": "get_weather", "arguments": ""},
        },
        {
            "index": 1,
            "id": cases.TOKYO.id,
            "type": "function",
            "function": {"name": "get_weather", "arguments": ""},
        },
    ]
    fragments = [
        d["tool_calls"][0] for d in deltas if "tool_calls" in d and "id" not in d["tool_calls"][0]
    ]
    assert all(list(f) == ["index", "function"] for f in fragments)
    assert len([f for f in fragments if f["index"] == 0]) > 1
    assert (
        "".join(f["function"]["arguments"] for f in fragments if f["index"] == 1)
        == '{"location":"Tokyo","unit":"c"}'
    )


def test_encode_stream_ends_with_finish_reason_then_the_usage_chunk() -> None:
    resp = cases.WEATHER_TOOL_USE.model_copy(
        update={"usage": {"input_tokens": 88, "output_tokens": 52}}
    )
    chunks = CODEC.encode_stream(resp).value
    assert chunks[-2]["choices"][0]["delta"] == {}
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert all(c["choices"][0]["finish_reason"] is None for c in chunks[:-2])
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == ref("stream.tool_calls")[-1]["usage"]


def test_encode_stream_of_text_streams_content_fragments() -> None:
    chunks = CODEC.encode_stream(cases.WEATHER_FINAL_RESPONSE).value
    assert chunks[0]["choices"][0]["delta"]["content"] == ""
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    assert text == cases.FINAL_TEXT
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_decode_stream_accumulates_calls_by_index_not_id() -> None:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    events = [
        chunk({"role": "assistant"}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "f", "arguments": ""},
                    },
                    {
                        "index": 1,
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "g", "arguments": '{"y"'},
                    },
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": ":2}"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"x":1}'}}]}),
        chunk({}, "tool_calls"),
    ]
    resp = CODEC.decode_stream(events).value
    assert [(c.id, c.name, c.arguments) for c in resp.message.tool_calls] == [
        ("call_a", "f", {"x": 1}),
        ("call_b", "g", {"y": 2}),
    ]
    assert [
        (c.id, c.function.arguments) for c in sdk_accumulate(events).choices[0].message.tool_calls
    ] == [("call_a", '{"x":1}'), ("call_b", '{"y":2}')]


def test_decode_stream_of_a_call_that_never_got_arguments_means_empty_object() -> None:
    events = ref("stream.tool_calls")
    events = [
        e
        for e in events
        if not (
            e["choices"]
            and "tool_calls" in e["choices"][0]["delta"]
            and "id" not in e["choices"][0]["delta"]["tool_calls"][0]
            and e["choices"][0]["delta"]["tool_calls"][0]["index"]
        )
    ]
    calls = CODEC.decode_stream(events).value.message.tool_calls
    assert [(c.arguments, c.raw_arguments) for c in calls] == [
        ({"location": "Paris", "unit": "c"}, None),
        ({}, None),
    ]


# --- detection --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("request.initial", "request"),
        ("request.continuation", "request"),
        ("response.tool_calls", "response"),
        ("response.final", "response"),
        ("stream.tool_calls", "stream"),
    ],
)
def test_detect_reference_payloads(name: str, kind: str) -> None:
    assert CODEC.detect(ref(name)) == kind


@pytest.mark.parametrize(
    "path", sorted(p.name for p in WIRE.glob("*.json") if not p.name.startswith("openai-chat."))
)
def test_detect_never_claims_another_protocols_payload(path: str) -> None:
    assert CODEC.detect(json.loads((WIRE / path).read_text())) is None


def test_detect_own_encodings_and_a_plain_chat_request() -> None:
    for conv in cases.CONVERSATIONS.values():
        assert CODEC.detect(CODEC.encode_request(conv).value) == "request"
    for resp in cases.RESPONSES.values():
        assert CODEC.detect(CODEC.encode_response(resp).value) == "response"
        assert CODEC.detect(CODEC.encode_stream(resp).value) == "stream"
    assert (
        CODEC.detect({"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]})
        == "request"
    )
    assert (
        CODEC.detect(
            {"model": "claude", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
        )
        is None
    )
    assert CODEC.detect([]) is None
    assert CODEC.detect("text") is None


# --- bad input --------------------------------------------------------------------------


def _continuation_with(change: Any) -> dict[str, Any]:
    payload = ref("request.continuation")
    change(payload)
    return payload


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ([], "$"),
        ({"model": "m"}, "$.messages"),
        ({"model": "m", "messages": [{"role": "robot", "content": "hi"}]}, "$.messages[0].role"),
        ({"model": "m", "messages": [{"content": "hi"}]}, "$.messages[0].role"),
        (
            _continuation_with(
                lambda p: p["messages"][2]["tool_calls"][0]["function"].update(
                    arguments={"location": "Paris"}
                )
            ),
            "$.messages[2].tool_calls[0].function.arguments",
        ),
        (
            _continuation_with(lambda p: p["messages"][3].pop("tool_call_id")),
            "$.messages[3].tool_call_id",
        ),
        (
            _continuation_with(lambda p: p["messages"][4].update(content=[{"type": "image_url"}])),
            "$.messages[4].content[0].type",
        ),
        (_continuation_with(lambda p: p.update(tool_choice="any")), "$.tool_choice"),
        (
            _continuation_with(lambda p: p["tools"][0]["function"].update(parameters="x")),
            "$.tools[0].function.parameters",
        ),
    ],
)
def test_decode_request_rejects_malformed_payloads_naming_the_path(payload: Any, path: str) -> None:
    with pytest.raises(CodecError) as err:
        CODEC.decode_request(payload)
    assert err.value.path == path
    assert err.value.protocol == NAME


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda p: p["choices"][0].pop("message"), "$.choices[0].message"),
        (
            lambda p: p["choices"][0]["message"]["tool_calls"][1].pop("id"),
            "$.choices[0].message.tool_calls[1].id",
        ),
        (lambda p: p["usage"].update(prompt_tokens="88"), "$.usage.prompt_tokens"),
    ],
)
def test_decode_response_rejects_malformed_payloads_naming_the_path(change: Any, path: str) -> None:
    payload = ref("response.tool_calls")
    change(payload)
    with pytest.raises(CodecError) as err:
        CODEC.decode_response(payload)
    assert err.value.path == path


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (
            lambda e: e[1]["choices"][0]["delta"]["tool_calls"][0].pop("id"),
            "$[1].choices[0].delta.tool_calls[0].id",
        ),
        (
            lambda e: e[2]["choices"][0]["delta"]["tool_calls"][0].pop("index"),
            "$[2].choices[0].delta.tool_calls[0].index",
        ),
        (
            lambda e: e[3]["choices"][0]["delta"]["tool_calls"][0]["function"].update(arguments=5),
            "$[3].choices[0].delta.tool_calls[0].function.arguments",
        ),
        (lambda e: e.__setitem__(4, "oops"), "$[4]"),
        (lambda e: e[0].pop("choices"), "$[0].choices"),
    ],
)
def test_decode_stream_rejects_malformed_chunks_naming_the_path(change: Any, path: str) -> None:
    events = ref("stream.tool_calls")
    change(events)
    with pytest.raises(CodecError) as err:
        CODEC.decode_stream(events)
    assert err.value.path == path


def test_tool_result_in_a_user_turn_is_sent_as_tool_messages_before_the_text() -> None:
    conv = Conversation(
        tools=[Tool(name="f")],
        messages=[
            Message(role="assistant", parts=[ToolCall(id="c1", name="f")]),
            Message(
                role="tool",
                parts=[ToolResult(call_id="c1", content="ok"), Text(text="and also this")],
            ),
        ],
    )
    messages = CODEC.encode_request(conv).value["messages"]
    assert [m["role"] for m in messages] == ["assistant", "tool", "user"]
    assert messages[2]["content"] == "and also this"
