"""Anthropic Messages codec: goldens, reference payloads, SDK types, round trips, vendor rules."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import Message as SdkMessage
from anthropic.types import RawMessageStreamEvent
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

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
from flowdebug.protocols.anthropic.codec import CODEC
from flowdebug.protocols.anthropic.stream import unwrap
from tests import cases
from tests.goldens import check_golden
from tests.paths import REAL, WIRE
from tests.sdkcheck import assert_model, assert_params

USER = cases.WEATHER_USER


def wire(name: str) -> Any:
    return json.loads((WIRE / f"anthropic.{name}.json").read_text())


def real(kind: str) -> list[Path]:
    """The real recorded Anthropic payloads of one kind (tests/fixtures/real)."""
    return sorted(REAL.glob(f"anthropic.{kind}.*.json"))


# What Anthropic requires and a canonical value may not have (model, max_tokens, an id,
# usage) is filled in with a warning; tests about other losses look past those.
FILLED = {"model_filled_in", "max_tokens_filled_in", "usage_rewritten"}


def lost(converted: Any) -> list[Any]:
    """The warnings of ``converted`` other than the filled-in envelope values."""
    return [
        w
        for w in converted.warnings
        if w.code not in FILLED
        and not (w.code == "response_id_replaced" and "has no id" in w.message)
    ]


def client_tools(kind: str) -> list[Path]:
    """The real fixtures of client tool calls (hosted ones: test_anthropic_hosted.py)."""
    return [
        p for p in real(kind) if "tool_use" in p.read_text() and "_tool_use" not in p.read_text()
    ]


def codes(converted: Any) -> list[str]:
    return [w.code for w in lost(converted)]


def sdk_accumulate(events: list[Any]) -> dict[str, Any]:
    """The Message the SDK's own MessageStream accumulator builds from ``events``."""
    snapshot, bufs = None, {}
    for raw in events:
        event = unwrap(raw)[0]
        if event["type"] != "ping":
            snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=bufs)
    assert snapshot is not None
    return snapshot.model_dump(mode="json", exclude_none=True)


def without_error_type(messages: list[Message]) -> list[Message]:
    """Messages with ``error_type`` cleared: debugger metadata no vendor carries."""
    return [
        Message(
            role=m.role,
            parts=[
                p.model_copy(update={"error_type": None}) if isinstance(p, ToolResult) else p
                for p in m.parts
            ],
        )
        for m in messages
    ]


def conv(*messages: Message, **fields: Any) -> Conversation:
    return Conversation(messages=list(messages), **fields)


# ------------------------------------------------------------------------------- goldens


def test_golden_weather_initial_request():
    out = CODEC.encode_request(cases.WEATHER_INITIAL)
    assert lost(out) == []
    check_golden("anthropic", "weather_initial", out.value)


def test_golden_weather_continuation_request():
    out = CODEC.encode_request(cases.WEATHER_CONTINUATION)
    assert lost(out) == []
    check_golden("anthropic", "weather_continuation", out.value)


def test_golden_weather_tool_use_response():
    out = CODEC.encode_response(cases.WEATHER_TOOL_USE)
    assert lost(out) == []
    check_golden("anthropic", "weather_tool_use", out.value)


def test_golden_weather_final_response():
    out = CODEC.encode_response(cases.WEATHER_FINAL_RESPONSE)
    assert lost(out) == []
    check_golden("anthropic", "weather_final", out.value)


def test_golden_weather_tool_use_stream():
    out = CODEC.encode_stream(cases.WEATHER_TOOL_USE)
    assert lost(out) == []
    check_golden("anthropic", "weather_tool_use_stream", out.value)


def test_requests_equal_the_reference_bodies_byte_for_byte():
    # cases.py uses the reference's toolu_ ids, so the bodies match exactly.
    assert CODEC.encode_request(cases.WEATHER_INITIAL).value == wire("request.initial")
    assert CODEC.encode_request(cases.WEATHER_CONTINUATION).value == wire("request.continuation")


