"""OpenAI Responses codec: goldens, the verified reference payloads, SDK types, vendor rules."""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from openai import omit
from openai.lib.streaming.responses import ResponseStreamState
from openai.types.responses import Response, ResponseStreamEvent
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import TypeAdapter

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
from flowdebug.protocols.openai_responses.codec import CODEC
from flowdebug.protocols.openai_responses.stream import fragments
from tests import cases
from tests.goldens import GOLDEN, check_golden
from tests.paths import WIRE
from tests.sdkcheck import assert_model, assert_params

NAME = "openai-responses"
EVENTS: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)


def ref(name: str) -> Any:
    return json.loads((WIRE / f"openai-responses.{name}.json").read_text())


def ref_stream() -> list[dict[str, Any]]:
    """The reference stream, exactly as captured."""
    return ref("stream.function_calls")


def codes(converted: Any) -> list[str]:
    """The warning codes, but model_filled_in: the shared cases name no model."""
    return [w.code for w in warned(converted)]


def warned(converted: Any) -> list[Any]:
    return [w for w in converted.warnings if w.code != "model_filled_in"]


def mine(part: Any) -> dict[str, Any]:
    return (part.provider_details or {}).get(NAME, {})


def canonical_pairs(messages: list[Message]) -> list[tuple[Any, ...]]:
    """Calls and results with call ids replaced by order of appearance (vendors differ)."""
    order: dict[str, int] = {}
    out: list[tuple[Any, ...]] = []
    for msg in messages:
        for p in msg.parts:
            if isinstance(p, ToolCall):
                out.append(("call", order.setdefault(p.id, len(order)), p.name, p.arguments))
            elif isinstance(p, ToolResult):
                out.append(
                    (
                        "result",
                        order.setdefault(p.call_id, len(order)),
                        p.name,
                        p.content,
                        p.is_error,
                    )
                )
            else:
                out.append((p.kind, getattr(p, "text", None)))
    return out


def sdk_final(events: list[dict[str, Any]]) -> Response:
    """What the SDK's own stream accumulator makes of ``events`` (offline)."""
    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=omit, text_format=omit)
    final = None
    for event in events:
        for out in state.handle_event(EVENTS.validate_python(event)):
            if out.type == "response.completed":
                final = out.response
    assert final is not None
    return final


def sdk_snapshot(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The SDK accumulator's snapshot of a stream cut short (no terminal event)."""
    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=omit, text_format=omit)
    for event in events[:-1]:
        state.handle_event(EVENTS.validate_python(event))
    snapshot = state.accumulate_event(EVENTS.validate_python(events[-1]))
    with warnings.catch_warnings():
        # The SDK's parsed snapshot trips pydantic's own union serializer warnings.
        warnings.simplefilter("ignore", UserWarning)
        return snapshot.model_dump(mode="json", exclude_none=True)


def user(text: str) -> Message:
    return Message(role="user", parts=[Text(text=text)])


def conv_with(*messages: Message, **kw: Any) -> Conversation:
    return Conversation(tools=[cases.WEATHER_TOOL], messages=list(messages), **kw)


def encode(conv: Conversation) -> dict[str, Any]:
    return CODEC.encode_request(conv).value


# --- goldens ----------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["weather_initial", "weather_continuation"])
def test_golden_requests(case: str) -> None:
    check_golden(NAME, case, encode(cases.CONVERSATIONS[case]))


@pytest.mark.parametrize(
    "case, resp",
    [("weather_tool_use", cases.WEATHER_TOOL_USE), ("weather_final", cases.WEATHER_FINAL_RESPONSE)],
)
def test_golden_responses(case: str, resp: ModelResponse) -> None:
    check_golden(NAME, case, CODEC.encode_response(resp).value)


def test_golden_tool_use_stream() -> None:
    check_golden(NAME, "weather_tool_use_stream", CODEC.encode_stream(cases.WEATHER_TOOL_USE).value)


# --- against the reference payloads -------------------------------------------------------


def test_encoded_initial_request_equals_the_reference_exactly() -> None:
    assert encode(cases.WEATHER_INITIAL) == ref("request.initial")


def test_encoded_continuation_matches_the_reference_modulo_ids() -> None:
    ours, theirs = encode(cases.WEATHER_CONTINUATION), ref("request.continuation")
    ids = dict(
        zip(
            [cases.PARIS.id, cases.TOKYO.id],
            ["call_8Kx2vR3mQ1pZ7tY4nW6bL0aD", "call_5Jh9sT2cF8kN1wE3qX7yU4rM"],
            strict=True,
        )
    )
    for item in ours["input"]:
        if "call_id" in item:
            item["call_id"] = ids[item["call_id"]]
    for ours_item, ref_item in zip(ours["input"], theirs["input"], strict=True):
        if ref_item.get("type") == "function_call":
            assert ours_item["id"].startswith("fc_")
            ours_item["id"] = ref_item["id"]
    assert ours == theirs


def test_encoded_tool_use_response_has_the_reference_shape() -> None:
    ours, theirs = (
        CODEC.encode_response(cases.WEATHER_TOOL_USE).value,
        ref("response.function_calls"),
    )
    assert list(ours) == list(theirs)
    assert ours["object"] == "response" and ours["status"] == "completed"
    assert [list(i) for i in ours["output"]] == [list(i) for i in theirs["output"]]
    assert [i["arguments"] for i in ours["output"]] == [i["arguments"] for i in theirs["output"]]
    assert list(ours["usage"] or {}) in ([], list(theirs["usage"]))


