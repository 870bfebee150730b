"""Trace events and their protocol-specific sequences.

The debugger appends protocol-neutral :class:`TraceEvent` objects; :func:`sequence` derives
each protocol's view from them: the same arrows between the same lanes, labelled in that
protocol's own terms (``tool_use toolu_…``, ``tool_calls[0] call_…``, ``functionCall``…).

A vendor that would refuse a request (its history breaks one of the vendor's rules, as the
linter knows them) is not a trace event: the history decides it, so :func:`rejection` finds it
from the conversation and :func:`sequence` draws the request coming back as a 400 and that
vendor's cycle ending there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from flowdebug.engine.tracing.verdicts import VERDICTS
from flowdebug.lint.base.findings import Finding
from flowdebug.lint.protocol import check_conversation
from flowdebug.model import Conversation, HostedCall, HostedResult, ToolCall, ToolResult
from flowdebug.protocols import facts
from flowdebug.protocols.facts import Terms

Lane = Literal["user", "runtime", "model", "tool", "mcp"]
Phase = Literal["declaration", "request", "execution", "continuation"]
EventKind = Literal[
    "user_message",  # user → runtime
    "discover",  # runtime → tool: list the tools (drawn only where MCP does it on the wire)
    "declare",  # runtime → model: the request with tool declarations
    "tool_call",  # model → runtime: one call of the turn
    "text",  # model → runtime: text that came with calls
    "final_answer",  # model → runtime: a turn without calls
    "answer",  # runtime → user
    "dispatch",  # runtime → tool: execute one call
    "result",  # tool → runtime: one result (error or not)
    "approval",  # user → runtime: approve / edit / reject a gated call
    "continuation",  # runtime → model: results appended, model called again
    "halt",  # the runtime stopped the loop (round cap, script ended, player error)
    "hosted_call",  # model → model: a tool the vendor runs itself (web search, code execution)
    "hosted_result",  # model → model: what the vendor's tool answered, in the same turn
]

LANES: dict[Lane, str] = {
    "user": "User",
    "runtime": "Runtime",
    "model": "Model API",
    "tool": "Tool",
    "mcp": "MCP server",
}

PHASES: tuple[Phase, ...] = ("declaration", "request", "execution", "continuation")


class TraceEvent(BaseModel):
    """One arrow of the cycle, protocol-neutral."""

    model_config = ConfigDict(frozen=True)

    seq: int
    step: int
    round: int
    phase: Phase
    kind: EventKind
    source: Lane
    target: Lane
    label: str
    call_id: str | None = None
    tool: str | None = None
    index: int | None = None  # position of the call in its turn
    batch: int | None = None  # calls of one parallel batch share it
    batch_size: int = 1
    error: bool = False
    error_type: str | None = None
    data: dict[str, JsonValue] = Field(default_factory=dict)
    t_ms: float = 0.0
    duration_ms: float | None = None
    # How many messages the history held once the event's step was done: an edit that changes
    # message i keeps the events with at most i and redraws the rest (None: not recorded).
    messages: int | None = None


@dataclass(frozen=True)
class Arrow:
    """One arrow of one protocol's sequence graph."""

    seq: int
    step: int
    phase: Phase
    source: Lane
    target: Lane
    label: str
    error: bool = False
    batch: int | None = None
    batch_size: int = 1
    kind: str = ""
    # The whole text when the label is a shortened one (a vendor's error message): shown on
    # hover and in the caption.
    detail: str | None = None


