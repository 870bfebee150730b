"""``flowdebug record --forward``: the real anthropic, openai, google-genai and botocore clients,
configured by nothing but ``HTTPS_PROXY`` and the CA variable (``SSL_CERT_FILE``; botocore's
``AWS_CA_BUNDLE``), call their vendor's own host; the forward proxy reads
their TLS with its CA's certificate for that host and records every exchange; other hosts pass
through untouched and unrecorded.

Only here, the vendors' hosts go to the local emulator (the proxy's ``upstreams``, a testing
aid): nothing reaches the network, and no name is resolved.
"""

from __future__ import annotations

import json
import socket
import ssl
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any
from urllib.parse import urlsplit

import anthropic
import botocore.session
import httpx
import openai
import pytest

from flowdebug import protocols
from flowdebug.cli.main import main
from flowdebug.players.live.gemini import sdk_arguments as gemini_arguments
from flowdebug.players.live.wire import split_parameters
from flowdebug.record.certs import Authority
from flowdebug.record.exchanges import raw_body
from flowdebug.record.forward import ForwardProxy, vendor_upstreams
from flowdebug.record.sessions import Recorder
from flowdebug.store.sessions import open_store
from tests import cases, http_stub

KEY = "sk-flowdebug-forward-test-0123456789"
SECRET = "forward-test-secret-access-key-0123"


@pytest.fixture
def forward(tmp_path, emulator, monkeypatch):
    authority = Authority(tmp_path / "ca")
    hosts = {host: emulator.url for host in vendor_upstreams()}
    with open_store(str(tmp_path / "r.db")) as store:
        recorder = Recorder(store, "forward")
        with ForwardProxy(recorder, authority=authority, upstreams=hosts) as proxy:
            for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTP_PROXY"):
                monkeypatch.delenv(name, raising=False)
            monkeypatch.setenv("HTTPS_PROXY", proxy.url)
            monkeypatch.setenv("SSL_CERT_FILE", str(authority.bundle_path))
            monkeypatch.setenv("AWS_CA_BUNDLE", str(authority.bundle_path))  # botocore's
            yield proxy, recorder, store
        recorder.close()


def _anthropic(body: dict, stream: bool) -> Any:
    client = anthropic.Anthropic(api_key=KEY, max_retries=0)
    return _create(client.messages.create, body, stream), client.base_url.host


def _openai(body: dict, stream: bool) -> Any:
    client = openai.OpenAI(api_key=KEY, max_retries=0)
    return _create(client.chat.completions.create, body, stream), client.base_url.host


def _create(create: Any, body: dict, stream: bool) -> Any:
    kwargs, extra = split_parameters(create, {**body, "stream": True} if stream else body)
    answer = create(**kwargs, **extra)
    if stream:
        return [e.model_dump(mode="json", exclude_unset=True) for e in answer]
    return answer.model_dump(mode="json", exclude_unset=True)


def _gemini(body: dict, stream: bool) -> Any:
    from google import genai

    client = genai.Client(api_key=KEY, vertexai=False)
    contents, config = gemini_arguments(body)
    model = protocols.facts(GEMINI).default_model
    if stream:
        chunks = client.models.generate_content_stream(model=model, contents=contents,
                                                       config=config)  # fmt: skip
        return [c.model_dump(mode="json", exclude_none=True) for c in chunks], None
    answer = client.models.generate_content(model=model, contents=contents, config=config)
    return answer.model_dump(mode="json", exclude_none=True), None


def _bedrock(body: dict, stream: bool) -> Any:
    client = botocore.session.Session().create_client(
        "bedrock-runtime", region_name="us-east-1", aws_access_key_id="AKIAFORWARDTEST00001",
        aws_secret_access_key=SECRET,
    )  # fmt: skip
    model = protocols.facts(BEDROCK).default_model
    if stream:
        answer = client.converse_stream(modelId=model, **body)
        return [e for e in answer["stream"]], client.meta.endpoint_url
    answer = client.converse(modelId=model, **body)
    return answer, client.meta.endpoint_url


