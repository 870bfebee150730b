"""One local ASGI server on uvicorn, with the limits a server left running for a room needs.

The emulator and the recording proxy (:mod:`flowdebug.record`) both serve this way: a socket
bound at construction (so the port is known, and a port in use is a :class:`UsageError`), a
request that must arrive whole within ``read_timeout`` seconds, idle connections closed after
``keep_alive`` seconds, request lines and headers capped (:mod:`flowdebug.emulator.guard`), and
a stop that ends the app's waits (its ``stopping`` event), closes open connections within 2 s
and releases the thread and the socket.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from asyncio import base_events
from contextlib import suppress
from typing import Any, Self

import uvicorn

from flowdebug.emulator.guard import guarded_protocol
from flowdebug.errors import UsageError

READ_TIMEOUT = 10.0  # seconds for a whole request to arrive
KEEP_ALIVE = 5.0  # seconds an idle connection stays open between requests
HEADER_LIMIT = 64 << 10  # bytes of a request line and headers


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (0: a free port); a port in use is a
    :class:`UsageError`."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        sock = socket.create_server((host, port), family=family)
    except OSError as e:
        raise UsageError(
            f"cannot listen on {host}:{port}: {e.strerror}; choose another --port"
        ) from None
    # Answers go out in several writes (headers, body, each stream event): without
    # TCP_NODELAY, Nagle's algorithm holds each small write back for the client's delayed
    # ACK (about 40 ms). Accepted connections inherit it from the listening socket.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def nodelay_on_accept() -> None:
    """Every TCP connection this process's asyncio servers accept from now on sends without
    Nagle's algorithm, whatever made the listening socket.

    asyncio sets TCP_NODELAY on a connection only when its socket's protocol number says TCP,
    and a socket made with ``socket.socket(family)`` says 0, as do the connections it accepts.
    Streamlit binds its server's socket so: each small message of a script run (a delta) after
    the first then waited for the browser's delayed ACK, and a Step reached the page about
    40 ms after its run had ended. The app's server (serve.py) calls this before it accepts
    anything; our own servers set the option on their sockets (:func:`listen`)."""
    current = getattr(base_events, "_set_nodelay", None)
    if current is None or getattr(current, "flowdebug", False):  # another asyncio, or done
        return

    def set_nodelay(sock: socket.socket) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM:
            with suppress(OSError):  # a socket closed meanwhile
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    set_nodelay.flowdebug = True  # type: ignore[attr-defined]
    set_nodelay.__wrapped__ = current  # type: ignore[attr-defined]
    base_events._set_nodelay = set_nodelay  # type: ignore[attr-defined]


def http_url(address: tuple[str, int]) -> str:
    """``http://host:port`` of a listening socket's address."""
    host, port = address
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}"


class AsgiServer:
    """Serves an ASGI app on ``host:port`` (0: a free port). ``with server:`` serves in a
    background thread; :meth:`serve_forever` in this one. The app calls :meth:`serving` from
    its lifespan so :meth:`stop` can end its waits."""

    what = "server"  # in its thread's name and its messages

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        read_timeout: float = READ_TIMEOUT,
        keep_alive: float = KEEP_ALIVE,
    ):
        self._socket = listen(host, port)
        self._address = self._socket.getsockname()[:2]
        self._read_timeout = read_timeout
        self._keep_alive = keep_alive
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None

    def app(self) -> Any:
        """The ASGI app to serve (made once, when serving starts)."""
        raise NotImplementedError

    def _uvicorn(self) -> uvicorn.Server:
        if self._server is None:
            config = uvicorn.Config(
                self.app(),
                http=guarded_protocol(self._read_timeout),
                loop="asyncio",
                lifespan="on",
                log_config=None,
                access_log=False,
                proxy_headers=False,
                server_header=False,
                timeout_keep_alive=self._keep_alive,  # type: ignore[arg-type]  # a float works
                timeout_graceful_shutdown=2,
                h11_max_incomplete_event_size=HEADER_LIMIT,
            )
            self._server = uvicorn.Server(config)
        return self._server

    @property
    def url(self) -> str:
        return http_url(self._address)

    def start(self) -> Self:
        """Serve in a background thread; returns once the server is up."""
        if self._thread is None:
            server = self._uvicorn()
            self._thread = threading.Thread(
                target=self.serve_forever, name=f"flowdebug-{self.what}", daemon=True
            )
            self._thread.start()
            deadline = time.monotonic() + 10
            while not server.started and self._thread.is_alive():
                if time.monotonic() > deadline:
                    raise UsageError(f"the {self.what} did not start within 10 s")
                time.sleep(0.005)
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until :meth:`stop` (or, in the main thread, Ctrl-C)."""
        self._uvicorn().run(sockets=[self._socket])

    def stop(self) -> None:
        """Stop serving: waits end, open connections close, the thread and socket go."""
        self._uvicorn().should_exit = True
        if self._loop is not None and self._stopping is not None:
            with suppress(RuntimeError):  # the loop may already have ended
                self._loop.call_soon_threadsafe(self._stopping.set)
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        self._socket.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def serving(self, loop: asyncio.AbstractEventLoop, stopping: asyncio.Event) -> None:
        """Called by the app on the server's loop, so :meth:`stop` can end its waits."""
        self._loop, self._stopping = loop, stopping
        if self._uvicorn().should_exit:
            stopping.set()
