"""Live players through the real SDK clients, against the emulator and recorded payloads.

Every server here binds 127.0.0.1 on a free port; nothing reaches the network except the
``live`` test, which needs a real key and FLOWDEBUG_LIVE=1.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import pickle
import socket
import ssl

import httpx2
import pytest

from flowdebug import protocols
from flowdebug.emulator.faults import parse_fault
from flowdebug.errors import ProviderError
from flowdebug.model import Conversation, ToolChoice
from flowdebug.players.live.differences import wire_differences
from flowdebug.players.live.player import LivePlayer, LiveSettings, live_player
from flowdebug.players.live.wire import REDACTED, Recording, Secret, SSEParser, recording_client
from tests import cases
from tests.recorded_server import REAL, REFERENCE, RecordedServer, catalog, unwrap

LIVE = ["anthropic", "openai-chat", "openai-responses", "gemini"]
PATHS = {
    "anthropic": "/v1/messages",
    "openai-chat": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "gemini": "/v1/models/gemini-2.5-flash:generateContent",
}
# What the recorded server answers for any request (the request is what those tests check).
ANY_RECORDING = {
    "anthropic": "tool_use",
    "openai-chat": "tool_calls",
    "openai-responses": "function_calls",
    "gemini": "function_calls",
}


@pytest.fixture(scope="module")
def recorded():
    with RecordedServer() as server:
        yield server


def player(server, protocol: str, **settings) -> LivePlayer:
    settings.setdefault("api_key", "test-key")
    return live_player(protocol, base_url=server.base_url(protocol), **settings)


def calls(turn) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in turn.response.message.tool_calls]


# -- the weather cycle through every SDK ------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("protocol", LIVE)
def test_every_live_player_plays_the_weather_cycle_through_its_sdk(emulator, protocol, stream):
    p = player(emulator, protocol, stream=stream)

    first = p.respond(cases.WEATHER_INITIAL)
    assert calls(first) == [
        ("get_weather", {"location": "Paris", "unit": "c"}),
        ("get_weather", {"location": "Tokyo", "unit": "c"}),
    ]
    assert first.response.stop_reason == "tool_use"
    ex = first.exchange
    assert ex.status == 200
    path = PATHS[protocol].replace(":generate", ":streamGenerate") if stream else PATHS[protocol]
    assert ex.url.split("?")[0].endswith(path)
    assert ex.request == emulator.requests[-1]["body"] == json.loads(ex.raw_request)
    assert (ex.stream_events is not None) == stream
    assert first.elapsed_ms > 0

    final = p.respond(cases.WEATHER_CONTINUATION)
    assert final.response.message.text.startswith("Paris is 18 degrees C and partly cloudy.")
    assert final.response.message.tool_calls == []


@pytest.mark.parametrize("protocol", LIVE)
def test_streamed_turn_equals_the_non_streamed_decoding(emulator, protocol):
    plain = player(emulator, protocol).respond(cases.WEATHER_INITIAL)
    streamed = player(emulator, protocol, stream=True).respond(cases.WEATHER_INITIAL)
    assert streamed.response.message == plain.response.message
    assert streamed.response.stop_reason == plain.response.stop_reason


@pytest.mark.parametrize("protocol", LIVE)
def test_stream_exposes_the_arguments_assembling(emulator, protocol):
    seen_events, seen_snaps = [], []
    p = LivePlayer(
        LiveSettings(protocol, base_url=emulator.base_url(protocol), api_key="k", stream=True),
        on_event=seen_events.append,
        on_arguments=seen_snaps.append,
    )
    turn = p.respond(cases.WEATHER_INITIAL)
    snaps = turn.exchange.argument_snapshots
    assert seen_snaps == snaps
    assert seen_events == turn.exchange.stream_events
    for index, call in enumerate(turn.response.message.tool_calls):
        texts = [text for i, text in snaps if i == index]
        assert json.loads(texts[-1]) == call.arguments
        # Each snapshot extends the previous one: the arguments grow, never rewrite.
        assert all(b.startswith(a) for a, b in itertools.pairwise(texts))
        if protocol == "gemini":
            assert len(texts) == 1  # Gemini sends each call whole
        else:
            assert len(texts) > 1 and not texts[0].endswith("}")


def test_sse_parser_handles_events_split_anywhere():
    raw = 'event: a\r\ndata: {"x":\r\ndata: "é"}\r\n\r\ndata: [DONE]\n\ndata: {"y": 2}'.encode()
    for size in (1, 2, 3, 7, len(raw)):
        parser, out = SSEParser(), []
        for i in range(0, len(raw), size):
            out += parser.feed(raw[i : i + size])
        out += parser.feed(b"", final=True)
        assert out == [{"x": "é"}, {"y": 2}], size


# -- what the SDK sent equals the codec's encoding ---------------------------------------


def _differences(recorded, protocol, conv, stream):
    p = player(recorded, protocol, model=ANY_RECORDING[protocol], stream=stream)
    ex = p.respond(conv).exchange
    assert ex.codec_request == protocols.get(protocol).encode_request(p.settings.apply(conv)).value
    return ex.differences


def test_every_recording_client_verifies_tls_with_one_context_made_once():
    # A context per live call read the system's CA certificates again, about 25 ms of CPU.
    with (
        recording_client(httpx2, Recording(), 5) as first,
        recording_client(httpx2, Recording(), 5) as second,
    ):
        contexts = [c._transport.inner._pool._ssl_context for c in (first, second)]
    assert contexts[0] is contexts[1]
    assert (contexts[0].verify_mode, contexts[0].check_hostname) == (ssl.CERT_REQUIRED, True)
    assert contexts[0].get_ca_certs()


@pytest.mark.parametrize("protocol", ["anthropic", "openai-chat", "openai-responses", "gemini"])
def test_a_live_call_reads_no_certificates_after_the_first(recorded, protocol, monkeypatch):
    # google-genai made a TLS context for websockets at every client it built (never used
    # here): another 25 ms of CPU at every Gemini call.
    loads = []
    for method in ("load_verify_locations", "load_default_certs"):
        real = getattr(ssl.SSLContext, method)

        def counted(self, *args, _real=real, _method=method, **kwargs):
            loads.append(_method)
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(ssl.SSLContext, method, counted)
    conv = cases.WEATHER_INITIAL
    p = player(recorded, protocol, model=ANY_RECORDING[protocol], stream=False)
    p.respond(conv)
    loads.clear()
    p.respond(conv)
    assert loads == []


@pytest.mark.parametrize("protocol", ["anthropic", "openai-chat", "openai-responses"])
@pytest.mark.parametrize("case", list(cases.CONVERSATIONS))
def test_anthropic_and_openai_sdks_send_exactly_the_codec_body(recorded, protocol, case):
    conv = cases.CONVERSATIONS[case]
    assert _differences(recorded, protocol, conv, stream=False) == []
    streamed = _differences(recorded, protocol, conv, stream=True)
    assert [(d.path, d.change, d.wire, d.expected) for d in streamed] == [
        ("$.stream", "added", True, True)
    ]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("case", list(cases.CONVERSATIONS))
def test_gemini_sdk_sends_the_codec_body_plus_its_documented_rewrites(recorded, case, stream):
    diffs = _differences(recorded, "gemini", cases.CONVERSATIONS[case], stream)
    assert [str(d) for d in diffs if not d.expected] == []
    assert ("$.generationConfig", "added", {}) in [(d.path, d.change, d.wire) for d in diffs]
    if case == "image_result":
        reasons = {d.path.rsplit(".", 1)[-1]: d.reason for d in diffs}
        assert "URL-safe base64" in reasons["data"]
        assert "both spellings" in reasons["inlineData"]


def _request_fixtures():
    found = sorted(REAL.glob("*.request.*.json")) + sorted(REFERENCE.glob("*.request.*.json"))
    return [f for f in found if f.name.split(".")[0].replace("_", "-") in ANY_RECORDING]


@pytest.mark.parametrize("path", _request_fixtures(), ids=lambda p: p.name)
def test_recorded_requests_go_through_their_sdk_without_unexpected_changes(recorded, path):
    protocol = path.name.split(".")[0].replace("_", "-")
    conv = protocols.get(protocol).decode_request(json.loads(path.read_text())).value
    diffs = _differences(recorded, protocol, conv, stream=False)
    assert [str(d) for d in diffs if not d.expected] == []
    if path.name == "gemini.request.continuation.json":
        signature = [d for d in diffs if d.path.endswith(".thoughtSignature")]
        assert signature and "same bytes" in signature[0].reason
    if path.name == "gemini.request.pydantic-ai-cassette-foreign-call-id.json":
        assert any(d.change == "renamed" and d.wire == "parameters_json_schema" for d in diffs)


def test_wire_differences_flags_real_changes_and_labels_sdk_rewrites():
    codec = {"a": 1, "b": [1, 2], "c": {"camelCase": True}, "flag": True, "n": 1}
    wire = {"a": 2, "b": [1], "c": {"camel_case": True}, "flag": 1, "n": 1.0, "extra": "x"}
    got = {(d.path, d.change, d.expected) for d in wire_differences(codec, wire, "anthropic")}
    assert got == {
        ("$.a", "changed", False),
        ("$.b[1]", "removed", False),
        ("$.c.camelCase", "renamed", False),
        ("$.flag", "changed", False),  # JSON true is not 1
        ("$.extra", "added", False),
    }
    gemini = wire_differences({"contents": []}, {"contents": [], "generationConfig": {}}, "gemini")
    assert [(d.path, d.expected) for d in gemini] == [("$.generationConfig", True)]
    sig = wire_differences({"thoughtSignature": "a+/b"}, {"thoughtSignature": "a-_b"}, "gemini")
    assert sig[0].expected
    other = wire_differences({"thoughtSignature": "a+/b"}, {"thoughtSignature": "zzzz"}, "gemini")
    assert not other[0].expected


# -- recorded vendor payloads ------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(catalog()), ids=lambda k: ".".join(k))
def test_live_players_capture_and_decode_recorded_vendor_payloads(recorded, key):
    protocol, kind, name = key
    payload = json.loads(recorded.files[key].read_text(encoding="utf-8"))
    codec = protocols.get(protocol)
    turn = player(recorded, protocol, model=name, stream=kind == "stream").respond(
        cases.WEATHER_INITIAL
    )
    if kind == "stream":
        events = [unwrap(e) for e in payload]
        assert turn.exchange.stream_events == events
        assert turn.response == codec.decode_stream(events).value
    else:
        assert turn.exchange.response == payload
        assert turn.response == codec.decode_response(payload).value


@pytest.mark.parametrize("protocol", LIVE)
def test_recorded_stream_assembles_into_the_recorded_response(recorded, protocol):
    name = ANY_RECORDING[protocol]
    streamed = player(recorded, protocol, model=name, stream=True).respond(cases.WEATHER_INITIAL)
    plain = player(recorded, protocol, model=name).respond(cases.WEATHER_INITIAL)
    assert streamed.response == plain.response
    assert [n for n, _ in calls(streamed)] == ["get_weather", "get_weather"]
    assert [a["location"] for _, a in calls(streamed)] == ["Paris", "Tokyo"]


@pytest.mark.parametrize("protocol", LIVE)
def test_an_error_from_an_unknown_server_keeps_its_own_text(recorded, protocol):
    with pytest.raises(ProviderError) as err:
        player(recorded, protocol, model="no-such-recording").respond(cases.WEATHER_INITIAL)
    assert (err.value.status, err.value.body) == (404, "no recording 'no-such-recording'")


# -- settings ----------------------------------------------------------------------------


def test_settings_reach_the_wire_in_each_vendors_spelling(emulator):
    choice = ToolChoice(mode="required")
    sent, warned = {}, {}
    for protocol in LIVE:
        p = player(
            emulator,
            protocol,
            model="m-1",
            temperature=0.25,
            max_tokens=321,
            tool_choice=choice,
            parallel=False,
        )
        turn = p.respond(cases.WEATHER_INITIAL)
        sent[protocol] = turn.exchange.request
        warned[protocol] = [w for w in turn.exchange.codec_warnings if w.code == "setting_dropped"]
        assert p.name == f"{protocol}:m-1"
    assert sent["anthropic"]["model"] == "m-1"
    assert "temperature" not in sent["anthropic"]
    assert sent["anthropic"]["max_tokens"] == 321
    assert sent["anthropic"]["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    # anthropic 2.12's Messages API has no temperature: the codec warns and leaves it out.
    assert "temperature" in [w.path for w in warned["anthropic"]]
    assert warned["openai-chat"] == []
    assert sent["openai-chat"]["tool_choice"] == "required"
    assert sent["openai-chat"]["parallel_tool_calls"] is False
    assert sent["openai-chat"]["max_completion_tokens"] == 321
    assert sent["openai-responses"]["max_output_tokens"] == 321
    assert sent["openai-responses"]["parallel_tool_calls"] is False
    assert sent["gemini"]["generationConfig"] == {"temperature": 0.25, "maxOutputTokens": 321}
    assert sent["gemini"]["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    assert emulator.requests[-1]["path"].startswith("/v1/models/m-1:")


def test_settings_leave_the_conversation_alone_when_unset():
    conv = cases.WEATHER_INITIAL
    assert LiveSettings("anthropic").apply(conv) == conv
    assert LiveSettings("gemini").model_name == "gemini-2.5-flash"


def test_keys_come_from_the_typed_value_then_the_environment(monkeypatch):
    for var in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ProviderError, match="no API key") as err:
        LiveSettings("anthropic").resolve_key()
    assert "ANTHROPIC_API_KEY" in err.value.hint
    assert LiveSettings("openai-chat", base_url="http://127.0.0.1:1/v1").resolve_key() == "no-key"
    monkeypatch.setenv("GOOGLE_API_KEY", "from-env")
    assert LiveSettings("gemini").resolve_key() == "from-env"
    assert LiveSettings("gemini").key_source == "GOOGLE_API_KEY"
    assert LiveSettings("gemini", api_key="typed").resolve_key() == "typed"
    assert LiveSettings("gemini", api_key="typed").public()["api_key"] == "typed"


# -- failures ----------------------------------------------------------------------------

VENDOR_TEXT = {
    ("error-401", "anthropic"): (401, "authentication_error: invalid x-api-key"),
    ("error-401", "openai-chat"): (401, "Incorrect API key provided"),
    ("error-401", "openai-responses"): (401, "Incorrect API key provided"),
    ("error-401", "gemini"): (400, "API key not valid"),
    ("error-404", "anthropic"): (404, "not_found_error: model: error-404"),
    ("error-404", "openai-chat"): (404, "The model `error-404` does not exist"),
    ("error-404", "openai-responses"): (404, "The model `error-404` does not exist"),
    ("error-404", "gemini"): (404, "NOT_FOUND: models/error-404 is not found"),
    ("error-429", "anthropic"): (429, "rate_limit_error"),
    ("error-429", "openai-chat"): (429, "Rate limit reached"),
    ("error-429", "openai-responses"): (429, "Rate limit reached"),
    ("error-429", "gemini"): (429, "RESOURCE_EXHAUSTED"),
    ("error-500", "anthropic"): (500, "api_error: Internal server error"),
    ("error-500", "openai-chat"): (500, "server_error: The server had an error"),
    ("error-500", "openai-responses"): (500, "server_error: The server had an error"),
    ("error-500", "gemini"): (500, "INTERNAL: An internal error has occurred"),
    ("error-529", "anthropic"): (529, "overloaded_error: Overloaded"),
    ("error-503", "gemini"): (503, "UNAVAILABLE: The model is overloaded"),
}
HINTS = {401: "API key", 400: "API key", 404: "check the model name", 429: "wait 1 s"}


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize(
    ("fault", "protocol"), sorted(VENDOR_TEXT), ids=[f"{f}-{p}" for f, p in sorted(VENDOR_TEXT)]
)
def test_http_errors_become_provider_errors_with_the_vendors_text(
    emulator, fault, protocol, stream
):
    status, text = VENDOR_TEXT[(fault, protocol)]
    with pytest.raises(ProviderError) as err:
        player(emulator, protocol, model=fault, stream=stream).respond(cases.WEATHER_INITIAL)
    e = err.value
    assert (e.provider, e.status) == (protocol, status)
    assert text in e.body
    assert HINTS.get(status, "retry the step") in e.hint
    assert e.exchange.status == status and e.exchange.codec_request is not None
    assert e.__cause__ is None and e.__context__ is None  # no SDK exception chained


FAILURES = {
    "slow-3": ("no answer within 0.5 s", "raise the timeout"),
    "drop": ("closed the connection without answering", "retry the step"),
    "malformed": ("is not a valid", "check that base_url points at"),
    "wrong-shape": ("is not a valid", "check that base_url points at"),
}


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("fault", sorted(FAILURES))
@pytest.mark.parametrize("protocol", LIVE)
def test_network_and_body_failures_become_provider_errors(emulator, protocol, fault, stream):
    body, hint = FAILURES[fault]
    p = player(emulator, protocol, model=fault, stream=stream, timeout=0.5)
    with pytest.raises(ProviderError) as err:
        p.respond(cases.WEATHER_INITIAL)
    assert err.value.status is None
    assert body in err.value.body and hint in err.value.hint
    if fault == "malformed":
        assert "not JSON" in err.value.body
    if fault == "wrong-shape":
        assert "$" in err.value.body  # the codec names the JSON path that is wrong


@pytest.mark.parametrize("protocol", LIVE)
def test_a_stream_that_fails_midway_reports_the_vendors_error(emulator, protocol):
    with pytest.raises(ProviderError) as err:
        player(emulator, protocol, model="stream-error", stream=True).respond(cases.WEATHER_INITIAL)
    assert "middle of the stream" in err.value.hint
    assert ("overloaded" in err.value.body.lower()) or ("server had an error" in err.value.body)
    assert len(err.value.exchange.stream_events) == 2


@pytest.mark.parametrize("protocol", LIVE)
def test_connection_refused_is_a_provider_error(protocol):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}" + ("/v1" if protocol.startswith("openai") else "")
    with pytest.raises(ProviderError, match="could not connect") as err:
        live_player(protocol, base_url=url, api_key="k").respond(cases.WEATHER_INITIAL)
    assert url in err.value.hint


def test_a_failed_step_leaves_the_conversation_unchanged_and_can_be_retried(emulator):
    conv = cases.WEATHER_INITIAL
    before = conv.model_dump()
    p = player(emulator, "anthropic")
    emulator.fault = parse_fault("error-503")
    try:
        with pytest.raises(ProviderError):
            p.respond(conv)
    finally:
        emulator.fault = None
    assert conv.model_dump() == before
    assert len(calls(p.respond(conv))) == 2


def _with_field(monkeypatch, protocol: str, key: str) -> None:
    codec = protocols.get(protocol)
    original = codec.encode_request

    def encode(conv: Conversation):
        out = original(conv)
        out.value[key] = 1
        return out

    monkeypatch.setattr(codec, "encode_request", encode)


def test_a_body_the_sdk_refuses_is_reported_before_anything_is_sent(emulator, monkeypatch):
    _with_field(monkeypatch, "gemini", "notAField")
    sent = len(emulator.requests)
    with pytest.raises(ProviderError, match="refused the request before sending it") as err:
        player(emulator, "gemini").respond(cases.WEATHER_INITIAL)
    assert len(emulator.requests) == sent
    assert err.value.exchange.codec_request["notAField"] == 1
    assert err.value.exchange.request is None


@pytest.mark.parametrize("protocol", ["anthropic", "openai-chat", "openai-responses"])
def test_a_key_the_sdk_has_no_parameter_for_still_goes_on_the_wire(emulator, monkeypatch, protocol):
    _with_field(monkeypatch, protocol, "not_a_parameter")
    turn = player(emulator, protocol).respond(cases.WEATHER_INITIAL)
    assert turn.exchange.request["not_a_parameter"] == 1
    assert turn.exchange.differences == []
    (warning,) = [w for w in turn.exchange.codec_warnings if w.code == "sdk_parameter_missing"]
    assert warning.path == "$.not_a_parameter"


# -- the key never leaks -------------------------------------------------------------------

KEY = "sk-flowdebug-TYPED-KEY-4f1c9a0b"


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("protocol", LIVE)
def test_a_typed_key_appears_nowhere_in_what_flowdebug_keeps(
    emulator, protocol, stream, caplog, capsys
):
    caplog.set_level(logging.DEBUG)
    p = player(emulator, protocol, api_key=KEY, stream=stream)
    turn = p.respond(cases.WEATHER_CONTINUATION)
    with pytest.raises(ProviderError) as err:
        player(emulator, protocol, api_key=KEY, model="error-401").respond(cases.WEATHER_INITIAL)

    kept = [
        repr(p),
        repr(p.settings),
        str(p.settings),
        json.dumps(p.settings.public(), default=str),
        json.dumps(turn.to_dict()),
        json.dumps(vars(turn.exchange), default=str),
        str(err.value),
        json.dumps(err.value.exchange.to_dict()),
        caplog.text,
        json.dumps(emulator.requests, default=str),
        *capsys.readouterr(),
    ]
    assert caplog.records  # the SDKs and the player did log, at DEBUG level
    for text in kept:
        assert KEY not in text
    headers = turn.exchange.request_headers
    assert REDACTED in {headers.get(h) for h in ("x-api-key", "authorization", "x-goog-api-key")}
    with pytest.raises(TypeError):
        pickle.dumps(p.settings)


def test_the_key_is_scrubbed_from_a_vendor_error_that_echoes_it():
    from flowdebug.players.live.errors import classify
    from flowdebug.players.live.wire import Capture

    capture = Capture("POST", "http://x", {}, b"{}")
    capture.respond(401, {"content-type": "application/json"})
    capture.feed(json.dumps({"error": {"message": f"Incorrect API key {KEY}"}}).encode(), True)
    err = classify("openai-chat", capture, None, model="m", base_url=None, timeout=1, secret=KEY)
    assert KEY not in str(err) and REDACTED in err.body


def test_a_secret_prints_redacted():
    s = Secret(KEY)
    assert KEY not in repr(s) + str(s) + f"{s}" + repr([s])
    assert s.reveal() == KEY


# -- a real vendor (opt-in) --------------------------------------------------------------

REAL_KEYS = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai-chat": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
}


@pytest.mark.live
@pytest.mark.parametrize("protocol", LIVE)
def test_a_real_model_calls_the_weather_tool(protocol):
    if not os.environ.get(REAL_KEYS[protocol]) or os.environ.get("FLOWDEBUG_LIVE") != "1":
        pytest.skip(f"needs {REAL_KEYS[protocol]} and FLOWDEBUG_LIVE=1 (never runs by default)")
    turn = live_player(protocol, max_tokens=300).respond(cases.WEATHER_INITIAL)
    assert {c.name for c in turn.response.message.tool_calls} == {"get_weather"}
    assert [str(d) for d in turn.exchange.differences if not d.expected] == []
