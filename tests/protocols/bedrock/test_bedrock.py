"""Bedrock Converse codec: goldens, reference payloads, botocore validation, vendor rules."""

from __future__ import annotations

import json

import pytest

from flowdebug.errors import CodecError
from flowdebug.model import (
    Conversation,
    HostedCall,
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
from flowdebug.protocols.bedrock import CODEC
from flowdebug.protocols.bedrock.facts import ID_RULE, NAME_RULE
from tests import cases
from tests.goldens import check_golden
from tests.protocols.bedrock.botocheck import (
    VERSION,
    request_problems,
    response_problems,
    service,
    stream_event_problems,
)
from tests.protocols.bedrock.helpers import codes, wire, without_error_type

PARIS_ID, TOKYO_ID = "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "tooluse_3tZ9wQpLS2mXbV0cN7yH4A"


def reference_conversation(conv: Conversation) -> Conversation:
    """A weather case with the reference's tooluse_ ids and maxTokens 1024."""
    ids = {cases.PARIS.id: PARIS_ID, cases.TOKYO.id: TOKYO_ID}
    messages = []
    for m in conv.messages:
        parts = []
        for p in m.parts:
            if isinstance(p, ToolCall):
                p = p.model_copy(update={"id": ids[p.id]})
            elif isinstance(p, ToolResult):
                p = p.model_copy(update={"call_id": ids[p.call_id]})
            parts.append(p)
        messages.append(m.model_copy(update={"parts": parts}))
    return conv.model_copy(update={"messages": messages, "max_tokens": 1024})


# ------------------------------------------------------------------------------- goldens

GOLDEN_REQUESTS = ["weather_initial", "weather_continuation", "weather_complete", "tasks"]


@pytest.mark.parametrize("name", GOLDEN_REQUESTS)
def test_golden_requests(name):
    out = CODEC.encode_request(cases.CONVERSATIONS[name])
    # tasks has a destructive annotation and parallel=False: both named, nothing else lost.
    expected = {"tasks": ["tool_metadata_dropped", "tool_choice_dropped"]}.get(name, [])
    assert codes(out) == expected
    check_golden("bedrock", name, out.value)


def test_golden_image_result_request_renames_the_dotted_tool_everywhere():
    out = CODEC.encode_request(cases.IMAGE_RESULT)
    assert set(codes(out)) == {"tool_name_renamed"}
    assert {w.path for w in out.warnings} == {
        "tools[0]",
        "messages[1].parts[0]",
        "messages[2].parts[0]",
    }
    check_golden("bedrock", "image_result", out.value)


@pytest.mark.parametrize("name", ["weather_tool_use", "weather_final", "thinking_call"])
def test_golden_responses_and_streams(name):
    resp = cases.RESPONSES[name]
    body, events = CODEC.encode_response(resp), CODEC.encode_stream(resp)
    # A canonical response has no latency and no usage: Bedrock requires both.
    assert set(codes(body)) == {"metrics_filled_in", "usage_rewritten"}
    assert codes(events) == codes(body)
    check_golden("bedrock", name, body.value)
    check_golden("bedrock", f"{name}_stream", events.value)


# ---------------------------------------------------------------- the reference scenario


def test_requests_equal_the_reference_bodies():
    for conv, name in (
        (cases.WEATHER_INITIAL, "request.initial"),
        (cases.WEATHER_CONTINUATION, "request.continuation"),
    ):
        out = CODEC.encode_request(reference_conversation(conv))
        assert out.warnings == []
        assert out.value == wire(name)


def test_responses_and_stream_equal_the_reference_given_its_usage_and_latency():
    resp = ModelResponse(
        message=reference_conversation(cases.WEATHER_CONTINUATION).messages[1],
        stop_reason="tool_use",
        usage={"input_tokens": 412, "output_tokens": 96},
        provider_details={"bedrock": {"metrics": {"latencyMs": 1830}}},
    )
    assert CODEC.encode_response(resp).warnings == []
    assert CODEC.encode_response(resp).value == wire("response.tool_use")
    # The reference stream is exactly what we send: toolUse start, the input JSON in two
    # fragments, stop; messageStop; metadata.
    assert CODEC.encode_stream(resp).value == wire("stream.tool_use")


def test_decode_reference_requests():
    initial = CODEC.decode_request(wire("request.initial"))
    assert initial.warnings == []
    c = initial.value
    assert (c.system, c.max_tokens, c.model) == ("You are a weather assistant.", 1024, None)
    assert c.tools == [cases.WEATHER_TOOL]
    assert c.tool_choice == ToolChoice(mode="auto")
    assert c.messages == [cases.WEATHER_USER]
    assert c.provider_details is None
    cont = CODEC.decode_request(wire("request.continuation")).value
    assert [m.role for m in cont.messages] == ["user", "assistant", "tool"]
    assert [(t.id, t.name, t.arguments) for t in cont.messages[1].tool_calls] == [
        (PARIS_ID, "get_weather", {"location": "Paris", "unit": "c"}),
        (TOKYO_ID, "get_weather", {"location": "Tokyo", "unit": "c"}),
    ]
    expected = reference_conversation(cases.WEATHER_CONTINUATION)
    assert cont.messages == without_error_type(expected.messages)
    paris, tokyo = cont.messages[2].tool_results
    assert json.loads(paris.content)["temperature"] == 18 and not paris.is_error
    assert (tokyo.call_id, tokyo.name, tokyo.content, tokyo.is_error) == (
        TOKYO_ID,
        "get_weather",
        "timeout after 10s",
        True,
    )


def test_decode_reference_responses_and_stream():
    tool_use = CODEC.decode_response(wire("response.tool_use"))
    assert tool_use.warnings == []
    r = tool_use.value
    assert [c.id for c in r.message.tool_calls] == [PARIS_ID, TOKYO_ID]
    assert r.stop_reason == "tool_use"
    assert r.usage == {"input_tokens": 412, "output_tokens": 96}
    assert r.provider_details == {"bedrock": {"metrics": {"latencyMs": 1830}}}
    final = CODEC.decode_response(wire("response.final")).value
    assert final.stop_reason == "end_turn"
    assert final.message.text.startswith("Paris is 18 degrees C and partly cloudy.")
    streamed = CODEC.decode_stream(wire("stream.tool_use"))
    assert streamed.warnings == []
    assert streamed.value == r


@pytest.mark.parametrize(
    "name",
    ["request.initial", "request.continuation", "response.tool_use", "response.final"],
)
def test_reference_payloads_round_trip_exactly(name):
    payload = wire(name)
    if name.startswith("request"):
        again = CODEC.encode_request(CODEC.decode_request(payload).value)
    else:
        again = CODEC.encode_response(CODEC.decode_response(payload).value)
    assert again.warnings == [] and again.value == payload


def test_detect_names_every_reference_kind():
    for name, kind in (
        ("request.initial", "request"),
        ("request.continuation", "request"),
        ("response.tool_use", "response"),
        ("response.final", "response"),
        ("stream.tool_use", "stream"),
    ):
        assert CODEC.detect(wire(name)) == kind


# ----------------------------------------------------------------- botocore validation


def test_botocore_rules_are_the_ones_declared_in_facts():
    model = service()
    assert model.shape_for("ToolName").metadata == {
        "min": 1,
        "max": 64,
        "pattern": "[a-zA-Z0-9_-]+",
    }
    assert model.shape_for("ToolUseId").metadata == {
        "min": 1,
        "max": 64,
        "pattern": "[a-zA-Z0-9_.:-]+",
    }
    assert NAME_RULE.pattern == "^[a-zA-Z0-9_-]{1,64}$"
    assert ID_RULE.pattern == "^[a-zA-Z0-9_.:-]{1,64}$"
    assert VERSION  # reported by the test run's header below


@pytest.mark.parametrize("name", sorted(cases.CONVERSATIONS))
def test_every_emitted_request_passes_botocores_param_validator(name):
    assert request_problems(CODEC.encode_request(cases.CONVERSATIONS[name]).value) == ""


@pytest.mark.parametrize("name", sorted(cases.RESPONSES))
def test_every_emitted_response_and_stream_event_fits_botocores_output_shapes(name):
    resp = cases.RESPONSES[name]
    assert response_problems(CODEC.encode_response(resp).value) == []
    for event in CODEC.encode_stream(resp).value:
        assert stream_event_problems(event) == []


def test_the_validators_catch_typos():
    bad = wire("request.continuation")
    bad["messages"][2]["content"][1]["toolResult"]["isError"] = True
    assert 'Unknown parameter in messages[2].content[1].toolResult: "isError"' in (
        request_problems(bad)
    )
    body = wire("response.tool_use")
    body["stop_reason"] = "tool_use"
    assert response_problems(body) == ["$.stop_reason: not a member of ConverseResponse"]
    assert stream_event_problems({"messageStart": {"role": "model"}}) == [
        "$event.messageStart.role: 'model' is not one of ['user', 'assistant', 'system']"
    ]


# ------------------------------------------------------------------------- vendor rules


def test_encode_sends_parallel_results_in_one_user_turn_with_status_error():
    body = CODEC.encode_request(cases.WEATHER_CONTINUATION).value
    turn = body["messages"][2]
    assert turn["role"] == "user"
    paris, tokyo = (b["toolResult"] for b in turn["content"])
    # A result that is exactly a JSON object goes as a json block; status only on errors.
    assert paris == {
        "toolUseId": cases.PARIS.id,
        "content": [{"json": json.loads(cases.PARIS_RESULT.content)}],
    }
    assert tokyo["status"] == "error" and tokyo["content"] == [{"text": "timeout after 10s"}]


def test_encode_merges_user_text_after_results_into_the_same_turn_and_decode_splits_it():
    conv = cases.WEATHER_CONTINUATION.model_copy(
        update={
            "messages": [
                *cases.WEATHER_CONTINUATION.messages,
                Message(role="user", parts=[Text(text="And Rome?")]),
            ]
        }
    )
    body = CODEC.encode_request(conv).value
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][2]["content"][-1] == {"text": "And Rome?"}
    back = CODEC.decode_request(body).value
    assert [m.role for m in back.messages] == ["user", "assistant", "tool", "user"]