def test_responses_match_the_reference_apart_from_envelope_numbers():
    for resp, name in (
        (cases.WEATHER_TOOL_USE, "response.tool_use"),
        (cases.WEATHER_FINAL_RESPONSE, "response.final"),
    ):
        ours, ref = CODEC.encode_response(resp).value, wire(name)
        assert list(ours) == list(ref)  # same keys in the same order
        assert ours["id"].startswith("msg_")
        assert (ours["type"], ours["role"], ours["model"]) == (
            "message",
            "assistant",
            "claude-sonnet-4-6",
        )
        assert ours["stop_reason"] == ref["stop_reason"]
        assert ours["stop_sequence"] is None
        assert [b["type"] for b in ours["content"]] == [b["type"] for b in ref["content"]]
    tool_use = CODEC.encode_response(cases.WEATHER_TOOL_USE).value
    assert tool_use["content"] == wire("response.tool_use")["content"]


def test_stream_has_the_reference_event_sequence():
    ours = CODEC.encode_stream(cases.WEATHER_TOOL_USE).value
    ref = [e["data"] for e in wire("stream.tool_use") if e["data"]["type"] != "ping"]
    assert [(e["type"], e.get("index")) for e in ours] == [(e["type"], e.get("index")) for e in ref]
    # Block events are the reference's exactly: input {} at the start, an empty first
    # fragment, then the JSON cut in two.
    assert ours[1:-2] == ref[1:-2]
    assert ours[-2]["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert ours[0]["message"]["content"] == [] and ours[0]["message"]["stop_reason"] is None


# -------------------------------------------------------------------- reference payloads


def test_decode_reference_initial_request():
    got = CODEC.decode_request(wire("request.initial"))
    assert lost(got) == []
    c = got.value
    assert (c.model, c.max_tokens, c.system) == (
        "claude-sonnet-4-6",
        1024,
        "You are a weather assistant.",
    )
    assert c.tools == [cases.WEATHER_TOOL]
    assert c.tool_choice == ToolChoice(mode="auto")
    assert c.messages == [USER]


def test_decode_reference_continuation_pairs_results_with_calls():
    c = CODEC.decode_request(wire("request.continuation")).value
    assert [m.role for m in c.messages] == ["user", "assistant", "tool"]
    assert c.messages[1].tool_calls == [cases.PARIS, cases.TOKYO]
    paris, tokyo = c.messages[2].tool_results
    assert (paris.call_id, paris.name, paris.is_error) == (cases.PARIS.id, "get_weather", False)
    assert json.loads(paris.content) == {
        "location": "Paris",
        "temperature": 18,
        "unit": "c",
        "conditions": "partly cloudy",
    }
    assert (tokyo.call_id, tokyo.content, tokyo.is_error) == (
        cases.TOKYO.id,
        "timeout after 10s",
        True,
    )
    assert c.messages == without_error_type(cases.WEATHER_CONTINUATION.messages)


def test_decode_reference_responses():
    tool_use = CODEC.decode_response(wire("response.tool_use")).value
    assert tool_use.message == cases.WEATHER_CALLS
    assert tool_use.stop_reason == "tool_use"
    assert tool_use.id == "msg_01XFDUDYJgAACzvnptvVoYEL"
    assert tool_use.usage == {"input_tokens": 412, "output_tokens": 96}
    assert tool_use.provider_details is None
    final = CODEC.decode_response(wire("response.final")).value
    assert final.stop_reason == "end_turn"
    assert final.message.text.startswith("Paris is 18 degrees C and partly cloudy.")
    assert final.message.tool_calls == []


def test_decode_reference_stream_equals_the_non_streamed_response():
    got = CODEC.decode_stream(wire("stream.tool_use"))
    assert lost(got) == []
    assert got.value == CODEC.decode_response(wire("response.tool_use")).value


def test_decode_reference_thinking_variant_keeps_signature_and_config():
    ref = wire("variant.thinking.request.continuation")
    c = CODEC.decode_request(ref).value
    thinking = c.messages[1].parts[0]
    assert isinstance(thinking, Thinking)
    assert thinking.signature == ref["messages"][1]["content"][0]["signature"]
    assert c.messages[1].tool_calls == [cases.PARIS, cases.TOKYO]
    assert c.max_tokens == 16000
    assert c.provider_details == {
        "anthropic": {"thinking": {"type": "enabled", "budget_tokens": 10000}}
    }
    assert CODEC.encode_request(c).value == ref
    resp = wire("variant.thinking.response.tool_use")
    decoded = CODEC.decode_response(resp).value
    assert [p.kind for p in decoded.message.parts] == ["thinking", "tool_call", "tool_call"]
    assert CODEC.encode_response(decoded).value == resp


@pytest.mark.parametrize("path", client_tools("stream"), ids=lambda p: p.name)
def test_decode_real_streams_like_the_sdk_accumulator(path):
    events = json.loads(path.read_text())
    got = CODEC.decode_stream(events).value
    assert got == CODEC.decode_response(sdk_accumulate(events)).value
    call = got.message.tool_calls[0]
    assert call.name == "get_weather" and call.id.startswith("toolu_")
    assert "location" in call.arguments
    assert got.stop_reason == "tool_use"


@pytest.mark.parametrize("path", client_tools("request"), ids=lambda p: p.name)
def test_real_requests_decode_pair_results_and_re_encode_to_valid_bodies(path):
    req = json.loads(path.read_text())
    c = CODEC.decode_request(req).value
    calls = {p.id: p.name for m in c.messages for p in m.tool_calls}
    results = [r for m in c.messages if m.role == "tool" for r in m.tool_results]
    assert results and all(r.name == calls[r.call_id] for r in results)
    assert all(m.role != "tool" or m.parts for m in c.messages)
    again = CODEC.encode_request(c)
    assert lost(again) == []
    assert_params(MessageCreateParamsNonStreaming, again.value)
    assert CODEC.decode_request(again.value).value == c
    # Only the spelling may differ: a lone text block as a string, is_error false left out.
    assert again.value["tools"] == req["tools"] and again.value["model"] == req["model"]


def test_real_thinking_request_keeps_signature_and_thinking_config():
    c = CODEC.decode_request(
        json.loads(
            (
                REAL / "anthropic.request.pydantic-ai-cassette-thinking-replay-tool-result.json"
            ).read_text()
        )
    ).value
    assert [p.kind for p in c.messages[1].parts] == ["thinking", "text", "tool_call"]
    assert c.messages[1].parts[0].signature.startswith("EqEECkYICxgCKkAo3UA4")
    assert c.messages[2].tool_results[0] == ToolResult(
        call_id="toolu_01YGzqpRE16Vricda3Aqcejo", name="get_user_country", content="Mexico"
    )
    assert c.provider_details == {
        "anthropic": {"stream": False, "thinking": {"budget_tokens": 3000, "type": "enabled"}}
    }


@pytest.mark.parametrize("path", client_tools("response"), ids=lambda p: p.name)
def test_real_responses_decode_and_re_encode_unchanged(path):
    resp = json.loads(path.read_text())
    r = CODEC.decode_response(resp).value
    assert r.stop_reason == "tool_use" and r.message.tool_calls
    assert r.id == resp["id"] and r.usage["input_tokens"] == resp["usage"]["input_tokens"]
    out = CODEC.encode_response(r)
    assert lost(out) == []
    assert out.value == resp
    assert_model(SdkMessage, out.value)


# ------------------------------------------------------------------------ SDK validation


@pytest.mark.parametrize("name", sorted(cases.CONVERSATIONS))
def test_requests_validate_with_the_sdk_params_type(name):
    assert_params(
        MessageCreateParamsNonStreaming, CODEC.encode_request(cases.CONVERSATIONS[name]).value
    )


@pytest.mark.parametrize("name", sorted(cases.RESPONSES))
def test_responses_and_stream_events_validate_with_sdk_types(name):
    resp = cases.RESPONSES[name]
    assert_model(SdkMessage, CODEC.encode_response(resp).value)
    for event in CODEC.encode_stream(resp).value:
        assert_model(RawMessageStreamEvent, event)


@pytest.mark.parametrize("name", sorted(cases.RESPONSES))
def test_sdk_accumulator_builds_our_response_from_our_stream(name):
    resp = cases.RESPONSES[name]
    body = CODEC.encode_response(resp).value
    accumulated = sdk_accumulate(CODEC.encode_stream(resp).value)
    assert accumulated == SdkMessage.model_validate(body).model_dump(mode="json", exclude_none=True)


@pytest.mark.parametrize("name", sorted(cases.RESPONSES))
def test_decode_stream_equals_decode_response(name):
    resp = cases.RESPONSES[name]
    streamed = CODEC.decode_stream(CODEC.encode_stream(resp).value).value
    assert streamed == CODEC.decode_response(CODEC.encode_response(resp).value).value


# ----------------------------------------------------------------------------- round trip


@pytest.mark.parametrize("name", ["weather_initial", "weather_continuation", "weather_complete"])
def test_request_round_trip_keeps_the_conversation(name):
    original = cases.CONVERSATIONS[name]
    back = CODEC.decode_request(CODEC.encode_request(original).value).value
    assert back.messages == without_error_type(original.messages)
    assert (back.system, back.tools, back.tool_choice) == (
        original.system,
        original.tools,
        original.tool_choice,
    )


def test_round_trip_keeps_named_choice_and_parallel_flag_but_reports_annotations():
    out = CODEC.encode_request(cases.TASKS)
    assert codes(out) == ["tool_metadata_dropped"]
    back = CODEC.decode_request(out.value).value
    assert back.tool_choice == ToolChoice(mode="tool", name="create_task", parallel=False)
    assert back.messages == cases.TASKS.messages
    assert back.tools[1].annotations is None


def test_round_trip_of_renamed_tool_keeps_pairing_and_image_result():
    out = CODEC.encode_request(cases.IMAGE_RESULT)
    # Every place the rename lands is named: the declaration, the call, its result.
    assert set(codes(out)) == {"tool_name_renamed"}
    back = CODEC.decode_request(out.value).value
    call = back.messages[1].tool_calls[0]
    result = back.messages[2].tool_results[0]
    assert (call.name, back.tools[0].name) == ("camera_snapshot", "camera_snapshot")
    assert (result.call_id, result.name) == (call.id, "camera_snapshot")
    assert result.content == cases.IMAGE_RESULT.messages[2].tool_results[0].content


@pytest.mark.parametrize("name", ["weather_tool_use", "weather_final", "thinking_call"])
def test_response_round_trip_keeps_the_message(name):
    resp = cases.RESPONSES[name]
    out = CODEC.encode_response(resp)
    assert lost(out) == []
    back = CODEC.decode_response(out.value).value
    assert back.message == cases.issued_by(resp.message, "anthropic")
    assert back.stop_reason == resp.stop_reason


# ---------------------------------------------------------------------------- vendor rules


def test_encode_puts_tool_results_first_in_user_turn():
    batch = Message(role="tool", parts=[Text(text="note"), cases.PARIS_RESULT])
    body = CODEC.encode_request(conv(USER, cases.WEATHER_CALLS, batch)).value
    assert [b["type"] for b in body["messages"][2]["content"]] == ["tool_result", "text"]


def test_encode_sends_all_parallel_results_in_one_user_message():
    messages = CODEC.encode_request(cases.WEATHER_CONTINUATION).value["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["tool_use_id"] for b in messages[2]["content"]] == [cases.PARIS.id, cases.TOKYO.id]


def test_encode_merges_user_message_after_results_into_the_same_turn():
    follow_up = Message(role="user", parts=[Text(text="Also, is it windy?")])
    c = cases.WEATHER_CONTINUATION.model_copy(
        update={"messages": [*cases.WEATHER_CONTINUATION.messages, follow_up]}
    )
    messages = CODEC.encode_request(c).value["messages"]
    assert len(messages) == 3
    assert messages[2]["content"][2] == {"type": "text", "text": "Also, is it windy?"}
    back = CODEC.decode_request({"messages": messages}).value
    assert [m.role for m in back.messages] == ["user", "assistant", "tool", "user"]


def test_encode_sets_is_error_only_on_error_results():
    results = CODEC.encode_request(cases.WEATHER_CONTINUATION).value["messages"][2]["content"]
    assert "is_error" not in results[0]
    assert results[1]["is_error"] is True


def test_encode_result_content_is_a_string_or_text_and_image_blocks():
    results = CODEC.encode_request(cases.IMAGE_RESULT).value["messages"][2]["content"]
    assert results[0]["content"] == [
        {"type": "text", "text": "snapshot taken"},
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": cases.PIXEL},
        },
    ]
    first = CODEC.encode_request(cases.WEATHER_CONTINUATION).value["messages"][2]["content"][0]
    assert first["content"] == cases.PARIS_RESULT.content


@pytest.mark.parametrize(
    ("choice", "wire_choice"),
    [
        (ToolChoice(mode="auto"), {"type": "auto"}),
        (
            ToolChoice(mode="auto", parallel=False),
            {"type": "auto", "disable_parallel_tool_use": True},
        ),
        (ToolChoice(mode="required"), {"type": "any"}),
        (
            ToolChoice(mode="required", parallel=True),
            {"type": "any", "disable_parallel_tool_use": False},
        ),
        (
            ToolChoice(mode="tool", name="get_weather", parallel=False),
            {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True},
        ),
        (ToolChoice(mode="none"), {"type": "none"}),
    ],
)
def test_encode_tool_choice_maps_modes_and_disables_parallel_use(choice, wire_choice):
    c = conv(USER, tools=[cases.WEATHER_TOOL], tool_choice=choice)
    body = CODEC.encode_request(c).value
    assert body["tool_choice"] == wire_choice
    assert CODEC.decode_request(body).value.tool_choice == choice


def test_encode_thinking_keeps_signature_and_redacted_data_before_tool_use():
    redacted = Thinking(text="ZW5jcnlwdGVk", redacted=True)
    msg = Message(
        role="assistant", parts=[cases.THINKING_CALL.message.parts[0], redacted, cases.PARIS]
    )
    content = CODEC.encode_request(conv(USER, msg)).value["messages"][1]["content"]
    assert content[0] == {
        "type": "thinking",
        "signature": "c2lnbmF0dXJl",
        "thinking": "The user wants Paris weather; call the tool.",
    }
    assert content[1] == {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"}
    assert content[2]["type"] == "tool_use"
    back = CODEC.decode_request(CODEC.encode_request(conv(USER, msg)).value).value
    assert back.messages[1] == cases.issued_by(msg, "anthropic")


def test_encode_drops_unsigned_thinking_with_a_warning():
    msg = Message(role="assistant", parts=[Thinking(text="hmm"), cases.PARIS])
    out = CODEC.encode_request(conv(USER, msg))
    assert [b["type"] for b in out.value["messages"][1]["content"]] == ["tool_use"]
    assert [(w.code, w.path) for w in lost(out)] == [
        ("thinking_dropped", "messages[1].parts[0]"),
        ("parts_shifted", "messages[1]"),  # the tool_use moves to index 0
    ]


def test_encode_images_as_base64_or_url_sources():
    user = Message(
        role="user",
        parts=[
            Text(text="look"),
            Image(media_type="image/jpeg", data="AAAA"),
            Image(url="https://example.com/a.png"),
            Image(media_type="image/svg+xml", data="PHN2Zz4="),
        ],
    )
    out = CODEC.encode_request(conv(user))
    assert out.value["messages"][0]["content"][1:] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "AAAA"}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
    ]
    assert [(w.code, w.path) for w in lost(out)] == [("image_dropped", "messages[0].parts[3]")]
    back = CODEC.decode_request(out.value).value.messages[0].parts
    assert back[1] == Image(media_type="image/jpeg", data="AAAA")
    assert back[2] == Image(url="https://example.com/a.png")


