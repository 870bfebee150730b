"""The trace events of each phase, for the debugger's steps and for a replayed history.

The debugger records a step's events through the emitters here (``declare_events``,
``turn_events``, ``dispatch_event``, ``result_event``, ``continuation_event``). ``replay``
uses the same emitters to rebuild the events of a history that was not stepped here (an
imported vendor payload carries the messages, not how they came about), one step per phase,
so such a conversation is drawn from its first turn. What the wire does not say (durations,
handlers, approvals) is absent from a replay.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flowdebug.engine.execution.runtime import REFUSED
from flowdebug.engine.tracing.trace import (
    EventKind,
    Lane,
    Phase,
    TraceEvent,
    call_label,
    hosted_label,
    result_label,
    shorten,
)
from flowdebug.model import Conversation, HostedCall, Message, ToolCall, ToolResult

# How events are recorded: (phase, kind, source, target, label, **fields). The debugger's
# sink stamps its step, round and clock; the replay's its own step and round.
Sink = Callable[..., None]


@dataclass
class Replay:
    """Events being recorded at one step and round: a replayed history and where the session
    stands after it, or (over the session's own list) the debugger's step in progress."""

    events: list[TraceEvent] = field(default_factory=list)
    step: int = 0
    round: int = 0
    messages: int = 0  # the history's length once this step is done

    def add(
        self, phase: Phase, kind: EventKind, source: Lane, target: Lane, label: str, **kw: Any
    ) -> None:
        self.events.append(
            TraceEvent(
                seq=len(self.events),
                step=self.step,
                round=self.round,
                phase=phase,
                kind=kind,
                source=source,
                target=target,
                label=label,
                messages=self.messages,
                **kw,
            )
        )


def replay(conv: Conversation) -> Replay:
    """The debugger's events for ``conv``'s history, as if each phase had been stepped.

    A history with no model turn yet replays to nothing: declaring the tools is still the
    next step, and that step draws the user's messages itself.
    """
    r = Replay()
    messages = conv.messages
    first = next((i for i, m in enumerate(messages) if m.role == "assistant"), None)
    if first is None:
        return r
    r.step, r.round, r.messages = 1, 1, first
    declare_events(r.add, conv.model_copy(update={"messages": messages[:first]}))
    results = 0  # results since the last model turn: sent back before the next one
    for i, msg in enumerate(messages[first:], start=first):
        match msg.role:
            case "assistant":
                if results:
                    r.step, r.round, r.messages = r.step + 1, r.round + 1, i
                    continuation_event(r.add, results)
                    results = 0
                r.step, r.messages = r.step + 1, i + 1
                turn_events(r.add, msg, r.round)
            case "tool":
                r.step, r.messages = r.step + 1, i + 1
                _results(r, msg, _calls_before(messages, i))
                results += len(msg.tool_results)
            case "user" if msg.text:
                r.messages = i + 1
                # a new question starts the cycle again: drawn like the first one
                r.add("declaration", "user_message", "user", "runtime", shorten(msg.text, 48))
            case _:
                pass  # a system message, or a user turn without text: no arrow of its own
    return r


def rebuild(
    recorded: list[TraceEvent], before: Conversation, after: Conversation
) -> list[TraceEvent]:
    """The trace for ``after``, a history edited (or cut short) from ``before``.

    The recorded events of the messages both histories share are kept as they were (with
    their timings, handlers and approvals); the rest is redrawn from ``after``, so a deleted
    turn's arrows go and an edited one is drawn as it now reads. Events recorded without a
    message count (older sessions) are all redrawn once the history changes.
    """
    head = 0
    for old, new in zip(before.messages, after.messages, strict=False):
        if old != new:
            break
        head += 1
    if head == len(before.messages) == len(after.messages):
        return list(recorded)
    if any(e.messages is None for e in recorded):
        head = -1  # which message an event belongs to is unknown: redraw it all
    kept = [e for e in recorded if e.messages is not None and e.messages <= head]
    redrawn = replay(after).events
    tail = [e for e in redrawn if e.messages is not None and e.messages > head]
    # Results sent back at the edge: drawn again unless the kept events already did.
    sent = [e for e in redrawn if e.kind == "continuation" and e.messages == head]
    if sent and not (kept and kept[-1].kind == "continuation"):
        tail = sent + tail
    base = kept[-1].step if kept else 0
    steps: dict[int, int] = {}
    out = list(kept)
    for e in tail:
        step = steps.setdefault(e.step, base + len(steps) + 1)
        out.append(e.model_copy(update={"seq": len(out), "step": step}))
    return out


def declare_events(add: Sink, conv: Conversation) -> None:
    """The declaration: the user's messages so far, tool discovery, the first request."""
    for m in conv.messages:
        if m.role == "user" and m.text:
            add("declaration", "user_message", "user", "runtime", shorten(m.text, 48))
    n = len(conv.tools)
    add("declaration", "discover", "runtime", "tool", f"list tools ({n})", data={"n_tools": n})
    add(
        "declaration",
        "declare",
        "runtime",
        "model",
        f"request with {n} tool declarations",
        data={
            "n_tools": n,
            "tools": [t.name for t in conv.tools],
            "n_messages": len(conv.messages),
        },
    )


def hosted_events(add: Sink, msg: Message, batch: int) -> None:
    """The tools the vendor ran inside this turn (web search, code execution, a connector's
    MCP server): notes on the model's lane, since the runtime never sees them run."""
    for part in msg.hosted:
        is_call = isinstance(part, HostedCall)
        add(
            "request",
            "hosted_call" if is_call else "hosted_result",
            "model",
            "model",
            hosted_label(part),
            call_id=part.id if is_call else part.call_id,
            tool=part.name,
            batch=batch,
            error=not is_call and part.is_error,
            data={"hosted": part.model_dump(mode="json", exclude_none=True)},
        )


def turn_events(add: Sink, msg: Message, batch: int, duration_ms: float | None = None) -> None:
    """One model turn: its calls (one parallel batch), or its final answer to the user."""
    hosted_events(add, msg, batch)
    calls = msg.tool_calls
    if not calls:
        text = shorten(msg.text, 48)
        add("request", "final_answer", "model", "runtime", text, duration_ms=duration_ms)
        add("request", "answer", "runtime", "user", shorten(msg.text, 60))
        return
    if msg.text:
        add("request", "text", "model", "runtime", shorten(msg.text, 48))
    for i, call in enumerate(calls):
        add(
            "request",
            "tool_call",
            "model",
            "runtime",
            call_label(call),
            call_id=call.id,
            tool=call.name,
            index=i,
            batch=batch,
            batch_size=len(calls),
            data={"call": call.model_dump(mode="json", exclude_none=True)},
            duration_ms=duration_ms,
        )


def continuation_event(add: Sink, n_results: int) -> None:
    """The results go back to the model with the history."""
    add(
        "continuation",
        "continuation",
        "runtime",
        "model",
        f"results ×{n_results} + history",
        data={"n_results": n_results},
    )


def _calls_before(messages: list[Message], i: int) -> dict[str, ToolCall]:
    """The calls of the nearest assistant turn before message ``i``, by id."""
    for m in reversed(messages[:i]):
        if m.role == "assistant":
            return {c.id: c for c in m.tool_calls}
    return {}


def _results(r: Replay, msg: Message, calls: dict[str, ToolCall]) -> None:
    results = msg.tool_results
    n = len(results)
    for res in results:
        call = calls.get(res.call_id)
        if call is not None and res.error_type not in REFUSED:
            dispatch_event(r.add, call, r.round, n)
    for res in results:
        result_event(r.add, res, res.name, res.error_type not in REFUSED, r.round, n)


def dispatch_event(
    add: Sink, call: ToolCall, batch: int, n: int, note: str = "", data: Any = None
) -> None:
    """The runtime runs one call of a batch of ``n`` (``call`` as it was sent to the tool)."""
    add(
        "execution",
        "dispatch",
        "runtime",
        "tool",
        call_label(call) + note,
        call_id=call.id,
        tool=call.name,
        batch=batch,
        batch_size=n,
        data=data or {},
    )


def result_event(
    add: Sink,
    res: ToolResult,
    tool: str | None,
    ran: bool,
    batch: int,
    n: int,
    duration_ms: float | None = None,
    data: dict[str, Any] | None = None,
) -> None:
    """One result: from the tool, or a note on the runtime's lane when it refused the call."""
    label = result_label(res)
    add(
        "execution",
        "result",
        "tool" if ran else "runtime",
        "runtime",
        label if ran else f"{tool} not run — {label}",
        call_id=res.call_id,
        tool=tool,
        batch=batch,
        batch_size=n,
        error=res.is_error,
        error_type=res.error_type,
        duration_ms=duration_ms,
        data={"result": res.model_dump(mode="json", exclude_none=True), **(data or {})},
    )
