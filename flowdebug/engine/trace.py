"""Trace events and their protocol-specific sequences.

The debugger appends protocol-neutral :class:`TraceEvent` objects; :func:`sequence` derives
each protocol's view from them: the same arrows between the same lanes, labelled in that
protocol's own terms (``tool_use toolu_…``, ``tool_calls[0] call_…``, ``functionCall``…).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from flowdebug.model import HostedCall, HostedResult, ToolCall, ToolResult

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


# What each protocol calls a vendor-run call on the wire, by canonical hosted tool name
# (``*`` for any other); a protocol without hosted tools draws the call as dropped.
HOSTED_TERMS: dict[str, dict[str, str]] = {
    "anthropic": {"mcp": "mcp_tool_use", "*": "server_tool_use"},
    "openai-responses": {
        "web_search": "web_search_call",
        "file_search": "file_search_call",
        "mcp": "mcp_call",
        "code_interpreter": "code_interpreter_call",
        "computer": "computer_call",
        "local_shell": "local_shell_call",
        "image_generation": "image_generation_call",
        "*": "hosted item",
    },
    "gemini": {"code_execution": "executableCode", "*": "grounding"},
}


def _hosted_term(protocol: str, e: TraceEvent) -> str:
    terms = HOSTED_TERMS.get(protocol)
    if terms is None:
        return "hosted tool (not carried)"
    term = terms.get(e.tool or "", terms["*"])
    if e.kind == "hosted_result":
        if protocol == "anthropic":
            return "mcp_tool_result" if e.tool == "mcp" else f"{e.tool}_tool_result"
        if protocol == "gemini" and e.tool == "code_execution":
            return "codeExecutionResult"
        return f"{term} result"
    return term


def _args(data: dict[str, Any]) -> str:
    args = data.get("arguments") or {}
    inner = ", ".join(f"{k}={v}" for k, v in args.items()) if isinstance(args, dict) else ""
    return shorten(inner, 30)


def _model_label(protocol: str, e: TraceEvent) -> str:
    cid, name, i = e.call_id or "", e.tool or "", e.index or 0
    match e.kind, protocol:
        case "declare", "anthropic":
            return f"POST /v1/messages · tools[{e.data.get('n_tools', 0)}]"
        case "declare", "openai-chat":
            return f"POST /chat/completions · tools[{e.data.get('n_tools', 0)}]"
        case "declare", "openai-responses":
            return f"POST /responses · tools[{e.data.get('n_tools', 0)}]"
        case "declare", "gemini":
            return f"generateContent · functionDeclarations[{e.data.get('n_tools', 0)}]"
        case "declare", _:
            return f"model request · {plural(e.data.get('n_tools', 0), 'tool')}"
        case "tool_call", "anthropic":
            return f"tool_use {cid} {name}"
        case "tool_call", "openai-chat":
            return f"tool_calls[{i}] {cid} {name}"
        case "tool_call", "openai-responses":
            return f"function_call call_id={cid} {name}"
        case "tool_call", "gemini":
            return f"functionCall {name}" + (f" id={cid}" if cid else "")
        case "tool_call", _:
            return f"call {name} ({cid})"
        case "continuation", "anthropic":
            return f"user turn: tool_result ×{e.data.get('n_results', 0)}"
        case "continuation", "openai-chat":
            return f"role:tool messages ×{e.data.get('n_results', 0)}"
        case "continuation", "openai-responses":
            return f"function_call_output ×{e.data.get('n_results', 0)}"
        case "continuation", "gemini":
            return f"functionResponse ×{e.data.get('n_results', 0)}"
        case "final_answer", "anthropic":
            return "text · stop_reason: end_turn"
        case "final_answer", "openai-chat":
            return "content · finish_reason: stop"
        case "final_answer", "openai-responses":
            return "message output_text · completed"
        case "final_answer", "gemini":
            return "text · finishReason: STOP"
        case "text", "openai-chat":
            return "content (with tool_calls)"
        case "text", "gemini":
            return "text part"
        case "text", _:
            return "text block"
        case ("hosted_call" | "hosted_result"), _:
            return f"{_hosted_term(protocol, e)} · {e.label}"
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


def sequence(events: list[TraceEvent], protocol: str) -> list[Arrow]:
    """``events`` as ``protocol`` shows them. MCP executes on an MCP server lane."""
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
    return out


def lanes(protocol: str) -> list[Lane]:
    """The lanes of ``protocol``'s graph, left to right."""
    return ["user", "runtime", "model", "mcp" if protocol == "mcp" else "tool"]