def test_encode_folds_a_mid_history_system_message_into_system_with_a_warning():
    late = Message(role="system", parts=[Text(text="Answer in French.")])
    out = CODEC.encode_request(conv(USER, late, system="Be brief."))
    assert out.value["system"] == "Be brief.\n\nAnswer in French."
    assert [m["role"] for m in out.value["messages"]] == ["user"]
    assert [(w.code, w.path) for w in lost(out)] == [
        ("system_moved", "system"),
        ("system_moved", "messages[1]"),
    ]
    leading = CODEC.encode_request(conv(late, USER))
    assert leading.value["system"] == "Answer in French."
    # the system message leaves the list: the prompt changes and the rest move up one place
    assert [(w.code, w.path) for w in lost(leading)] == [
        ("system_moved", "system"),
        ("messages_renumbered", "messages"),
    ]


def test_encode_renames_illegal_tool_names_and_ids_consistently():
    call = ToolCall(id="call.1/x", name="fs.read", arguments={"p": "a"})
    result = ToolResult(call_id="call.1/x", name="fs.read", content="ok")
    c = conv(
        USER,
        Message(role="assistant", parts=[call]),
        Message(role="tool", parts=[result]),
        tools=[Tool(name="fs.read")],
        tool_choice=ToolChoice(mode="tool", name="fs.read"),
    )
    out = CODEC.encode_request(c)
    body = out.value
    use = body["messages"][1]["content"][0]
    assert body["tools"][0]["name"] == use["name"] == body["tool_choice"]["name"] == "fs_read"
    assert body["messages"][2]["content"][0]["tool_use_id"] == use["id"]
    assert use["id"] != "call.1/x" and use["id"].startswith("call_1_x_")
    assert set(codes(out)) == {"call_id_renamed", "tool_name_renamed"}
    renamed = {(w.code, w.path) for w in lost(out)}
    assert ("call_id_renamed", "messages[2].parts[0]") in renamed  # the result too
    assert_params(MessageCreateParamsNonStreaming, body)


