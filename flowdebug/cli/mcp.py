"""``flowdebug mcp``: list and call the tools of a real MCP server from the command line.

- ``flowdebug mcp tools (--stdio CMD | --url URL) [--to PROTOCOL]`` prints the server's tools
  as JSON: canonical tools, or the tools part of PROTOCOL's request (``mcp``: the
  ``tools/list`` result). What PROTOCOL cannot carry (renamed names, dropped metadata) is
  listed on stderr as warnings.
- ``flowdebug mcp call NAME ARGS_JSON (--stdio CMD | --url URL)`` prints the
  ``CallToolResult``, the JSON-RPC ``error`` object, or ``{"error": {"type", "message"}}`` when
  no answer came (``timeout``, ``mcp_crash``). Exit 0 on success, 1 when the call failed (a
  tool error, a JSON-RPC error, a timeout, a crash), 2 on bad input (flags, ARGS_JSON, a server
  that cannot be started or reached). ``structuredContent`` that breaks the tool's
  ``outputSchema`` is reported on stderr as ``warning path: message``.

``--transcript FILE`` writes every JSON-RPC message exchanged (``{"dir", "msg", "t_ms"}``), a
payload ``flowdebug convert --from mcp`` reads.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from pydantic import ValidationError

from flowdebug import protocols
from flowdebug.cli.options import Subcommands
from flowdebug.errors import UsageError
from flowdebug.mcp.spec import McpServerSpec


def add_commands(subparsers: Any) -> None:
    """Add ``mcp tools`` and ``mcp call`` to the ``flowdebug`` parser's subcommands."""
    p = subparsers.add_parser("mcp", help="list and call the tools of an MCP server")
    sub = Subcommands(p.add_subparsers(dest="mcp_command", required=True))

    t = sub.add_parser("tools", help="print the server's tools as JSON")
    _server_options(t)
    t.add_argument(
        "--to",
        default="canonical",
        choices=["canonical", *protocols.PROTOCOLS],
        help="canonical tools (default), or the tools part of this protocol's request",
    )
    t.set_defaults(func=cmd_tools)

    c = sub.add_parser("call", help="call one tool and print its result as JSON")
    c.add_argument("name", help="the tool's name on the server")
    c.add_argument("arguments", metavar="ARGS_JSON", help="a JSON object, or - to read stdin")
    _server_options(c)
    c.add_argument("--timeout", type=float, default=30.0, help="seconds to wait (default 30)")
    c.set_defaults(func=cmd_call)


def _server_options(p: argparse.ArgumentParser) -> None:
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--stdio", metavar="CMD", help="command line that starts the server")
    where.add_argument("--url", help="streamable HTTP endpoint, e.g. http://127.0.0.1:8765/mcp")
    p.add_argument(
        "--connect-timeout",
        type=float,
        default=10.0,
        help="seconds to wait for initialize (default 10)",
    )
    p.add_argument("--transcript", metavar="FILE", help="write the JSON-RPC messages to FILE")


def _spec(args: argparse.Namespace) -> McpServerSpec:
    try:
        return McpServerSpec.parse(stdio=args.stdio, url=args.url)
    except ValidationError as e:
        raise UsageError(f"bad server: {e.errors()[0]['msg']}") from None
    except ValueError as e:  # shlex: an unclosed quote
        raise UsageError(f"--stdio: cannot split the command line: {e}") from None


def _client(args: argparse.Namespace) -> Any:
    from flowdebug.mcp.client import McpClient

    return McpClient(_spec(args), connect_timeout=args.connect_timeout)


def _finish(args: argparse.Namespace, client: Any) -> None:
    client.close()
    if args.transcript:
        try:
            with open(args.transcript, "w", encoding="utf-8") as f:
                json.dump(client.transcript, f, indent=2, ensure_ascii=False)
        except OSError as e:
            raise UsageError(f"cannot write {args.transcript}: {e.strerror}") from None


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def cmd_tools(args: argparse.Namespace) -> int:
    from flowdebug.mcp.bridge import tools_part

    client = _client(args)
    try:
        tools = client.list_tools()
    finally:
        _finish(args, client)
    part = tools_part(args.to, tools)
    for w in part.warnings:
        print(str(w), file=sys.stderr)
    _print_json(part.value)
    return 0


def cmd_call(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.arguments == "-" else args.arguments
    try:
        arguments = json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError(f"ARGS_JSON is not JSON: {e.msg} at column {e.colno}") from None
    if not isinstance(arguments, dict):
        raise UsageError(f"ARGS_JSON must be a JSON object, not {type(arguments).__name__}")
    client = _client(args)
    try:
        client.connect()
        call = client.call_tool(args.name, arguments, timeout=args.timeout)
    finally:
        _finish(args, client)
    for f in call.findings:
        print(f"{f.level} {f.path}: {f.message}", file=sys.stderr)
    if call.kind == "mcp_connect":
        raise UsageError(call.result.text)
    if call.kind != "result":
        print(f"tools/call {args.name} failed ({call.kind}): {call.result.text}", file=sys.stderr)
    _print_json(call.output())
    return 0 if call.kind == "result" else 1
