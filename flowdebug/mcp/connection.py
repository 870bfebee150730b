"""One connection to an MCP server, owned by a task of a shared asyncio loop, with taps on the
SDK's transport streams that record every JSON-RPC message.

The SDK is asynchronous and anyio needs a task group entered and left by the same task, so a
connection is one long-lived task (:meth:`_Connection.open` to :meth:`_Connection.close`) on
the loop of a daemon thread (:class:`Loop`); :mod:`flowdebug.mcp.client` submits coroutines to
it. The taps sit between the transport (stdio or streamable HTTP) and ``ClientSession``, so the
record is what the transport delivered and sent, in order, with a Unix time in milliseconds.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import tempfile
import threading
import time
from collections.abc import Callable, Coroutine
from contextlib import AsyncExitStack
from importlib.metadata import version
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from flowdebug.errors import FlowdebugError
from flowdebug.mcp.call import CLIENT, SERVER, Pending
from flowdebug.mcp.spec import McpServerSpec

T = TypeVar("T")
CLIENT_INFO = types.Implementation(name="flowdebug", version=version("flowdebug"))
# The call a coroutine is making: the write tap reads it to learn its JSON-RPC request id.
CURRENT_CALL: contextvars.ContextVar[Pending | None] = contextvars.ContextVar(
    "mcp_call", default=None
)


class McpError(FlowdebugError):
    """A connection or listing failed. ``kind``: ``mcp_connect``, ``timeout``, ``mcp_crash``
    or ``protocol``."""

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(message)


# --- the loop thread ------------------------------------------------------------------------


class Loop:
    """The daemon thread running the asyncio loop every client shares."""

    _instance: Loop | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True, name="flowdebug-mcp").start()

    @classmethod
    def get(cls) -> Loop:
        with cls._lock:
            if cls._instance is None:
                cls._instance = Loop()
            return cls._instance

    def run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise


# --- taps on the SDK's transport streams ----------------------------------------------------


def _wire(message: Any) -> dict[str, Any]:
    return message.model_dump(by_alias=True, mode="json", exclude_unset=True)


class _ReadTap:
    """The session's read stream, recording each server message as it is delivered."""

    def __init__(self, inner: Any, conn: Connection):
        self.inner, self.conn = inner, conn

    @property
    def last_context(self) -> contextvars.Context | None:  # the SDK's context-carrying streams
        return getattr(self.inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            item = await self.inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self.conn.ended = True
            raise
        if not isinstance(item, Exception):
            self.conn.record(SERVER, _wire(item.message))
        return item

    def __aiter__(self) -> _ReadTap:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> _ReadTap:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _WriteTap:
    """The session's write stream, recording each client message as it is sent."""

    def __init__(self, inner: Any, conn: Connection):
        self.inner, self.conn = inner, conn

    async def send(self, item: Any) -> None:
        msg = _wire(item.message)
        pending = CURRENT_CALL.get()
        if pending is not None and msg.get("method") == "tools/call" and "id" in msg:
            pending.request_id = msg["id"]
            self.conn.inflight[msg["id"]] = pending
        self.conn.record(CLIENT, msg)
        await self.inner.send(item)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> _WriteTap:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


# --- one connection -------------------------------------------------------------------------


class Connection:
    """One session with the server, owned by one task of the loop from open to close."""

    def __init__(
        self,
        spec: McpServerSpec,
        connect_timeout: float,
        on_message: Callable[[dict[str, Any]], None],
    ):
        self.spec = spec
        self.connect_timeout = connect_timeout
        self.on_message = on_message
        self.session: ClientSession | None = None
        self.initialize: dict[str, Any] | None = None
        self.inflight: dict[Any, Pending] = {}
        self.ended = False
        # The server's stderr, for crash reports; closed in close(), once the server is gone.
        self.stderr = tempfile.TemporaryFile() if self.spec.stdio else None  # noqa: SIM115
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def alive(self) -> bool:
        return self.session is not None and not self.ended

    def record(self, direction: str, msg: dict[str, Any]) -> None:
        entry = {"dir": direction, "msg": msg, "t_ms": round(time.time() * 1000, 3)}
        self.on_message(entry)
        for key in (msg.get("id"), (msg.get("params") or {}).get("requestId")):
            pending = self.inflight.get(key) if key is not None else None
            if pending is not None:
                pending.messages.append(entry)
                if direction == SERVER and key == msg.get("id"):
                    pending.response = msg

    async def open(self) -> None:
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._own(ready))
        await ready

    async def close(self) -> None:
        self._stop.set()
        if self._task is not None:
            await asyncio.wait({self._task}, timeout=10)
        if self.stderr is not None:
            self.stderr.close()

    def stderr_tail(self, limit: int = 2000) -> str:
        try:
            fd = self.stderr.fileno() if self.stderr is not None else -1
            size = os.fstat(fd).st_size
            data = os.pread(fd, limit, max(0, size - limit))
        except (OSError, ValueError):  # no stdio server, or the file closed by a reconnect
            return ""
        return data.decode("utf-8", "replace").strip()

    def _transport(self) -> Any:
        if self.spec.url is not None:
            return streamable_http_client(self.spec.url)
        program, *args = self.spec.command
        params = StdioServerParameters(
            command=program, args=args, env=self.spec.env, cwd=self.spec.cwd
        )
        return stdio_client(params, errlog=self.stderr)

    async def _own(self, ready: asyncio.Future[None]) -> None:
        try:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                session = ClientSession(
                    _ReadTap(read, self), _WriteTap(write, self), client_info=CLIENT_INFO
                )
                await stack.enter_async_context(session)
                with anyio.fail_after(self.connect_timeout):
                    result = await session.initialize()
                self.initialize = result.model_dump(by_alias=True, mode="json", exclude_none=True)
                self.session = session
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(self._connect_error(exc))
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self.session, self.ended = None, True

    def _connect_error(self, exc: BaseException) -> McpError:
        cause = leaf(exc)
        where = self.spec.label
        if isinstance(cause, TimeoutError):
            return McpError(
                "timeout",
                f"the MCP server ({where}) did not answer initialize within "
                f"{self.connect_timeout:g}s",
            )
        tail = self.stderr_tail()
        problem = describe(cause)
        if isinstance(cause, MCPError) and cause.code == types.CONNECTION_CLOSED:
            problem = "it closed the connection before answering initialize (did it exit?)"
        text = f"cannot connect to the MCP server ({where}): {problem}"
        return McpError("mcp_connect", f"{text}\nserver stderr:\n{tail}" if tail else text)


def leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException) -> str:
    if isinstance(exc, MCPError):
        return f"JSON-RPC error {exc.code}: {exc.message}"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
