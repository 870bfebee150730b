"""``flowdebug record --forward``: an HTTP(S) forward proxy for agents that take no base URL and
only honour ``HTTPS_PROXY`` (coding agents, CLIs).

A ``CONNECT`` to a vendor's host (the host of each vendor's base URL, from its facts) on port 443
is intercepted: the proxy answers the TLS with a certificate for that host from its own CA
(:mod:`flowdebug.record.certs`) and hands the decrypted HTTP/1.1 to the recording proxy
(:class:`~flowdebug.record.server.RecordingProxy` on a loopback port), which records the vendor's
routes and sends every request on to that host, as ``flowdebug record`` does for a base URL.
Every other ``CONNECT`` is a tunnel: bytes pass both ways untouched, nothing is read or kept.
A plain ``http://`` request (absolute-form) goes on to its host untouched but for its request
line, made origin-form, and ``Connection: close`` (a kept-alive proxy connection could carry
the next request to another host).

mitmproxy, which the issue names, cannot be installed beside the project's pins: its last
release for Python 3.11 (11.0.2) needs ``cryptography<44.1`` and ``h11<=0.14`` (the lock has
50.0.2 and 0.16.0, which httpcore needs). This is the part of it the recorder needs, on asyncio
and ``cryptography``.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import Mapping
from contextlib import suppress
from typing import Self
from urllib.parse import urlsplit

from flowdebug import protocols
from flowdebug.emulator.serving import HEADER_LIMIT, READ_TIMEOUT, http_url, listen
from flowdebug.errors import UsageError
from flowdebug.record.certs import Authority
from flowdebug.record.server import RecordingProxy
from flowdebug.record.sessions import Recorder

log = logging.getLogger("flowdebug.record")
CHUNK = 1 << 16
CONNECT_TIMEOUT = 10.0


def vendor_upstreams() -> dict[str, str]:
    """Each vendor's host and its base URL, where its requests go (hosts shared by two
    vendors, as OpenAI's two APIs share theirs, share the base URL)."""
    out: dict[str, str] = {}
    for name in protocols.PROTOCOLS:
        facts = protocols.facts(name)
        host = urlsplit(facts.base_url or "").hostname
        if host and facts.route is not None:
            out.setdefault(host, facts.base_url or "")
    return out


