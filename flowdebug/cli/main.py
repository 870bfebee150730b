"""The ``flowdebug`` command. Its output formats are a contract (see DESIGN.md)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from importlib.metadata import version
from typing import Any

from pydantic import ValidationError

from flowdebug import jsontext, protocols
from flowdebug.cli import exchange as cli_exchange
from flowdebug.cli import live as cli_live
from flowdebug.cli import mcp as cli_mcp
from flowdebug.cli import record as cli_record
from flowdebug.cli.options import Parser, Subcommands, setup_logging, verbosity
from flowdebug.errors import FlowdebugError, UsageError, validation_path

log = logging.getLogger("flowdebug.cli")


def _read(path: str | None) -> tuple[bytes | str, str]:
    """The bytes of ``path`` (stdin for ``-``; text when stdin has no bytes to give), read up
    to just past the size cap: :func:`flowdebug.jsontext.loads` decides whether they are
    UTF-8 and small enough, as it does for every entrance."""
    if path in (None, "-"):
        stdin = getattr(sys.stdin, "buffer", sys.stdin)
        return stdin.read(jsontext.MAX_BYTES + 1), "stdin"
    try:
        with open(path, "rb") as f:
            return f.read(jsontext.MAX_BYTES + 1), path
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror}") from None


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def cmd_protocols(args: argparse.Namespace) -> int:
    for name in protocols.PROTOCOLS:
        print(name)
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    from flowdebug.protocols.convert import convert

    text, source = _read(args.file)
    payload = jsontext.loads(text, source)
    out, warnings = convert(payload, args.to, args.source)
    for w in warnings:
        print(str(w), file=sys.stderr)
    _print_json(out)
    return 0


def cmd_lint(args: argparse.Namespace) -> int:
    from flowdebug.lint.linter import format_finding, has_errors, lint_payload

    text, source = _read(args.file)
    findings = lint_payload(jsontext.loads(text, source), args.protocol)
    for f in findings:
        print(format_finding(f))
    return 1 if has_errors(findings) else 0


def cmd_run(args: argparse.Namespace) -> int:
    from flowdebug.engine.execution.approval import Approve, Reject
    from flowdebug.engine.execution.faults import parse_fault
    from flowdebug.engine.session import scenarios
    from flowdebug.engine.session.debugger import Session
    from flowdebug.engine.tracing.trace import rejection, sequence

    if args.list:
        for name in scenarios.names():
            sc = scenarios.load(name)
            print(f"{name}\t{sc.title}")
        return 0
    if not args.scenario:
        raise UsageError("name a scenario (flowdebug run --list shows them)")
    session = Session.from_scenario(args.scenario)
    log.info("scenario %s: %d tools", args.scenario, len(session.state.toolset.entries))
    if args.fault:
        session.set_faults([*session.state.faults, *(parse_fault(f) for f in args.fault)])
    why = session.run()
    log.info("stopped at step %d: %s", session.state.step, why)
    while session.state.status == "awaiting_approval" and (args.approve or args.reject):
        calls = session.conversation.messages[-1].tool_calls
        for call in calls:
            if call.id not in session.state.decisions:
                session.decide(call.id, Approve() if args.approve else Reject())
        why = session.run()
        log.info("decided; stopped at step %d: %s", session.state.step, why)
    state = session.state
    if args.json:  # the one trace format: what the app exports, schemas/trace-v1.schema.json
        from flowdebug.exchange.exports import trace

        _print_json(trace(state, name=state.scenario))
        return 0
    refused = rejection(state.conversation, state.events, args.protocol)
    arrows = sequence(state.events, args.protocol, refused)
    lanes = {
        "user": "User",
        "runtime": "Runtime",
        "model": "Model API",
        "tool": "Tool",
        "mcp": "MCP server",
    }
    for a in arrows:
        flag = "  [ERROR]" if a.error else ""
        print(
            f"{a.step:>3} {a.phase:<12} {lanes[a.source]:>10} -> {lanes[a.target]:<10} "
            f"{a.label}{flag}"
        )
    print(f"-- {why}")
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    from flowdebug.engine.tracing.trace import TraceEvent, lanes, rejection, sequence
    from flowdebug.model import Conversation
    from flowdebug.render import to_dot, to_mermaid, to_svg

    text, source = _read(args.trace)
    data = jsontext.loads(text, source)
    raw = data.get("events") if isinstance(data, dict) else data
    if not isinstance(raw, list):
        raise UsageError(f"{source}: expected a trace (flowdebug run --json) with an events list")
    events = []
    for i, e in enumerate(raw):
        try:
            events.append(TraceEvent.model_validate(e))
        except ValidationError as err:
            first = err.errors()[0]
            where = validation_path(first["loc"], f"$.events[{i}]")
            raise UsageError(f"{source}: {where}: not a trace event: {first['msg']}") from None
    # A trace of a session (flowdebug run --json) holds its history: the requests a vendor
    # would refuse are drawn from it.
    conv = data.get("conversation") if isinstance(data, dict) else None
    try:
        history = Conversation.model_validate(conv) if conv is not None else None
    except ValidationError as err:
        first = err.errors()[0]
        where = validation_path(first["loc"], "$.conversation")
        raise UsageError(f"{source}: {where}: not a conversation: {first['msg']}") from None
    arrows = sequence(events, args.protocol, rejection(history, events, args.protocol))
    title = f"{protocols.get(args.protocol).title}"
    if args.format == "mermaid":
        sys.stdout.write(to_mermaid(arrows, lanes(args.protocol), title))
        return 0
    dot = to_dot(arrows, lanes(args.protocol), title)
    sys.stdout.write(dot if args.format == "dot" else to_svg(dot))
    return 0


def build_parser() -> argparse.ArgumentParser:
    from flowdebug.protocols.convert import TARGETS

    parser = Parser(
        prog="flowdebug",
        description="A visual debugger for the tool-calling cycle.",
        parents=[verbosity()],
    )
    parser.add_argument("--version", action="version", version=f"flowdebug {version('flowdebug')}")
    sub = Subcommands(parser.add_subparsers(dest="command", required=True))

    p = sub.add_parser("protocols", help="list the protocol names, one per line")
    p.set_defaults(func=cmd_protocols)

    p = sub.add_parser("convert", help="convert a payload to another protocol")
    p.add_argument("file", nargs="?", default="-", help="JSON file, or - for stdin")
    p.add_argument("--to", required=True, choices=TARGETS, help="target protocol")
    p.add_argument(
        "--from", dest="source", choices=TARGETS, help="source protocol (detected when absent)"
    )
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("lint", help="what each vendor would reject in a payload")
    p.add_argument("file", nargs="?", default="-", help="JSON file, or - for stdin")
    p.add_argument(
        "--protocol", choices=list(protocols.PROTOCOLS), help="check only this vendor's rules"
    )
    p.set_defaults(func=cmd_lint)

    p = sub.add_parser("run", help="run a scenario headless with its scripted model")
    p.add_argument("scenario", nargs="?", help="a sample scenario name or a scenario .json")
    p.add_argument("--list", action="store_true", help="name the sample scenarios")
    p.add_argument(
        "--protocol",
        default=protocols.default_protocol(),
        choices=list(protocols.PROTOCOLS),
        help="label the trace in this protocol's terms",
    )
    p.add_argument(
        "--fault",
        action="append",
        default=[],
        help="inject a fault: KIND[@TOOL|@#N|@id=ID][:k=v,...] (repeatable)",
    )
    p.add_argument("--json", action="store_true", help="print the trace as JSON")
    decide = p.add_mutually_exclusive_group()
    decide.add_argument("--approve", action="store_true", help="approve destructive calls")
    decide.add_argument("--reject", action="store_true", help="reject destructive calls")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("render", help="draw a trace as a sequence graph")
    p.add_argument("trace", nargs="?", default="-", help="trace JSON (flowdebug run --json)")
    p.add_argument("--format", required=True, choices=["dot", "svg", "mermaid"])
    p.add_argument(
        "--protocol", default=protocols.default_protocol(), choices=list(protocols.PROTOCOLS)
    )
    p.set_defaults(func=cmd_render)
    cli_mcp.add_commands(sub)
    cli_live.add_commands(sub)
    cli_exchange.add_commands(sub, _read)
    cli_record.add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``flowdebug`` command; errors are one line on stderr and exit status 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    setup_logging(getattr(args, "verbose", 0))
    try:
        return args.func(args)
    except FlowdebugError as e:
        print(f"flowdebug: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug: one line still, the traceback with -vv
        log.debug("traceback", exc_info=True)
        print(
            f"flowdebug: internal error ({type(e).__name__}): {e}; -vv shows the traceback",
            file=sys.stderr,
        )
        return 70  # EX_SOFTWARE


if __name__ == "__main__":
    sys.exit(main())