@pytest.mark.parametrize(
    ("choice", "wire_choice", "warned"),
    [
        (ToolChoice(mode="auto"), {"auto": {}}, []),
        (ToolChoice(mode="required"), {"any": {}}, []),
        (ToolChoice(mode="tool", name="get_weather"), {"tool": {"name": "get_weather"}}, []),
        (ToolChoice(mode="auto", parallel=False), {"auto": {}}, ["tool_choice_dropped"]),
        (ToolChoice(mode="none"), None, ["tool_choice_dropped"]),
    ],
)
def test_encode_tool_choice(choice, wire_choice, warned):
    conv = cases.WEATHER_INITIAL.model_copy(update={"tool_choice": choice})
    out = CODEC.encode_request(conv)
    assert out.value["toolConfig"].get("toolChoice") == wire_choice
    assert codes(out) == warned
    if wire_choice is not None and not warned:
        assert CODEC.decode_request(out.value).value.tool_choice == choice


def test_encode_reasoning_keeps_signature_and_redacted_content_and_drops_foreign_ones():
    msg = Message(
        role="assistant",
        parts=[
            Thinking(text="think", signature="c2ln", source="bedrock"),
            Thinking(text="cmVkYWN0ZWQ=", redacted=True, source="bedrock"),
            Thinking(text="anthropic thought", signature="sig", source="anthropic"),
            Thinking(text="plain reasoning"),
            cases.PARIS,
        ],
    )
    out = CODEC.encode_response(ModelResponse(message=msg, stop_reason="tool_use", usage={}))
    content = out.value["output"]["message"]["content"]
    assert content[:4] == [
        {"reasoningContent": {"reasoningText": {"text": "think", "signature": "c2ln"}}},
        {"reasoningContent": {"redactedContent": "cmVkYWN0ZWQ="}},
        {"reasoningContent": {"reasoningText": {"text": "anthropic thought"}}},
        {"reasoningContent": {"reasoningText": {"text": "plain reasoning"}}},
    ]
    dropped = [w for w in out.warnings if w.code == "thinking_signature_dropped"]
    assert [w.path for w in dropped] == ["message.parts[2]"]
    assert response_problems(out.value) == []
    back = CODEC.decode_response(out.value).value.message.parts
    assert back[0] == Thinking(text="think", signature="c2ln", source="bedrock")
    assert back[1] == Thinking(text="cmVkYWN0ZWQ=", redacted=True, source="bedrock")


