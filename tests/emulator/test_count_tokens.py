"""The emulator answers each vendor's count-tokens endpoint with the offline estimate."""

from __future__ import annotations

import pytest

from flowdebug import protocols
from flowdebug.model import dump
from flowdebug.protocols.token_estimate import compact, estimate_tokens
from tests import cases, plain_http

# Each vendor's count-tokens path, as its reference spells it, and its answer holding 3.
ROUTES = {
    "anthropic": ("/v1/messages/count_tokens", {"input_tokens": 3}),
    "openai-responses": (
        "/v1/responses/input_tokens",
        {"object": "response.input_tokens", "input_tokens": 3},
    ),
    "gemini": ("/v1beta/models/gemini-2.5-flash:countTokens", {"totalTokens": 3}),
    "bedrock": (
        "/model/anthropic.claude-sonnet-4-20250514-v1%3A0/count-tokens",
        {"inputTokens": 3},
    ),
}
# Each vendor's route answering a model turn (after its SDK's base path).
PLAY = {
    "anthropic": "/messages",
    "openai-chat": "/chat/completions",
    "gemini": "/v1beta/models/gemini-2.5-flash:generateContent",
    "bedrock": "/model/anthropic.claude-sonnet-4-20250514-v1%3A0/converse",
}
BODY = {"a": "bcd"}  # '{"a":"bcd"}': 11 characters, 3 tokens at four a token


def test_every_vendor_with_a_count_endpoint_is_emulated():
    counted = {n for n in protocols.PROTOCOLS if protocols.facts(n).token_count}
    assert counted == set(ROUTES)


@pytest.mark.parametrize("protocol", sorted(ROUTES))
def test_a_count_request_gets_the_vendors_answer_with_the_estimate(emulator, protocol):
    path, expected = ROUTES[protocol]
    answer = plain_http.post(emulator.url + path, json=BODY, timeout=10)
    assert answer.status_code == 200
    assert answer.json() == expected
    assert protocols.facts(protocol).token_count.read(answer.json()) == 3
    logged = emulator.requests[-1]
    assert (logged["protocol"], logged["body"]) == (protocol, BODY)


def test_the_count_is_chars_over_four_of_the_compact_json_whatever_the_spacing(emulator):
    path, _ = ROUTES["anthropic"]
    body = {"messages": [{"role": "user", "content": "Hi there"}], "model": "m"}
    spaced = plain_http.post(
        emulator.url + path,
        content=b'{ "model" : "m",  "messages": [ {"role": "user", "content": "Hi there"} ] }',
        headers={"content-type": "application/json"},
        timeout=10,
    )
    assert len(compact(body)) == 63
    assert spaced.json() == {"input_tokens": 16} == {"input_tokens": estimate_tokens(body)}


def test_a_status_fault_answers_the_vendors_error(emulator):
    path, _ = ROUTES["openai-responses"]
    answer = plain_http.post(
        emulator.url + path, json=BODY, headers={"x-flowdebug-fault": "error-429"}, timeout=10
    )
    assert answer.status_code == 429
    assert "error" in answer.json()


def test_the_readiness_probe_lists_the_count_routes(emulator):
    routes = plain_http.get(emulator.url + "/health", timeout=10).json()["routes"]
    assert "POST /v1/messages/count_tokens" in routes
    assert "POST /model/{modelId}/count-tokens" in routes


@pytest.mark.parametrize("protocol", ["anthropic", "openai-chat", "gemini", "bedrock"])
def test_a_turn_of_a_model_that_counts_nothing_reports_the_estimate_as_usage(emulator, protocol):
    codec = protocols.get(protocol)
    conv = cases.WEATHER_INITIAL
    route = emulator.base_url(protocol).removeprefix(emulator.url) + PLAY[protocol]
    answer = plain_http.post(
        emulator.url + route, json=codec.encode_request(conv).value, timeout=10
    )
    turn = codec.decode_response(answer.json()).value
    canonical = {k: v for k, v in dump(conv).items() if k in ("system", "tools", "messages")}
    assert turn.usage == {
        "input_tokens": estimate_tokens(canonical),
        "output_tokens": estimate_tokens(dump(turn.message)),
    }
    assert turn.usage["input_tokens"] > 50  # the weather tool and the question
