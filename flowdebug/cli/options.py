"""What every ``flowdebug`` command shares: one-line usage errors and ``-v`` logging."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any, NoReturn

from flowdebug import protocols
from flowdebug.redact import redact_text, strip_query_credentials

log = logging.getLogger("flowdebug")


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, like every other error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def verbosity() -> argparse.ArgumentParser:
    """A parent parser adding ``-v`` (repeatable) to a command, so it may come after it."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=argparse.SUPPRESS,
        help="log what happens on stderr (-v: steps, -vv: details, the SDKs' too)",
    )
    return p


class Subcommands:
    """``add_subparsers()`` whose every command takes ``-v`` too (``flowdebug run x -v``)."""

    def __init__(self, action: Any):
        self.action = action

    def add_parser(self, name: str, **kwargs: Any) -> Parser:
        kwargs["parents"] = [*kwargs.get("parents", ()), verbosity()]
        parser: Parser = self.action.add_parser(name, **kwargs)
        return parser


def setup_logging(verbose: int) -> None:
    """Log to stderr: flowdebug's warnings by default, ``-v`` its steps, ``-vv`` details and
    the SDKs' own logs too (below ``-vv`` they stay quiet: the command reports what matters)."""
    handler = _StderrHandler()
    handler.setFormatter(_Scrubbing("flowdebug: %(name)s: %(message)s"))
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    for name in ("flowdebug", *_sdk_loggers()):
        logger = logging.getLogger(name)
        for old in [h for h in logger.handlers if isinstance(h, _StderrHandler)]:
            logger.removeHandler(old)
        if name == "flowdebug" or verbose >= 2:
            logger.setLevel(level)
            logger.addHandler(handler)
        else:
            logger.setLevel(logging.CRITICAL)


def _sdk_loggers() -> list[str]:
    """The HTTP clients' loggers and every registered vendor's SDK loggers (its facts)."""
    vendors = [n for f in map(protocols.facts, protocols.PROTOCOLS) for n in f.sdk_loggers]
    return list(dict.fromkeys(["httpx", "httpcore", "httpx2", *vendors]))


class _Scrubbing(logging.Formatter):
    """Log lines without credentials: the HTTP clients log each request's URL, query and all
    (a base URL's ``?token=``), and an SDK may log what a server said back."""

    def format(self, record: logging.LogRecord) -> str:
        return redact_text(strip_query_credentials(super().format(record)))


class _StderrHandler(logging.StreamHandler):
    """The command's own handler (replaced, not stacked, when ``main`` runs again)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)