def _answer(status: int, reason: str, text: str = "") -> bytes:
    body = text.encode()
    head = f"HTTP/1.1 {status} {reason}\r\ncontent-length: {len(body)}\r\n"
    return (head + ("content-type: text/plain\r\n" if body else "") + "\r\n").encode() + body


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Bytes from ``reader`` to ``writer`` until EOF, which ends ``writer``'s side too (a
    half-close where the transport has one: TLS has none, so it is closed)."""
    with suppress(ConnectionError, OSError, asyncio.IncompleteReadError):
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    with suppress(ConnectionError, OSError, RuntimeError):
        if writer.can_write_eof():
            writer.write_eof()
        else:
            writer.close()


async def _pipe(
    a: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    b: tuple[asyncio.StreamReader, asyncio.StreamWriter],
) -> None:
    try:
        await asyncio.gather(_copy(a[0], b[1]), _copy(b[0], a[1]))
    finally:
        for _, writer in (a, b):
            writer.close()


async def _open(host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT)
    sock = writer.get_extra_info("socket")
    if sock is not None:
        # Small writes (each stream event) would wait for the delayed ACK otherwise.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return reader, writer


def _authority(target: str, default_port: int) -> tuple[str, int] | None:
    parts = urlsplit("//" + target)
    try:
        port = parts.port or default_port
    except ValueError:
        return None
    return (parts.hostname, port) if parts.hostname else None


class ForwardProxy:
    """Serves the forward proxy on ``host:port`` (0: a free port) in a background thread
    (``with ForwardProxy(...) as proxy:``), recording into ``recorder``.

    ``upstreams`` maps each host to intercept to where its requests go: by default each
    vendor's host to its own base URL (:func:`vendor_upstreams`). A test gives the emulator's
    URL instead, so a real SDK talks to ``api.<vendor>.com`` through the proxy and reaches no
    network: a testing aid, which the command line does not offer."""

    what = "forward proxy"

    def __init__(
        self,
        recorder: Recorder,
        *,
        authority: Authority | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        upstreams: Mapping[str, str] | None = None,
    ):
        self.authority = authority or Authority()
        self.upstreams = dict(vendor_upstreams() if upstreams is None else upstreams)
        self.recording = RecordingProxy(recorder, upstreams=self.upstreams)
        self._socket = listen(host, port)
        self._address = self._socket.getsockname()[:2]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._ended = threading.Event()

    @property
    def url(self) -> str:
        """What ``HTTPS_PROXY`` is set to."""
        return http_url(self._address)

    # -- serving ---------------------------------------------------------------------------

    def start(self) -> Self:
        """Serve in a background thread; returns once the proxy listens."""
        if self._thread is None:
            self.recording.start()
            self._thread = threading.Thread(target=self._run, name="flowdebug-forward",
                                            daemon=True)  # fmt: skip
            self._thread.start()
            if not self._ready.wait(10):
                raise UsageError(f"the {self.what} did not start within 10 s")
        return self

    def serve_forever(self) -> None:
        """Serve until Ctrl-C (in the main thread) or :meth:`stop`."""
        self.start()
        # Not Thread.join: one interrupted by Ctrl-C marks the thread ended while it runs
        # (CPython 3.11), and stop() would then close the socket under its server.
        while not self._ended.wait(0.5):
            pass

    def stop(self) -> None:
        """Stop serving: open connections end, the thread, the socket and the recording
        proxy go."""
        if self._loop is not None:
            with suppress(RuntimeError):  # the loop may already have ended
                self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        self._socket.close()
        self.recording.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        server = loop.run_until_complete(
            asyncio.start_server(self._connection, sock=self._socket, limit=HEADER_LIMIT)
        )
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(self._close(server))
            loop.close()
            self._ended.set()

    @staticmethod
    async def _close(server: asyncio.Server) -> None:
        server.close()
        tasks = asyncio.all_tasks() - {asyncio.current_task()}
        for task in tasks:  # the open connections
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- one connection ------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, OSError):
            writer.close()
            return
        method, _, rest = head.partition(b" ")
        target = rest.split(b" ", 1)[0].decode("latin-1")
        try:
            if method == b"CONNECT":
                await self._connect(reader, writer, target)
            else:
                await self._plain(reader, writer, head, target)
        except (OSError, TimeoutError, asyncio.IncompleteReadError) as e:
            log.info("forward: %s %s: %s", method.decode("latin-1"), target[:200], e)
        finally:
            writer.close()

    async def _connect(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, target: str
    ) -> None:
        where = _authority(target, 443)
        if where is None:
            writer.write(_answer(400, "Bad Request", f"CONNECT to {target[:200]!r}: no host"))
            return
        host, port = where
        if host in self.upstreams and port == 443:
            writer.write(_answer(200, "Connection established"))
            await writer.drain()
            await writer.start_tls(self.authority.context(host))
            inner = urlsplit(self.recording.url)
            upstream = await _open(inner.hostname or "127.0.0.1", inner.port or 80)
            log.info("forward: recording %s", host)
            await _pipe((reader, writer), upstream)
            return
        try:
            upstream = await _open(host, port)
        except (OSError, TimeoutError) as e:
            writer.write(_answer(502, "Bad Gateway", f"cannot reach {host}:{port}: {e}"))
            return
        writer.write(_answer(200, "Connection established"))
        await writer.drain()
        await _pipe((reader, writer), upstream)

    async def _plain(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        head: bytes,
        target: str,
    ) -> None:
        url = urlsplit(target)
        where = _authority(url.netloc, 80) if url.scheme == "http" else None
        if where is None:
            message = f"{target[:200]!r}: a forward proxy takes http://host/... or CONNECT"
            writer.write(_answer(400, "Bad Request", message))
            return
        line, _, fields = head.partition(b"\r\n")
        method, _, rest = line.partition(b" ")
        version = rest.rpartition(b" ")[2]
        path = (url.path or "/") + (f"?{url.query}" if url.query else "")
        kept = [
            f
            for f in fields.split(b"\r\n")
            if f and f.split(b":", 1)[0].strip().lower() not in (b"connection", b"proxy-connection")
        ]
        sent = b"\r\n".join([method + b" " + path.encode("latin-1") + b" " + version, *kept])
        try:
            upstream = await _open(*where)
        except (OSError, TimeoutError) as e:
            writer.write(_answer(502, "Bad Gateway", f"cannot reach {url.netloc}: {e}"))
            return
        upstream[1].write(sent + b"\r\nconnection: close\r\n\r\n")
        await _pipe((reader, writer), upstream)
