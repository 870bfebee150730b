"""The emulator's connections: uvicorn's HTTP/1.1 protocol with a deadline for reading a request.

uvicorn times out a connection only between requests (``timeout_keep_alive``); a client that
sends half a request line, or half a body, and waits would hold its socket for ever. Here a
request must arrive whole within ``read_timeout`` seconds of the connection opening or of the
previous answer, or the connection is closed. The drop fault also needs the connection itself,
so each request's scope carries a way to close it without answering.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, MutableMapping
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)
DROP = "flowdebug.drop"  # the scope extension: {"close": <closes the connection unanswered>}


def drop_connection(scope: MutableMapping[str, Any]) -> bool:
    """Close the request's connection without an answer; False when the server cannot."""
    close = (scope.get("extensions") or {}).get(DROP, {}).get("close")
    if not callable(close):
        return False
    close()
    return True


def guarded_protocol(read_timeout: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol, closing a connection whose request is not in after
    ``read_timeout`` seconds."""

    class GuardedH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            before = self.cycle
            super().handle_events()
            cycle = self.cycle
            if cycle is None:
                return
            if cycle is not before:
                close: Callable[[], None] = self.transport.close
                extensions = cycle.scope.setdefault("extensions", {})
                extensions[DROP] = {"close": close}
            if not cycle.more_body and not cycle.response_complete:
                self._disarm()  # the whole request is in; answering may take its time

        def on_response_complete(self) -> None:
            # Armed before uvicorn handles a pipelined request, which disarms it again.
            self._arm()
            super().on_response_complete()

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(read_timeout, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                log.info("emulator: closed %s, no whole request in %s s", self.client, read_timeout)
                self.transport.close()

    return GuardedH11Protocol