def test_encode_reports_what_anthropic_cannot_carry():
    call = ToolCall(
        id="c1",
        name="get_weather",
        arguments={},
        raw_arguments='{"loc',
        provider_details={"gemini": {"thoughtSignature": "abc"}},
    )
    result = ToolResult(
        call_id="c1",
        content="18C",
        structured={"temperature": 18},
        provider_details={"openai-responses": {"id": "fco_1"}},
    )
    out = CODEC.encode_request(
        conv(USER, Message(role="assistant", parts=[call]), Message(role="tool", parts=[result]))
    )
    assert [(w.code, w.path) for w in lost(out)] == [
        ("raw_arguments_dropped", "messages[1].parts[0]"),
        ("provider_details_dropped", "messages[1].parts[0]"),
        ("structured_content_dropped", "messages[2].parts[0]"),
        ("provider_details_dropped", "messages[2].parts[0]"),
    ]
    assert out.value["messages"][1]["content"][0]["input"] == {}


def test_vendor_fields_survive_a_round_trip_in_provider_details():
    body = {
        "model": "claude-opus-4-5",
        "max_tokens": 2048,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "tools": [
            {
                "name": "get_weather",
                "input_schema": {"type": "object"},
                "cache_control": {"type": "ephemeral"},
            }
        ],
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "Hi", "cache_control": {"type": "ephemeral"}}],
            }
        ],
        "metadata": {"user_id": "u1"},
        "stop_sequences": ["END"],
    }
    c = CODEC.decode_request(body).value
    assert c.system == "Be brief."
    assert c.tools[0].provider_details == {"anthropic": {"cache_control": {"type": "ephemeral"}}}
    again = CODEC.encode_request(c)
    assert lost(again) == []
    assert again.value == body
    assert_params(MessageCreateParamsNonStreaming, again.value)


