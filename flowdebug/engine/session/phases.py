"""The four phases of a debugger step, each over the session's :class:`SessionState`:
:func:`declare` the tools, :func:`request` the model's turn from the player, :func:`execute`
its calls (or wait for a person's approval), :func:`continuation` (send the results back, or
halt at the round cap). Each records its trace events through ``emit`` and says what comes
next; :class:`~flowdebug.engine.session.debugger.Session` runs them one step at a time."""

from __future__ import annotations

import json

from pydantic import JsonValue

from flowdebug.engine.execution.approval import Decision, Edit, needs_approval
from flowdebug.engine.execution.faults import (
    apply_protocol_faults,
    apply_request_faults,
    first_call_number,
)
from flowdebug.engine.execution.runtime import Runtime
from flowdebug.engine.session.exchange_bodies import last_of, shared
from flowdebug.engine.session.session_state import SessionState
from flowdebug.engine.tracing.replay import (
    Sink,
    continuation_event,
    declare_events,
    dispatch_event,
    result_event,
    turn_events,
)
from flowdebug.errors import ProviderError
from flowdebug.model import Message, ToolCall
from flowdebug.players.base import Player, WireExchange


def declare(s: SessionState, emit: Sink) -> None:
    """Declare the tools: the conversation carries the toolset from here on."""
    s.round = 1
    conv = s.conversation.model_copy(update={"tools": s.toolset.tools})
    s.conversation = conv
    declare_events(emit, conv)
    s.next_phase, s.status_text = "request", "the model is asked; step to get its turn"


def request(s: SessionState, player: Player, emit: Sink) -> None:
    """Get the model's turn from ``player`` (request faults applied) and append it. A live
    vendor that fails the call (4xx, 5xx, a timeout) answers with a red arrow carrying its own
    words, and the cycle halts there (Undo goes back to retry)."""
    try:
        turn = player.respond(s.conversation)
    except ProviderError as e:
        _provider_failed(s, e, emit)
        return
    first = first_call_number(s.conversation.messages)
    message = apply_request_faults(
        turn.response.message, s.faults, first, tools=s.conversation.tools
    )
    if turn.exchange is not None:
        _keep_exchange(s, turn.exchange)
    s.conversation = s.conversation.model_copy(
        update={"messages": [*s.conversation.messages, message]}
    )
    calls = message.tool_calls
    turn_events(emit, message, s.round, turn.elapsed_ms or None)
    if calls:
        s.decisions = {}
        s.next_phase, s.status_text = (
            "execution",
            (
                f"the model asked for {len(calls)} call{'s' if len(calls) > 1 else ''}; "
                "step to execute"
            ),
        )
        return
    s.status, s.status_text = "finished", "the model answered: the cycle is done"


def execute(s: SessionState, emit: Sink) -> None:
    """Run the last turn's calls, or wait when a destructive call has no decision yet."""
    calls = s.conversation.messages[-1].tool_calls
    waiting = [c for c in calls if needs_approval(c, s.toolset) and c.id not in s.decisions]
    if waiting:
        s.status = "awaiting_approval"
        s.status_text = "waiting for approval: " + ", ".join(f"{c.name} ({c.id})" for c in waiting)
        return
    for call_id, decision in s.decisions.items():
        emit(
            "execution",
            "approval",
            "user",
            "runtime",
            f"{decision.kind} {call_id}",
            call_id=call_id,
        )
    runtime = Runtime(s.toolset, s.policy, session_id=s.id, state=s.tool_state)
    first = first_call_number(s.conversation.messages[:-1])
    batch = runtime.execute(calls, decisions=s.decisions, faults=s.faults, first_call_number=first)
    s.executions = [*s.executions, *batch.executions]
    s.tool_state = runtime.state
    added = apply_protocol_faults(batch.message, s.faults, first)
    s.conversation = s.conversation.model_copy(
        update={"messages": [*_with_edits(s.conversation.messages, s.decisions), *added]}
    )
    n = len(batch.executions)
    for ex in batch.executions:
        if ex.arguments is None:
            continue  # refused by the runtime (or rejected): it never reached the tool
        call = ex.call.model_copy(update={"arguments": ex.arguments, "raw_arguments": None})
        edited = " (edited)" if ex.decision == "edit" else ""
        data = {"handler": ex.handler, "fault": ex.fault, **ex.data}
        dispatch_event(emit, call, s.round, n, edited, data)
    for ex in batch.executions:
        result_event(
            emit,
            ex.result,
            ex.call.name,
            ex.arguments is not None,
            s.round,
            n,
            duration_ms=round(ex.duration_ms, 1),
            data={"steps": ex.steps, **ex.data},
        )
    s.status = "ready"
    errors = sum(r.is_error for r in batch.results)
    s.next_phase, s.status_text = (
        "continuation",
        (
            f"{n} result{'s' if n > 1 else ''}"
            + (f", {errors} failed" if errors else "")
            + f"; step to send {'them' if n > 1 else 'it'} back"
        ),
    )


