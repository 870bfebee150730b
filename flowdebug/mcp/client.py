"""A synchronous client for real MCP servers, built on the official ``mcp`` SDK.

:class:`McpClient` connects to a server over stdio (a command line) or streamable HTTP (a URL),
runs ``initialize``, ``tools/list`` and ``tools/call``, and records every JSON-RPC message that
crosses the SDK's transport streams (``transcript``: ``{"dir", "msg", "t_ms"}`` entries, the
MCP codec's transcript shape plus a Unix time in milliseconds).

The SDK is asynchronous; the runtime and Streamlit are not. One daemon thread owns an asyncio
loop shared by every client; a connection is one long-lived task there (anyio needs its task
groups entered and left by the same task), and the synchronous methods submit coroutines to
that loop and wait.

Nothing a server does raises out of :meth:`McpClient.call_tool`: the :class:`McpCall` it returns
holds a canonical :class:`~flowdebug.model.ToolResult` whose ``error_type`` tells the failures
apart: ``tool_error`` (a ``CallToolResult`` with ``isError: true``, the model sees it),
``protocol`` (a JSON-RPC error, its code in ``provider_details["mcp"]["error"]``, or a result
that breaks the MCP schema), ``timeout`` (no response in time; the SDK sends
``notifications/cancelled``), ``mcp_crash`` (the connection ended during the call: the process
exited, or the HTTP stream ended) and ``mcp_connect`` (the server could not be started or
reached). After a crash the next use reconnects (a stdio server is started again).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
import weakref
from collections import deque
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter, ValidationError

from flowdebug.errors import CodecError
from flowdebug.hosting import mcp_refusal
from flowdebug.mcp.call import McpCall, Pending
from flowdebug.mcp.connection import CURRENT_CALL, Connection, Loop, McpError, describe
from flowdebug.mcp.spec import McpServerSpec
from flowdebug.model import Tool
from flowdebug.protocols.mcp.tools import tool_from_mcp

__all__ = [
    "McpCall",
    "McpClient",
    "McpError",
    "close_all",
]

CONNECT_TIMEOUT = 10.0
CALL_TIMEOUT = 30.0
TRANSCRIPT_LIMIT = 5000  # messages kept per client; a long session drops the oldest
_LIST_PAGES = 100  # a server whose nextCursor never ends cannot hang discovery
_RAW: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])


# --- the client -----------------------------------------------------------------------------


class McpClient:
    """A synchronous MCP client for one server; usable from any thread, calls may overlap.

    ``connect_timeout`` bounds ``initialize``; ``timeout`` is the default for ``tools/call``.
    Use as a context manager, or call :meth:`close` (a closed client reconnects on next use).
    """

    def __init__(
        self,
        spec: McpServerSpec,
        *,
        connect_timeout: float = CONNECT_TIMEOUT,
        timeout: float = CALL_TIMEOUT,
    ):
        # The spec refused itself when it was made; a spec made before the server became
        # shared (or built without validation) is refused here, before anything starts.
        refused = mcp_refusal(spec.stdio, spec.url, spec.label)
        if refused is not None:
            raise refused
        self.spec = spec
        self.connect_timeout = connect_timeout
        self.timeout = timeout
        self.tools: list[Tool] | None = None  # the last listing
        self._transcript: deque[dict[str, Any]] = deque(maxlen=TRANSCRIPT_LIMIT)
        self._transcript_lock = threading.Lock()
        self._conn: Connection | None = None
        self._lock: asyncio.Lock | None = None
        self._loop = Loop.get()

    def __enter__(self) -> McpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def transcript(self) -> list[dict[str, Any]]:
        """Every JSON-RPC message so far, in wire order: ``{"dir", "msg", "t_ms"}``."""
        with self._transcript_lock:
            return list(self._transcript)

    @property
    def server_info(self) -> dict[str, Any] | None:
        """The server's ``initialize`` result (serverInfo, protocolVersion, capabilities...)."""
        return self._conn.initialize if self._conn is not None else None

    def connect(self) -> None:
        """Start or reach the server and run ``initialize`` (done lazily otherwise)."""
        self._loop.run(self._ensure(), self.connect_timeout + 15)

    def list_tools(self, refresh: bool = True) -> list[Tool]:
        """The server's tools as canonical tools (title, annotations, output schema kept).

        With ``refresh=False`` the last listing is reused when there is one. Raises
        :class:`McpError` when the server cannot be reached or answers badly.
        """
        if self.tools is not None and not refresh:
            return self.tools
        self.tools = self._loop.run(self._list(), self.connect_timeout + self.timeout + 15)
        return self.tools

    def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        timeout: float | None = None,
        call_id: str | None = None,
    ) -> McpCall:
        """Run ``tools/call``; never raises for what the server does (see the module doc).

        ``call_id`` becomes the canonical result's ``call_id`` (default: the JSON-RPC id).
        """
        timeout = self.timeout if timeout is None else timeout
        pending = Pending(name, dict(arguments or {}), timeout, call_id)
        try:
            self._loop.run(self._call(pending), self.connect_timeout + timeout + 15)
        except TimeoutError:
            pending.error = MCPError(types.REQUEST_TIMEOUT, "no answer (client backstop)")
        except McpError as exc:
            pending.failure = exc
        schema = next((t.output_schema for t in self.tools or [] if t.name == name), None)
        tail = self._conn.stderr_tail() if pending.crashed and self._conn else ""
        return pending.finish(self.spec.label, schema, tail)

    def close(self) -> None:
        """End the connection (a stdio server is asked to exit, then killed)."""
        if self._conn is not None:
            self._loop.run(self._close(), 30)

    # --- on the loop ------------------------------------------------------------------------

    def _record(self, entry: dict[str, Any]) -> None:
        with self._transcript_lock:
            self._transcript.append(entry)

    async def _ensure(self) -> Connection:
        self._lock = self._lock or asyncio.Lock()
        async with self._lock:
            if self._conn is not None and self._conn.alive:
                return self._conn
            if self._conn is not None:
                await self._conn.close()
            self._conn = Connection(self.spec, self.connect_timeout, self._record)
            with _OPEN_LOCK:
                _OPEN.add(self)
            await self._conn.open()
            return self._conn

    async def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    async def _list(self) -> list[Tool]:
        conn = await self._ensure()
        assert conn.session is not None
        tools: list[Tool] = []
        params = None
        for page in range(_LIST_PAGES):
            request = types.ListToolsRequest(params=params)
            try:
                raw = await conn.session.send_request(request, _RAW, self.timeout)
                found = raw.get("tools")
                if not isinstance(found, list):
                    raise CodecError("mcp", "$.result.tools", "expected an array of tools")
                tools += [tool_from_mcp(t, f"$.result.tools[{i}]") for i, t in enumerate(found)]
            except MCPError as exc:
                kind = "timeout" if exc.code == types.REQUEST_TIMEOUT else "protocol"
                raise McpError(kind, f"tools/list failed: {describe(exc)}") from None
            except (CodecError, ValidationError) as exc:
                raise McpError("protocol", f"tools/list page {page + 1}: {exc}") from None
            cursor = raw.get("nextCursor")
            if not isinstance(cursor, str):
                return tools
            params = types.PaginatedRequestParams(cursor=cursor)
        return tools

    async def _call(self, pending: Pending) -> None:
        conn = await self._ensure()
        if self.tools is None:
            # Like the SDK: a tool's output schema is known only from a listing.
            with contextlib.suppress(McpError):
                self.tools = await self._list()
        assert conn.session is not None
        request = types.CallToolRequest(
            params=types.CallToolRequestParams(name=pending.name, arguments=pending.arguments)
        )
        token = CURRENT_CALL.set(pending)
        try:
            pending.raw = await conn.session.send_request(request, _RAW, pending.timeout)
        except MCPError as exc:
            pending.error = exc
        except ValidationError as exc:
            pending.invalid = str(exc)
        finally:
            CURRENT_CALL.reset(token)
            conn.inflight.pop(pending.request_id, None)
        if pending.crashed:
            conn.ended = True  # reconnect on next use


# --- every client still open, for the process's exit -------------------------------------

# Who holds a client, and for how long, is the engine's business
# (flowdebug.engine.execution.resources):
# this set only lets the process's exit close what is still connected. Weak: it holds nobody.
_OPEN: weakref.WeakSet[McpClient] = weakref.WeakSet()
_OPEN_LOCK = threading.Lock()


@atexit.register
def close_all() -> None:
    """Close every client still connected (a stdio server is asked to exit, then killed)."""
    with _OPEN_LOCK:
        clients = list(_OPEN)
    for client in clients:
        with contextlib.suppress(Exception):  # at exit a dead server must not hide the real error
            client.close()
