"""Credentials inside a URL (``user:pass@``, ``?key=``, ``?api_key=``, ``&token=``) never reach
what flowdebug stores or exports: an MCP server's URL in a session's tools, a URL quoted in the
conversation or a result, a live base URL (tests/test_live_keys.py follows that one onto the
wire). One test per place: the session rows, each export format, the trace document."""

from __future__ import annotations

import json

import pytest

from flowdebug.engine.debugger import Session
from flowdebug.engine.handlers import McpHandler, ToolEntry
from flowdebug.exchange.exports import FORMATS, export
from flowdebug.mcp.spec import McpServerSpec
from flowdebug.model import Message, Text, Tool
from flowdebug.redact import redact_json_text, redact_text, strip_urls_in_text
from flowdebug.store.sessions import Store

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