def test_encoded_final_response_has_the_reference_message_shape() -> None:
    ours, theirs = CODEC.encode_response(cases.WEATHER_FINAL_RESPONSE).value, ref("response.final")
    assert [list(i) for i in ours["output"]] == [list(i) for i in theirs["output"]]
    assert ours["output"][0]["content"][0] == {
        "type": "output_text",
        "text": cases.FINAL_TEXT,
        "annotations": [],
    }


def test_encoded_stream_has_the_reference_event_sequence_and_fragments() -> None:
    ours, theirs = CODEC.encode_stream(cases.WEATHER_TOOL_USE).value, ref_stream()
    assert [e["type"] for e in ours] == [e["type"] for e in theirs]
    assert [e["sequence_number"] for e in ours] == list(range(len(theirs)))
    deltas = [e.get("delta") for e in ours]
    assert deltas == [e.get("delta") for e in theirs]  # same arguments, same fragments
    assert [list(e) for e in ours] == [list(e) for e in theirs]


def test_decode_reference_initial_request() -> None:
    conv = CODEC.decode_request(ref("request.initial")).value
    assert conv.system == "You are a weather assistant."
    assert conv.model == "gpt-4.1"
    assert conv.tools == [cases.WEATHER_TOOL]
    assert conv.tool_choice == ToolChoice(mode="auto")
    assert conv.messages == [cases.WEATHER_USER]


def test_decode_reference_continuation_gives_the_canonical_calls_and_results() -> None:
    decoded = CODEC.decode_request(ref("request.continuation"))
    assert decoded.warnings == []
    conv = decoded.value
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool"]
    assert canonical_pairs(conv.messages) == canonical_pairs(cases.WEATHER_CONTINUATION.messages)
    calls, results = conv.messages[1].tool_calls, conv.messages[2].tool_results
    assert [c.id for c in calls] == [r.call_id for r in results]  # paired on call_id
    assert [mine(c)["id"] for c in calls] == [
        "fc_68a1c2d3e4f5a6b70011223344556677",
        "fc_68a1c2d3e4f5a6b70011223344556688",
    ]
    assert [(r.is_error, r.text) for r in results] == [
        (False, cases.PARIS_RESULT.content),
        (True, "timeout after 10s"),
    ]


def test_decode_previous_response_id_request_keeps_the_id_and_decodes_the_outputs() -> None:
    conv = CODEC.decode_request(ref("variant.request.continuation_previous_response_id")).value
    assert conv.provider_details == {
        NAME: {"previous_response_id": "resp_68a1c2d3e4f5a6b7000000000000aaaa"}
    }
    assert conv.system == "You are a weather assistant."  # instructions are resent
    assert [m.role for m in conv.messages] == ["tool"]
    results = conv.messages[0].tool_results
    assert [r.call_id for r in results] == [
        "call_8Kx2vR3mQ1pZ7tY4nW6bL0aD",
        "call_5Jh9sT2cF8kN1wE3qX7yU4rM",
    ]
    assert [r.is_error for r in results] == [False, True]
    assert [r.name for r in results] == [None, None]  # the calls live on the server
    again = encode(conv)
    assert again == ref("variant.request.continuation_previous_response_id")


def test_decode_reference_function_calls_response() -> None:
    resp = CODEC.decode_response(ref("response.function_calls")).value
    assert resp.stop_reason == "tool_use"
    assert resp.id == "resp_68a1c2d3e4f5a6b7000000000000aaaa"
    assert resp.model == "gpt-4.1-2025-04-14"
    assert resp.usage == {"input_tokens": 75, "output_tokens": 52}
    assert [(c.id, c.name, c.arguments) for c in resp.message.tool_calls] == [
        ("call_8Kx2vR3mQ1pZ7tY4nW6bL0aD", "get_weather", cases.PARIS.arguments),
        ("call_5Jh9sT2cF8kN1wE3qX7yU4rM", "get_weather", cases.TOKYO.arguments),
    ]


def test_decode_reference_final_response() -> None:
    resp = CODEC.decode_response(ref("response.final")).value
    assert resp.stop_reason == "end_turn"
    assert resp.message.text.startswith("Paris is 18 degrees C and partly cloudy.")
    assert mine(resp.message.parts[0]) == {"id": "msg_68a1c2d3e4f5a6b70011223344556699"}


def test_decode_reference_stream_equals_the_reference_response() -> None:
    assert (
        CODEC.decode_stream(ref("stream.function_calls")).value
        == CODEC.decode_response(ref("response.function_calls")).value
    )


@pytest.mark.parametrize("name", ["response.function_calls", "response.final"])
def test_reference_responses_round_trip_exactly(name: str) -> None:
    assert CODEC.encode_response(CODEC.decode_response(ref(name)).value).value == ref(name)


@pytest.mark.parametrize(
    "name",
    [
        "request.initial",
        "request.continuation",
        "variant.request.continuation_previous_response_id",
    ],
)
def test_reference_requests_round_trip_exactly(name: str) -> None:
    decoded = CODEC.decode_request(ref(name))
    continues = "previous_response_id" in name
    assert codes(decoded) == ["previous_response_needed"] * 2 * continues
    assert encode(decoded.value) == ref(name)


def test_reference_stream_round_trips_exactly() -> None:
    events = ref_stream()
    assert CODEC.encode_stream(CODEC.decode_stream(events).value).value == events


def test_sdk_accumulates_the_reference_stream_to_what_we_decode() -> None:
    final = sdk_final(ref_stream()).model_dump(mode="json", exclude_unset=True)
    assert CODEC.decode_response(final).value == CODEC.decode_stream(ref_stream()).value


# --- SDK validation -----------------------------------------------------------------------


