"""Credentials inside a URL (``user:pass@``, ``?key=``, ``?api_key=``, ``&token=``) never reach
what flowdebug stores or exports: an MCP server's URL in a session's tools, a URL quoted in the
conversation or a result, a live base URL (tests/players/test_live_keys.py follows that one onto the
wire). One test per place: the session rows, each export format, the trace document."""

from __future__ import annotations

import json

import httpx2
import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from flowdebug import hosting
from flowdebug.engine.execution.handlers import McpHandler, ToolEntry
from flowdebug.engine.session.debugger import Session
from flowdebug.exchange.exports import FORMATS, export
from flowdebug.mcp.spec import McpServerSpec
from flowdebug.model import Message, Text, Tool
from flowdebug.players.live.player import live_player
from flowdebug.players.live.route import route
from flowdebug.players.live.settings import LIVE_PROTOCOLS
from flowdebug.redact import (
    redact_json_text,
    redact_text,
    strip_query_credentials,
    strip_urls_in_text,
)
from flowdebug.store.sessions import ENV, Store, open_store
from tests import cases
from tests.players.services import Service

SECRETS = ["mcp-pass-0123456789", "mcp-token-0123456789", "quoted-key-0123456789", "gh-user-tok"]
MCP_URL = "https://mcpuser:mcp-pass-0123456789@mcp.example/mcp?token=mcp-token-0123456789&v=2"
QUOTED = (
    "fetched https://api.example/v1/items?api_key=quoted-key-0123456789&page=2 and "
    "cloned https://gh-user-tok@git.example/repo.git"
)


@pytest.fixture
def session() -> Session:
    s = Session.from_scenario("weather")
    state = s.state
    entry = ToolEntry(
        tool=Tool(name="lookup", description="an MCP tool"),
        handler=McpHandler(server=McpServerSpec(url=MCP_URL), tool="lookup"),
    )
    state.toolset = state.toolset.model_copy(update={"entries": [*state.toolset.entries, entry]})
    said = Message(role="user", parts=[Text(text=QUOTED)])
    conv = state.conversation
    state.conversation = conv.model_copy(update={"messages": [*conv.messages, said]})
    return s


def leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def test_the_session_rows_keep_no_url_credentials(session, tmp_path):
    db = tmp_path / "sessions.db"
    store = Store(str(db))
    store.save(session.state)

    raw = db.read_bytes().decode("latin-1")
    assert leaks(raw) == []
    loaded = store.load(session.state.id)
    server = loaded.toolset.entries[-1].handler.server  # type: ignore[union-attr]
    assert server.url == "https://mcp.example/mcp?token=[redacted]&v=2"
    assert "https://api.example/v1/items?api_key=[redacted]&page=2" in json.dumps(
        loaded.conversation.model_dump(mode="json")
    )
    assert session.state.toolset.entries[-1].handler.server.url == MCP_URL  # type: ignore[union-attr]


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_export_format_carries_url_credentials(session, fmt):
    data = export(session.state, fmt, "anthropic").data
    text = data if isinstance(data, str) else json.dumps(data)
    assert leaks(text) == []


def test_the_trace_keeps_the_url_without_its_credentials(session):
    data = export(session.state, "trace", "openai-chat").data
    text = data if isinstance(data, str) else json.dumps(data)
    assert "https://mcp.example/mcp?token=[redacted]&v=2" in text


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("no url here", "no url here"),
        ("http://127.0.0.1:8000/v1?x=1", "http://127.0.0.1:8000/v1?x=1"),
        ("see http://a:b@h/p.", "see http://h/p."),
        ('{"u":"http://h/?key=k\\"x"}', '{"u":"http://h/?key=[redacted]\\"x"}'),
        ("http://@host/p", "http://host/p"),
        ("://a@b", "://a@b"),
    ],
)
def test_urls_in_text_lose_their_credentials_and_json_stays_json(text, want):
    assert strip_urls_in_text(text) == want
    assert redact_text(text, []) == want
    if text.startswith("{"):
        assert json.loads(redact_json_text(text, []))["u"] == 'http://h/?key=[redacted]"x'