def test_decode_splits_a_mixed_user_turn_into_tool_then_user_messages():
    body = {
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "text", "text": "sunny"}],
                    },
                    {"type": "text", "text": "thanks"},
                ],
            },
        ],
    }
    messages = CODEC.decode_request(body).value.messages
    assert [m.role for m in messages] == ["user", "assistant", "tool", "user"]
    assert messages[2].parts == [
        ToolResult(call_id="t1", name="get_weather", content=[Text(text="sunny")])
    ]
    assert messages[3].parts == [Text(text="thanks")]


def test_decode_keeps_text_before_results_as_its_own_user_message():
    # Anthropic rejects this order; the codec keeps it so the linter can name it.
    body = {
        "max_tokens": 10,
        "messages": [
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "first"},
                    {"type": "tool_result", "tool_use_id": "t1"},
                ],
            },
        ],
    }
    messages = CODEC.decode_request(body).value.messages
    assert [m.role for m in messages] == ["assistant", "user", "tool"]
    assert messages[2].tool_results[0] == ToolResult(call_id="t1", name="f", content="")


def test_decode_keeps_server_blocks_as_hosted_calls_and_re_encodes_them():
    resp = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
            {"type": "text", "text": "done"},
        ],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 2},
    }
    out = CODEC.decode_response(resp)
    call, text = out.value.message.parts
    assert (call.kind, call.id, call.name, call.source) == (
        "hosted_call", "srvtoolu_1", "web_search", "anthropic",
    )  # fmt: skip
    assert text == Text(text="done") and lost(out) == []
    assert CODEC.encode_response(out.value).value == resp