@pytest.mark.parametrize("case", list(cases.CONVERSATIONS))
def test_every_encoded_request_validates_with_the_sdk(case: str) -> None:
    assert_params(ResponseCreateParamsNonStreaming, encode(cases.CONVERSATIONS[case]))


@pytest.mark.parametrize("case", list(cases.RESPONSES))
def test_every_encoded_response_validates_with_the_sdk(case: str) -> None:
    assert_model(Response, CODEC.encode_response(cases.RESPONSES[case]).value)


@pytest.mark.parametrize("case", list(cases.RESPONSES))
def test_every_encoded_stream_event_validates_with_the_sdk(case: str) -> None:
    for event in CODEC.encode_stream(cases.RESPONSES[case]).value:
        assert_model(ResponseStreamEvent, event)


@pytest.mark.parametrize("case", list(cases.RESPONSES))
def test_sdk_stream_accumulator_reaches_the_same_turn_as_our_decode(case: str) -> None:
    events = CODEC.encode_stream(cases.RESPONSES[case]).value
    final = sdk_final(events).model_dump(mode="json", exclude_unset=True)
    assert CODEC.decode_response(final).value == CODEC.decode_stream(events).value


@pytest.mark.parametrize("case", list(cases.RESPONSES))
def test_a_stream_cut_before_completion_assembles_the_items_like_the_sdk(case: str) -> None:
    events = CODEC.encode_stream(cases.RESPONSES[case]).value
    cut = [e for e in events if e["type"] != "response.completed"]
    ours = CODEC.decode_stream(cut).value
    theirs = CODEC.decode_response(sdk_snapshot(cut)).value
    assert ours.stop_reason is None  # the turn never finished

    def seen(msg: Message) -> list[Any]:
        # The SDK's snapshot accumulates text and arguments, not reasoning summaries.
        kept = [p for p in msg.parts if not isinstance(p, Thinking)]
        return canonical_pairs([msg.model_copy(update={"parts": kept})])

    assert seen(ours.message) == seen(theirs.message)
    assert ours.message.parts == CODEC.decode_stream(events).value.message.parts


# --- round trips within the protocol ------------------------------------------------------


@pytest.mark.parametrize("case", ["weather_initial", "weather_continuation", "weather_complete"])
def test_request_round_trip_is_exact_for_the_weather_conversations(case: str) -> None:
    conv = cases.CONVERSATIONS[case]
    encoded = CODEC.encode_request(conv)
    assert codes(encoded) == []
    # error_type is debugger metadata no vendor carries.
    expected = [
        m.model_copy(
            update={
                "parts": [
                    p.model_copy(update={"error_type": None}) if isinstance(p, ToolResult) else p
                    for p in m.parts
                ]
            }
        )
        for m in conv.messages
    ]
    assert CODEC.decode_request(encoded.value).value == conv.model_copy(
        update={"model": "gpt-4.1", "messages": expected}
    )


@pytest.mark.parametrize("case", list(cases.CONVERSATIONS))
def test_request_round_trip_keeps_calls_results_and_error_flags(case: str) -> None:
    conv = cases.CONVERSATIONS[case]
    back = CODEC.decode_request(encode(conv)).value
    renamed = {t.name: t.name.replace(".", "_") for t in conv.tools}
    expected = [
        (*p[:2], renamed.get(p[2], p[2]), *p[3:]) if p[0] in ("call", "result") else p
        for p in canonical_pairs(conv.messages)
    ]
    assert canonical_pairs(back.messages) == expected
    assert [m.role for m in back.messages] == [m.role for m in conv.messages]
    assert back.tool_choice == conv.tool_choice
    assert back.system == conv.system


def test_image_result_round_trip_keeps_the_image_and_reports_the_rename() -> None:
    encoded = CODEC.encode_request(cases.IMAGE_RESULT)
    assert set(codes(encoded)) == {"tool_name_renamed"}
    result = CODEC.decode_request(encoded.value).value.messages[2].tool_results[0]
    assert result.content == cases.IMAGE_RESULT.messages[2].tool_results[0].content
    assert result.name == "camera_snapshot"


@pytest.mark.parametrize("case", list(cases.RESPONSES))
def test_response_round_trip_is_exact(case: str) -> None:
    resp = cases.RESPONSES[case]
    encoded = CODEC.encode_response(resp)
    assert codes(encoded) == []
    assert CODEC.decode_response(encoded.value).value == cases.issued_by(
        resp.model_copy(update={"model": "gpt-4.1"}), "openai-responses"
    )


@pytest.mark.parametrize("case", list(cases.RESPONSES))
def test_stream_decodes_to_the_same_turn_as_the_response(case: str) -> None:
    resp = cases.RESPONSES[case]
    assert (
        CODEC.decode_stream(CODEC.encode_stream(resp).value).value
        == CODEC.decode_response(CODEC.encode_response(resp).value).value
    )


# --- vendor rules: requests ---------------------------------------------------------------


def test_encode_puts_the_system_prompt_in_instructions_not_in_input() -> None:
    body = encode(cases.WEATHER_INITIAL)
    assert body["instructions"] == "You are a weather assistant."
    assert all(item.get("role") != "system" for item in body["input"])


def test_encode_sends_flat_function_tools_with_strict_always_stated() -> None:
    strict = Tool(
        name="t",
        parameters={"type": "object", "properties": {}, "additionalProperties": False},
        strict=True,
    )
    body = encode(Conversation(tools=[cases.WEATHER_TOOL, strict], messages=[user("hi")]))
    assert body["tools"][0] == {
        "type": "function",
        "name": "get_weather",
        "description": cases.WEATHER_TOOL.description,
        "parameters": cases.WEATHER_TOOL.parameters,
        "strict": False,
    }
    assert body["tools"][1]["strict"] is True
    assert "function" not in body["tools"][0]  # flat, unlike Chat Completions


