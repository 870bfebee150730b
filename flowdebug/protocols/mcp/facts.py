"""MCP, the runtime's protocol with a tool server, as the rest of flowdebug needs to know it."""

from __future__ import annotations

import re

from flowdebug.protocols.facts import BareTool, Facts, Fields, Terms
from flowdebug.protocols.mcp.rules import LINT

# One tool of a ``tools/list`` result: ``{name, description, inputSchema}``.
BARE_TOOL = BareTool(
    title="MCP tool",
    keys='"inputSchema"',
    recognise=lambda tool: "name" in tool and "inputSchema" in tool,
    request=lambda tools: {"tools": tools},
)

FACTS = Facts(
    name="mcp",
    title="MCP (JSON-RPC)",
    short="MCP",
    api="MCP",
    kind="tool",
    terms=Terms(continuation=None, final_answer=None),
    fields=Fields(
        declaration="`tools/list` result: `tools[]` `{name, description, inputSchema}`",
        request="not MCP's part: the host's model picks the tool; MCP starts at `tools/call`",
        answer="not MCP's part: the host's model answers the user",
        execution="`tools/call {name, arguments}` → `CallToolResult {content, "
        "structuredContent, isError}`; unknown tool → JSON-RPC error -32602",
        continuation="the host hands each `CallToolResult` to its model in that model's format",
    ),
    # tool names SHOULD match ^[A-Za-z0-9._-]{1,128}$; request ids are free
    name_rule=re.compile(r"^[A-Za-z0-9._-]{1,128}$"),
    name_limit=128,
    name_chars="._-",
    id_rule=re.compile(r"^.{1,256}$", re.S),
    bare_tools=(BARE_TOOL,),
    # The MCP SDK's logger: the runtime's client (``flowdebug -vv`` shows it).
    sdk_loggers=("mcp",),
    lint=LINT,
)