def test_stop_reasons_map_to_canonical_and_back():
    resp = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [],
        "stop_reason": "pause_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 2},
    }
    decoded = CODEC.decode_response(resp).value
    assert decoded.stop_reason == "other"
    assert CODEC.encode_response(decoded).value == resp
    stop_seq = resp | {"stop_reason": "stop_sequence", "stop_sequence": "END"}
    assert CODEC.encode_response(CODEC.decode_response(stop_seq).value).value == stop_seq
    filtered = ModelResponse(message=Message(role="assistant"), stop_reason="content_filter")
    out = CODEC.encode_response(filtered)
    assert out.value["stop_reason"] == "refusal" and codes(out) == ["stop_reason_mapped"]


def test_encode_response_invents_a_msg_id_and_replaces_foreign_ones():
    body = CODEC.encode_response(cases.WEATHER_FINAL_RESPONSE).value
    assert body["id"] == CODEC.encode_response(cases.WEATHER_FINAL_RESPONSE).value["id"]
    assert body["id"].startswith("msg_")
    foreign = cases.WEATHER_FINAL_RESPONSE.model_copy(update={"id": "chatcmpl-123"})
    out = CODEC.encode_response(foreign)
    assert out.value["id"].startswith("msg_") and codes(out) == ["response_id_replaced"]