def test_encode_gives_calls_an_fc_item_id_and_pairs_outputs_on_call_id() -> None:
    body = encode(cases.WEATHER_CONTINUATION)
    calls = [i for i in body["input"] if i.get("type") == "function_call"]
    outputs = [i for i in body["input"] if i.get("type") == "function_call_output"]
    assert [c["call_id"] for c in calls] == [cases.PARIS.id, cases.TOKYO.id]
    assert [o["call_id"] for o in outputs] == [cases.PARIS.id, cases.TOKYO.id]
    assert all(c["id"].startswith("fc_") and c["id"] != c["call_id"] for c in calls)
    assert all(c["status"] == "completed" for c in calls)
    assert all("id" not in o for o in outputs)


def test_encode_keeps_the_fc_item_id_a_call_arrived_with() -> None:
    call = cases.PARIS.model_copy(update={"provider_details": {NAME: {"id": "fc_abc"}}})
    body = encode(conv_with(user("hi"), Message(role="assistant", parts=[call])))
    assert body["input"][1]["id"] == "fc_abc"


def test_encode_derives_the_same_fc_id_for_the_same_call_every_time() -> None:
    first = encode(cases.WEATHER_CONTINUATION)["input"][1]["id"]
    assert first == encode(cases.WEATHER_CONTINUATION)["input"][1]["id"]
    assert first == CODEC.encode_response(cases.WEATHER_TOOL_USE).value["output"][0]["id"]


def test_encode_sends_arguments_as_a_compact_json_string() -> None:
    call = encode(cases.WEATHER_CONTINUATION)["input"][1]
    assert call["arguments"] == '{"location":"Paris","unit":"c"}'


def test_encode_sends_raw_arguments_verbatim() -> None:
    out = CODEC.encode_response(cases.MALFORMED_ARGS).value["output"][0]
    assert out["arguments"] == '{"location": "Paris"'


@pytest.mark.parametrize(
    "arguments, expected, raw",
    [
        ('{"a": 1}', {"a": 1}, None),
        ("", {}, None),
        ('{"a": 1', {}, '{"a": 1'),
        ("[1, 2]", {}, "[1, 2]"),
    ],
)
def test_decode_arguments(arguments: str, expected: dict[str, Any], raw: str | None) -> None:
    item = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": arguments}
    call = CODEC.decode_request({"input": [item]}).value.messages[0].parts[0]
    assert isinstance(call, ToolCall)
    assert (call.arguments, call.raw_arguments) == (expected, raw)


def test_encode_error_result_as_error_json_text() -> None:
    outputs = [
        i
        for i in encode(cases.WEATHER_CONTINUATION)["input"]
        if i.get("type") == "function_call_output"
    ]
    assert outputs[1]["output"] == '{"error": "timeout after 10s"}'
    assert outputs[0]["output"] == cases.PARIS_RESULT.content


@pytest.mark.parametrize(
    "output, is_error, content",
    [
        ('{"error": "boom"}', True, "boom"),
        ('{"error":"boom"}', True, "boom"),
        ('{"error": "boom", "code": 1}', False, '{"error": "boom", "code": 1}'),
        ('{"error": {"message": "boom"}}', False, '{"error": {"message": "boom"}}'),
        ("error: boom", False, "error: boom"),
    ],
)
def test_decode_only_a_lone_error_string_as_an_error_result(
    output: str, is_error: bool, content: str
) -> None:
    item = {"type": "function_call_output", "call_id": "c1", "output": output}
    result = CODEC.decode_request({"input": [item]}).value.messages[0].parts[0]
    assert isinstance(result, ToolResult)
    assert (result.is_error, result.content) == (is_error, content)


def test_encode_image_result_as_input_text_and_input_image_parts() -> None:
    output = encode(cases.IMAGE_RESULT)["input"][2]["output"]
    assert output == [
        {"type": "input_text", "text": "snapshot taken"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{cases.PIXEL}"},
    ]


def test_encode_error_result_with_an_image_drops_the_image_with_a_warning() -> None:
    result = ToolResult(
        call_id="c1",
        content=[Text(text="camera offline"), Image(url="https://x/y.png")],
        is_error=True,
    )
    encoded = CODEC.encode_request(conv_with(Message(role="tool", parts=[result])))
    assert encoded.value["input"][0]["output"] == '{"error": "camera offline"}'
    assert codes(encoded) == ["image_in_result_dropped"]


def test_decode_fills_result_names_from_the_paired_call() -> None:
    conv = CODEC.decode_request(encode(cases.WEATHER_CONTINUATION)).value
    assert [r.name for r in conv.messages[2].tool_results] == ["get_weather", "get_weather"]


def test_encode_user_image_as_input_image_with_detail() -> None:
    msg = Message(
        role="user",
        parts=[Text(text="what is this?"), Image(media_type="image/png", data=cases.PIXEL)],
    )
    body = encode(conv_with(msg))
    assert body["input"][0] == {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "what is this?"},
            {
                "type": "input_image",
                "detail": "auto",
                "image_url": f"data:image/png;base64,{cases.PIXEL}",
            },
        ],
    }
    assert_params(ResponseCreateParamsNonStreaming, body)
    assert CODEC.decode_request(body).value.messages == [msg]


def test_encode_assistant_text_as_an_output_message_item() -> None:
    body = encode(cases.WEATHER_COMPLETE)
    item = body["input"][-1]
    assert item["type"] == "message" and item["role"] == "assistant"
    assert item["id"].startswith("msg_") and item["status"] == "completed"
    assert item["content"] == [{"type": "output_text", "text": cases.FINAL_TEXT, "annotations": []}]


