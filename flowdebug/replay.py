"""Trace events for a history that was not stepped here (an imported payload).

A vendor request or response carries the messages, not how they came about. This rebuilds
the arrows the debugger would have drawn for them, one step per phase, so an imported
conversation is drawn from its first turn instead of from the first step after the import.
What the wire does not say (durations, handlers, approvals) is simply absent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flowdebug.model import Conversation, Message, ToolCall
from flowdebug.runtime import REFUSED
from flowdebug.trace import (
    EventKind,
    Lane,
    Phase,
    TraceEvent,
    call_label,
    result_label,
    shorten,
)


@dataclass
class Replay:
    """The events of a replayed history and where the session stands after it."""

    events: list[TraceEvent] = field(default_factory=list)
    step: int = 0
    round: int = 0

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
    _declare(r, conv, first)
    results = 0  # results since the last model turn: sent back before the next one
    for i, msg in enumerate(messages[first:], start=first):
        match msg.role:
            case "assistant":
                if results:
                    _continue(r, results)
                    results = 0
                _turn(r, msg)
            case "tool":
                _results(r, msg, _calls_before(messages, i))
                results += len(msg.tool_results)
            case "user" if msg.text:
                r.add("continuation", "user_message", "user", "runtime", shorten(msg.text, 48))
            case _:
                pass  # a system message, or a user turn without text: no arrow of its own
    return r


def _declare(r: Replay, conv: Conversation, first: int) -> None:
    r.step, r.round = 1, 1
    for m in conv.messages[:first]:
        if m.role == "user" and m.text:
            r.add("declaration", "user_message", "user", "runtime", shorten(m.text, 48))
    n = len(conv.tools)
    r.add("declaration", "discover", "runtime", "tool", f"list tools ({n})", data={"n_tools": n})
    r.add(
        "declaration",
        "declare",
        "runtime",
        "model",
        f"request with {n} tool declarations",
        data={"n_tools": n, "tools": [t.name for t in conv.tools], "n_messages": first},
    )


def _turn(r: Replay, msg: Message) -> None:
    r.step += 1
    calls = msg.tool_calls
    if not calls:
        r.add("request", "final_answer", "model", "runtime", shorten(msg.text, 48))
        r.add("request", "answer", "runtime", "user", shorten(msg.text, 60))
        return
    if msg.text:
        r.add("request", "text", "model", "runtime", shorten(msg.text, 48))
    for i, call in enumerate(calls):
        r.add(
            "request",
            "tool_call",
            "model",
            "runtime",
            call_label(call),
            call_id=call.id,
            tool=call.name,
            index=i,
            batch=r.round,
            batch_size=len(calls),
            data={"call": call.model_dump(mode="json", exclude_none=True)},
        )


def _calls_before(messages: list[Message], i: int) -> dict[str, ToolCall]:
    """The calls of the nearest assistant turn before message ``i``, by id."""
    for m in reversed(messages[:i]):
        if m.role == "assistant":
            return {c.id: c for c in m.tool_calls}
    return {}


def _results(r: Replay, msg: Message, calls: dict[str, ToolCall]) -> None:
    r.step += 1
    results = msg.tool_results
    n = len(results)
    for res in results:
        call = calls.get(res.call_id)
        if call is not None and res.error_type not in REFUSED:
            r.add(
                "execution",
                "dispatch",
                "runtime",
                "tool",
                call_label(call),
                call_id=res.call_id,
                tool=call.name,
                batch=r.round,
                batch_size=n,
            )
    for res in results:
        ran = res.error_type not in REFUSED
        label = result_label(res)
        r.add(
            "execution",
            "result",
            "tool" if ran else "runtime",
            "runtime",
            label if ran else f"{res.name} not run — {label}",
            call_id=res.call_id,
            tool=res.name,
            batch=r.round,
            batch_size=n,
            error=res.is_error,
            error_type=res.error_type,
            data={"result": res.model_dump(mode="json", exclude_none=True)},
        )


def _continue(r: Replay, n: int) -> None:
    r.step += 1
    r.round += 1
    r.add(
        "continuation",
        "continuation",
        "runtime",
        "model",
        f"results ×{n} + history",
        data={"n_results": n},
    )