def test_encode_images_as_base64_bytes_or_s3_and_drops_web_urls():
    conv = Conversation(
        messages=[
            Message(
                role="user",
                parts=[
                    Image(media_type="image/png", data=cases.PIXEL),
                    Image(media_type="image/jpeg", url="s3://bucket/cat.jpg"),
                    Image(media_type="image/png", url="https://example.com/cat.png"),
                    Image(media_type="image/bmp", data=cases.PIXEL),
                ],
            )
        ]
    )
    out = CODEC.encode_request(conv)
    assert out.value["messages"][0]["content"] == [
        {"image": {"format": "png", "source": {"bytes": cases.PIXEL}}},
        {"image": {"format": "jpeg", "source": {"s3Location": {"uri": "s3://bucket/cat.jpg"}}}},
    ]
    assert [(w.code, w.path) for w in out.warnings] == [
        ("image_dropped", "messages[0].parts[2]"),
        ("image_dropped", "messages[0].parts[3]"),
    ]
    assert request_problems(out.value) == ""
    back = CODEC.decode_request(out.value).value.messages[0].parts
    assert back == conv.messages[0].parts[:2]


def test_encode_renames_illegal_names_and_ids_consistently_and_keeps_dotted_ids():
    conv = Conversation(
        tools=[Tool(name="fs.read")],
        tool_choice=ToolChoice(mode="tool", name="fs.read"),
        messages=[
            Message(role="user", parts=[Text(text="read")]),
            Message(
                role="assistant",
                parts=[
                    ToolCall(id="call.with.dots:1", name="fs.read"),
                    ToolCall(id="id with space", name="fs.read"),
                ],
            ),
            Message(
                role="tool",
                parts=[
                    ToolResult(call_id="call.with.dots:1", name="fs.read", content="a"),
                    ToolResult(call_id="id with space", name="fs.read", content="b"),
                ],
            ),
        ],
    )
    out = CODEC.encode_request(conv)
    body = out.value
    assert body["toolConfig"]["tools"][0]["toolSpec"]["name"] == "fs_read"
    assert body["toolConfig"]["toolChoice"] == {"tool": {"name": "fs_read"}}
    uses = [b["toolUse"] for b in body["messages"][1]["content"]]
    results = [b["toolResult"] for b in body["messages"][2]["content"]]
    assert uses[0]["toolUseId"] == "call.with.dots:1"  # legal in a Bedrock ToolUseId
    assert uses[1]["toolUseId"].startswith("id_with_space_")
    assert [r["toolUseId"] for r in results] == [u["toolUseId"] for u in uses]
    assert {w.code for w in out.warnings} == {"tool_name_renamed", "call_id_renamed"}
    assert request_problems(body) == ""