def test_encode_gives_repeated_assistant_texts_distinct_item_ids() -> None:
    ok = Message(role="assistant", parts=[Text(text="OK.")])
    body = encode(conv_with(user("a"), ok, user("b"), ok))
    ids = [i["id"] for i in body["input"] if i.get("type") == "message"]
    assert len(set(ids)) == 2
    # The decoder recognises the second made-up id too: both decode to the same message.
    assert CODEC.decode_request(body).value.messages[1:4:2] == [ok, ok]


def test_encode_thinking_as_a_reasoning_item_before_the_call() -> None:
    out = CODEC.encode_response(cases.THINKING_CALL).value["output"]
    assert [i["type"] for i in out] == ["reasoning", "message", "function_call"]
    assert out[0]["summary"] == [
        {"type": "summary_text", "text": "The user wants Paris weather; call the tool."}
    ]
    assert out[0]["encrypted_content"] == "c2lnbmF0dXJl"
    assert out[0]["id"].startswith("rs_")


def test_encode_redacted_thinking_keeps_the_payload_but_reports_the_lost_flag() -> None:
    msg = Message(role="assistant", parts=[Thinking(text="opaque==", redacted=True), cases.PARIS])
    encoded = CODEC.encode_request(conv_with(user("hi"), msg))
    assert encoded.value["input"][1]["summary"] == []
    assert encoded.value["input"][1]["encrypted_content"] == "opaque=="
    assert codes(encoded) == ["redacted_flag_lost"]
    back = CODEC.decode_request(encoded.value).value.messages[1].parts[0]
    assert back == Thinking(text="", signature="opaque==", source="openai-responses")


def test_decode_reasoning_with_several_summary_parts_round_trips() -> None:
    item = {
        "type": "reasoning",
        "id": "rs_1",
        "encrypted_content": "enc",
        "summary": [
            {"type": "summary_text", "text": "one"},
            {"type": "summary_text", "text": "two"},
        ],
    }
    conv = CODEC.decode_request({"input": [user_item("hi"), item]}).value
    thinking = conv.messages[1].parts[0]
    assert thinking == Thinking(
        text="one\n\ntwo",
        signature="enc",
        source=NAME,
        provider_details={NAME: {"id": "rs_1", "summary": ["one", "two"]}},
    )
    assert encode(conv)["input"][1] == item


def test_decode_raw_reasoning_content_without_a_summary_as_thinking_text() -> None:
    item = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": "let me think"}],
    }
    conv = CODEC.decode_request({"input": [user_item("hi"), item]}).value
    assert conv.messages[1].parts[0].text == "let me think"  # type: ignore[union-attr]
    assert encode(conv)["input"][1] == item


