"""A local server that answers with RECORDED vendor payloads, for testing the live players.

Independent of the emulator and of the codecs: it serves, byte for byte, the response and
stream files recorded from (or published by) the vendors — ``tests/fixtures/wire`` and
``tests/fixtures/real`` — so the SDK clients and the wire capture meet payloads flowdebug did
not produce. The model name picks the recording: a non-streaming request for model ``NAME``
gets ``<protocol>.response.NAME.json``; a streaming one gets ``<protocol>.stream.NAME.json``
framed as server-sent events, the way each vendor frames them (``event:`` lines for
Anthropic and Responses, ``data: [DONE]`` for Chat, CRLF line ends for Gemini), written in
small chunks so that events straddle reads.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests import http_stub
from tests.paths import REAL
from tests.paths import WIRE as REFERENCE

LIVE = ("anthropic", "openai-chat", "openai-responses", "gemini")
CHUNK = 7  # bytes per write: small enough to split lines, CRLFs and UTF-8 sequences


def catalog() -> dict[tuple[str, str, str], Path]:
    """``(protocol, kind, name) -> file`` for every recorded response and stream."""
    found: dict[tuple[str, str, str], Path] = {}
    for folder in (REFERENCE, REAL):
        for path in sorted(folder.glob("*.json")) if folder.exists() else []:
            m = re.fullmatch(r"([a-z_-]+)\.(response|stream)\.([^.]+)\.json", path.name)
            if m and m.group(1).replace("_", "-") in LIVE:
                found[(m.group(1).replace("_", "-"), m.group(2), m.group(3))] = path
    return found


def unwrap(event: Any) -> Any:
    """A stream item's data object (the reference stores Anthropic's as {event, data})."""
    if isinstance(event, dict) and set(event) == {"event", "data"}:
        return event["data"]
    return event


def sse_frames(protocol: str, events: list[Any]) -> bytes:
    frames = []
    for item in events:
        event = unwrap(item)
        data = json.dumps(event, ensure_ascii=False)
        if protocol in ("anthropic", "openai-responses"):
            frames.append(f"event: {event['type']}\ndata: {data}\n\n")
        elif protocol == "gemini":
            frames.append(f"data: {data}\r\n\r\n")
        else:
            frames.append(f"data: {data}\n\n")
    if protocol == "openai-chat":
        frames.append("data: [DONE]\n\n")
    return "".join(frames).encode()


class _Handler(BaseHTTPRequestHandler):
    server: RecordedServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.server.heard.append({"line": self.requestline, "path": self.path, "headers": headers})
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
        path = self.path.split("?")[0]
        gemini = re.fullmatch(r"/v1(?:beta)?/models/([^:]+):(\w+)", path)
        if gemini:
            protocol, name = "gemini", gemini.group(1)
            stream = gemini.group(2) == "streamGenerateContent"
        else:
            protocol = {
                "/v1/messages": "anthropic",
                "/v1/chat/completions": "openai-chat",
                "/v1/responses": "openai-responses",
            }[path]
            name, stream = body["model"], body.get("stream") is True
        self.server.received.append({"protocol": protocol, "path": self.path, "body": body})
        file = self.server.files.get((protocol, "stream" if stream else "response", name))
        if file is None:
            data = json.dumps({"error": {"message": f"no recording {name!r}"}}).encode()
            self._start(404, "application/json", len(data))
            self.wfile.write(data)
            return
        payload = json.loads(file.read_text(encoding="utf-8"))
        if not stream:
            data = json.dumps(payload, ensure_ascii=False).encode()
            self._start(200, "application/json", len(data))
            self.wfile.write(data)
            return
        data = sse_frames(protocol, payload)
        self._start(200, "text/event-stream", None)
        for i in range(0, len(data), CHUNK):
            self.wfile.write(data[i : i + CHUNK])
            self.wfile.flush()

    def _start(self, status: int, content_type: str, length: int | None) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        if length is None:
            self.send_header("connection", "close")
            self.close_connection = True
        else:
            self.send_header("content-length", str(length))
        self.end_headers()


class RecordedServer(ThreadingHTTPServer):
    """``with RecordedServer() as server:`` serves on 127.0.0.1, a free port."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.files = catalog()
        self.received: list[dict[str, Any]] = []
        # Every request as it arrived, before its body is read: line, path, headers (lower-case).
        self.heard: list[dict[str, Any]] = []
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def base_url(self, protocol: str) -> str:
        return f"{self.url}/v1" if protocol.startswith("openai") else self.url

    def __enter__(self) -> RecordedServer:
        self._thread = http_stub.start(self)
        return self

    def __exit__(self, *exc: object) -> None:
        http_stub.stop(self, self._thread)
