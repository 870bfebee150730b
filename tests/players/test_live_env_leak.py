"""Nothing of the server's environment reaches a base URL typed in the app: not the key
(tests/players/test_live_keys.py) and not what the SDKs add by themselves from the environment
(custom headers that may carry an Authorization, account and project ids, other credentials).

The SDK sources read (installed versions): anthropic reads ANTHROPIC_API_KEY,
ANTHROPIC_AUTH_TOKEN (only without an explicit key), ANTHROPIC_BASE_URL (only without a base
URL) and ANTHROPIC_CUSTOM_HEADERS (always); openai reads OPENAI_API_KEY, OPENAI_ADMIN_KEY,
OPENAI_ORG_ID, OPENAI_PROJECT_ID, OPENAI_BASE_URL and OPENAI_CUSTOM_HEADERS; google-genai
reads GOOGLE_API_KEY / GEMINI_API_KEY (only without an explicit key) and the Vertex variables
(only with vertexai, which flowdebug turns off).
"""

from __future__ import annotations

import json

import pytest

from flowdebug.players.live.keys import ALLOWED_ENV, env_header_names
from flowdebug.players.live.player import live_player
from tests import cases

RECORDING = {
    "anthropic": "tool_use",
    "openai-chat": "tool_calls",
    "openai-responses": "function_calls",
    "gemini": "function_calls",
}
# Every value below is the host's: none may arrive at a URL someone typed.
HOST = {
    "ANTHROPIC_API_KEY": "host-anthropic-key-0123456789",
    "ANTHROPIC_AUTH_TOKEN": "host-anthropic-token-0123456789",
    "ANTHROPIC_CUSTOM_HEADERS": (
        "X-Host-Gateway: host-gw-anthropic-0123\nAuthorization: Bearer host-hdr-anthropic-0123"
    ),
    "OPENAI_API_KEY": "host-openai-key-0123456789",
    "OPENAI_ADMIN_KEY": "host-openai-admin-0123456789",
    "OPENAI_ORG_ID": "org-host-0123456789",
    "OPENAI_PROJECT_ID": "proj-host-0123456789",
    "OPENAI_CUSTOM_HEADERS": (
        "X-Host-Gateway: host-gw-openai-0123\nAuthorization: Bearer host-hdr-openai-0123"
    ),
    "GEMINI_API_KEY": "host-gemini-key-0123456789",
    "GOOGLE_API_KEY": "host-google-key-0123456789",
    "GOOGLE_CLOUD_PROJECT": "host-gcp-project-0123",
}
MARKERS = [
    "host-anthropic-key",
    "host-anthropic-token",
    "host-gw-anthropic",
    "host-hdr-anthropic",
    "host-openai-key",
    "host-openai-admin",
    "org-host",
    "proj-host",
    "host-gw-openai",
    "host-hdr-openai",
    "host-gemini-key",
    "host-google-key",
    "host-gcp-project",
]


PROTOCOLS = list(RECORDING)


@pytest.fixture
def host_env(monkeypatch):
    for name, value in HOST.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv(ALLOWED_ENV, raising=False)


def arrived(server) -> str:
    return json.dumps([server.heard, server.received])


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_nothing_of_the_host_environment_reaches_a_typed_base_url(
    server, host_env, protocol, stream
):
    player = live_player(
        protocol, base_url=server.base_url(protocol), model=RECORDING[protocol], stream=stream
    )
    turn = player.respond(cases.WEATHER_INITIAL)

    assert turn.exchange.status == 200
    assert server.heard, "the typed URL was reached"
    leaked = [m for m in MARKERS if m in arrived(server)]
    assert leaked == []
    assert "x-host-gateway" not in server.heard[-1]["headers"]


@pytest.mark.parametrize("protocol", ["anthropic", "openai-chat"])
def test_the_host_headers_still_go_where_its_key_may(server, host_env, monkeypatch, protocol):
    """An allowlisted URL is the host's own gateway: its headers are meant for it."""
    monkeypatch.setenv(ALLOWED_ENV, server.url)
    player = live_player(protocol, base_url=server.base_url(protocol), model=RECORDING[protocol])
    player.respond(cases.WEATHER_INITIAL)

    gateway = server.heard[-1]["headers"].get("x-host-gateway", "")
    assert gateway.startswith("host-gw-")


def test_the_header_names_are_read_the_way_the_sdks_read_them(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", "A: 1\nno colon\n B-2 :x:y\n: empty")
    assert env_header_names("anthropic") == ["A", "B-2"]
    monkeypatch.delenv("OPENAI_CUSTOM_HEADERS", raising=False)
    assert env_header_names("openai-chat") == []
    assert env_header_names("gemini") == []