def plural(n: object, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def shorten(text: str, n: int = 28) -> str:
    """``text`` on one line, cut to ``n`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def call_label(call: ToolCall) -> str:
    """``name(k=v, …)`` for an arrow; raw argument text when it was not a JSON object."""
    if call.raw_arguments is not None:
        return f"{call.name}({shorten(call.raw_arguments, 30)})"
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in call.arguments.items())
    return f"{call.name}({shorten(args, 40)})"


def result_label(result: ToolResult) -> str:
    """A result's arrow label: its text, prefixed with the error type when it is an error
    whose text does not already say so."""
    label = shorten(result.text, 40)
    if result.is_error and not result.text.lower().startswith(result.error_type or "error"):
        return f"{result.error_type or 'error'}: {label}"
    return label


def hosted_label(part: HostedCall | HostedResult) -> str:
    """A vendor-run call or result as one note: ``web_search(query="…")`` or its answer."""
    if isinstance(part, HostedCall):
        name = f"{part.server}.{part.name}" if part.server else part.name
        args = ", ".join(
            f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in part.arguments.items()
        )
        return f"{name}({shorten(args, 36)})"
    text = shorten(part.text, 40) or "(no text)"
    return f"error: {text}" if part.is_error else text


def _hosted_term(terms: Terms, e: TraceEvent) -> str:
    """What a vendor calls a hosted call or result on the wire; a vendor without hosted
    tools draws it as not carried."""
    if not terms.hosted:
        return "hosted tool (not carried)"
    term = terms.hosted.get(e.tool or "", terms.hosted["*"])
    if e.kind == "hosted_result":
        result = terms.hosted_result.get(
            e.tool or "", terms.hosted_result.get("*", "{term} result")
        )
        return result.format(term=term, name=e.tool or "tool")
    return term


def _args(data: dict[str, Any]) -> str:
    args = data.get("arguments") or {}
    inner = ", ".join(f"{k}={v}" for k, v in args.items()) if isinstance(args, dict) else ""
    return shorten(inner, 30)


def _model_label(protocol: str, e: TraceEvent) -> str:
    """An arrow to or from the model, in the vendor's own terms (its facts)."""
    terms = facts(protocol).terms
    cid, name, i = e.call_id or "", e.tool or "", e.index or 0
    n_tools, n_results = e.data.get("n_tools", 0), e.data.get("n_results", 0)
    match e.kind:
        case "declare":
            return terms.declare.format(n=n_tools, tools=plural(n_tools, "tool"))
        case "tool_call":
            template = (
                terms.tool_call_no_id if not cid and terms.tool_call_no_id else terms.tool_call
            )
            return template.format(id=cid, name=name, i=i)
        case "continuation" if terms.continuation is not None:
            return terms.continuation.format(n=n_results)
        case "final_answer" if terms.final_answer is not None:
            return terms.final_answer
        case "text":
            return terms.text
        case "hosted_call" | "hosted_result":
            return f"{_hosted_term(terms, e)} · {e.label}"
    return e.label


def _wire_label(e: TraceEvent, wire: dict[str, Any]) -> str:
    """A call that went to a real MCP server, labelled from its JSON-RPC exchange
    (``data["mcp"]``, see :meth:`flowdebug.mcp.call.McpCall.trace_data`)."""
    if e.kind == "dispatch":
        return f"tools/call {wire.get('tool')} id={wire.get('request_id')}"
    error = wire.get("error")
    match wire.get("outcome"):
        case "protocol" if isinstance(error, dict):
            return f"JSON-RPC error {error.get('code')} · {shorten(str(error.get('message')), 30)}"
        case "protocol":
            return "invalid CallToolResult"
        case "tool_error":
            return f"CallToolResult isError:true · {shorten(e.label, 30)}"
        case "timeout":
            return "no response · notifications/cancelled"
        case "mcp_crash":
            return "connection closed: the server died"
        case "mcp_connect":
            return "server unreachable"
    return f"CallToolResult · {shorten(e.label, 30)}"


def _tool_label(protocol: str, e: TraceEvent) -> str:
    if protocol == "mcp":
        wire = e.data.get("mcp")
        if isinstance(wire, dict) and e.kind in ("dispatch", "result"):
            return _wire_label(e, wire)
        if e.kind == "discover":
            return f"tools/list → {plural(e.data.get('n_tools', 0), 'tool')}"
        if e.kind == "dispatch":
            return f"tools/call {e.tool} id={e.call_id}"
        if e.error_type in ("unknown_tool", "protocol"):
            return f"JSON-RPC error -32602 ({e.error_type})"
        if e.error:
            return f"CallToolResult isError:true · {shorten(e.label, 30)}"
        return f"CallToolResult · {shorten(e.label, 30)}"
    return e.label


def sequence(
    events: list[TraceEvent], protocol: str, rejected: Rejection | None = None
) -> list[Arrow]:
    """``events`` as ``protocol`` shows them. MCP executes on an MCP server lane.

    ``rejected`` (see :func:`rejection`): the request it names comes back as a red error arrow
    and nothing follows it, since the vendor's cycle stops there.
    """
    out = []
    for e in events:
        if e.kind == "discover" and protocol != "mcp":
            continue
        source, target = e.source, e.target
        if protocol == "mcp":
            source = "mcp" if source == "tool" else source
            target = "mcp" if target == "tool" else target
        if "model" in (e.source, e.target):
            label = _model_label(protocol, e)
        elif "tool" in (e.source, e.target):
            label = _tool_label(protocol, e)
        else:
            label = e.label
        out.append(
            Arrow(
                e.seq,
                e.step,
                e.phase,
                source,
                target,
                label,
                e.error,
                e.batch,
                e.batch_size,
                e.kind,
            )
        )
        if rejected is not None and e.seq == rejected.seq:
            out.append(
                Arrow(
                    e.seq,
                    e.step,
                    e.phase,
                    "model",
                    "runtime",
                    rejected.label,
                    error=True,
                    kind="rejection",
                    detail=rejected.message,
                )
            )
            break
    return out


# -- rejections ---------------------------------------------------------------------------------

# The events that send a request to the model: what they carry is the history so far.
REQUESTS: tuple[EventKind, ...] = ("declare", "continuation")


@dataclass(frozen=True)
class Rejection:
    """A vendor refusing the request of trace event ``seq``, with its own error text."""

    seq: int
    message: str  # the vendor's text, whole (or the linter's summary when it is not known)
    code: str  # the linter's finding code, e.g. ``missing_result``
    status: int = 400

    @property
    def label(self) -> str:
        """The arrow's text: the status and the vendor's first clause, shortened at a word."""
        text = self.message.replace("`", "")
        head = re.split(r"(?<=[.:])\s", text, maxsplit=1)[0].rstrip(".:")
        return f"{self.status} · {_cut(head, 68)}"


def _cut(text: str, n: int) -> str:
    """``text`` cut to at most ``n`` characters at a word boundary, with an ellipsis."""
    if len(text) <= n:
        return text
    return text[: n - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def _refusal(findings: Iterable[Finding]) -> Finding | None:
    return next((f for f in findings if f.level == "error"), None)


def rejections(
    conv: Conversation, events: Sequence[TraceEvent], protocols: Sequence[str]
) -> dict[str, Rejection]:
    """Per protocol that would refuse one of the requests drawn in ``events``, the first one
    it refuses: the request's history (the messages it carried) breaks one of its rules (a
    lint finding of level error, e.g. a call without its result).

    One lint of the last request's history for every protocol; a protocol that refuses it is
    then searched by halving for its first refused request (a history a vendor refuses stays
    refused as it grows), so a long history costs a few lints, not one per request. Each
    request's verdict is remembered (:mod:`flowdebug.engine.tracing.verdicts`): a Step that sends no
    new request lints nothing.
    """
    sent = [e for e in events if e.kind in REQUESTS and e.messages is not None]
    if not sent or not protocols:
        return {}

    def refused(e: TraceEvent, chosen: tuple[str, ...]) -> list[Finding]:
        return VERDICTS.findings(conv, e.messages or 0, chosen, check_conversation)

    last = refused(sent[-1], tuple(protocols))
    out: dict[str, Rejection] = {}
    for protocol in protocols:
        first = _refusal(f for f in last if f.protocol == protocol)
        if first is None:
            continue
        lo, hi = 0, len(sent) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            found = _refusal(refused(sent[mid], (protocol,)))
            if found is None:
                lo = mid + 1
            else:
                hi, first = mid, found
        out[protocol] = Rejection(
            sent[lo].seq,
            first.vendor_message or first.message.removeprefix(f"{protocol}: "),
            first.code,
        )
    return out


def rejection(
    conv: Conversation | None, events: Sequence[TraceEvent], protocol: str
) -> Rejection | None:
    """The first request drawn in ``events`` that ``protocol`` would refuse (see
    :func:`rejections`); None without a conversation to judge."""
    if conv is None:
        return None
    return rejections(conv, events, (protocol,)).get(protocol)


def lanes(protocol: str) -> list[Lane]:
    """The lanes of ``protocol``'s graph, left to right."""
    return ["user", "runtime", "model", "mcp" if protocol == "mcp" else "tool"]