def user_item(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


@pytest.mark.parametrize(
    "choice, wire",
    [
        (ToolChoice(mode="auto"), "auto"),
        (ToolChoice(mode="none"), "none"),
        (ToolChoice(mode="required"), "required"),
        (ToolChoice(mode="tool", name="get_weather"), {"type": "function", "name": "get_weather"}),
    ],
)
def test_encode_tool_choice(choice: ToolChoice, wire: Any) -> None:
    body = encode(conv_with(user("hi"), tool_choice=choice))
    assert body["tool_choice"] == wire
    assert body["parallel_tool_calls"] is True
    assert CODEC.decode_request(body).value.tool_choice == choice


def test_encode_named_tool_choice_and_disabled_parallel_calls() -> None:
    body = encode(cases.TASKS)
    assert body["tool_choice"] == {"type": "function", "name": "create_task"}
    assert body["parallel_tool_calls"] is False
    assert CODEC.decode_request(body).value.tool_choice == cases.TASKS.tool_choice


def test_encode_states_parallel_tool_calls_only_when_tools_are_declared() -> None:
    assert encode(cases.IMAGE_RESULT)["parallel_tool_calls"] is True
    assert "tool_choice" not in encode(cases.IMAGE_RESULT)
    bare = encode(Conversation(messages=[user("hi")]))
    assert "parallel_tool_calls" not in bare and "tools" not in bare


def test_encode_max_tokens_as_max_output_tokens_and_temperature() -> None:
    body = encode(
        Conversation(messages=[user("hi")], max_tokens=100, temperature=0.2, model="gpt-5")
    )
    assert (body["model"], body["max_output_tokens"], body["temperature"]) == ("gpt-5", 100, 0.2)
    back = CODEC.decode_request(body).value
    assert (back.max_tokens, back.temperature, back.model) == (100, 0.2, "gpt-5")


def test_encode_renames_an_illegal_tool_name_everywhere_naming_each_place() -> None:
    encoded = CODEC.encode_request(
        cases.IMAGE_RESULT.model_copy(
            update={"tool_choice": ToolChoice(mode="tool", name="camera.snapshot")}
        )
    )
    body = encoded.value
    assert body["tools"][0]["name"] == "camera_snapshot"
    assert body["input"][1]["name"] == "camera_snapshot"
    assert body["tool_choice"] == {"type": "function", "name": "camera_snapshot"}
    assert set(codes(encoded)) == {"tool_name_renamed"}
    assert {w.path for w in encoded.warnings if w.code == "tool_name_renamed"} >= {
        "tools[0]",
        "tool_choice",
    }


def test_encode_rewrites_an_empty_call_id_on_call_and_result_alike() -> None:
    call = ToolCall(id="", name="get_weather", arguments={})
    result = ToolResult(call_id="", content="ok")
    encoded = CODEC.encode_request(
        conv_with(Message(role="assistant", parts=[call]), Message(role="tool", parts=[result]))
    )
    call_item, output_item = encoded.value["input"]
    assert call_item["call_id"] == output_item["call_id"] != ""
    assert codes(encoded) == ["call_id_renamed"] * 2


def test_encode_text_next_to_results_goes_in_a_user_message_after_them() -> None:
    msg = Message(role="tool", parts=[cases.PARIS_RESULT, Text(text="also: hurry")])
    body = encode(conv_with(msg))
    assert [i.get("type", i.get("role")) for i in body["input"]] == ["function_call_output", "user"]


def test_decode_input_given_as_a_plain_string() -> None:
    conv = CODEC.decode_request({"model": "gpt-4.1", "input": "hello"}).value
    assert conv.messages == [user("hello")]


def test_decode_developer_message_counts_as_system_and_round_trips() -> None:
    payload = {"input": [{"role": "developer", "content": "be brief"}, user_item("hi")]}
    conv = CODEC.decode_request(payload).value
    assert conv.messages[0].role == "system" and conv.messages[0].text == "be brief"
    assert encode(conv)["input"] == payload["input"]


def test_decode_an_easy_assistant_message_and_merges_a_turn_into_one_message() -> None:
    payload = {
        "input": [
            user_item("hi"),
            {"role": "assistant", "content": "checking"},
            {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"},
        ]
    }
    conv = CODEC.decode_request(payload).value
    assert [m.role for m in conv.messages] == ["user", "assistant"]
    assert [p.kind for p in conv.messages[1].parts] == ["text", "tool_call"]


def test_decode_keeps_hosted_tools_and_other_body_fields_for_the_round_trip() -> None:
    payload = {
        "model": "gpt-4.1",
        "input": [user_item("hi")],
        "tools": [
            {
                "type": "function",
                "name": "f",
                "parameters": {"type": "object"},
                "strict": True,
                "defer_loading": True,
            },
            {"type": "web_search"},
        ],
        "tool_choice": {
            "type": "allowed_tools",
            "mode": "required",
            "tools": [{"type": "function", "name": "f"}],
        },
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "reasoning": {"effort": "low"},
    }
    decoded = CODEC.decode_request(payload)
    conv = decoded.value
    assert [t.name for t in conv.tools] == ["f"] and conv.tools[0].strict is True
    assert conv.tool_choice == ToolChoice(mode="required")
    assert set(conv.provider_details[NAME]) == {  # type: ignore[index]
        "hosted_tools",
        "tool_choice",
        "store",
        "include",
        "reasoning",
    }
    assert encode(conv) == payload | {"parallel_tool_calls": True}
    assert_params(ResponseCreateParamsNonStreaming, encode(conv))


def test_decode_warns_about_items_the_model_cannot_hold() -> None:
    output = {"type": "function_call_output", "call_id": "c1", "output": "x"}
    decoded = CODEC.decode_response(
        {"id": "resp_1", "object": "response", "model": "gpt-4.1", "output": [output]}
    )
    assert codes(decoded) == ["item_dropped"]
    assert decoded.warnings[0].path == "$.output[0]"


def test_encode_warns_once_per_part_with_foreign_provider_details() -> None:
    call = cases.PARIS.model_copy(
        update={"provider_details": {"gemini": {"x": 1}, "anthropic": {"y": 2}}}
    )
    encoded = CODEC.encode_request(conv_with(Message(role="assistant", parts=[call])))
    assert codes(encoded) == ["provider_details_dropped"]
    assert warned(encoded)[0].path == "messages[0].parts[0]"


def test_encode_warns_for_tool_metadata_and_structured_content_it_cannot_carry() -> None:
    encoded = CODEC.encode_request(cases.TASKS)
    assert codes(encoded) == ["tool_metadata_dropped"]
    assert warned(encoded)[0].path == "tools[1]"
    result = ToolResult(call_id="c1", content="{}", structured={"a": 1})
    encoded = CODEC.encode_request(conv_with(Message(role="tool", parts=[result])))
    assert codes(encoded) == ["structured_content_dropped"]


def test_encode_sends_a_tool_output_schema() -> None:
    tool = cases.WEATHER_TOOL.model_copy(update={"output_schema": {"type": "object"}})
    body = encode(Conversation(tools=[tool], messages=[user("hi")]))
    assert body["tools"][0]["output_schema"] == {"type": "object"}
    assert_params(ResponseCreateParamsNonStreaming, body)


# --- vendor rules: responses --------------------------------------------------------------


@pytest.mark.parametrize(
    "stop, status, reason",
    [
        ("max_tokens", "incomplete", "max_output_tokens"),
        ("content_filter", "incomplete", "content_filter"),
        ("end_turn", "completed", None),
    ],
)
def test_encode_stop_reason_as_status_and_incomplete_details(
    stop: str, status: str, reason: str | None
) -> None:
    resp = cases.WEATHER_FINAL_RESPONSE.model_copy(update={"stop_reason": stop})
    body = CODEC.encode_response(resp).value
    assert body["status"] == status
    assert body["incomplete_details"] == ({"reason": reason} if reason else None)
    assert CODEC.decode_response(body).value.stop_reason == stop


def test_encode_warns_when_the_stop_reason_cannot_be_read_back() -> None:
    resp = cases.WEATHER_FINAL_RESPONSE.model_copy(update={"stop_reason": "stop_sequence"})
    encoded = CODEC.encode_response(resp)
    assert codes(encoded) == ["stop_reason_changed"]


def test_decode_function_calls_mean_tool_use_without_a_finish_reason() -> None:
    body = CODEC.encode_response(cases.WEATHER_TOOL_USE).value
    assert "finish_reason" not in json.dumps(body)
    assert CODEC.decode_response(body).value.stop_reason == "tool_use"


@pytest.mark.parametrize(
    "status, stop",
    [("in_progress", None), ("failed", "other"), ("cancelled", "other"), ("queued", None)],
)
def test_decode_status_without_completion(status: str, stop: str | None) -> None:
    body = ref("response.final") | {"status": status}
    assert CODEC.decode_response(body).value.stop_reason == stop


def test_decode_refusal_content_round_trips() -> None:
    body = ref("response.final")
    body["output"][0]["content"] = [{"type": "refusal", "refusal": "I can't help with that."}]
    resp = CODEC.decode_response(body).value
    assert resp.stop_reason == "refusal"
    assert resp.message.text == "I can't help with that."
    assert CODEC.encode_response(resp).value == body
    events = CODEC.encode_stream(resp).value
    assert "response.refusal.delta" in [e["type"] for e in events]
    assert CODEC.decode_stream(events).value == resp


def test_encode_response_keeps_an_openai_id_and_derives_a_stable_one_otherwise() -> None:
    kept = CODEC.encode_response(cases.WEATHER_TOOL_USE.model_copy(update={"id": "resp_x"}))
    assert kept.value["id"] == "resp_x"
    derived = CODEC.encode_response(cases.WEATHER_TOOL_USE).value["id"]
    assert derived.startswith("resp_")
    assert derived == CODEC.encode_response(cases.WEATHER_TOOL_USE).value["id"]


def test_usage_round_trips_with_its_details() -> None:
    usage = {"input_tokens": 10, "output_tokens": 5, "cached_tokens": 4, "reasoning_tokens": 2}
    body = CODEC.encode_response(
        cases.WEATHER_FINAL_RESPONSE.model_copy(update={"usage": usage})
    ).value
    assert body["usage"] == {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 4, "cache_write_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 2},
        "total_tokens": 15,
    }
    assert CODEC.decode_response(body).value.usage == usage


def test_encode_response_drops_a_tool_result_and_an_image_with_warnings() -> None:
    msg = Message(
        role="assistant", parts=[Text(text="hi"), Image(url="https://x/y.png"), cases.PARIS_RESULT]
    )
    encoded = CODEC.encode_response(ModelResponse(message=msg))
    assert codes(encoded) == ["image_dropped", "tool_result_dropped", "stop_reason_filled_in"]
    assert [i["type"] for i in encoded.value["output"]] == ["message"]


# --- streams ------------------------------------------------------------------------------


def test_fragments_split_arguments_like_the_reference() -> None:
    assert fragments('{"location":"Paris","unit":"c"}') == [
        '{"location":',
        '"Paris","uni',
        't":"c"}',
    ]
    assert len(fragments("x" * 400)) == 4
    assert fragments("") == []


def test_encode_stream_opens_with_an_empty_in_progress_response() -> None:
    events = CODEC.encode_stream(cases.WEATHER_TOOL_USE).value
    for event in events[:2]:
        assert event["response"]["status"] == "in_progress"
        assert event["response"]["output"] == [] and event["response"]["usage"] is None
    added = events[2]["item"]
    assert (added["arguments"], added["status"]) == ("", "in_progress")
    assert events[-1]["type"] == "response.completed"
    assert events[-1]["response"] == CODEC.encode_response(cases.WEATHER_TOOL_USE).value


def test_encode_stream_of_text_streams_output_text_deltas_in_a_content_part() -> None:
    events = CODEC.encode_stream(cases.WEATHER_FINAL_RESPONSE).value
    types = [e["type"] for e in events]
    assert types[2:5] == [
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
    ]
    text = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    assert text == cases.FINAL_TEXT
    assert types[-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]


def test_encode_stream_of_thinking_streams_summary_deltas_and_sends_encrypted_content_last() -> (
    None
):
    events = CODEC.encode_stream(cases.THINKING_CALL).value
    reasoning = [
        e
        for e in events
        if "reasoning" in e["type"] or e.get("item", {}).get("type") == "reasoning"
    ]
    assert reasoning[0]["type"] == "response.output_item.added"
    assert "encrypted_content" not in reasoning[0]["item"]
    assert reasoning[-1]["type"] == "response.output_item.done"
    assert reasoning[-1]["item"]["encrypted_content"] == "c2lnbmF0dXJl"


def test_decode_stream_assembles_arguments_from_deltas_when_no_item_is_done() -> None:
    events = [
        e
        for e in ref_stream()
        if e["type"]
        in (
            "response.created",
            "response.output_item.added",
            "response.function_call_arguments.delta",
        )
    ]
    resp = CODEC.decode_stream(events).value
    assert [c.arguments for c in resp.message.tool_calls] == [
        cases.PARIS.arguments,
        cases.TOKYO.arguments,
    ]
    assert [mine(c)["status"] for c in resp.message.tool_calls] == ["in_progress"] * 2
    assert resp.stop_reason is None


def test_decode_stream_of_a_call_whose_arguments_never_arrived_is_empty() -> None:
    events = ref_stream()[:3]
    call = CODEC.decode_stream(events).value.message.tool_calls[0]
    assert (call.arguments, call.raw_arguments) == ({}, None)


def test_decode_stream_reports_an_error_event() -> None:
    events = [
        *ref_stream()[:3],
        {"type": "error", "sequence_number": 3, "message": "server overloaded"},
    ]
    decoded = CODEC.decode_stream(events)
    assert codes(decoded) == ["stream_error"]
    assert decoded.warnings[0].path == "$[3]"


# --- detection ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, kind",
    [
        ("request.initial", "request"),
        ("request.continuation", "request"),
        ("variant.request.continuation_previous_response_id", "request"),
        ("response.function_calls", "response"),
        ("response.final", "response"),
        ("stream.function_calls", "stream"),
    ],
)
def test_detect_reference_payloads(name: str, kind: str) -> None:
    assert CODEC.detect(ref(name)) == kind


OTHER_PAYLOADS = sorted(
    [str(p) for p in WIRE.glob("*.json") if not p.name.startswith("openai-responses.")]
    + [str(p) for p in GOLDEN.glob("*/*.json") if p.parent.name != NAME]
)


@pytest.mark.parametrize("path", OTHER_PAYLOADS)
def test_detect_never_claims_another_protocols_payload(path: str) -> None:
    payload = json.loads(Path(path).read_text())
    assert CODEC.detect(payload) is None
    if isinstance(payload, dict):
        for value in payload.values():  # nor their nested pieces (tool_use input, params ...)
            assert CODEC.detect(value) is None


@pytest.mark.parametrize(
    "name, kind",
    [
        ("request.continuation", "request"),
        ("variant.request.continuation_previous_response_id", "request"),
        ("response.final", "response"),
        ("stream.function_calls", "stream"),
    ],
)
def test_registry_detects_reference_payloads_as_responses(name: str, kind: str) -> None:
    assert detect(ref(name)) == (NAME, kind)


def test_detect_own_encodings_and_hand_written_requests() -> None:
    assert CODEC.detect(encode(cases.TASKS)) == "request"
    assert CODEC.detect(CODEC.encode_response(cases.THINKING_CALL).value) == "response"
    assert CODEC.detect(CODEC.encode_stream(cases.THINKING_CALL).value) == "stream"
    assert CODEC.detect({"model": "gpt-4.1", "input": "hi"}) == "request"
    assert CODEC.detect({"model": "gpt-4.1", "instructions": "x"}) == "request"
    assert CODEC.detect({"type": "tool_use", "input": {"a": 1}}) is None
    assert CODEC.detect([{"type": "error", "message": "x"}]) is None
    assert CODEC.detect([]) is None


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "payload, path",
    [
        ([], "$"),
        ({"input": 3}, "$.input"),
        ({"input": [3]}, "$.input[0]"),
        ({"input": [{"content": "x"}]}, "$.input[0].type"),
        ({"input": [{"role": "robot", "content": "x"}]}, "$.input[0].role"),
        (
            {"input": [{"role": "user", "content": [{"type": "input_text"}]}]},
            "$.input[0].content[0].text",
        ),
        (
            {"input": [{"type": "function_call", "name": "f", "arguments": "{}"}]},
            "$.input[0].call_id",
        ),
        (
            {"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}]},
            "$.input[0].arguments",
        ),
        ({"input": [{"type": "function_call_output", "output": "x"}]}, "$.input[0].call_id"),
        (
            {"input": [{"type": "function_call_output", "call_id": "c", "output": 1}]},
            "$.input[0].output",
        ),
        (
            {"input": [{"type": "reasoning", "id": "rs", "summary": [{"type": "summary_text"}]}]},
            "$.input[0].summary[0].text",
        ),
        (
            {"input": [{"role": "user", "content": [{"type": "input_image"}]}]},
            "$.input[0].content[0].image_url",
        ),
        ({"input": [], "tools": [{"type": "function", "parameters": {}}]}, "$.tools[0].name"),
        ({"input": [], "tools": [{"name": "f", "parameters": {}}]}, "$.tools[0].type"),
        (
            {"input": [], "tools": [{"type": "function", "function": {"name": "f"}}]},
            "$.tools[0].name",
        ),
        ({"input": [], "tool_choice": "sometimes"}, "$.tool_choice"),
        ({"input": [], "tool_choice": {"type": "function"}}, "$.tool_choice.name"),
        ({"input": [], "instructions": ["x"]}, "$.instructions"),
    ],
)
def test_decode_request_rejects_malformed_payloads_naming_the_path(payload: Any, path: str) -> None:
    with pytest.raises(CodecError) as err:
        CODEC.decode_request(payload)
    assert err.value.path == path


@pytest.mark.parametrize(
    "change, path",
    [
        (lambda r: r.update(object="chat.completion"), "$.object"),
        (lambda r: r.pop("id"), "$.id"),
        (lambda r: r.update(output={}), "$.output"),
        (lambda r: r["output"][1].pop("call_id"), "$.output[1].call_id"),
        (lambda r: r["output"][0].update(name=None), "$.output[0].name"),
        (lambda r: r["usage"].update(input_tokens="75"), "$.usage.input_tokens"),
    ],
)
def test_decode_response_rejects_malformed_payloads_naming_the_path(change: Any, path: str) -> None:
    payload = ref("response.function_calls")
    change(payload)
    with pytest.raises(CodecError) as err:
        CODEC.decode_response(payload)
    assert err.value.path == path


@pytest.mark.parametrize(
    "change, path",
    [
        (lambda s: [s.pop(i) for i in (-1, 1, 0)], "$"),
        (lambda s: s[3].update(output_index=7), "$[3].output_index"),
        (lambda s: s[3].update(delta=None), "$[3].delta"),
        (lambda s: s[5].pop("type"), "$[5].type"),
        (lambda s: s[2].update(item="x"), "$[2].item"),
        (lambda s: s.__setitem__(4, "x"), "$[4]"),
    ],
)
def test_decode_stream_rejects_malformed_events_naming_the_path(change: Any, path: str) -> None:
    events = copy.deepcopy(ref_stream())
    change(events)
    with pytest.raises(CodecError) as err:
        CODEC.decode_stream(events)
    assert err.value.path == path