def continuation(s: SessionState, emit: Sink) -> None:
    """Send the results back for the next round, or halt at the round cap."""
    if s.round >= s.policy.max_rounds:
        emit(
            "continuation",
            "halt",
            "runtime",
            "user",
            f"round cap reached ({s.policy.max_rounds})",
            error=True,
            error_type="round_cap",
        )
        s.status = "halted"
        s.status_text = f"halted: the round cap ({s.policy.max_rounds}) was reached"
        return
    results = s.conversation.messages[-1].tool_results or [
        r for m in s.conversation.messages[-2:] for r in m.tool_results
    ]
    s.round += 1
    continuation_event(emit, len(results))
    s.next_phase, s.status_text = "request", "results sent; step to get the model's turn"


def _with_edits(messages: list[Message], decisions: dict[str, Decision]) -> list[Message]:
    """The history with a person's edited arguments in the model's turn: the results answer
    the edited calls, so the model must see those calls (the graph keeps the original)."""
    edits = {cid: d.arguments for cid, d in decisions.items() if isinstance(d, Edit)}
    if not edits or not messages:
        return list(messages)
    last = messages[-1]
    parts = [
        p.model_copy(update={"arguments": edits[p.id], "raw_arguments": None})
        if isinstance(p, ToolCall) and p.id in edits
        else p
        for p in last.parts
    ]
    return [*messages[:-1], last.model_copy(update={"parts": parts})]


def _exchange_json(ex: WireExchange, step: int) -> dict[str, JsonValue]:
    data = {k: v for k, v in vars(ex).items() if not k.startswith("_")}
    return json.loads(json.dumps({"step": step, **data}, default=str))


def _keep_exchange(s: SessionState, ex: WireExchange) -> None:
    """Append the live call's exchange, sharing the history of the one before it (each
    request carries the whole history again: see exchange_bodies)."""
    s.exchanges.append(shared(_exchange_json(ex, s.step), last_of(s.exchanges, ex.protocol)))


def _provider_failed(s: SessionState, e: ProviderError, emit: Sink) -> None:
    """The vendor's failure drawn where the cycle is: the request comes back as an error."""
    words = " ".join(_vendor_words(e.body).split())
    head = f"HTTP {e.status}" if e.status else "no answer"
    label = f"{head} · {words[:60]}" + ("…" if len(words) > 60 else "")
    if isinstance(e.exchange, WireExchange):
        _keep_exchange(s, e.exchange)
    emit(
        "request",
        "halt",
        "model",
        "runtime",
        label,
        error=True,
        error_type="provider_error",
        data={"status": e.status, "provider": e.provider, "message": words[:2000]},
    )
    s.status = "halted"
    s.status_text = f"halted: {e.provider} {head}: {words[:300]}" + (
        f" ({e.hint})" if e.hint else ""
    )


def _vendor_words(body: str) -> str:
    """The vendor's message from its error body: the first ``message`` of a JSON error
    (Anthropic, OpenAI, Gemini, Bedrock all say it there), else the body as it came."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return body
    todo = [data]
    while todo:
        node = todo.pop(0)
        if isinstance(node, dict):
            for key, value in node.items():
                if key.lower() == "message" and isinstance(value, str) and value.strip():
                    return value
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return body