def test_encode_reports_what_bedrock_cannot_carry_at_canonical_paths():
    conv = Conversation(
        model="anthropic.claude-sonnet-4",
        tools=[Tool(name="t", title="T", output_schema={"type": "object"})],
        messages=[
            Message(role="user", parts=[Text(text="hi")]),
            Message(
                role="assistant",
                parts=[
                    Text(text="no", refusal=True),
                    ToolCall(id="c1", name="t", raw_arguments="{bad"),
                    HostedCall(id="ws_1", name="web_search", source="openai-responses"),
                ],
            ),
            Message(
                role="tool",
                parts=[ToolResult(call_id="c1", name="t", content="x", structured={"a": 1})],
            ),
        ],
    )
    out = CODEC.encode_request(conv)
    assert [(w.code, w.path) for w in out.warnings] == [
        ("tool_metadata_dropped", "tools[0]"),
        ("refusal_flattened", "messages[1].parts[0].refusal"),
        ("raw_arguments_dropped", "messages[1].parts[1]"),
        ("hosted_call_dropped", "messages[1].parts[2]"),
        ("structured_content_dropped", "messages[2].parts[0]"),
        ("model_dropped", "model"),
    ]
    assert request_problems(out.value) == ""


def test_vendor_fields_survive_a_bedrock_round_trip():
    body = wire("request.continuation")
    body["additionalModelRequestFields"] = {"thinking": {"type": "enabled", "budget_tokens": 1024}}
    body["inferenceConfig"] |= {"topP": 0.5, "stopSequences": ["END"]}
    body["system"].append({"cachePoint": {"type": "default"}})
    body["toolConfig"]["tools"].append({"cachePoint": {"type": "default"}})
    body["messages"][0]["content"].append({"cachePoint": {"type": "default"}})
    body["messages"][2]["content"].insert(1, {"cachePoint": {"type": "default"}})
    body["messages"][2]["content"][0]["toolResult"]["status"] = "success"
    c = CODEC.decode_request(body).value
    assert c.system == "You are a weather assistant."
    assert [m.role for m in c.messages] == ["user", "assistant", "tool"]
    assert len(c.messages[2].tool_results) == 2
    again = CODEC.encode_request(c)
    assert again.warnings == [] and again.value == body
    assert request_problems(body) == ""


