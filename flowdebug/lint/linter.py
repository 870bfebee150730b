"""The linter: what each vendor would reject in a conversation, and how good its tools are.

Two families of rules, each in its own module:

* :mod:`flowdebug.lint.protocol`: the message history under each vendor's pairing and
  ordering rules (dropped, misplaced, reordered or duplicated results, text before results,
  roles).
* :mod:`flowdebug.lint.tools`: the tool declarations (descriptions, ``required``, enums, names,
  schema keywords each vendor rejects, strict mode).

Each vendor's own rules are declared in its folder (``protocols/<vendor>/rules.py``, or
``TurnRules`` in its facts) and looked up through the registry.

Findings are protocol-specific (``protocol`` set) or neutral (``protocol`` None); selecting
protocols filters the specific ones only. Levels say what happens to the conversation as
flowdebug would send it: error, the vendor refuses it; warning, it goes through only because
flowdebug's encoder rewrites something (a tool name, an empty id) or it is accepted but likely
mishandled; info, accepted and worth knowing. ``flowdebug lint`` prints ``format_finding`` lines
and exits 1 when ``has_errors``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from flowdebug.errors import UsageError
from flowdebug.lint.base.findings import Finding, Level
from flowdebug.lint.protocol import check_conversation, check_response
from flowdebug.lint.tools import check_tools
from flowdebug.model import Conversation, Tool
from flowdebug.protocols import PROTOCOLS
from flowdebug.protocols.convert import decode
from flowdebug.protocols.tools import tool_envelope

__all__ = [
    "Finding",
    "Level",
    "format_finding",
    "has_errors",
    "lint_conversation",
    "lint_payload",
    "lint_tools",
]


def _select(protocols: str | Iterable[str] | None) -> tuple[str, ...]:
    if protocols is None:
        return tuple(PROTOCOLS)  # the registry's, in its order
    chosen = (protocols,) if isinstance(protocols, str) else tuple(protocols)
    unknown = [p for p in chosen if p not in PROTOCOLS]
    if unknown:
        raise UsageError(f"unknown protocol {unknown[0]!r}; choose among: {', '.join(PROTOCOLS)}")
    return tuple(p for p in PROTOCOLS if p in chosen)


def lint_tools(
    tools: Sequence[Tool], protocols: str | Iterable[str] | None = None
) -> list[Finding]:
    """Findings on tool declarations, for ``protocols`` (every registered vendor when None)."""
    return check_tools(tools, _select(protocols))


def lint_conversation(
    conv: Conversation, protocols: str | Iterable[str] | None = None
) -> list[Finding]:
    """Everything: the conversation's tool declarations, then its message history."""
    chosen = _select(protocols)
    return check_tools(conv.tools, chosen) + check_conversation(conv, chosen)


def lint_payload(payload: Any, protocol: str | None = None) -> list[Finding]:
    """Lint a vendor payload, canonical conversation JSON, or bare tool declarations.

    The payload's protocol and kind are detected (``flowdebug.protocols.convert``); ``protocol``
    restricts the vendor rules to one protocol, it does not say what the payload is. A model
    response or stream is not history yet, so only its call ids are checked. An MCP payload is
    the runtime's exchange with a tool server, not a model conversation: its tools are checked
    for every vendor (they are what models will be offered), its calls and results under MCP's
    rules only. Input that no codec recognises raises CodecError.
    """
    chosen = _select(protocol)
    envelope = tool_envelope(payload)
    decoded = decode(envelope.request, envelope.protocol) if envelope else decode(payload)
    if decoded.response is not None:
        return check_response(decoded.response, chosen)
    conv = decoded.as_conversation()
    if decoded.protocol != "mcp":
        return lint_conversation(conv, chosen)
    findings = check_tools(conv.tools, chosen)
    if decoded.kind == "transcript":  # a lone tools/call or result is not a history
        findings += check_conversation(conv, ("mcp",) if "mcp" in chosen else ())
    return findings


def format_finding(f: Finding) -> str:
    """The CLI line: ``LEVEL path: message``."""
    return f"{f.level.upper()} {f.path}: {f.message}"


def has_errors(findings: Iterable[Finding]) -> bool:
    return any(f.level == "error" for f in findings)
