"""The vendor-API emulator over plain HTTP (no SDK): routes, framing, errors, faults, CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from flowdebug import protocols
from flowdebug.cli.main import build_parser
from flowdebug.emulator.faults import FAULTS, parse_fault
from flowdebug.emulator.server import FAULT_HEADER, Emulator
from flowdebug.errors import UsageError
from flowdebug.players.keyword import KeywordPlayer, KeywordRule
from flowdebug.players.live.wire import SSEParser
from tests import cases, plain_http

ROOT = Path(__file__).resolve().parents[2]
ROUTES = {
    "anthropic": "/v1/messages",
    "openai-chat": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "gemini": "/v1beta/models/gemini-2.5-flash:generateContent",
}


def post(emu: Emulator, path: str, body, **kw) -> httpx.Response:
    return plain_http.post(emu.url + path, json=body, timeout=10, **kw)


def request_body(protocol: str, conv=cases.WEATHER_INITIAL, **extra):
    return {**protocols.get(protocol).encode_request(conv).value, **extra}


def events_of(response: httpx.Response) -> list:
    parser = SSEParser()
    return parser.feed(response.content, final=True)


@pytest.mark.parametrize("protocol", list(ROUTES))
def test_each_route_answers_with_the_scenarios_turn_in_that_protocol(emulator, protocol):
    r = post(emulator, ROUTES[protocol], request_body(protocol))
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    resp = protocols.get(protocol).decode_response(r.json()).value
    assert [c.arguments["location"] for c in resp.message.tool_calls] == ["Paris", "Tokyo"]
    r = post(emulator, ROUTES[protocol], request_body(protocol, cases.WEATHER_CONTINUATION))
    text = protocols.get(protocol).decode_response(r.json()).value.message.text
    assert text.startswith("Paris is 18 degrees C")


@pytest.mark.parametrize("protocol", list(ROUTES))
def test_streams_are_sse_that_decode_to_the_same_turn(emulator, protocol):
    codec = protocols.get(protocol)
    path = ROUTES[protocol]
    if protocol == "gemini":
        path = path.replace(":generateContent", ":streamGenerateContent?alt=sse")
        body = request_body(protocol)
    else:
        body = request_body(protocol, stream=True)
    r = post(emulator, path, body)
    assert r.headers["content-type"] == "text/event-stream"
    plain = post(emulator, ROUTES[protocol], request_body(protocol)).json()
    assert codec.decode_stream(events_of(r)).value == codec.decode_response(plain).value
    text = r.text
    if protocol in ("anthropic", "openai-responses"):
        # Their SDKs dispatch on the event name, which repeats the data's type.
        names = [line[7:] for line in text.splitlines() if line.startswith("event: ")]
        assert names == [e["type"] for e in events_of(r)]
    assert text.rstrip().endswith("data: [DONE]") == (protocol == "openai-chat")


def test_openai_routes_work_without_the_v1_prefix_and_gemini_under_v1(emulator):
    assert post(emulator, "/chat/completions", request_body("openai-chat")).status_code == 200
    assert post(emulator, "/responses", request_body("openai-responses")).status_code == 200
    path = "/v1/models/gemini-2.5-flash:generateContent"
    assert post(emulator, path, request_body("gemini")).status_code == 200


def test_unknown_route_is_404_and_the_root_says_what_is_served(emulator):
    assert post(emulator, "/v2/complete", {}).status_code == 404
    health = plain_http.get(emulator.url + "/health", timeout=10)
    assert health.json()["emulator"] == "flowdebug"
    assert "POST /v1/messages" in health.json()["routes"]


def test_a_request_the_codec_cannot_decode_gets_the_vendors_400_with_the_json_path(emulator):
    r = post(emulator, "/v1/messages", {"model": "m", "max_tokens": 5, "messages": "hi"})
    assert r.status_code == 400
    assert r.json()["type"] == "error"
    assert r.json()["error"]["type"] == "invalid_request_error"
    assert r.json()["error"]["message"].startswith("$.messages:")
    r = plain_http.post(emulator.url + "/v1/chat/completions", content=b"{nope", timeout=10)
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]["message"]


def test_a_finished_script_answers_400_naming_the_problem(emulator):
    r = post(emulator, "/v1/chat/completions", request_body("openai-chat", cases.WEATHER_COMPLETE))
    assert r.status_code == 400
    assert "all have been played" in r.json()["error"]["message"]


def test_every_request_is_logged_with_its_protocol_model_and_fault(emulator):
    post(emulator, "/v1/messages", request_body("anthropic", model="error-429"))
    last = emulator.requests[-1]
    assert (last["protocol"], last["model"], last["fault"]) == (
        "anthropic",
        "error-429",
        "error-429",
    )


# -- error bodies in each vendor's shape -------------------------------------------------


def test_anthropic_errors_have_the_messages_api_shape(emulator):
    r = post(emulator, "/v1/messages", request_body("anthropic", model="error-404"))
    assert r.status_code == 404
    assert r.json() == {
        "type": "error",
        "error": {"type": "not_found_error", "message": "model: error-404"},
        "request_id": "req_emulated",
    }
    assert (
        post(emulator, "/v1/messages", request_body("anthropic", model="error-529")).json()[
            "error"
        ]["type"]
        == "overloaded_error"
    )


def test_openai_errors_have_the_error_object_shape(emulator):
    r = post(emulator, "/v1/chat/completions", request_body("openai-chat", model="error-401"))
    assert r.status_code == 401
    error = r.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["code"] == "invalid_api_key"
    r = post(emulator, "/v1/responses", request_body("openai-responses", model="error-429"))
    assert r.status_code == 429 and r.headers["retry-after"] == "1"
    assert r.json()["error"]["code"] == "rate_limit_exceeded"


def test_gemini_answers_a_bad_key_with_400_api_key_invalid_like_the_real_api(emulator):
    r = post(emulator, "/v1beta/models/error-401:generateContent", request_body("gemini"))
    assert r.status_code == 400
    error = r.json()["error"]
    assert (error["code"], error["status"]) == (400, "INVALID_ARGUMENT")
    assert error["details"][0]["reason"] == "API_KEY_INVALID"
    r = post(emulator, "/v1beta/models/error-404:generateContent", request_body("gemini"))
    assert "models/error-404 is not found for API version v1beta" in r.json()["error"]["message"]


# -- fault selection ----------------------------------------------------------------------


def test_a_fault_header_overrides_the_model(emulator):
    r = post(
        emulator,
        "/v1/chat/completions",
        request_body("openai-chat"),
        headers={FAULT_HEADER: "error-503"},
    )
    assert r.status_code == 503


def test_a_server_wide_fault_applies_to_every_request():
    with Emulator(fault="error-500") as emu:
        assert post(emu, "/v1/messages", request_body("anthropic")).status_code == 500


def test_slow_waits_before_answering(emulator):
    started = time.monotonic()
    r = post(emulator, "/v1/messages", request_body("anthropic", model="slow-0.3"))
    assert r.status_code == 200 and time.monotonic() - started >= 0.3


def test_malformed_and_wrong_shape_answer_200_with_bad_bodies(emulator):
    r = post(emulator, "/v1/messages", request_body("anthropic", model="malformed"))
    assert r.status_code == 200
    with pytest.raises(ValueError):
        r.json()
    r = post(emulator, "/v1/chat/completions", request_body("openai-chat", model="wrong-shape"))
    assert r.status_code == 200 and "choices" in r.json()
    r = post(emulator, "/v1/messages", request_body("anthropic", model="malformed", stream=True))
    assert "{not json" in events_of(r)


def test_drop_closes_the_connection_without_an_answer(emulator):
    with pytest.raises(httpx.RemoteProtocolError):
        post(emulator, "/v1/messages", request_body("anthropic", model="drop"))


def test_fault_names_parse_and_unknown_ones_are_refused():
    assert parse_fault("slow-1.5").seconds == 1.5
    assert parse_fault("slow").seconds == 5.0
    assert parse_fault("error-418").status == 418
    assert parse_fault("claude-sonnet-4-6") is None
    assert set(FAULTS) >= {"error-401", "error-404", "error-429", "error-500", "malformed"}
    with pytest.raises(UsageError, match="unknown fault"):
        Emulator(fault="explode")


def test_a_busy_port_is_a_usage_error(emulator):
    port = int(emulator.url.rsplit(":", 1)[1])
    with pytest.raises(UsageError, match="choose another --port"):
        Emulator(port=port)


def test_stream_delay_spaces_the_events():
    with Emulator(delay=0.05) as emu:
        started = time.monotonic()
        post(emu, "/v1/messages", request_body("anthropic", stream=True))
        assert time.monotonic() - started >= 0.05 * 5


# -- the keyword player (description A/B tests) -------------------------------------------


def test_keyword_player_calls_a_tool_only_when_its_description_has_the_word():
    rule = KeywordRule(tool="get_weather", word="WEATHER", arguments={"location": "Paris"})
    p = KeywordPlayer([rule])
    turn = p.respond(cases.WEATHER_INITIAL)
    assert [(c.name, c.arguments) for c in turn.response.message.tool_calls] == [
        ("get_weather", {"location": "Paris"})
    ]
    tool = cases.WEATHER_TOOL.model_copy(update={"description": "Look up a city's forecast."})
    other = cases.WEATHER_INITIAL.model_copy(update={"tools": [tool]})
    assert p.respond(other).response.message.text == "I have no tool for that."
    assert p.respond(cases.WEATHER_CONTINUATION).response.message.text == "Done."


def test_the_emulator_can_be_played_by_any_player():
    rule = KeywordRule(tool="get_weather", word="weather", arguments={"location": "Oslo"})
    with Emulator(KeywordPlayer([rule])) as emu:
        r = post(emu, "/v1/chat/completions", request_body("openai-chat"))
    call = r.json()["choices"][0]["message"]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {"location": "Oslo"}


# -- command line --------------------------------------------------------------------------


def test_emulate_is_a_flowdebug_command():
    args = build_parser().parse_args(["emulate", "--port", "0", "--scenario", "tasks"])
    assert (args.command, args.port, args.scenario, args.host) == (
        "emulate",
        0,
        "tasks",
        "127.0.0.1",
    )


def test_flowdebug_emulate_serves_until_stopped():
    proc = subprocess.Popen(
        [sys.executable, "-m", "flowdebug.cli.main", "emulate", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = proc.stdout.readline()
        assert first.startswith("flowdebug emulator on http://127.0.0.1:")
        url = first.split()[3]
        body = request_body("anthropic")
        r = plain_http.post(url + "/v1/messages", json=body, timeout=10)
        assert r.json()["content"][0]["input"] == {"location": "Paris", "unit": "c"}
    finally:
        proc.terminate()
        proc.wait(timeout=10)