GEMINI, BEDROCK = "gemini", "bedrock"
SDKS = {"anthropic": _anthropic, "openai-chat": _openai, GEMINI: _gemini, BEDROCK: _bedrock}


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("protocol", list(SDKS))
def test_an_sdk_set_up_by_proxy_variables_alone_is_recorded_on_its_vendor_host(
    forward, protocol, stream
):
    _, recorder, store = forward
    body = protocols.get(protocol).encode_request(cases.WEATHER_INITIAL).value
    answer, where = SDKS[protocol](body, stream)
    assert answer
    recorder.flush()

    [info] = store.list()
    [exchange] = store.load(info.id).exchanges
    assert exchange["protocol"] == protocol
    # The SDK called its vendor's own host, which the proxy sent on (here, to the emulator).
    host = urlsplit(protocols.facts(protocol).base_url or "").hostname
    assert where is None or host in str(where)
    assert exchange["status"] == 200
    assert KEY not in json.dumps(exchange) and SECRET not in json.dumps(exchange)
    if stream:
        assert exchange["stream_events"] and exchange["response"] is None
    else:
        assert exchange["response"] is not None
    if protocol in ("anthropic", "openai-chat"):
        sent = {**body, "stream": True} if stream else body
        assert json.loads(raw_body(exchange, "raw_request") or b"") == sent
        if not stream:
            assert exchange["response"] == answer
    # The session draws the agent's call like any other.
    state = store.load(info.id)
    assert [m.role for m in state.conversation.messages] == ["user", "assistant"]
    assert [t.name for t in state.conversation.tools] == [
        t.name for t in cases.WEATHER_INITIAL.tools
    ]


class _Echo(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"path": self.path, "via": self.headers.get("x-via")}).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def other_host():
    with http_stub.serving(HTTPServer(("127.0.0.1", 0), _Echo)) as server:
        yield server


def test_other_hosts_pass_through_untouched_and_unrecorded(forward, other_host):
    proxy, recorder, store = forward
    port = other_host.server_port
    # A CONNECT tunnel to a host the proxy does not record: the bytes go as they are (here
    # plain HTTP inside the tunnel: no TLS is read or made).
    host, proxy_port = urlsplit(proxy.url).hostname, urlsplit(proxy.url).port
    with socket.create_connection((host, proxy_port)) as s:
        s.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        assert s.recv(100).startswith(b"HTTP/1.1 200 ")
        s.sendall(
            b"GET /inside?q=1 HTTP/1.1\r\nHost: x\r\nX-Via: tunnel\r\nConnection: close\r\n\r\n"
        )
        answer = b""
        while chunk := s.recv(4096):
            answer += chunk
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1]) == {"path": "/inside?q=1", "via": "tunnel"}
    # A plain http:// request through the same proxy (HTTP_PROXY).
    with httpx.Client(proxy=proxy.url) as client:
        got = client.get(f"http://127.0.0.1:{port}/plain?x=2", headers={"x-via": "proxy"})
    assert got.json() == {"path": "/plain?x=2", "via": "proxy"}
    recorder.flush()
    assert store.list() == []


def test_a_vendor_host_is_served_with_a_certificate_from_the_ca_and_no_other_host_inside(forward):
    proxy, _, _ = forward
    [host, *_] = sorted(vendor_upstreams())
    context = ssl.create_default_context(cafile=str(proxy.authority.cert_path))
    with socket.create_connection((urlsplit(proxy.url).hostname, urlsplit(proxy.url).port)) as s:
        s.sendall(f"CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n".encode())
        assert s.recv(100).startswith(b"HTTP/1.1 200 ")
        with context.wrap_socket(s, server_hostname=host) as tls:
            cert = tls.getpeercert()
            # Inside the tunnel, a Host the proxy does not record goes nowhere.
            tls.sendall(b"GET /v1/models HTTP/1.1\r\nHost: elsewhere.example\r\n\r\n")
            status = tls.recv(100).split(b" ")[1]
    assert dict(x[0] for x in cert["issuer"])["commonName"] == "flowdebug recording proxy CA"
    assert cert["subjectAltName"] == (("DNS", host),)
    assert status == b"421"


def test_record_ca_prints_where_the_ca_is_and_how_each_runtime_trusts_it(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert main(["record", "--ca"]) == 0
    out = capsys.readouterr().out
    ca = tmp_path / "flowdebug" / "ca"
    cert, bundle = ca / "flowdebug-ca.pem", ca / "flowdebug-ca-bundle.pem"
    assert f"export SSL_CERT_FILE={bundle}" in out
    assert f"export REQUESTS_CA_BUNDLE={bundle}" in out
    assert f"export AWS_CA_BUNDLE={bundle}" in out
    assert f"export NODE_EXTRA_CA_CERTS={cert}" in out
    assert f"curl --cacert {bundle}" in out
    assert cert.read_bytes() in bundle.read_bytes()
    assert (ca / "flowdebug-ca-key.pem").stat().st_mode & 0o077 == 0
    # A second call keeps the same CA (agents already trust it).
    before = cert.read_bytes()
    assert main(["record", "--ca"]) == 0
    assert cert.read_bytes() == before
