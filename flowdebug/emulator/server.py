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

import hashlib
import threading
from collections import OrderedDict, deque
from typing import Any

from starlette.applications import Starlette

from flowdebug import hosting
from flowdebug.emulator.app import FAULT_HEADER, ROUTE_HELP, create_app
from flowdebug.emulator.faults import FAULTS, parse_fault
from flowdebug.emulator.serving import KEEP_ALIVE, READ_TIMEOUT, AsgiServer
from flowdebug.errors import UsageError
from flowdebug.players.base import Player
from flowdebug.protocols import facts

__all__ = ["FAULT_HEADER", "KEEP_REQUESTS", "MAX_BODY", "ROUTE_HELP", "Emulator"]

MAX_BODY = 1 << 20  # bytes of one request body (the vendors' own limits are larger; 1 MiB is
# far beyond any conversation the app sends and keeps one attendee from filling memory)
KEEP_REQUESTS = 200  # the request log a long-running emulator keeps
KEEP_BYTES = 16 << 20  # ... and at most this many bytes of request bodies in it
KEEP_MOUNTS = 64  # players mounted at once; the least recently mounted beyond goes


class Emulator(AsgiServer):
    """The vendor-API emulator. ``with Emulator(...) as emu:`` serves on a free port in a
    background thread; ``emu.base_url("openai-chat")`` is what an SDK client needs.

    ``player`` answers (default: the scenario's scripted player); ``fault`` applies to every
    request (see :data:`flowdebug.emulator.faults.FAULTS`); ``delay`` seconds pass between
    stream events so a person can watch arguments assemble. ``max_body``, ``read_timeout``,
    ``keep_alive``, ``keep_requests`` and ``keep_bytes`` are the limits described above.
    ``requests`` is the log, oldest first.
    """

    what = "emulator"

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
            from flowdebug.engine.session import scenarios

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
        super().__init__(host=host, port=port, read_timeout=read_timeout, keep_alive=keep_alive)

    def app(self) -> Starlette:
        return create_app(self)

    def start(self) -> Emulator:
        """Serve (see :meth:`AsgiServer.start`); a live model may then be pointed here even on
        a shared server: the emulator is the app's own offline model."""
        super().start()
        hosting.serving(self.url)
        return self

    def stop(self) -> None:
        hosting.serving(self.url, up=False)
        super().stop()

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

    def record(self, entry: dict[str, Any], size: int) -> None:
        """Log a request (``size``: its body's bytes). The log is bounded in entries and in
        body bytes: a room's emulator runs for hours."""
        self.requests.append({**entry, "bytes": size})
        self._kept_bytes += size
        while len(self.requests) > self.keep_requests or (
            self._kept_bytes > self.keep_bytes and len(self.requests) > 1
        ):
            self._kept_bytes -= self.requests.popleft()["bytes"]