def test_encode_response_drops_raw_arguments_in_body_and_stream_alike():
    out = CODEC.encode_response(cases.MALFORMED_ARGS)
    assert codes(out) == ["raw_arguments_dropped"]
    assert out.value["content"][0]["input"] == {}
    assert codes(CODEC.encode_stream(cases.MALFORMED_ARGS)) == ["raw_arguments_dropped"]


def test_encode_stream_sends_thinking_then_signature_delta():
    events = CODEC.encode_stream(cases.THINKING_CALL).value
    block0 = [e for e in events if e.get("index") == 0]
    assert block0[0]["content_block"] == {"type": "thinking", "thinking": "", "signature": ""}
    deltas = [e["delta"]["type"] for e in block0 if e["type"] == "content_block_delta"]
    assert deltas[-1] == "signature_delta" and set(deltas[:-1]) == {"thinking_delta"}
    assert block0[-1] == {"type": "content_block_stop", "index": 0}


def test_citations_stream_as_citations_deltas_the_sdk_accumulates():
    citation = {"type": "char_location", "cited_text": "18C", "document_index": 0,
                "start_char_index": 0, "end_char_index": 3}  # fmt: skip
    body = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": "It is 18C.", "citations": [citation]}],
        "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 4},
    }  # fmt: skip
    resp = CODEC.decode_response(body).value
    assert resp.message.parts[0].provider_details == {"anthropic": {"citations": [citation]}}
    events = CODEC.encode_stream(resp).value
    assert {"type": "citations_delta", "citation": citation} in [e.get("delta") for e in events]
    assert sdk_accumulate(events) == SdkMessage.model_validate(body).model_dump(
        mode="json", exclude_none=True
    )
    assert CODEC.decode_stream(events).value == resp


def test_decode_keeps_a_system_role_message_in_place_and_encode_folds_it():
    body = {"max_tokens": 10, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "system", "content": [{"type": "text", "text": "Be terse."}]},
    ]}  # fmt: skip
    c = CODEC.decode_request(body).value
    assert c.messages[1] == Message(role="system", parts=[Text(text="Be terse.")])
    out = CODEC.encode_request(c)
    # The top-level system prompt holds it, and the message list no longer does.
    assert out.value["system"] == "Be terse." and codes(out) == ["system_moved", "system_moved"]


def test_decode_stream_keeps_malformed_partial_json_as_raw_arguments():
    events = CODEC.encode_stream(cases.WEATHER_TOOL_USE).value
    broken = copy.deepcopy(events)
    broken[3]["delta"]["partial_json"] = '{"location": "Par'  # the call's last fragment cut
    broken[4]["delta"]["partial_json"] = ""
    call = CODEC.decode_stream(broken).value.message.tool_calls[0]
    assert call.arguments == {} and call.raw_arguments.startswith('{"location": "Par')


def test_decode_stream_warns_when_the_stream_is_cut_short():
    events = CODEC.encode_stream(cases.WEATHER_FINAL_RESPONSE).value
    out = CODEC.decode_stream(events[:-2])
    assert codes(out) == ["stream_incomplete"]
    assert out.value.message.text == cases.FINAL_TEXT
    assert out.value.stop_reason is None


# ------------------------------------------------------------------------------ detection


def test_detect_names_every_reference_kind():
    for name, kind in (
        ("request.initial", "request"),
        ("request.continuation", "request"),
        ("variant.thinking.request.continuation", "request"),
        ("response.tool_use", "response"),
        ("response.final", "response"),
        ("stream.tool_use", "stream"),
    ):
        assert CODEC.detect(wire(name)) == kind, name


