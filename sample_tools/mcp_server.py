"""A real MCP server (the SDK's low-level ``Server``) exposing the sample weather and task tools.

    python -m sample_tools.mcp_server                       # stdio
    python -m sample_tools.mcp_server --http --port 8765    # streamable HTTP on 127.0.0.1
    python -m sample_tools.mcp_server --fault-tools         # adds tools that crash or hang

The tools run the sample handlers themselves (``sample_tools.weather`` / ``tasks``): their
declarations are the sample tool sets' declarations, written as MCP tools by the MCP codec, and
a call runs the entry's handler, so the server and the in-process mocks cannot drift apart.
On top of those:

- ``get_weather`` declares an ``outputSchema`` and answers with ``structuredContent``;
- ``weather.map`` answers with text and an image (names with a dot must be renamed for
  Anthropic and OpenAI);
- ``tasks.search`` finds tasks by text (another dotted name);
- with ``--fault-tools``: ``fault.crash`` (the process exits mid-call), ``fault.hang`` (no answer
  for ``seconds``) and ``fault.bad_output`` (``structuredContent`` breaking its ``outputSchema``).

Tool failures are ``CallToolResult`` with ``isError: true``; an unknown tool is the JSON-RPC
error -32602, as the MCP specification asks. With ``--port 0`` the OS picks the port; the
server writes its URL to stderr once it listens.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import functools
import os
import struct
import sys
import threading
import zlib
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from flowdebug.engine.execution.handler_io import Outcome, ToolContext, exception_outcome
from flowdebug.engine.execution.handlers import ToolEntry, Toolset
from flowdebug.engine.execution.python_tools import python_tool
from flowdebug.engine.execution.validation import argument_errors
from flowdebug.model import Image, Text, ToolResult
from flowdebug.protocols.mcp.response import INVALID_PARAMS, result_to_mcp
from flowdebug.protocols.mcp.tools import tool_to_mcp
from sample_tools import tasks, weather

NAME = "flowdebug-sample"
WEATHER_OUTPUT = {
    "type": "object",
    "properties": {
        "location": {"type": "string"},
        "temperature": {"type": "number"},
        "unit": {"type": "string", "enum": ["c", "f"]},
        "conditions": {"type": "string"},
    },
    "required": ["location", "temperature", "unit", "conditions"],
}
LOCATION = {
    "type": "object",
    "properties": {"location": {"type": "string", "description": "City name, e.g. Paris"}},
    "required": ["location"],
}
SEARCH = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "Text to find in titles and notes"},
        "status": {"type": "string", "enum": ["open", "done", "all"], "default": "all"},
    },
    "required": ["query"],
}
HANG = {
    "type": "object",
    "properties": {"seconds": {"type": "number", "minimum": 0, "default": 60}},
}
BAD_OUTPUT = {
    "type": "object",
    "properties": {"temperature": {"type": "number"}},
    "required": ["temperature"],
}


def _png(width: int, height: int, rgb: tuple[int, int, int]) -> str:
    """A solid-colour PNG, base64: enough to show how each vendor carries an image result."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * width
    png = b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)),
            chunk(b"IDAT", zlib.compress(row * height)),
            chunk(b"IEND", b""),
        ]
    )
    return base64.b64encode(png).decode()