def test_boto3_parameters_with_model_id_keep_it():
    params = {"modelId": "us.amazon.nova-micro-v1:0", **wire("request.initial")}
    c = CODEC.decode_request(params).value
    assert c.model == "us.amazon.nova-micro-v1:0"
    assert CODEC.encode_request(c).value == params
    # From an HTTP body, the model id belongs in the URL: named, not sent.
    out = CODEC.encode_request(c.model_copy(update={"provider_details": None}))
    assert "modelId" not in out.value and codes(out) == ["model_dropped"]


@pytest.mark.parametrize(
    ("wire_stop", "canonical"),
    [
        ("end_turn", "end_turn"),
        ("tool_use", "tool_use"),
        ("max_tokens", "max_tokens"),
        ("stop_sequence", "stop_sequence"),
        ("content_filtered", "content_filter"),
        ("guardrail_intervened", "content_filter"),
        ("malformed_tool_use", "other"),
        ("model_context_window_exceeded", "other"),
    ],
)
def test_stop_reasons_map_to_canonical_and_back(wire_stop, canonical):
    body = wire("response.final") | {"stopReason": wire_stop}
    r = CODEC.decode_response(body).value
    assert r.stop_reason == canonical
    assert CODEC.encode_response(r).value == body


def test_usage_maps_cache_counters_and_keeps_a_total_that_is_not_the_sum():
    body = wire("response.final")
    body["usage"] = {
        "inputTokens": 10,
        "outputTokens": 5,
        "totalTokens": 45,
        "cacheReadInputTokens": 20,
        "cacheWriteInputTokens": 10,
    }
    r = CODEC.decode_response(body).value
    # totalTokens counts cache reads and writes: 45 is the sum, so it is not kept apart.
    assert r.usage == {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_read_input_tokens": 20,
        "cache_creation_input_tokens": 10,
    }
    assert CODEC.encode_response(r).value == body
    body["usage"]["totalTokens"] = 50
    r = CODEC.decode_response(body).value
    assert r.usage["total_tokens"] == 50
    assert CODEC.encode_response(r).value == body
    openai_style = ModelResponse(
        message=cases.WEATHER_FINAL,
        usage={"input_tokens": 3, "output_tokens": 4, "reasoning_tokens": 2},
    )
    out = CODEC.encode_response(openai_style)
    assert out.value["usage"] == {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}
    assert ("usage_dropped", "usage.reasoning_tokens") in [(w.code, w.path) for w in out.warnings]


def test_encode_response_names_the_id_and_model_a_converse_response_has_not():
    resp = cases.WEATHER_FINAL_RESPONSE.model_copy(update={"id": "msg_1", "model": "m"})
    assert {"response_id_dropped", "model_dropped"} <= set(codes(CODEC.encode_response(resp)))


# -------------------------------------------------------------------------------- streams


