"""Command-line commands over a conversation: ``flowdebug roundtrip`` and ``flowdebug export``.

Both read a trace (``flowdebug run --json``, the app's trace export) or any payload
``flowdebug convert`` reads. Bad input: exit 2 with one line naming the problem and its path.

- ``roundtrip FILE``: one line per ordered pair of vendors, tab-separated: ``FROM``, ``VIA``,
  then ``aspect=verdict`` for every aspect (:data:`flowdebug.protocols.roundtrip.ASPECTS`),
  ``warnings=`` the trip's warning codes (comma-separated, ``-`` for none) and, when a step
  refused the value, ``error=`` its message. Exit 0 whatever was lost. ``--json``: the rows.
- ``tokens FILE``: what declaring the file's tools (a payload, a trace, or declarations alone,
  in any vendor's spelling) costs in each model vendor, one line each,
  tab-separated: ``VENDOR``, the tokens, ``counted`` or ``estimated``, and how (the offline
  estimate unless ``--count``, which asks each vendor's count-tokens endpoint the server's
  environment holds a key for); then ``usage`` lines, the counts each vendor reported for
  each model turn the file holds. Exit 0. ``--json``: both tables.
- ``export TRACE --format NAME``: one fine-tuning example as a JSONL line on stdout, the
  warnings on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from flowdebug import jsontext
from flowdebug.exchange.training import training_formats

Reader = Callable[[str], tuple[bytes | str, str]]  # the command's reader of a file (or -)


def _read_value(args: argparse.Namespace, path: str) -> tuple[Any, bool]:
    """The JSON in ``path`` (``-``: stdin), and whether it is a trace."""
    from flowdebug.exchange.imports import TRACE

    text, source = args.read(path)
    data = jsontext.loads(text, source)
    return data, isinstance(data, dict) and str(data.get("format", "")).startswith(TRACE)


def _conversation(data: Any) -> Any:
    from flowdebug.exchange.imports import import_session

    return import_session(data).state.conversation


def cmd_roundtrip(args: argparse.Namespace) -> int:
    from flowdebug.protocols.roundtrip import ASPECTS, roundtrip

    data, is_trace = _read_value(args, args.file)
    rows = roundtrip(_conversation(data) if is_trace else data)
    if args.json:
        sys.stdout.write(json.dumps([r.summary() for r in rows], indent=2) + "\n")
        return 0
    for r in rows:
        cells = [r.source, r.via, *(f"{a}={r.aspects.get(a, '-')}" for a in ASPECTS)]
        cells.append(f"warnings={','.join(r.warnings) or '-'}")
        if r.error:
            cells.append(f"error={r.error}")
        print("\t".join(cells))
    return 0


def cmd_tokens(args: argparse.Namespace) -> int:
    from flowdebug.exchange.imports import import_session
    from flowdebug.exchange.tool_imports import parse_tools, tools_only
    from flowdebug.protocols.tools import tool_envelope
    from flowdebug.views.tokens import footprints, usage_rows

    data, _ = _read_value(args, args.file)
    if tool_envelope(data) is not None or tools_only(data):  # declarations alone
        tools, usage = parse_tools(data).tools, []
    else:
        state = import_session(data).state
        tools, usage = state.conversation.tools or state.toolset.tools, usage_rows(state)
    found = footprints(tools, count=args.count)
    if args.json:
        rows = [{"protocol": f.protocol, "tokens": f.tokens, "how": f.how, "note": f.note}
                for f in found]  # fmt: skip
        sys.stdout.write(json.dumps({"footprint": rows, "usage": usage}, indent=2) + "\n")
        return 0
    for f in found:
        print("\t".join([f.protocol, str(f.tokens), f.how, f.note]))
    for row in usage:
        print("\t".join(["usage", *(f"{k}={'-' if v is None else v}" for k, v in row.items())]))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from flowdebug.exchange.training import training_line

    data, _ = _read_value(args, args.trace)
    line, warnings = training_line(_conversation(data), args.format)
    for w in warnings:
        print(str(w), file=sys.stderr)
    sys.stdout.write(line)
    return 0


def add_commands(subparsers: Any, read: Reader) -> None:
    """Add ``roundtrip`` and ``export`` to the ``flowdebug`` parser's subparsers; ``read``
    reads a file the way every command does (the size cap, stdin)."""
    p = subparsers.add_parser(
        "roundtrip",
        help="what A -> B -> A keeps and loses, for every ordered pair of vendors",
    )
    p.add_argument("file", nargs="?", default="-", help="trace or payload JSON, or - for stdin")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.set_defaults(func=cmd_roundtrip, read=read)
    p = subparsers.add_parser(
        "tokens", help="the tools' token footprint per vendor, and the usage each reported"
    )
    p.add_argument("file", nargs="?", default="-", help="trace or payload JSON, or - for stdin")
    p.add_argument(
        "--count",
        action="store_true",
        help="count with each vendor's endpoint where the environment holds its key",
    )
    p.add_argument("--json", action="store_true", help="print both tables as JSON")
    p.set_defaults(func=cmd_tokens, read=read)
    p = subparsers.add_parser("export", help="a session as a fine-tuning example (JSONL)")
    p.add_argument("trace", nargs="?", default="-", help="trace or payload JSON, or - for stdin")
    p.add_argument("--format", required=True, choices=training_formats())
    p.set_defaults(func=cmd_export, read=read)
