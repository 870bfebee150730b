"""The Bedrock live player: Converse and ConverseStream through botocore against the local
emulator (never a real AWS endpoint), with the credentials going only where they may."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse

import flowdebug.players.live.bedrock as bedrock  # registers the botocore sender
from flowdebug import protocols
from flowdebug.errors import ProviderError
from flowdebug.players.live import senders
from flowdebug.players.live.player import LivePlayer, LiveSettings, live_player
from flowdebug.players.live.settings import LIVE_PROTOCOLS
from flowdebug.players.live.wire import REDACTED
from flowdebug.protocols.bedrock.eventstream import CONTENT_TYPE
from tests import cases, plain_http

AWS_ENV = (
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
)


@pytest.fixture(autouse=True)
def no_host_credentials(monkeypatch):
    # The machine's own AWS settings must not decide a test.
    for name in AWS_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def framed(emulator):
    """Whether the emulator frames a ConverseStream as AWS event-stream (the emulator's
    ``frames()`` looks the framer up in Bedrock's facts)."""
    body = protocols.get("bedrock").encode_request(cases.WEATHER_INITIAL).value
    r = plain_http.post(emulator.url + "/model/m/converse-stream", json=body, timeout=10)
    return r.headers["content-type"] == CONTENT_TYPE


@pytest.fixture
def needs_frames(framed):
    if not framed:
        pytest.skip("the emulator still answers ConverseStream with SSE (its framer diff)")


def player(emulator, **settings: Any) -> LivePlayer:
    return live_player("bedrock", base_url=emulator.base_url("bedrock"), **settings)


def calls(turn) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in turn.response.message.tool_calls]


# -- registration ----------------------------------------------------------------------------


def test_bedrock_is_live_through_botocore():
    assert "bedrock" in LIVE_PROTOCOLS
    assert protocols.facts("bedrock").sdk == "botocore"
    assert "ACCESS_KEY_ID:SECRET_ACCESS_KEY" in (protocols.facts("bedrock").key_help or "")
    assert senders.sender_for("bedrock") is bedrock.send
    # Computed from the facts: every model vendor with an SDK, in registry order.
    assert LIVE_PROTOCOLS == ("anthropic", "openai-chat", "openai-responses", "gemini", "bedrock")


# -- the weather cycle -----------------------------------------------------------------------


def test_converse_plays_the_weather_cycle_through_botocore(emulator):
    p = player(emulator)
    first = p.respond(cases.WEATHER_INITIAL)
    assert calls(first) == [
        ("get_weather", {"location": "Paris", "unit": "c"}),
        ("get_weather", {"location": "Tokyo", "unit": "c"}),
    ]
    assert first.response.stop_reason == "tool_use"
    ex = first.exchange
    assert ex.status == 200
    # botocore puts the model id in the URL, URL-encoded.
    assert ex.url.endswith("/model/anthropic.claude-sonnet-4-20250514-v1%3A0/converse")
    assert ex.request == emulator.requests[-1]["body"] == json.loads(ex.raw_request)
    assert ex.stream_events is None
    assert ex.differences == []  # botocore sends the codec's body unchanged
    assert ex.request_headers["authorization"] == REDACTED
    assert ex.request_headers["user-agent"].startswith("Botocore/")
    final = p.respond(cases.WEATHER_CONTINUATION)
    assert final.response.message.text.startswith("Paris is 18 degrees C and partly cloudy.")


def test_blobs_go_as_bytes_so_the_wire_matches_the_codec(emulator):
    # An image in a tool result: base64 in the codec's JSON, bytes for botocore, which
    # encodes them again; encoding twice would show as a difference.
    conv = cases.IMAGE_RESULT
    turn = player(emulator).respond(conv)
    wire = turn.exchange.request
    image = wire["messages"][2]["content"][0]["toolResult"]["content"][1]["image"]
    assert image["source"]["bytes"] == cases.PIXEL
    assert turn.exchange.differences == []


def test_a_body_key_botocore_lacks_is_still_sent_and_named(emulator):
    conv = cases.WEATHER_INITIAL.model_copy(
        update={"provider_details": {"bedrock": {"futureField": {"x": 1}}}}
    )
    turn = player(emulator).respond(conv)
    assert emulator.requests[-1]["body"]["futureField"] == {"x": 1}
    assert turn.exchange.differences == []
    missing = [w for w in turn.exchange.codec_warnings if w.code == "sdk_parameter_missing"]
    assert [w.path for w in missing] == ["$.futureField"]


