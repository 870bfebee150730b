"""Issue 28 items 1-2 attacked as an attendee with bad intent would (everything on 127.0.0.1).

Where the server connects: a base URL or an MCP URL that climbs out of the prefix the host
allowed (``/v1/../admin``, ``%2e%2e``) is refused; a name that does not resolve the first time
is never handed to the HTTP client to resolve again unchecked (a second, private answer); the
forms of 127.0.0.1 an attendee may type all stay out (IPv6 addresses carrying a private IPv4
are named for it: tests/players/test_live_reach.py). What is kept: presigned-URL signatures
and other
credential parameters, a fragment's ``#access_token=``, the ``Authorization: Basic`` a server
echoes for a ``user:pass@`` base URL, and ``-vv`` log lines carry no credential. And the
Compare page's offline emulator, the app's own model, still answers on a shared server.
"""

from __future__ import annotations

import io
import json
import logging
import socket
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from flowdebug import hosting
from flowdebug.cli.options import setup_logging
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.player_choice import PlayerChoice, make_player
from flowdebug.exchange.exports import FORMATS, export
from flowdebug.players.live.player import live_player
from flowdebug.players.live.route import route
from flowdebug.players.live.settings import LiveSettings
from flowdebug.players.live.wire import Recording, recording_client
from flowdebug.redact import strip_query_credentials, strip_url_credentials
from flowdebug.store.sessions import ENV, open_store
from flowdebug.views.compare import compare
from tests import cases
from tests.players.services import Service
from tests.players.test_live_reach import steps


@pytest.fixture
def shared(monkeypatch):
    monkeypatch.setenv(hosting.SHARED_ENV, "1")
    monkeypatch.delenv(hosting.ALLOWED_BASE_URLS_ENV, raising=False)
    monkeypatch.delenv(hosting.ALLOWED_MCP_URLS_ENV, raising=False)


# -- where the server connects -------------------------------------------------------------------

CLIMBS = ["/../private", "/%2e%2e/private", "/%2E%2E/private", "/.%2e/private", "/./../private"]
CLIMBS += ["/%252e%252e/private", "/..%2fprivate", "\\..\\private"]


@pytest.mark.parametrize("climb", CLIMBS)
def test_a_base_url_climbing_out_of_the_allowed_prefix_is_refused(
    climb, internal, shared, monkeypatch
):
    weather = Session.from_scenario("weather")
    monkeypatch.setenv(hosting.ALLOWED_BASE_URLS_ENV, f"{internal.url}/v1")
    session = steps(weather, "openai-chat", f"{internal.url}/v1{climb}")

    assert internal.hits == []
    assert session.state.status == "halted"
    assert "refused on this shared server (FLOWDEBUG_SHARED=1): the base URL" in (
        session.state.status_text
    )


@pytest.mark.parametrize("climb", CLIMBS)
def test_an_mcp_url_climbing_out_of_the_allowed_prefix_is_refused(climb, shared, monkeypatch):
    monkeypatch.setenv(hosting.ALLOWED_MCP_URLS_ENV, "https://tools.corp.example/mcp")
    assert hosting.mcp_refusal(None, "https://tools.corp.example/mcp/sub", "x") is None
    refused = hosting.mcp_refusal(None, f"https://tools.corp.example/mcp{climb}", "x")
    assert refused is not None
    assert "connect to a URL the host did not allow" in str(refused)


def test_dots_inside_a_path_segment_stay_under_the_prefix():
    assert hosting.within("http://h.example/v1/models/gpt-4.1..x/a.b", "http://h.example/v1")


FORMS = [
    "http://2130706433:{port}/v1",
    "http://0177.0.0.1:{port}/v1",
    "http://0x7f000001:{port}/v1",
    "http://0.0.0.0:{port}/v1",
    "http://[::ffff:127.0.0.1]:{port}/v1",
    "http://[::1]:{port}/v1",
    "http://localhost:{port}/v1",
    "http://LOCALHOST.:{port}/v1",
    "http://%31%32%37.0.0.1:{port}/v1",
    "http://api.openai.com@127.0.0.1:{port}/v1",
    "https://api.openai.com:443@127.0.0.1:{port}/v1",
    "http://127.0.0.1:{port}\\@api.openai.com/v1",
]


@pytest.mark.parametrize("form", FORMS)
def test_no_spelling_of_the_loopback_address_is_reached_on_a_shared_server(
    form, internal, shared, monkeypatch
):
    """The host allowed 127.0.0.1 on another port: none of these reaches the internal one."""
    monkeypatch.setenv(hosting.ALLOWED_BASE_URLS_ENV, "http://127.0.0.1:9/v1")
    port = internal.url.rsplit(":", 1)[1]
    session = steps(Session.from_scenario("weather"), "openai-chat", form.format(port=port))

    assert internal.hits == []
    assert session.state.status == "halted"
    assert "refused on this shared server" in session.state.status_text


