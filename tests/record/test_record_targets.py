"""The recording proxy sends a request only to its upstream's host: a request target that is
not a path (``@host/...``, an absolute-form URL, a raw ``%2F`` that decodes to one) is refused
with 400 and reaches no other host, whatever route would take it."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from flowdebug.record.proxy import ForeignTarget, joined, upstream_url
from flowdebug.record.server import RecordingProxy
from flowdebug.record.sessions import Recorder
from flowdebug.store.sessions import open_store
from tests import http_stub


class _Seen(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.server.seen.append(self.path)  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        pass


def _server() -> HTTPServer:
    server = HTTPServer(("127.0.0.1", 0), _Seen)
    server.seen = []  # type: ignore[attr-defined]
    http_stub.start(server)
    return server


@pytest.fixture
def hosts(tmp_path) -> Iterator[tuple[RecordingProxy, HTTPServer, HTTPServer]]:
    upstream, other = _server(), _server()
    with open_store(str(tmp_path / "r.db")) as store:
        recorder = Recorder(store)
        url = f"http://localhost:{upstream.server_port}"
        with RecordingProxy(recorder, upstream=url, mcp_url=url + "/mcp") as proxy:
            yield proxy, upstream, other
        recorder.close()
    for server in (upstream, other):
        http_stub.stop(server)


def _status(proxy: RecordingProxy, method: str, target: str) -> int:
    host, port = proxy.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port))) as s:
        s.sendall(
            f"{method} {target} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
            "Connection: close\r\n\r\n".encode()
        )
        return int(s.recv(100).split(b" ")[1])


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize(
    "target",
    [
        "@127.0.0.1:{port}/v1/messages",
        "%2F@127.0.0.1:{port}/v1/models",
        "http://127.0.0.1:{port}/v1/chat/completions",
        "127.0.0.1:{port}",
        "*",
    ],
)
def test_a_target_that_is_no_path_is_refused_and_reaches_no_other_host(hosts, method, target):
    proxy, upstream, other = hosts
    assert _status(proxy, method, target.format(port=other.server_port)) == 400
    assert other.seen == [] and upstream.seen == []  # type: ignore[attr-defined]


def test_paths_still_reach_the_upstream_unrecorded_and_under_mcp(hosts):
    proxy, upstream, other = hosts
    assert _status(proxy, "GET", "/v1/models?x=@127.0.0.1") == 200
    assert _status(proxy, "GET", "//127.0.0.1/models") == 200
    assert _status(proxy, "GET", "/mcp?session=1") == 200
    # httpx sends "//host/x" after a host as "/host/x": a path either way, on the upstream.
    expected = ["/v1/models?x=@127.0.0.1", "/127.0.0.1/models", "/mcp?session=1"]
    assert upstream.seen == expected  # type: ignore[attr-defined]
    assert other.seen == []  # type: ignore[attr-defined]


def test_joined_keeps_the_base_host_or_refuses():
    assert joined("http://up:8/v1/", "/messages?beta=1") == "http://up:8/v1/messages?beta=1"
    assert joined("http://up:8/mcp", "") == "http://up:8/mcp"
    assert joined("http://up:8/mcp", "?id=2") == "http://up:8/mcp?id=2"
    for target in ("@evil.host/x", "%2F@evil.host/x", "http://evil.host/x", ":9@evil.host/"):
        with pytest.raises(ForeignTarget, match="is not a path"):
            joined("http://up:8", target)
    assert upstream_url("anthropic", "/v1/messages", "http://up:8") == "http://up:8/v1/messages"
    with pytest.raises(ForeignTarget):
        upstream_url("anthropic", "@evil.host/v1/messages", "http://up:8")
