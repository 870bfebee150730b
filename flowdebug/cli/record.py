"""Command-line commands for recordings and saved sessions: ``flowdebug record`` and
``flowdebug sessions list|export``."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from flowdebug import protocols
from flowdebug.cli.live import _emulated, _port
from flowdebug.errors import UsageError

log = logging.getLogger("flowdebug.record")
DEFAULT_PORT = 8766


def _say(text: str) -> None:
    # stdout may be an MCP client's channel (--mcp-stdio): people are told on stderr.
    print(text, file=sys.stderr, flush=True)


def cmd_record(args: argparse.Namespace) -> int:
    if args.ca:
        from flowdebug.record.certs import Authority

        print(Authority().instructions())
        return 0
    from flowdebug.record.forward import ForwardProxy
    from flowdebug.record.mcp import wrap_stdio
    from flowdebug.record.server import RecordingProxy
    from flowdebug.record.sessions import Recorder
    from flowdebug.store.sessions import open_store

    if args.forward and (args.upstream or args.mcp_stdio or args.mcp_url):
        raise UsageError("--forward records each vendor's own host: drop --upstream and --mcp-*")
    store = open_store()
    recorder = Recorder(store, args.session)
    serve_http = args.mcp_stdio is None or args.port is not None or args.mcp_url is not None
    port = DEFAULT_PORT if args.port is None else args.port
    proxy: RecordingProxy | ForwardProxy | None = None
    try:
        if args.forward:
            proxy = ForwardProxy(recorder, host=args.host, port=port)
            _say(
                f"flowdebug forward proxy on {proxy.url} into {store!r} as {recorder.name!r}; "
                f"records {', '.join(sorted(proxy.upstreams))}; other hosts pass through.\n"
                f"  export HTTPS_PROXY={proxy.url}\n"
                f"  export SSL_CERT_FILE={proxy.authority.bundle_path}\n"
                "(flowdebug record --ca: the same for Node and curl); Ctrl-C stops"
            )
        elif serve_http:
            proxy = RecordingProxy(
                recorder, upstream=args.upstream, mcp_url=args.mcp_url, host=args.host, port=port
            )
            names = _emulated()
            width = max(map(len, names), default=0) + 2
            _say(
                f"flowdebug recording on {proxy.url} into {store!r} as {recorder.name!r}; "
                "base_url per SDK:\n"
                + "".join(f"  {n:<{width}}{proxy.base_url(n)}\n" for n in names)
                + (f"  {'MCP':<{width}}{proxy.url}/mcp -> {args.mcp_url}\n" if args.mcp_url else "")
                + f"upstream: {args.upstream or 'each vendor endpoint'}; Ctrl-C stops"
            )
        if args.mcp_stdio is not None:
            if proxy is not None:
                proxy.start()
            return wrap_stdio(args.mcp_stdio, recorder)
        assert proxy is not None
        proxy.serve_forever()
        return 0
    except KeyboardInterrupt:
        log.info("stopped")
        return 0
    finally:
        if proxy is not None:
            proxy.stop()
        recorder.close()
        store.close()


def cmd_sessions_list(args: argparse.Namespace) -> int:
    from flowdebug.store.sessions import open_store

    with open_store() as store:
        for info in store.list():
            updated = info.updated.isoformat(timespec="seconds")
            print(f"{info.id}\t{updated}\t{info.messages}\t{info.status}\t{info.name}")
    return 0


def cmd_sessions_export(args: argparse.Namespace) -> int:
    from flowdebug.exchange.exports import trace_json
    from flowdebug.store.sessions import open_store

    with open_store() as store:
        info = store.info(args.id)
        sys.stdout.write(trace_json(store.load(args.id), info.name, info.parent))
    return 0


def add_commands(subparsers: Any) -> None:
    """Add ``record`` and ``sessions`` to the ``flowdebug`` parser's subparsers."""
    p = subparsers.add_parser(
        "record",
        help="record an agent's model and MCP traffic as sessions",
        description="A local proxy for the "
        + ", ".join(protocols.facts(n).api for n in _emulated())
        + " APIs: point the agent's SDK base URL at it; each request goes on unchanged to "
        "the upstream, the answer comes back as it streams, and every exchange is saved as a "
        "session (one per conversation) in the store ($FLOWDEBUG_DB).",
    )
    p.add_argument("--port", type=_port, help=f"port (0: any free port; default {DEFAULT_PORT})")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument(
        "--upstream",
        help="send every request here instead of each vendor's endpoint (a local model "
        "server, the emulator)",
    )
    p.add_argument("--session", help="the recording's session name")
    p.add_argument(
        "--mcp-stdio",
        metavar="CMD",
        help="wrap this stdio MCP server: give this command to the MCP client instead",
    )
    p.add_argument(
        "--mcp-url", metavar="URL", help="stand in front of this Streamable HTTP MCP server at /mcp"
    )
    p.add_argument(
        "--forward",
        action="store_true",
        help="be an HTTP(S) forward proxy instead (HTTPS_PROXY) for agents that take no base "
        "URL: each vendor's host is recorded, other hosts pass through untouched",
    )
    p.add_argument(
        "--ca",
        action="store_true",
        help="print where --forward's CA certificate is and how to trust it (Python, Node, "
        "curl), then exit",
    )
    p.set_defaults(func=cmd_record)

    p = subparsers.add_parser("sessions", help="list or export saved sessions ($FLOWDEBUG_DB)")
    sub = p.add_subparsers(dest="action", required=True)
    q = sub.add_parser("list", help="one session a line: id, updated, messages, status, name")
    q.set_defaults(func=cmd_sessions_list)
    q = sub.add_parser("export", help="write a session's trace JSON to stdout")
    q.add_argument("id", help="the session's id (flowdebug sessions list)")
    q.set_defaults(func=cmd_sessions_export)
