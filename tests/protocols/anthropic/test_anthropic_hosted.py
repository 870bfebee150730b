"""Anthropic server tools, the MCP connector, citations and refusals: hosted calls and results
come back byte-identical, map to other vendors where an equivalent exists, and are named when
they cannot."""

from __future__ import annotations

import json

import pytest
from anthropic.types.beta import BetaMessage

from flowdebug.model import HostedCall, HostedResult, Message, ModelResponse, Text
from flowdebug.protocols.anthropic.codec import CODEC
from tests.paths import REAL
from tests.sdkcheck import assert_model

HOSTED = sorted(p.name for p in REAL.glob("anthropic.*.json") if "_tool_use" in p.read_text())


def load(name: str):
    return json.loads((REAL / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", [n for n in HOSTED if ".response." in n])
def test_hosted_responses_decode_to_hosted_parts_and_re_encode_byte_identical(name):
    resp = load(name)
    got = CODEC.decode_response(resp)
    parts = got.value.message.parts
    calls = [p for p in parts if isinstance(p, HostedCall)]
    results = [p for p in parts if isinstance(p, HostedResult)]
    assert calls and [r.call_id for r in results] == [c.id for c in calls]
    assert all(c.source == r.source == "anthropic" for c, r in zip(calls, results, strict=True))
    assert got.warnings == []
    again = CODEC.encode_response(got.value)
    # The real payload, byte for byte, but for the server tool counters newer SDKs require
    # (an older answer has no web_fetch_requests): 0, each named by a warning.
    server = resp["usage"].get("server_tool_use", {})
    missing = [k for k in ("web_search_requests", "web_fetch_requests") if k not in server]
    filled = {**resp["usage"], "server_tool_use": {**server, **dict.fromkeys(missing, 0)}}
    assert again.value == (
        {**resp, "usage": filled} if "server_tool_use" in resp["usage"] else resp
    )
    assert [w.path for w in again.warnings] == (
        [f"usage.server_tool_use.{k}" for k in missing] if server else []
    )


@pytest.mark.parametrize("name", [n for n in HOSTED if ".stream." in n])
def test_server_tool_input_streams_as_input_json_deltas_and_assembles(name):
    events = load(name)
    got = CODEC.decode_stream(events)
    calls = [p for p in got.value.message.parts if isinstance(p, HostedCall)]
    assert calls and all(c.arguments for c in calls)  # assembled from input_json_delta
    again = CODEC.encode_stream(got.value).value
    back = CODEC.decode_stream(again).value
    # Equal but for the server tool counters the encoder fills (0) where the source had none.
    assert back.message == got.value.message
    assert CODEC.decode_stream(CODEC.encode_stream(back).value).value == back
    starts = {e["index"]: e["content_block"] for e in again if e["type"] == "content_block_start"}
    hosted = [i for i, b in starts.items() if b["type"] in ("server_tool_use", "mcp_tool_use")]
    assert all(starts[i]["input"] == {} for i in hosted)


def test_web_fetch_replay_request_keeps_server_tools_in_place_and_the_document_result():
    req = load("anthropic.request.pydantic-ai-cassette-web-fetch-replay.json")
    conv = CODEC.decode_request(req).value
    result = next(p for m in conv.messages for p in m.parts if isinstance(p, HostedResult))
    assert result.name == "web_fetch" and result.text.startswith("Pydantic AI\n")
    body = CODEC.encode_request(conv).value
    assert body["tools"] == req["tools"] and body["messages"][1] == req["messages"][1]


def test_mcp_connector_result_is_named_for_its_remote_tool_and_server():
    resp = CODEC.decode_response(load("anthropic.response.pydantic-ai-cassette-mcp-servers.json"))
    call, result = resp.value.message.hosted
    assert (call.name, call.server) == ("ask_question", "deepwiki")
    assert result.name == "ask_question" and not result.is_error


def test_foreign_web_search_and_mcp_calls_map_and_others_are_dropped_by_name():
    parts = [
        HostedCall(
            id="ws_1", name="web_search", arguments={"query": "q"}, source="openai-responses"
        ),
        HostedCall(id="mcp_1", name="ask", server="wiki", source="openai-responses"),
        HostedResult(call_id="mcp_1", name="ask", content="answer", source="openai-responses"),
        HostedCall(id="ci_1", name="code_interpreter", source="openai-responses"),
        HostedResult(call_id="ci_1", name="code_interpreter", source="openai-responses"),
    ]
    resp = ModelResponse(message=Message(role="assistant", parts=parts), id="msg_1",
                         model="claude-x",
                         usage={"input_tokens": 1, "output_tokens": 1})  # fmt: skip
    out = CODEC.encode_response(resp)
    kinds = [b["type"] for b in out.value["content"]]
    assert kinds == ["server_tool_use", "mcp_tool_use", "mcp_tool_result"]
    assert out.value["content"][1]["server_name"] == "wiki"
    assert [(w.code, w.path) for w in out.warnings] == [
        ("hosted_call_mapped", "message.parts[0]"),
        ("hosted_call_mapped", "message.parts[1]"),
        ("hosted_result_mapped", "message.parts[2]"),
        ("hosted_call_dropped", "message.parts[3]"),
        ("hosted_result_dropped", "message.parts[4]"),
        ("stop_reason_filled_in", "stop_reason"),
    ]
    assert_model(BetaMessage, out.value)


def test_a_refusal_goes_out_as_stop_reason_refusal_and_text_with_a_warning():
    refusal = Text(text="I can't help with that.", refusal=True)
    resp = ModelResponse(message=Message(role="assistant", parts=[refusal]), id="msg_1",
                         model="claude-x",
                         usage={"input_tokens": 1, "output_tokens": 1})  # fmt: skip
    out = CODEC.encode_response(resp)
    assert out.value["stop_reason"] == "refusal"
    assert out.value["content"] == [{"type": "text", "text": "I can't help with that."}]
    assert [(w.code, w.path) for w in out.warnings] == [
        ("refusal_flattened", "message.parts[0].refusal"),
        ("stop_reason_filled_in", "stop_reason"),
    ]
    assert CODEC.decode_response(out.value).value.stop_reason == "refusal"


def test_envelope_values_filled_in_are_named():
    usage = {"input_tokens": 3, "output_tokens": 2, "reasoning_tokens": 1}
    resp = ModelResponse(message=Message(role="assistant", parts=[Text(text="hi")]), usage=usage)
    out = CODEC.encode_response(resp)
    assert {(w.code, w.path) for w in out.warnings} == {
        ("response_id_replaced", "id"),
        ("model_filled_in", "model"),
        ("usage_dropped", "usage.reasoning_tokens"),
        ("stop_reason_filled_in", "stop_reason"),
    }


@pytest.mark.parametrize(
    ("fragment", "kind"),
    [
        (
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
            },
            "response",
        ),
        (
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}],
            },
            "request",
        ),
        ([{"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}}], "response"),
    ],
)
def test_fragments_are_read_as_the_payload_they_stand_for(fragment, kind):
    whole, note = CODEC.fragment(fragment)
    assert CODEC.detect(whole) in (kind, None) and note
    assert CODEC.fragment({"role": "user", "content": [{"type": "text", "text": "hi"}]}) is None
    assert CODEC.fragment({"role": "model", "parts": [{"text": "hi"}]}) is None
    assert CODEC.fragment({"role": "assistant", "tool_calls": []}) is None
    assert CODEC.fragment(whole) is None
