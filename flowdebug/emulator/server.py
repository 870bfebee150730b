"""A local server speaking the vendors' model APIs, played by a scripted model.

``flowdebug emulate --port N --scenario weather`` lets the whole live path run offline: the
app (or any SDK) points its ``base_url`` here. Routes:

- ``POST /v1/messages``                                  Anthropic Messages
- ``POST /v1/chat/completions``                          OpenAI Chat Completions
- ``POST /v1/responses``                                 OpenAI Responses
- ``POST /{v1,v1beta}/models/{model}:generateContent``   Gemini
- ``POST /{v1,v1beta}/models/{model}:streamGenerateContent?alt=sse``

(the OpenAI routes also without ``/v1``). Each request is decoded with the protocol's codec,
the player answers the decoded conversation, and the answer is encoded with
``encode_response`` or, for ``"stream": true`` and Gemini's stream route, ``encode_stream``
as server-sent events. A request the codec cannot decode gets the vendor's 400 with the
codec's JSON path. Failures are selectable per request (:mod:`flowdebug.emulator.faults`).
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from flowdebug import protocols
from flowdebug.emulator.faults import FAULTS, Fault, error_response, parse_fault, stream_failure
from flowdebug.errors import CodecError, FlowdebugError, UsageError
from flowdebug.players.base import Player

log = logging.getLogger(__name__)
FAULT_HEADER = "x-flowdebug-fault"
KEEP_REQUESTS = 1000  # the request log a long-running emulator keeps
# Every route a vendor declares (its facts), and what the readiness probe lists.
ROUTE_HELP = [h for c in protocols.PROTOCOLS.values() for h in c.facts.route_help]


def _wrong_shape(protocol: str) -> dict[str, Any]:
    # JSON, but not the protocol's response: its main field has the wrong type.
    return {protocols.facts(protocol).main_field: 7}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        log.info("emulator: %s", format % args)

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode() if not isinstance(body, bytes) else body
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _error(
        self,
        protocol: str,
        status: int,
        model: str,
        message: str | None = None,
        version: str = "v1",
    ) -> None:
        status, body, headers = error_response(protocol, status, model, version)
        if message is not None:
            body["error"]["message"] = message
        self._send_json(status, body, headers)

    def _route(self) -> tuple[str, str | None, bool, str] | None:
        path = self.path.split("?", 1)[0]
        for codec in protocols.PROTOCOLS.values():
            route = codec.facts.route
            if route is not None and (m := route.match(path)):
                # A vendor that names the model or streaming in the path says so by group.
                found = m.groupdict()
                version = found.get("version") or "v1"
                return codec.name, found.get("model"), bool(found.get("stream")), version
        return None

    def do_GET(self) -> None:
        # A readiness probe for whoever started the emulator (the app, browser tests).
        if self.path.split("?", 1)[0] in ("/", "/health"):
            self._send_json(200, {"emulator": "flowdebug", "routes": ROUTE_HELP})
        else:
            self._send_json(404, {"error": {"message": f"no such route: {self.path}"}})

    def do_POST(self) -> None:
        route = self._route()
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if route is None:
            self._send_json(404, {"error": {"message": f"no such route: {self.path}"}})
            return
        protocol, model, stream, version = route
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            self._error(protocol, 400, model or "", "the request body is not valid JSON")
            return
        if isinstance(body, dict):
            model = model or str(body.get("model") or "")
            stream = stream or body.get("stream") is True
        model = model or ""
        emulator = self.server.emulator
        fault = parse_fault(self.headers.get(FAULT_HEADER)) or parse_fault(model) or emulator.fault
        emulator.requests.append(
            {
                "protocol": protocol,
                "path": self.path,
                "model": model,
                "stream": stream,
                "fault": fault.name if fault else None,
                "body": body,
            }
        )
        del emulator.requests[:-KEEP_REQUESTS]
        if fault is not None and self._fault(fault, protocol, model, stream, version):
            return
        self._answer(protocol, body, model, stream, version, fault)

    def _fault(self, fault: Fault, protocol: str, model: str, stream: bool, version: str) -> bool:
        """Apply ``fault``; True when it produced the whole answer."""
        if fault.status is not None:
            self._error(protocol, fault.status, model, version=version)
            return True
        if fault.name == "slow":
            self.server.stopping.wait(fault.seconds)
            return False
        if fault.name == "drop":
            self.close_connection = True
            return True
        if fault.name == "stream-error" and not stream:
            self._error(protocol, 500, model, version=version)
            return True
        if fault.name == "malformed" and not stream:
            self._send_json(200, b'{"id": "msg_1", "content": [')
            return True
        if fault.name == "wrong-shape" and not stream:
            self._send_json(200, _wrong_shape(protocol))
            return True
        return False

    def _answer(
        self, protocol: str, body: Any, model: str, stream: bool, version: str, fault: Fault | None
    ) -> None:
        codec = protocols.get(protocol)
        emulator = self.server.emulator
        try:
            conv = codec.decode_request(body).value
            with emulator.lock:
                turn = emulator.player.respond(conv)
        except CodecError as e:
            self._error(protocol, 400, model, f"{e.path}: {e.reason}", version)
            return
        except FlowdebugError as e:
            self._error(protocol, 400, model, str(e), version)
            return
        response = turn.response.model_copy(update={"model": model or turn.response.model})
        if not stream:
            self._send_json(200, codec.encode_response(response).value)
            return
        events: list[tuple[str | None, Any]] = [
            # Clients that dispatch on the SSE event name get it (it repeats the data's type).
            (e.get("type") if protocols.facts(protocol).named_events else None, e)
            for e in codec.encode_stream(response).value
        ]
        if fault is not None and fault.name == "malformed":
            events.insert(1, (None, "{not json"))
        if fault is not None and fault.name == "wrong-shape":
            name, first = events[0]
            events = [(name, {"type": first["type"]} if name else _wrong_shape(protocol))]
        if fault is not None and fault.name == "stream-error":
            events = [*events[:1], stream_failure(protocol)]
        elif (end := protocols.facts(protocol).stream_end) is not None:
            events.append((None, end))
        self._stream(events)

    def _stream(self, events: list[tuple[str | None, Any]]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        for name, data in events:
            text = data if isinstance(data, str) else json.dumps(data)
            frame = (f"event: {name}\n" if name else "") + f"data: {text}\n\n"
            self.wfile.write(frame.encode())
            self.wfile.flush()
            if self.server.emulator.delay:
                self.server.stopping.wait(self.server.emulator.delay)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], emulator: Emulator):
        self.emulator = emulator
        self.stopping = threading.Event()
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (timeout, closed stream) is normal here, not a server error.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class Emulator:
    """The vendor-API emulator. ``with Emulator(...) as emu:`` serves on a free port in a
    background thread; ``emu.base_url("openai-chat")`` is what an SDK client needs.

    ``player`` answers (default: the scenario's scripted player); ``fault`` applies to every
    request (see :data:`flowdebug.emulator.faults.FAULTS`); ``delay`` seconds pass between
    stream events so a person can watch arguments assemble.
    """

    def __init__(
        self,
        player: Player | None = None,
        *,
        scenario: str = "weather",
        host: str = "127.0.0.1",
        port: int = 0,
        fault: str | None = None,
        delay: float = 0.0,
    ):
        if player is None:
            from flowdebug.engine import scenarios

            player = scenarios.load(scenario).player()
        self.player = player
        self.fault = parse_fault(fault)
        if fault and self.fault is None:
            raise UsageError(f"unknown fault {fault!r}; choose one of: {', '.join(FAULTS)}")
        self.delay = delay
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        try:
            self._server = _Server((host, port), self)
        except OSError as e:
            raise UsageError(
                f"cannot listen on {host}:{port}: {e.strerror}; choose another --port"
            ) from None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def base_url(self, protocol: str) -> str:
        """The SDK ``base_url`` for ``protocol`` (OpenAI's includes ``/v1``)."""
        return f"{self.url}/v1" if protocol.startswith("openai") else self.url

    def start(self) -> Emulator:
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="flowdebug-emulator", daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def stop(self) -> None:
        self._server.stopping.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