# -- ConverseStream: AWS event-stream frames -------------------------------------------------


@pytest.mark.usefixtures("needs_frames")
def test_converse_stream_decodes_the_event_stream_frames(emulator):
    plain = player(emulator).respond(cases.WEATHER_INITIAL)
    streamed = player(emulator, stream=True).respond(cases.WEATHER_INITIAL)
    ex = streamed.exchange
    assert ex.url.endswith("/converse-stream")
    assert ex.response_headers["content-type"] == CONTENT_TYPE
    assert next(iter(ex.stream_events[0])) == "messageStart"
    assert streamed.response.message == plain.response.message
    assert streamed.response.stop_reason == plain.response.stop_reason


@pytest.mark.usefixtures("needs_frames")
def test_converse_stream_shows_the_arguments_assembling(emulator):
    seen_events, seen_snaps = [], []
    p = LivePlayer(
        LiveSettings("bedrock", base_url=emulator.base_url("bedrock"), stream=True),
        on_event=seen_events.append,
        on_arguments=seen_snaps.append,
    )
    turn = p.respond(cases.WEATHER_INITIAL)
    assert seen_events == turn.exchange.stream_events
    assert seen_snaps == turn.exchange.argument_snapshots
    for index, call in enumerate(turn.response.message.tool_calls):
        texts = [text for i, text in seen_snaps if i == index]
        assert len(texts) > 1 and json.loads(texts[-1]) == call.arguments
        assert all(b.startswith(a) for a, b in itertools.pairwise(texts))


@pytest.mark.usefixtures("needs_frames")
def test_a_stream_that_fails_midway_reports_the_exception_event(emulator):
    with pytest.raises(ProviderError) as err:
        player(emulator, model="stream-error", stream=True).respond(cases.WEATHER_INITIAL)
    assert "internalServerException" in err.value.body
    assert "The server encountered an error." in err.value.body
    events = err.value.exchange.stream_events
    assert [next(iter(e)) for e in events] == ["messageStart", "internalServerException"]


@pytest.mark.usefixtures("needs_frames")
def test_a_malformed_stream_event_is_named(emulator):
    with pytest.raises(ProviderError, match="not JSON") as err:
        player(emulator, model="malformed", stream=True).respond(cases.WEATHER_INITIAL)
    assert "{not json" in err.value.body


# -- failures ------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize(
    ("fault", "status", "text", "hint"),
    [
        ("error-404", 404, "The specified model error-404 was not found.", "model name"),
        ("error-429", 429, "Too many requests", "rate limited"),
        ("error-500", 500, "internal error", "retry the step"),
    ],
)
def test_http_errors_carry_bedrocks_own_text(emulator, fault, status, text, hint, stream):
    with pytest.raises(ProviderError) as err:
        player(emulator, model=fault, stream=stream).respond(cases.WEATHER_INITIAL)
    e = err.value
    assert (e.provider, e.status) == ("bedrock", status)
    assert text in e.body and hint in e.hint
    assert e.exchange.response_headers["x-amzn-errortype"].startswith(
        {404: "ResourceNotFound", 429: "Throttling", 500: "InternalServer"}[status]
    )


@pytest.mark.parametrize(
    ("fault", "body"),
    [
        ("slow-3", "no answer within 0.5 s"),
        ("drop", "closed the connection without answering"),
        ("malformed", "not JSON"),
        ("wrong-shape", "$.output"),
    ],
)
def test_network_and_body_failures_become_provider_errors(emulator, fault, body):
    with pytest.raises(ProviderError) as err:
        player(emulator, model=fault, timeout=0.5).respond(cases.WEATHER_INITIAL)
    assert err.value.status is None and body in err.value.body


def test_the_conversation_is_left_unchanged_by_a_failed_call(emulator):
    before = cases.WEATHER_INITIAL.model_dump()
    with pytest.raises(ProviderError):
        player(emulator, model="error-503").respond(cases.WEATHER_INITIAL)
    assert cases.WEATHER_INITIAL.model_dump() == before