# -- a base URL's query, on the wire and after a live step fails (issue 28 item 2) ---------

TOKEN = "SECRET-query-token-0123456789"


def echo_404(request: Request) -> Response:
    """What an upstream says about a path it does not serve: the path and query it was sent
    (no scheme: the form no URL scrubbing recognises) and the whole URL."""
    said = f"no route for {request.url.path}?{request.url.query} ({request.url})"
    return JSONResponse({"error": {"message": said, "type": "not_found_error"}}, status_code=404)


@pytest.mark.parametrize("param", ["token", "api-key"])
@pytest.mark.parametrize("protocol", LIVE_PROTOCOLS)
def test_a_query_credential_is_in_no_stored_or_exported_text_after_a_failing_live_step(
    protocol, param, tmp_path, monkeypatch
):
    monkeypatch.setenv(ENV, str(tmp_path / "sessions.db"))
    monkeypatch.delenv(hosting.SHARED_ENV, raising=False)
    session = Session.from_scenario("weather")
    with Service(echo_404) as upstream:
        base = f"{upstream.base_url(protocol)}?{param}={TOKEN}&v=2"
        session.player = live_player(protocol, base_url=base)
        session.step()
        session.step()

    # The query went on the request as a query, after the SDK's own path.
    (heard,) = upstream.hits
    path, _, query = heard.partition("?")
    assert path.startswith(upstream.url + "/") and TOKEN not in path
    assert f"{param}={TOKEN}" in query.split("&")
    assert session.state.status == "halted"
    said = session.state.events[-1].data["message"]
    assert said.startswith("not_found_error: no route for /")
    assert f"?{param}=[redacted]&v=2 (http://127.0.0.1:" in said
    assert f"{param}=[redacted]" in session.state.status_text

    open_store().save(session.state)
    kept = [
        (tmp_path / "sessions.db").read_bytes().decode("latin-1"),
        session.state.status_text,
        json.dumps(session.state.exchanges),
        *(json.dumps(export(session.state, fmt, protocol).data) for fmt in FORMATS),
    ]
    assert [i for i, text in enumerate(kept) if TOKEN in text] == []


def test_a_base_url_with_a_query_plays_openai_chat_on_a_local_server(emulator):
    base = emulator.base_url("openai-chat") + "?api-key=gateway-key-0123456789"
    turn = live_player("openai-chat", base_url=base).respond(cases.WEATHER_INITIAL)

    calls = [(c.name, c.arguments["location"]) for c in turn.response.message.tool_calls]
    assert calls == [("get_weather", "Paris"), ("get_weather", "Tokyo")]
    assert turn.exchange.url == f"{emulator.url}/v1/chat/completions?api-key=[redacted]"
    assert turn.exchange.status == 200


def test_the_base_urls_query_goes_only_to_the_base_urls_origin():
    way = route("http://gw.example:8080/v1?token=t0k&v=2")
    assert way.base_url == "http://gw.example:8080/v1"

    same = httpx2.Request("POST", "http://gw.example:8080/v1/chat/completions?stream=1")
    way.add_query(same)
    assert str(same.url) == "http://gw.example:8080/v1/chat/completions?stream=1&token=t0k&v=2"
    elsewhere = httpx2.Request("GET", "http://other.example:8080/v1/models")
    way.add_query(elsewhere)
    assert str(elsewhere.url) == "http://other.example:8080/v1/models"


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("Not found: /v1/?token=abc123chat/completions", "Not found: /v1/?token=[redacted]"),
        (
            '{"m": "GET /x?a=1&api-key=zz&sig=s1#f"}',
            '{"m": "GET /x?a=1&api-key=[redacted]&sig=[redacted]#f"}',
        ),
        ("a?access_token=q&x=y&password=p", "a?access_token=[redacted]&x=y&password=[redacted]"),
        ("max_tokens=5 and ?max_tokens=7&page=2", "max_tokens=5 and ?max_tokens=7&page=2"),
        ("already ?key=[redacted]", "already ?key=[redacted]"),
        ("no query at all", "no query at all"),
    ],
)
def test_credential_query_values_are_scrubbed_with_or_without_their_url(text, want):
    assert strip_query_credentials(text) == want