def weather_map(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """A small weather map of a city: a caption and an image."""
    report = weather.get_weather({"location": args["location"]}, ctx)
    colour = (250, 200, 40) if report["conditions"] in ("sunny", "clear") else (120, 140, 170)
    caption = f"Weather map of {report['location']}: {report['conditions']}"
    return ToolResult(
        call_id=ctx.call_id,
        content=[Text(text=caption), Image(media_type="image/png", data=_png(8, 8, colour))],
    )


def search_tasks(args: dict[str, Any], ctx: ToolContext) -> list[dict[str, Any]]:
    """Find tasks whose title or notes contain the query (case-insensitive)."""
    query = args["query"].casefold()
    found = tasks.list_tasks({"status": args.get("status", "all")}, ctx)
    return [t for t in found if query in f"{t['title']}\n{t['notes']}".casefold()]


def crash(args: dict[str, Any]) -> str:
    """Kill the server process in the middle of the call."""
    sys.stderr.write("fault.crash: exiting with status 3\n")
    sys.stderr.flush()
    os._exit(3)


def hang(args: dict[str, Any], ctx: ToolContext) -> str:
    """Answer only after ``seconds`` (the client's timeout should fire first)."""
    seconds = float(args.get("seconds", 60))
    return f"answered after {seconds:g}s" if ctx.sleep(seconds) else "cancelled"


def bad_output(args: dict[str, Any]) -> dict[str, Any]:
    """Return structured content that breaks the declared output schema."""
    return {"temperature": "warm"}


# Tools whose handler builds the whole result (text and an image), not just a JSON value.
RICH = {"weather.map": weather_map}


def _with(entry: ToolEntry, **changes: Any) -> ToolEntry:
    """``entry`` with its declaration changed (a title, an output schema)."""
    return entry.model_copy(update={"tool": entry.tool.model_copy(update=changes)})


def toolset(fault_tools: bool = False) -> Toolset:
    """The server's tools as flowdebug entries (declaration + the handler that runs them)."""
    (get_weather,) = weather.TOOLSET.entries
    read_only = {"readOnlyHint": True}
    entries = [
        _with(get_weather, title="Current weather", output_schema=WEATHER_OUTPUT),
        _with(
            python_tool(weather_map, LOCATION, name="weather.map", annotations=read_only),
            title="Weather map",
        ),
        *tasks.TOOLSET.entries,
        _with(
            python_tool(search_tasks, SEARCH, name="tasks.search", annotations=read_only),
            title="Search tasks",
        ),
    ]
    if fault_tools:
        entries += [
            python_tool(crash, name="fault.crash"),
            python_tool(hang, HANG, name="fault.hang"),
            _with(python_tool(bad_output, name="fault.bad_output"), output_schema=BAD_OUTPUT),
        ]
    return Toolset(entries=entries)


class SampleServer:
    """Serves one tool set; the task store is shared by every connection of the process."""

    def __init__(self, tools: Toolset):
        self.tools = tools
        self.state: dict[str, Any] = {}
        self.lock = threading.RLock()
        self.server = Server(
            NAME,
            version="1.0",
            instructions="Sample weather and task tools from flowdebug.",
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
        )

    async def list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        tools = [types.Tool.model_validate(tool_to_mcp(t)) for t in self.tools.tools]
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        entry = self.tools.get(params.name)
        if entry is None:
            # MCP: a tool that cannot be found is a protocol error, not a tool result.
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        arguments = params.arguments or {}
        call_id = str(ctx.request_id)
        errors = argument_errors(entry.tool.parameters, arguments)
        if errors:
            # The SDK's own servers report invalid arguments as a tool error the model can fix.
            text = "invalid arguments:\n" + "\n".join(errors)
            result = ToolResult(call_id=call_id, content=text, is_error=True)
        else:
            run_ctx = ToolContext(call_id=call_id, state=self.state, lock=self.lock)
            result = await self._run(entry, arguments, run_ctx)
        return types.CallToolResult.model_validate(result_to_mcp(result))

    async def _run(
        self, entry: ToolEntry, arguments: dict[str, Any], ctx: ToolContext
    ) -> ToolResult:
        rich = RICH.get(entry.tool.name)
        if rich is not None:
            run = functools.partial(_rich, rich, arguments, ctx)
        else:
            run = functools.partial(entry.handler.run, arguments, ctx)
        try:
            done = await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            ctx.cancelled.set()  # the client gave up (notifications/cancelled): stop sleeping
            raise
        if isinstance(done, ToolResult):
            return done
        outcome: Outcome = done
        structured = outcome.value if entry.tool.output_schema and not outcome.is_error else None
        return ToolResult(
            call_id=ctx.call_id,
            content=outcome.content,
            is_error=outcome.is_error,
            structured=structured,
        )


def _rich(fn: Any, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult | Outcome:
    try:
        return fn(arguments, ctx)
    except Exception as exc:
        return exception_outcome(exc)


async def serve_stdio(server: SampleServer) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.server.run(
            read_stream, write_stream, server.server.create_initialization_options()
        )


async def serve_http(server: SampleServer, port: int) -> None:
    import uvicorn

    app = server.server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    http = uvicorn.Server(config)
    task = asyncio.create_task(http.serve())
    while not http.started and not task.done():
        await asyncio.sleep(0.02)
    if http.started:
        bound = http.servers[0].sockets[0].getsockname()[1]
        print(f"{NAME} listening on http://127.0.0.1:{bound}/mcp", file=sys.stderr, flush=True)
    await task


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m sample_tools.mcp_server",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP, not stdio")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port (0: any free port)")
    parser.add_argument("--fault-tools", action="store_true", help="add fault.* tools")
    args = parser.parse_args(argv)
    server = SampleServer(toolset(args.fault_tools))
    try:
        if args.http:
            asyncio.run(serve_http(server, args.port))
        else:
            anyio.run(serve_stdio, server)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