# -- credentials -------------------------------------------------------------------------------


def _signed(settings: LiveSettings) -> dict[str, str]:
    """The headers botocore signs a Converse call with for ``settings`` (nothing is sent)."""
    seen: dict[str, str] = {}

    def capture(request: Any, **kwargs: Any) -> AWSResponse:
        for k, v in request.headers.items():
            seen[k.lower()] = v.decode() if isinstance(v, bytes) else str(v)

        class Empty:
            def stream(self):
                yield b'{"output": {"message": {"role": "assistant", "content": []}}}'

        return AWSResponse(request.url, 200, {"content-type": "application/json"}, Empty())

    creds = bedrock.credentials(settings, settings.resolve_key())
    client = bedrock.make_client(settings, creds)
    client.meta.events.register_first("before-send.bedrock-runtime.Converse", capture)
    client.converse(modelId="m", messages=[{"role": "user", "content": [{"text": "hi"}]}])
    return seen


def test_no_key_for_a_local_server_signs_with_dummy_keys(emulator):
    headers = _signed(LiveSettings("bedrock", base_url=emulator.base_url("bedrock")))
    assert headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=flowdebug-no-key/")
    assert "/us-east-1/bedrock/aws4_request" in headers["authorization"]


def test_the_hosts_credentials_never_go_to_an_untrusted_base_url(emulator, monkeypatch):
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "ABSK-host-token")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAHOSTKEY")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "host-secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "host-session")
    settings = LiveSettings("bedrock", base_url=emulator.base_url("bedrock"))
    assert settings.key_source == "placeholder"
    headers = _signed(settings)
    assert "flowdebug-no-key" in headers["authorization"]
    sent = json.dumps(headers)
    assert "AKIAHOST" not in sent and "host-session" not in sent and "ABSK" not in sent
    # The whole call goes through too: botocore did not take the bearer token from the
    # environment (it would have refused to send one over http).
    assert calls(LivePlayer(settings).respond(cases.WEATHER_INITIAL))


def test_the_environments_sigv4_keys_go_to_the_vendor(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAHOSTKEY")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "host-secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "host-session")
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    settings = LiveSettings("bedrock")  # the vendor's own endpoint: trusted
    assert settings.key_source == "AWS_ACCESS_KEY_ID"
    headers = _signed(settings)
    assert headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIAHOSTKEY/")
    assert "/eu-west-3/bedrock/" in headers["authorization"]
    assert headers["x-amz-security-token"] == "host-session"


def test_the_environments_api_key_goes_to_the_vendor_as_a_bearer_token(monkeypatch):
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "ABSK-host-token")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAHOSTKEY")
    settings = LiveSettings("bedrock")
    assert settings.key_source == "AWS_BEARER_TOKEN_BEDROCK"
    assert _signed(settings)["authorization"] == "Bearer ABSK-host-token"


def test_an_access_key_without_its_secret_is_refused_by_name(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAHOSTKEY")
    with pytest.raises(ProviderError, match="AWS_SECRET_ACCESS_KEY is not"):
        live_player("bedrock").respond(cases.WEATHER_INITIAL)


def test_a_typed_key_pair_signs_and_its_session_token_is_redacted(emulator):
    settings = LiveSettings(
        "bedrock", base_url=emulator.base_url("bedrock"), api_key="AKIDTYPED:typed-secret:tok"
    )
    assert _signed(settings)["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDTYPED/")
    turn = LivePlayer(settings).respond(cases.WEATHER_INITIAL)
    assert turn.exchange.request_headers["x-amz-security-token"] == REDACTED
    assert "typed-secret" not in json.dumps(vars(turn.exchange), default=str)
    assert 'tok"' not in json.dumps(turn.exchange.request_headers)


def test_a_typed_api_key_is_a_bearer_token_which_botocore_sends_over_https_only(emulator):
    https = LiveSettings("bedrock", base_url="https://bedrock.example", api_key="ABSK-typed")
    assert _signed(https)["authorization"] == "Bearer ABSK-typed"
    with pytest.raises(ProviderError, match="requires an HTTPS endpoint") as err:
        player(emulator, api_key="ABSK-typed").respond(cases.WEATHER_INITIAL)
    assert "ABSK-typed" not in err.value.body