def test_detect_our_own_payloads():
    assert CODEC.detect(CODEC.encode_request(cases.TASKS).value) == "request"
    assert CODEC.detect(CODEC.encode_response(cases.THINKING_CALL).value) == "response"
    assert CODEC.detect(CODEC.encode_stream(cases.THINKING_CALL).value) == "stream"


@pytest.mark.parametrize(
    "path",
    sorted(p.name for p in WIRE.glob("*.json") if not p.name.startswith("anthropic."))
    if WIRE.exists()
    else [],
)
def test_detect_never_claims_other_protocols_payloads(path):
    assert CODEC.detect(json.loads((WIRE / path).read_text())) is None


@pytest.mark.parametrize(
    "path", sorted(p.name for p in REAL.glob("*.json") if not p.name.startswith("anthropic."))
)
def test_detect_never_claims_other_real_payloads(path):
    assert CODEC.detect(json.loads((REAL / path).read_text())) is None


def test_detect_rejects_an_openai_chat_request_with_max_tokens():
    body = {
        "model": "gpt-4.1",
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c", "content": "ok"},
        ],
    }
    assert CODEC.detect(body) is None


# ------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ([], "$"),
        ({"model": "m"}, "$.messages"),
        ({"messages": "hi"}, "$.messages"),
        ({"messages": [{"role": "tool", "content": "x"}]}, "$.messages[0].role"),
        ({"messages": [{"role": "user"}]}, "$.messages[0].content"),
        (
            {"messages": [{"role": "user", "content": [{"type": "tool_result"}]}]},
            "$.messages[0].content[0].tool_use_id",
        ),
        (
            {
                "messages": [
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": "t", "name": "f", "input": "{}"}],
                    }
                ]
            },
            "$.messages[0].content[0].input",
        ),
        (
            {"messages": [{"role": "user", "content": [{"text": "no type"}]}]},
            "$.messages[0].content[0].type",
        ),
        ({"messages": [], "tools": [{"name": "f", "parameters": {}}]}, "$.tools[0].input_schema"),
        ({"messages": [], "tool_choice": {"type": "required"}}, "$.tool_choice.type"),
        ({"messages": [], "system": [{"type": "text"}]}, "$.system[0].text"),
    ],
)
def test_decode_request_rejects_malformed_payloads_with_a_path(payload, path):
    with pytest.raises(CodecError) as err:
        CODEC.decode_request(payload)
    assert err.value.path == path and err.value.protocol == "anthropic"


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"type": "completion"}, "$.type"),
        ({"type": "message", "content": {}}, "$.content"),
        ({"type": "message", "content": [{"type": "text", "text": 3}]}, "$.content[0].text"),
        ({"type": "message", "content": [], "usage": 5}, "$.usage"),
    ],
)
def test_decode_response_rejects_malformed_payloads_with_a_path(payload, path):
    with pytest.raises(CodecError) as err:
        CODEC.decode_response(payload)
    assert err.value.path == path


def test_decode_stream_rejects_malformed_events_with_a_path():
    events = CODEC.encode_stream(cases.WEATHER_TOOL_USE).value
    cases_and_paths = [
        ([], "$"),
        (events[1:], "$[0].type"),
        (
            [
                events[0],
                {
                    "type": "content_block_delta",
                    "index": 4,
                    "delta": {"type": "text_delta", "text": "x"},
                },
            ],
            "$[1].index",
        ),
        (
            [
                events[0],
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "tool_use", "name": "f", "input": {}},
                },
                {"type": "message_stop"},
            ],
            "$[1].content_block.id",
        ),
        (
            [
                events[0],
                {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            ],
            "$[1].error",
        ),
    ]
    for bad, path in cases_and_paths:
        with pytest.raises(CodecError) as err:
            CODEC.decode_stream(bad)
        assert err.value.path == path, bad


def test_encode_text_before_results_as_the_one_user_turn_the_api_would_see():
    text_first = Message(role="user", parts=[Text(text="Here you go:")])
    conv = cases.WEATHER_CONTINUATION.model_copy(
        update={
            "messages": [cases.WEATHER_USER, cases.WEATHER_CALLS, text_first, cases.WEATHER_RESULTS]
        }
    )
    body = CODEC.encode_request(conv).value
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    content = body["messages"][2]["content"]
    assert [b["type"] for b in content] == ["text", "tool_result", "tool_result"]
    back = CODEC.decode_request(body).value
    assert [m.role for m in back.messages] == ["user", "assistant", "user", "tool"]
