"""What every server the app runs shares (flowdebug.emulator.serving): a connection accepted by
an asyncio server sends without Nagle's algorithm, even from a listening socket that does not
say it is TCP (how Streamlit binds the app's)."""

from __future__ import annotations

import asyncio
import socket
from asyncio import base_events

import pytest

from flowdebug.emulator.serving import nodelay_on_accept


async def _accepted_nodelay() -> int:
    """TCP_NODELAY of the server side of a connection accepted from a socket made as Streamlit
    makes its own (``socket.socket(family)``: protocol number 0)."""
    listener = socket.socket(socket.AF_INET)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)
    assert listener.proto == 0
    seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(accepted, sock=listener)
    _, writer = await asyncio.open_connection(*listener.getsockname())
    try:
        return await asyncio.wait_for(seen, 5)
    finally:
        writer.close()
        server.close()
        await server.wait_closed()


@pytest.fixture
def asyncio_nodelay():
    """asyncio's own setter, put back after the test (the change is for the whole process)."""
    original = base_events._set_nodelay
    yield
    base_events._set_nodelay = original


def test_a_connection_accepted_from_a_socket_of_protocol_zero_sends_at_once(asyncio_nodelay):
    # asyncio's own setter, also when an earlier test in this process imported serve.py
    base_events._set_nodelay = getattr(base_events._set_nodelay, "__wrapped__", None) or (
        base_events._set_nodelay
    )
    # asyncio alone leaves Nagle on there: the fault this works around (a Python that fixes
    # it makes this test say so, and the workaround can go).
    assert asyncio.run(_accepted_nodelay()) == 0
    nodelay_on_accept()
    assert asyncio.run(_accepted_nodelay()) != 0
    patched = base_events._set_nodelay
    nodelay_on_accept()  # twice is once
    assert base_events._set_nodelay is patched
