"""The tests' own little HTTP servers (a recorded vendor, a host a proxy must not reach, a
pixel an attack would load), served from a thread for the length of a ``with``.

``socketserver``'s ``serve_forever`` checks for ``shutdown()`` every ``poll_interval``, half a
second by default: each such server cost its test half a second of waiting to stop, 57 tests
and 27 s of ``make test-fast``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from socketserver import BaseServer
from typing import TypeVar

POLL = 0.01  # seconds between the serving thread's checks for shutdown()

S = TypeVar("S", bound=BaseServer)


def start(server: BaseServer) -> threading.Thread:
    """Serve ``server`` from a daemon thread; stop it with :func:`stop`."""
    thread = threading.Thread(target=server.serve_forever, args=(POLL,), daemon=True)
    thread.start()
    return thread


def stop(server: BaseServer, thread: threading.Thread | None = None) -> None:
    server.shutdown()
    server.server_close()
    if thread is not None:
        thread.join(timeout=5)


@contextmanager
def serving(server: S) -> Iterator[S]:
    """``with serving(HTTPServer(("127.0.0.1", 0), Handler)) as server:``"""
    thread = start(server)
    try:
        yield server
    finally:
        stop(server, thread)