def test_decode_stream_assembles_tool_use_input_fragments():
    r = CODEC.decode_stream(wire("stream.tool_use")).value
    assert [c.arguments for c in r.message.tool_calls] == [
        {"location": "Paris", "unit": "c"},
        {"location": "Tokyo", "unit": "c"},
    ]


def test_decode_stream_keeps_malformed_input_as_raw_arguments():
    events = wire("stream.tool_use")
    events[3]["contentBlockDelta"]["delta"]["toolUse"]["input"] = "is"  # JSON cut short
    r = CODEC.decode_stream(events).value
    paris = r.message.tool_calls[0]
    assert (paris.arguments, paris.raw_arguments) == ({}, '{"location": "Paris')
    assert r.message.tool_calls[1].raw_arguments is None


def test_stream_of_text_reasoning_and_calls_decodes_like_the_response():
    for name in sorted(cases.RESPONSES):
        resp = cases.RESPONSES[name]
        body = CODEC.encode_response(resp).value
        assert CODEC.decode_stream(CODEC.encode_stream(resp).value).value == (
            CODEC.decode_response(body).value
        ), name


def test_decode_stream_warns_when_cut_short_and_skips_unknown_deltas():
    events = wire("stream.tool_use")[:-2]
    events.insert(2, {"contentBlockDelta": {"delta": {"citation": {}}, "contentBlockIndex": 0}})
    out = CODEC.decode_stream(events)
    assert [(w.code, w.path) for w in out.warnings] == [
        ("stream_event_dropped", "$[2].contentBlockDelta.delta.citation"),
        ("stream_incomplete", "$"),
    ]
    assert len(out.value.message.tool_calls) == 2


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda e: e.pop(0), "$[0].contentBlockStart"),
        (
            lambda e: e[1]["contentBlockStart"].pop("contentBlockIndex"),
            "$[1].contentBlockStart.contentBlockIndex",
        ),
        (
            lambda e: e[2]["contentBlockDelta"].update(contentBlockIndex=7),
            "$[2].contentBlockDelta.delta.toolUse",
        ),
        (
            lambda e: e[2]["contentBlockDelta"]["delta"]["toolUse"].update(input=5),
            "$[2].contentBlockDelta.delta.toolUse.input",
        ),
        (
            lambda e: e.insert(3, {"throttlingException": {"message": "slow down"}}),
            "$[3].throttlingException",
        ),
        (lambda e: e.insert(3, {"a": {}, "b": {}}), "$[3]"),
    ],
)
def test_decode_stream_rejects_malformed_events_with_a_path(mutate, path):
    events = wire("stream.tool_use")
    mutate(events)
    with pytest.raises(CodecError) as err:
        CODEC.decode_stream(events)
    assert err.value.path == path


# -------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        (lambda b: b.pop("messages"), "$.messages"),
        (lambda b: b["messages"][0].update(role="model"), "$.messages[0].role"),
        (lambda b: b["messages"][0].update(content="hi"), "$.messages[0].content"),
        (
            lambda b: b["messages"][0]["content"].append({"type": "text", "text": "x"}),
            "$.messages[0].content[1].type",
        ),
        (
            lambda b: b["messages"][1]["content"][0]["toolUse"].pop("toolUseId"),
            "$.messages[1].content[0].toolUse.toolUseId",
        ),
        (
            lambda b: b["messages"][1]["content"][0]["toolUse"].update(input="{}"),
            "$.messages[1].content[0].toolUse.input",
        ),
        (
            lambda b: b["messages"][2]["content"][1]["toolResult"].update(status="failed"),
            "$.messages[2].content[1].toolResult.status",
        ),
        (
            lambda b: b["messages"][2]["content"][0]["toolResult"]["content"].append({}),
            "$.messages[2].content[0].toolResult.content[1]",
        ),
        (
            lambda b: b["toolConfig"]["tools"][0]["toolSpec"].pop("inputSchema"),
            "$.toolConfig.tools[0].toolSpec.inputSchema",
        ),
        (
            lambda b: b["toolConfig"]["tools"].append({"name": "x", "parameters": {}}),
            "$.toolConfig.tools[1].toolSpec",
        ),
        (lambda b: b["toolConfig"].update(toolChoice={"none": {}}), "$.toolConfig.toolChoice.none"),
        (lambda b: b.update(system="text"), "$.system"),
        (lambda b: b["inferenceConfig"].update(maxTokens="many"), "$.inferenceConfig.maxTokens"),
    ],
)
def test_decode_request_names_the_json_path_of_bad_input(edit, path):
    body = wire("request.continuation")
    edit(body)
    with pytest.raises(CodecError) as err:
        CODEC.decode_request(body)
    assert err.value.path == path and err.value.protocol == "bedrock"


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        (lambda b: b.pop("output"), "$.output"),
        (lambda b: b["output"]["message"].update(role="user"), "$.output.message.role"),
        (
            lambda b: b["output"]["message"]["content"][0]["toolUse"].update(name=3),
            "$.output.message.content[0].toolUse.name",
        ),
        (lambda b: b.update(usage=[]), "$.usage"),
    ],
)
def test_decode_response_names_the_json_path_of_bad_input(edit, path):
    body = wire("response.tool_use")
    edit(body)
    with pytest.raises(CodecError) as err:
        CODEC.decode_response(body)
    assert err.value.path == path