def test_a_name_that_does_not_resolve_is_not_resolved_again_unchecked(
    internal, shared, monkeypatch
):
    """DNS rebinding by failure: the first answer is an error, the second the loopback
    address. The connection fails instead of letting the HTTP client ask again."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def rebinding(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != "api.openai.com":
            return real(host, port, *args, **kwargs)
        asked.append(host)
        if len(asked) == 1:
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return real("127.0.0.1", port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    port = internal.url.rsplit(":", 1)[1]
    failure = pytest.raises(httpx2.ConnectError, match="Temporary failure in name resolution")
    with recording_client(httpx2, Recording(), 5, route(None)) as http, failure:
        http.get(f"http://api.openai.com:{port}/v1/models")

    assert asked == ["api.openai.com"]
    assert internal.hits == []


def test_the_offline_emulator_answers_the_compare_page_on_a_shared_server(emulator, shared):
    """The Compare page's offline mode (on by default) mounts a player on the app's own
    emulator and asks it through a live player: the host lists nothing for that."""
    mount = emulator.mount(make_player(PlayerChoice(kind="scripted"), "weather"), "scenario w")
    choice = PlayerChoice(
        kind="live", protocol="openai-chat", base_url=emulator.base_url("openai-chat", mount)
    )
    (row,) = compare(cases.WEATHER_INITIAL, [make_player(choice, "weather")])

    assert row.error is None
    assert [c.name for c in row.calls] == ["get_weather", "get_weather"]
    assert hosting.own_urls() == [emulator.url]
    # Its origin only: another port of the same host stays refused.
    other = emulator.url.rsplit(":", 1)[0] + ":9/v1"
    assert hosting.base_url_refusal(other, None, other) is not None


# -- what is kept --------------------------------------------------------------------------------

SIGNED = (
    "https://bucket.s3.example/o?X-Amz-Credential=AKIA%2F1&X-Amz-Signature=amzsig0123456789"
    "&X-Goog-Signature=googsig0123456789&code=azfunc0123456789&jwt=eyJ0eXAi.x.y&pwd=hunter2"
    "&page=2"
)
SIGNED_CLEAN = (
    "https://bucket.s3.example/o?X-Amz-Credential=[redacted]&X-Amz-Signature=[redacted]"
    "&X-Goog-Signature=[redacted]&code=[redacted]&jwt=[redacted]&pwd=[redacted]&page=2"
)


def test_presigned_signatures_and_other_credential_parameters_are_scrubbed():
    assert strip_url_credentials(SIGNED) == SIGNED_CLEAN
    echoed = "denied: " + SIGNED.split("/", 3)[3]
    assert strip_query_credentials(echoed) == "denied: " + SIGNED_CLEAN.split("/", 3)[3]


def test_a_fragment_credential_is_not_in_the_settings_that_are_kept():
    settings = LiveSettings("openai-chat", base_url="http://gw.example/v1#access_token=fragtok0123")
    assert settings.public()["base_url"] == "http://gw.example/v1#access_token=[redacted]"
    assert strip_query_credentials("at /v1#access_token=fragtok0123") == (
        "at /v1#access_token=[redacted]"
    )


PASSWORD = "Pa55w0rd-0123456789"
BASIC = "YWxpY2U6UGE1NXcwcmQtMDEyMzQ1Njc4OQ=="  # base64 of alice:PASSWORD


def echo_authorization(request: Request) -> Response:
    """An upstream that says back the credentials it was sent."""
    said = f"bad credentials {request.headers.get('authorization')} for {request.url}"
    return JSONResponse({"error": {"message": said, "type": "authentication_error"}}, 401)


@pytest.mark.parametrize("protocol", ["anthropic", "openai-chat"])
def test_a_basic_auth_echo_is_in_no_stored_or_exported_text(protocol, tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, str(tmp_path / "sessions.db"))
    monkeypatch.delenv(hosting.SHARED_ENV, raising=False)
    with Service(echo_authorization) as upstream:
        base = upstream.base_url(protocol).replace("http://", f"http://alice:{PASSWORD}@")
        session = steps(Session.from_scenario("weather"), protocol, base)

    assert session.state.status == "halted"
    assert "bad credentials Basic [redacted] for http://127.0.0.1:" in session.state.status_text
    open_store().save(session.state)
    kept = [
        (tmp_path / "sessions.db").read_bytes().decode("latin-1"),
        session.state.status_text,
        json.dumps(session.state.exchanges),
        *(json.dumps(export(session.state, fmt, protocol).data) for fmt in FORMATS),
    ]
    assert [i for i, text in enumerate(kept) if BASIC in text or PASSWORD in text] == []


@pytest.fixture
def verbose() -> Iterator[io.StringIO]:
    """What ``-vv`` logs during the test (the command's handler, writing here instead of to
    stderr); the loggers as they were afterwards."""
    names = ["flowdebug", "httpx", "httpcore", "httpx2", "openai"]
    saved = {n: (logging.getLogger(n).level, list(logging.getLogger(n).handlers)) for n in names}
    setup_logging(2)
    out = io.StringIO()
    for handler in {
        *logging.getLogger("flowdebug").handlers,
        *logging.getLogger("httpx2").handlers,
    }:
        assert isinstance(handler, logging.StreamHandler)
        handler.setStream(out)
    yield out
    for name, (level, handlers) in saved.items():
        logger = logging.getLogger(name)
        logger.setLevel(level)
        logger.handlers[:] = handlers


def test_verbose_logs_carry_no_url_credentials(emulator, verbose):
    token, signature = "log-token-0123456789", "log-signature-0123456789"
    base = emulator.base_url("openai-chat") + f"?token={token}&X-Amz-Signature={signature}"
    live_player("openai-chat", base_url=base).respond(cases.WEATHER_INITIAL)

    logged = verbose.getvalue()
    assert "flowdebug: httpx2: HTTP Request: POST " in logged
    assert "/v1/chat/completions?token=[redacted]&X-Amz-Signature=[redacted]" in logged
    assert token not in logged and signature not in logged
