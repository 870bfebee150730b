"""An MCP server's tools as a tool set whose handlers call that server."""

from __future__ import annotations

from flowdebug.engine.handlers import McpHandler, ToolEntry, Toolset
from flowdebug.mcp.client import client_for
from flowdebug.mcp.spec import McpServerSpec


def toolset_from_mcp(
    spec: McpServerSpec, *, timeout: float | None = None, refresh: bool = False
) -> Toolset:
    """The server's tools as a tool set whose handlers call the server (``McpHandler``).

    Uses the shared client's last listing unless ``refresh``; raises :class:`McpError` when
    the server cannot be listed.
    """
    tools = client_for(spec).list_tools(refresh=refresh)
    return Toolset(
        entries=[
            ToolEntry(tool=t, handler=McpHandler(server=spec, tool=t.name), timeout=timeout)
            for t in tools
        ]
    )
