"""Where a live model is reached is the host's choice on a shared server (issue 28).

An attendee who types a base URL must not make the server fetch from where it stands: an
internal service on 127.0.0.1 (a starlette app here, answering what only the inside should
see) is never reached, whichever vendor's SDK is asked, nor through a redirect from a URL the
host allowed, nor when a vendor's own name resolves to the cloud's metadata address. A local
server stays free on a private server, and reachable on a shared one once the host lists it.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx2
import pytest
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from flowdebug import hosting
from flowdebug.engine.session.debugger import Session
from flowdebug.errors import ProviderError
from flowdebug.exchange.exports import export
from flowdebug.hosting import address_kind, address_refusal
from flowdebug.players.live.player import live_player
from flowdebug.players.live.route import route
from flowdebug.players.live.settings import LIVE_PROTOCOLS
from flowdebug.players.live.wire import Recording, recording_client
from tests import cases
from tests.players.services import INTERNAL, Service


@pytest.fixture
def weather() -> Session:
    """The weather scenario, loaded before any test turns shared mode on (what is refused
    here is the base URL, not the scenario's tools)."""
    return Session.from_scenario("weather")


@pytest.fixture
def shared(weather, monkeypatch):
    monkeypatch.setenv(hosting.SHARED_ENV, "1")
    monkeypatch.delenv(hosting.ALLOWED_BASE_URLS_ENV, raising=False)


def steps(session: Session, protocol: str, base_url: str | None, **settings: Any) -> Session:
    """``session`` with ``protocol``'s live player at ``base_url`` as its model, stepped
    through the declaration and the model's turn."""
    session.player = live_player(protocol, base_url=base_url, **settings)
    session.step()
    session.step()
    return session


@pytest.mark.parametrize("protocol", LIVE_PROTOCOLS)
def test_an_internal_service_behind_a_base_url_is_never_reached_on_a_shared_server(
    protocol, internal, weather, shared
):
    session = steps(weather, protocol, internal.base_url(protocol))

    assert internal.hits == []
    assert session.state.status == "halted"
    assert "refused on this shared server (FLOWDEBUG_SHARED=1): the base URL" in (
        session.state.status_text
    )
    assert "FLOWDEBUG_ALLOWED_BASE_URLS: " in session.state.status_text
    trace = json.dumps(export(session.state, "trace", protocol).data)
    assert INTERNAL not in trace and INTERNAL not in json.dumps(session.state.exchanges)


@pytest.fixture
def redirector(internal):
    """A server that sends every request on to the internal service (307)."""

    def away(request: Request) -> Response:
        return RedirectResponse(f"{internal.url}{request.url.path}", status_code=307)

    with Service(away) as service:
        yield service


@pytest.mark.parametrize("protocol", LIVE_PROTOCOLS)
def test_a_redirect_from_an_allowed_url_to_an_internal_service_is_not_followed(
    protocol, internal, redirector, weather, shared, monkeypatch
):
    monkeypatch.setenv(hosting.ALLOWED_BASE_URLS_ENV, redirector.url)
    session = steps(weather, protocol, redirector.base_url(protocol))

    assert redirector.hits, "the allowed URL was reached"
    assert internal.hits == []
    assert session.state.status == "halted"
    assert f"HTTP 307: the server redirects to {internal.url}/" in session.state.status_text
    assert "a live call follows no redirect" in session.state.status_text


@pytest.mark.parametrize("follow", [True, False], ids=["followed", "single"])
def test_every_hop_of_a_live_clients_connection_is_checked_when_it_connects(
    follow, internal, redirector, shared, monkeypatch
):
    """The recording client itself: were a redirect followed (an SDK that asks httpx to), its
    hop to a loopback address the host did not list is refused before it connects."""
    monkeypatch.setenv(hosting.ALLOWED_BASE_URLS_ENV, redirector.url)
    recording = Recording()
    with recording_client(httpx2, recording, 5, route(redirector.url + "/v1")) as http:
        if follow:
            with pytest.raises(hosting.Refused) as refused:
                http.get(redirector.url + "/v1/models", follow_redirects=True)
        else:
            with pytest.raises(hosting.Refused) as refused:
                http.get(internal.url + "/v1/models")

    assert internal.hits == []
    assert redirector.hits == ([f"{redirector.url}/v1/models"] if follow else [])
    port = internal.url.rsplit(":", 1)[1]
    assert str(refused.value) == (
        "refused on this shared server (FLOWDEBUG_SHARED=1): the host 127.0.0.1:"
        f"{port} resolves to 127.0.0.1, a loopback address. The server connects only where "
        f"the host allows (FLOWDEBUG_ALLOWED_BASE_URLS: {redirector.url}); use one of those"
    )


def test_a_private_server_connects_anywhere(internal, redirector, monkeypatch):
    """Without shared mode nothing is checked: the same client follows the redirect to the
    loopback address and reads the internal answer."""
    monkeypatch.delenv(hosting.SHARED_ENV, raising=False)
    with recording_client(httpx2, Recording(), 5, route(redirector.url)) as http:
        answer = http.get(redirector.url + "/v1/models", follow_redirects=True)

    assert answer.json() == {"internal_only": INTERNAL}
    assert internal.hits == [f"{internal.url}/v1/models"]


def test_a_vendor_name_resolving_to_the_metadata_address_is_refused_at_connect_time(
    shared, monkeypatch
):
    real = socket.getaddrinfo

    def poisoned(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "api.openai.com":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("169.254.169.254", port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", poisoned)
    player = live_player("openai-chat", api_key="k", timeout=5)
    with pytest.raises(ProviderError) as failed:
        player.respond(cases.WEATHER_INITIAL)

    assert failed.value.status is None
    assert (
        "the host api.openai.com:443 resolves to 169.254.169.254, a cloud metadata address"
        in failed.value.body
    )


@pytest.mark.parametrize("protocol", LIVE_PROTOCOLS)
def test_a_local_server_the_host_allowed_plays_on_a_shared_server(
    protocol, emulator, weather, shared, monkeypatch
):
    monkeypatch.setenv(hosting.ALLOWED_BASE_URLS_ENV, emulator.url)
    session = steps(weather, protocol, emulator.base_url(protocol))

    assert session.state.status != "halted", session.state.status_text
    calls = session.state.conversation.messages[-1].tool_calls
    assert [c.name for c in calls] == ["get_weather", "get_weather"]


@pytest.mark.parametrize("protocol", LIVE_PROTOCOLS)
def test_a_local_server_needs_no_allowlist_on_a_private_server(
    protocol, emulator, weather, monkeypatch
):
    monkeypatch.delenv(hosting.SHARED_ENV, raising=False)
    monkeypatch.delenv(hosting.ALLOWED_BASE_URLS_ENV, raising=False)
    session = steps(weather, protocol, emulator.base_url(protocol))

    assert session.state.status != "halted", session.state.status_text
    assert session.state.conversation.messages[-1].tool_calls


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("10.2.3.4", "private"),
        ("192.168.1.1", "private"),
        ("fd12::1", "private"),
        ("169.254.169.254", "cloud metadata"),
        ("fd00:ec2::254", "cloud metadata"),
        ("100.100.100.200", "cloud metadata"),
        ("169.254.1.1", "link-local"),
        ("0.0.0.0", "unspecified"),
        ("100.64.0.1", "non-public"),
        ("8.8.8.8", None),
        ("2606:4700:4700::1111", None),
        # IPv6 addresses carrying an IPv4 one are named for it (issue 28, attacked).
        ("::127.0.0.1", "loopback"),
        ("::ffff:0:7f00:1", "loopback"),
        ("64:ff9b::7f00:1", "loopback"),
        ("2002:7f00:1::1", "loopback"),
        ("64:ff9b::a9fe:a9fe", "cloud metadata"),
        ("2002:a9fe:a9fe::", "cloud metadata"),
        ("::10.0.0.1", "private"),
        ("fec0::1", "private"),
        ("fe80::1%eth0", "link-local"),
        ("64:ff9b::808:808", None),
        ("2002:808:808::1", None),
    ],
)
def test_addresses_are_named_for_what_they_are(address, kind):
    assert address_kind(address) == kind


def test_an_allowlisted_host_and_port_may_resolve_to_a_private_address(shared, monkeypatch):
    monkeypatch.setenv(hosting.ALLOWED_BASE_URLS_ENV, "http://ollama.lan:11434/v1")
    allowed = hosting.allowed_base_urls()
    assert address_refusal("ollama.lan", 11434, "10.0.0.5", allowed) is None
    refused = address_refusal("ollama.lan", 8080, "10.0.0.5", allowed)
    assert refused is not None
    assert "the host ollama.lan:8080 resolves to 10.0.0.5, a private address" in str(refused)
    assert address_refusal("api.openai.com", 443, "104.18.7.192", allowed) is None


def test_mcp_urls_and_base_urls_are_judged_by_one_rule(shared, monkeypatch):
    monkeypatch.setenv(hosting.ALLOWED_MCP_URLS_ENV, "https://tools.corp.example/api")
    monkeypatch.setenv(hosting.ALLOWED_BASE_URLS_ENV, "https://tools.corp.example/api")
    verdicts = {
        "https://tools.corp.example:443/api/v1": True,
        "HTTPS://TOOLS.corp.example/api": True,
        "https://tools.corp.example/api-evil": False,
        "https://tools.corp.example.evil.example/api": False,
        "https://u:p@tools.corp.example/api": False,
        "http://tools.corp.example/api": False,
    }
    for url, allowed in verdicts.items():
        assert (hosting.mcp_refusal(None, url, "x") is None) == allowed, url
        assert (hosting.base_url_refusal(url, None, url) is None) == allowed, url