# ------------------------------------------------------------------------------ fragments


def test_fragment_reads_one_message_or_a_bare_block_list():
    assistant = wire("response.tool_use")["output"]["message"]
    payload, note = CODEC.fragment(assistant)
    assert CODEC.detect(payload) == "response" or "output" in payload
    assert "assistant message" in note
    assert CODEC.decode_response(payload).value.message.tool_calls[0].id == PARIS_ID
    user = wire("request.continuation")["messages"][2]
    payload, note = CODEC.fragment(user)
    assert CODEC.detect(payload) == "request" and "user message" in note
    results = CODEC.decode_request(payload).value.messages[0].tool_results
    assert [r.is_error for r in results] == [False, True]
    blocks = wire("response.tool_use")["output"]["message"]["content"]
    payload, note = CODEC.fragment(blocks)
    assert len(CODEC.decode_response(payload).value.message.tool_calls) == 2
    payload, _ = CODEC.fragment(user["content"])
    assert CODEC.decode_request(payload).value.messages[0].role == "tool"


def test_fragment_leaves_whole_payloads_and_plain_text_lists_alone():
    assert CODEC.fragment(wire("request.initial")) is None
    assert CODEC.fragment([{"text": "hi"}]) is None  # also a list of Gemini parts
    assert CODEC.fragment({"role": "user", "content": [{"type": "text", "text": "hi"}]}) is None


def test_server_tool_blocks_bedrock_issued_go_back_verbatim_and_others_are_named():
    use = {
        "toolUse": {
            "toolUseId": "tooluse_srv1",
            "name": "nova_grounding",
            "input": {"query": "weather"},
            "type": "server_tool_use",
        }
    }
    result = {
        "toolResult": {"toolUseId": "tooluse_srv1", "content": [{"text": "sunny"}], "type": "x"}
    }
    body = wire("response.final")
    body["output"]["message"]["content"] = [use, result, {"text": "It is sunny."}]
    r = CODEC.decode_response(body).value
    call, answer, text = r.message.parts
    assert isinstance(call, HostedCall) and (call.name, call.source) == (
        "nova_grounding",
        "bedrock",
    )
    assert answer.kind == "hosted_result" and answer.name == "nova_grounding"
    assert answer.content == "sunny" and text.text == "It is sunny."
    again = CODEC.encode_response(r)
    assert again.warnings == [] and again.value == body
    foreign = r.model_copy(
        update={
            "message": r.message.model_copy(
                update={
                    "parts": [
                        call.model_copy(update={"source": "anthropic"}),
                        answer.model_copy(update={"source": "anthropic"}),
                        text,
                    ]
                }
            )
        }
    )
    out = CODEC.encode_response(foreign)
    assert [(w.code, w.path) for w in out.warnings] == [
        ("hosted_call_dropped", "message.parts[0]"),
        ("hosted_result_dropped", "message.parts[1]"),
        ("parts_shifted", "message"),
    ]
    assert out.value["output"]["message"]["content"] == [{"text": "It is sunny."}]
