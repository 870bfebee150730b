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

One emulator can answer as several players: :meth:`Emulator.mount` serves a player under
``/play/<token>/`` as well (``base_url(protocol, token)``), so a whole server process shares
one emulator whatever scenario each person compares.

The server is an ASGI app (:mod:`flowdebug.emulator.app`) on uvicorn, so one emulator can be
left running for a room: request bodies are capped (the vendor's 413 beyond ``max_body``), a
request must arrive whole within ``read_timeout`` seconds and an idle connection is closed
after ``keep_alive`` seconds (:mod:`flowdebug.emulator.guard`), and the request log keeps at
most ``keep_requests`` entries and ``keep_bytes`` bytes of bodies.
"""

from __future__ import annotations

import asyncio
import hashlib
import socket
import threading
import time
from collections import OrderedDict, deque
from contextlib import suppress
from typing import Any

import uvicorn

from flowdebug.emulator.app import FAULT_HEADER, ROUTE_HELP, create_app
from flowdebug.emulator.faults import FAULTS, parse_fault
from flowdebug.emulator.guard import guarded_protocol
from flowdebug.errors import UsageError
from flowdebug.players.base import Player
from flowdebug.protocols import facts

__all__ = ["FAULT_HEADER", "KEEP_REQUESTS", "MAX_BODY", "ROUTE_HELP", "Emulator"]

MAX_BODY = 1 << 20  # bytes of one request body (the vendors' own limits are larger; 1 MiB is
# far beyond any conversation the app sends and keeps one attendee from filling memory)
KEEP_REQUESTS = 200  # the request log a long-running emulator keeps
KEEP_BYTES = 16 << 20  # ... and at most this many bytes of request bodies in it
READ_TIMEOUT = 10.0  # seconds for a whole request to arrive
KEEP_ALIVE = 5.0  # seconds an idle connection stays open between requests
HEADER_LIMIT = 64 << 10  # bytes of a request line and headers
KEEP_MOUNTS = 64  # players mounted at once; the least recently mounted beyond goes


class Emulator:
    """The vendor-API emulator. ``with Emulator(...) as emu:`` serves on a free port in a
    background thread; ``emu.base_url("openai-chat")`` is what an SDK client needs.

    ``player`` answers (default: the scenario's scripted player); ``fault`` applies to every
    request (see :data:`flowdebug.emulator.faults.FAULTS`); ``delay`` seconds pass between
    stream events so a person can watch arguments assemble. ``max_body``, ``read_timeout``,
    ``keep_alive``, ``keep_requests`` and ``keep_bytes`` are the limits described above.
    ``requests`` is the log, oldest first.
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
        max_body: int = MAX_BODY,
        read_timeout: float = READ_TIMEOUT,
        keep_alive: float = KEEP_ALIVE,
        keep_requests: int = KEEP_REQUESTS,
        keep_bytes: int = KEEP_BYTES,
    ):
        if player is None:
            from flowdebug.engine import scenarios

            player = scenarios.load(scenario).player()
        self.player = player
        self.fault = parse_fault(fault)
        if fault and self.fault is None:
            raise UsageError(f"unknown fault {fault!r}; choose one of: {', '.join(FAULTS)}")
        self.delay = delay
        self.max_body = max_body
        self.keep_requests = keep_requests
        self.keep_bytes = keep_bytes
        self.lock = threading.Lock()
        self.requests: deque[dict[str, Any]] = deque()
        self._kept_bytes = 0
        self._mounts: OrderedDict[str, Player] = OrderedDict()
        self._mounts_lock = threading.Lock()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        try:
            self._socket = socket.create_server((host, port), family=family)
        except OSError as e:
            raise UsageError(
                f"cannot listen on {host}:{port}: {e.strerror}; choose another --port"
            ) from None
        self._address = self._socket.getsockname()[:2]
        config = uvicorn.Config(
            create_app(self),
            http=guarded_protocol(read_timeout),
            loop="asyncio",
            lifespan="on",
            log_config=None,
            access_log=False,
            proxy_headers=False,
            server_header=False,
            timeout_keep_alive=keep_alive,  # type: ignore[arg-type]  # a float works (call_later)
            timeout_graceful_shutdown=2,
            h11_max_incomplete_event_size=HEADER_LIMIT,
        )
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None

    @property
    def url(self) -> str:
        host, port = self._address
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{port}"

    def base_url(self, protocol: str, mount: str | None = None) -> str:
        """The SDK ``base_url`` for ``protocol`` (with the path its facts' own base URL ends
        in: OpenAI's ``/v1``), answered by the player mounted as ``mount`` (:meth:`mount`) or,
        without one, the emulator's own."""
        root = f"{self.url}/play/{mount}" if mount else self.url
        return root + facts(protocol).base_path

    def mount(self, player: Player, name: str) -> str:
        """Answer as ``player`` under ``/play/<token>/``; returns the token. The same
        ``name`` gets the same token (its player replaced). At most :data:`KEEP_MOUNTS` are
        kept: the least recently mounted beyond that is dropped (its requests get a 404)."""
        token = hashlib.sha256(name.encode()).hexdigest()[:16]
        with self._mounts_lock:
            self._mounts[token] = player
            self._mounts.move_to_end(token)
            while len(self._mounts) > KEEP_MOUNTS:
                self._mounts.popitem(last=False)
        return token

    def mounted(self, token: str) -> Player | None:
        """The player mounted as ``token``, if it still is."""
        with self._mounts_lock:
            return self._mounts.get(token)

    def start(self) -> Emulator:
        """Serve in a background thread; returns once the server is up."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self.serve_forever, name="flowdebug-emulator", daemon=True
            )
            self._thread.start()
            deadline = time.monotonic() + 10
            while not self._server.started and self._thread.is_alive():
                if time.monotonic() > deadline:
                    raise UsageError("the emulator did not start within 10 s")
                time.sleep(0.005)
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until :meth:`stop` (or, in the main thread, Ctrl-C)."""
        self._server.run(sockets=[self._socket])

    def stop(self) -> None:
        """Stop serving: waits end, open connections close, the thread and socket go."""
        self._server.should_exit = True
        if self._loop is not None and self._stopping is not None:
            with suppress(RuntimeError):  # the loop may already have ended
                self._loop.call_soon_threadsafe(self._stopping.set)
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        self._socket.close()

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def serving(self, loop: asyncio.AbstractEventLoop, stopping: asyncio.Event) -> None:
        """Called by the app on the server's loop, so :meth:`stop` can end its waits."""
        self._loop, self._stopping = loop, stopping
        if self._server.should_exit:
            stopping.set()

    def record(self, entry: dict[str, Any], size: int) -> None:
        """Log a request (``size``: its body's bytes). The log is bounded in entries and in
        body bytes: a room's emulator runs for hours."""
        self.requests.append({**entry, "bytes": size})
        self._kept_bytes += size
        while len(self.requests) > self.keep_requests or (
            self._kept_bytes > self.keep_bytes and len(self.requests) > 1
        ):
            self._kept_bytes -= self.requests.popleft()["bytes"]
