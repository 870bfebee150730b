"""The server's environment key goes only to the vendor or a URL the host allowed; the
credentials a typed base URL carries are used on the wire and kept nowhere.

A recorded-payload server on 127.0.0.1 stands for "a base URL someone typed": it notes every
request's path, headers and body, so the tests read what really arrived.
"""

from __future__ import annotations

import json

import pytest

from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.player_choice import PlayerChoice
from flowdebug.exchange.exports import FORMATS, export
from flowdebug.players.live.keys import ALLOWED_ENV, env_key_allowed, within
from flowdebug.players.live.player import LiveSettings, live_player
from flowdebug.redact import register_secret, strip_url_credentials, url_secrets
from flowdebug.store.sessions import Store
from tests import cases

LIVE = ["anthropic", "openai-chat", "openai-responses", "gemini"]
RECORDING = {
    "anthropic": "tool_use",
    "openai-chat": "tool_calls",
    "openai-responses": "function_calls",
    "gemini": "function_calls",
}
ENV_KEY = "sk-server-own-env-key-0123456789"
ENV_VARS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
)


@pytest.fixture
def env_key(monkeypatch):
    for var in ENV_VARS:
        monkeypatch.setenv(var, ENV_KEY)
    monkeypatch.setenv("OPENAI_ORG_ID", "org-of-the-host")
    monkeypatch.delenv(ALLOWED_ENV, raising=False)
    return ENV_KEY


def _arrived(server) -> str:
    return json.dumps([server.heard, server.received])


@pytest.mark.parametrize("protocol", LIVE)
def test_the_environment_key_never_goes_to_a_typed_base_url(server, env_key, protocol):
    p = live_player(protocol, base_url=server.base_url(protocol), model=RECORDING[protocol])
    turn = p.respond(cases.WEATHER_INITIAL)

    assert turn.exchange.status == 200  # the local server answered and the turn was decoded
    assert server.heard
    assert env_key not in _arrived(server)
    assert "org-of-the-host" not in _arrived(server)
    assert p.settings.key_source == "placeholder"


@pytest.mark.parametrize("protocol", LIVE)
def test_the_environment_key_goes_to_an_allowlisted_base_url(
    server, env_key, monkeypatch, protocol
):
    monkeypatch.setenv(ALLOWED_ENV, f"https://proxy.example/llm, {server.url}")
    p = live_player(protocol, base_url=server.base_url(protocol), model=RECORDING[protocol])
    p.respond(cases.WEATHER_INITIAL)

    assert env_key in json.dumps(server.heard)
    assert p.settings.key_source != "placeholder"


def test_a_typed_key_goes_to_a_typed_base_url(server, env_key):
    p = live_player(
        "openai-chat", base_url=server.base_url("openai-chat"), model="tool_calls", api_key="typed"
    )
    p.respond(cases.WEATHER_INITIAL)

    assert server.heard[-1]["headers"]["authorization"] == "Bearer typed"


def test_without_a_base_url_the_environment_key_is_used(env_key):
    assert LiveSettings("anthropic").resolve_key() == env_key
    assert (
        LiveSettings("openai-chat", base_url="https://api.openai.com/v1").resolve_key() == env_key
    )
    assert LiveSettings("openai-chat", base_url="http://127.0.0.1:1/v1").resolve_key() == "no-key"


@pytest.mark.parametrize(
    "url",
    [
        "https://api.openai.com.evil.example/v1",
        "https://api.openai.com@evil.example/v1",
        "https://user:pw@api.openai.com/v1",
        "http://api.openai.com/v1",
        "https://api.openai.com:8443/v1",
        "https://api.openai.com/v10",
        "https://evil.example/https://api.openai.com/v1",
        "not a url",
    ],
)
def test_lookalikes_of_the_vendor_url_are_not_trusted(url):
    assert not env_key_allowed("openai-chat", url)


def test_allowlist_prefixes_match_as_urls(monkeypatch):
    monkeypatch.setenv(ALLOWED_ENV, "https://gw.corp.example/openai/,http://127.0.0.1:8080")
    assert env_key_allowed("openai-chat", "https://gw.corp.example/openai/v1")
    assert env_key_allowed("openai-chat", "HTTPS://GW.corp.example:443/openai")
    assert env_key_allowed("gemini", "http://127.0.0.1:8080")
    assert not env_key_allowed("openai-chat", "https://gw.corp.example/openai-evil/v1")
    assert not env_key_allowed("openai-chat", "http://127.0.0.1:8081/v1")
    assert within("https://api.anthropic.com/", "https://api.anthropic.com")


def test_url_credentials_are_stripped_for_display():
    url = "https://bob:hunter2-long-pass@gw.example/v1?api_key=abc&token=t0k&x=1&key=k"
    assert strip_url_credentials(url) == (
        "https://gw.example/v1?api_key=[redacted]&token=[redacted]&x=1&key=[redacted]"
    )
    basic = "Ym9iOmh1bnRlcjItbG9uZy1wYXNz"  # bob:hunter2-long-pass, as Authorization: Basic
    assert sorted(url_secrets(url)) == sorted(["hunter2-long-pass", "abc", "t0k", "k", basic])
    assert strip_url_credentials("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"


PASSWORD = "url-password-0123456789"
QUERY_KEY = "url-query-key-0123456789"


def test_credentials_in_a_typed_url_reach_the_wire_but_no_store_or_export(server, tmp_path):
    netloc = server.url.replace("http://", f"http://alice:{PASSWORD}@")
    choice = PlayerChoice(kind="live", protocol="gemini", base_url=f"{netloc}?key={QUERY_KEY}")
    for secret in url_secrets(choice.base_url):
        register_secret(secret)  # what the sidebar does when the player is applied
    settings = LiveSettings("gemini", base_url=choice.base_url, model="function_calls")
    session = Session.from_scenario("weather")
    session.player = live_player("gemini", base_url=choice.base_url, model="function_calls")
    session.step()
    session.step()

    # httpx turns user:password into a Basic Authorization header: the server got them.
    assert all(h["headers"].get("authorization", "").startswith("Basic ") for h in server.heard)
    kept = [
        repr(settings),
        json.dumps(settings.public()),
        json.dumps(choice.public()),
        choice.label(),
        json.dumps(session.state.exchanges),
    ]
    store = Store(str(tmp_path / "s.db"))
    store.save(session.state)
    kept.append((tmp_path / "s.db").read_bytes().decode("latin-1"))
    kept.append(json.dumps(store.load(session.state.id).model_dump(mode="json")))
    kept += [str(export(session.state, fmt, "gemini").data) for fmt in FORMATS]
    assert session.state.exchanges, "the live step reached the server"
    for text in kept:
        assert PASSWORD not in text and QUERY_KEY not in text
    assert "alice" not in json.dumps(session.state.exchanges)
