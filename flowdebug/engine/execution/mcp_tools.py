"""An MCP server's tools as a tool set whose handlers call that server."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from flowdebug.engine.execution.handlers import McpHandler, ToolEntry, Toolset
from flowdebug.mcp.spec import McpServerSpec
from flowdebug.model import Tool

# A listing is kept this long per server, so loading a scenario (which lists its tools twice,
# for the tool set and for the conversation) or a room loading it together starts the server
# once, not once per call. Bounded in servers: a listing is a few kilobytes.
LISTING_TTL = 60.0
LISTINGS_KEPT = 32
_LISTINGS: OrderedDict[str, tuple[float, list[Tool]]] = OrderedDict()
_LISTINGS_LOCK = threading.Lock()


def list_server_tools(spec: McpServerSpec, *, refresh: bool = False) -> list[Tool]:
    """The server's tools, from a listing at most :data:`LISTING_TTL` seconds old unless
    ``refresh``. A fresh listing connects a client of its own and closes it at once (a stdio
    server is started and stopped): nobody is left holding a server for a listing. Raises
    :class:`~flowdebug.mcp.client.McpError` when the server cannot be listed."""
    now = time.monotonic()
    with _LISTINGS_LOCK:
        kept = _LISTINGS.get(spec.key)
    if kept is not None and not refresh and now - kept[0] < LISTING_TTL:
        return list(kept[1])
    # The MCP SDK (0.7 s of CPU to import, mostly its types) is loaded by the first listing,
    # not by every process that loads a scenario: the app, `flowdebug run`, a Session.
    from flowdebug.mcp.client import McpClient

    with McpClient(spec) as client:
        tools = client.list_tools()
    with _LISTINGS_LOCK:
        _LISTINGS[spec.key] = (time.monotonic(), tools)
        _LISTINGS.move_to_end(spec.key)
        while len(_LISTINGS) > LISTINGS_KEPT:
            _LISTINGS.popitem(last=False)
    return list(tools)


def toolset_from_mcp(
    spec: McpServerSpec, *, timeout: float | None = None, refresh: bool = False
) -> Toolset:
    """The server's tools as a tool set whose handlers call the server (``McpHandler``).

    Uses a recent listing unless ``refresh`` (see :func:`list_server_tools`); raises
    :class:`McpError` when the server cannot be listed.
    """
    return Toolset(
        entries=[
            ToolEntry(tool=t, handler=McpHandler(server=spec, tool=t.name), timeout=timeout)
            for t in list_server_tools(spec, refresh=refresh)
        ]
    )
