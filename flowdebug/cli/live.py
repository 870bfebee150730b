"""Command-line commands for live models: ``flowdebug emulate``."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from flowdebug import protocols
from flowdebug.emulator.faults import FAULTS

log = logging.getLogger("flowdebug.emulator")


def cmd_emulate(args: argparse.Namespace) -> int:
    from flowdebug.emulator.server import Emulator

    emulator = Emulator(
        scenario=args.scenario,
        host=args.host,
        port=args.port,
        fault=args.fault,
        delay=args.delay,
    )
    url = emulator.url
    names = _emulated()
    width = max(map(len, names), default=0) + 2
    print(
        f"flowdebug emulator on {url} (scenario {args.scenario}); base_url per SDK:\n"
        + "".join(f"  {n:<{width}}{emulator.base_url(n)}\n" for n in names)
        + "a model named after a fault (error-429, slow-2, ...) fails that way; Ctrl-C stops; "
        "-v logs each request",
        flush=True,
    )
    try:
        emulator.serve_forever()
    except KeyboardInterrupt:
        log.info("stopped")
    finally:
        emulator.stop()
    return 0


def _emulated() -> list[str]:
    """The model protocols the emulator answers (their facts give it a route), in registry
    order."""
    return [n for n in protocols.model_protocols() if protocols.facts(n).route is not None]


def _port(text: str) -> int:
    port = int(text) if text.isdigit() else -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (0 to 65535)")
    return port


def _apis() -> str:
    """The emulated vendors' APIs, for the help line: "A, B and C" (one name per API)."""
    apis = list(dict.fromkeys(protocols.facts(n).api for n in _emulated()))
    return ", ".join(apis[:-1]) + " and " + apis[-1] if len(apis) > 1 else "".join(apis)


def add_commands(subparsers: Any) -> None:
    """Add the live-model commands to the ``flowdebug`` parser's subparsers."""
    p = subparsers.add_parser(
        "emulate",
        help=f"serve the {_apis()} APIs locally, played by a scenario",
        description="A local server speaking the vendors' model APIs (streaming included), "
        "answered by a scenario's scripted model, so SDKs and the app work offline.",
        epilog="faults: " + "; ".join(f"{k}: {v}" for k, v in FAULTS.items()),
    )
    p.add_argument("--port", type=_port, default=8765, help="port (0: any free port)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--scenario", default="weather", help="scenario name or .json path")
    p.add_argument("--fault", help="fail every request this way (see the list below)")
    p.add_argument(
        "--delay", type=float, default=0.0, help="seconds between stream events (default 0)"
    )
    p.set_defaults(func=cmd_emulate)
