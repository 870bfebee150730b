"""The ``flowdebug`` command. Its output formats are a contract (see DESIGN.md)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from flowdebug import protocols
from flowdebug.errors import FlowdebugError, UsageError


def _read(path: str | None) -> tuple[str, str]:
    if path in (None, "-"):
        return sys.stdin.read(), "stdin"
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror}") from None


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def cmd_protocols(args: argparse.Namespace) -> int:
    for name in protocols.PROTOCOLS:
        print(name)
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    from flowdebug.convert import convert, load_json

    text, source = _read(args.file)
    payload = load_json(text, source)
    out, warnings = convert(payload, args.to, args.source)
    for w in warnings:
        print(str(w), file=sys.stderr)
    _print_json(out)
    return 0


def cmd_lint(args: argparse.Namespace) -> int:
    from flowdebug.convert import load_json
    from flowdebug.lint import format_finding, has_errors, lint_payload

    text, source = _read(args.file)
    findings = lint_payload(load_json(text, source), args.protocol)
    for f in findings:
        print(format_finding(f))
    return 1 if has_errors(findings) else 0


def build_parser() -> argparse.ArgumentParser:
    from flowdebug.convert import TARGETS

    parser = argparse.ArgumentParser(
        prog="flowdebug", description="A visual debugger for the tool-calling cycle."
    )
    sub = parser.add_subparsers(dest="command", required=True)

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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except FlowdebugError as e:
        print(f"flowdebug: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
