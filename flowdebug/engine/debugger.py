"""The step debugger: one session of the tool-calling cycle, a phase at a time.

A session walks declaration → request → execution → continuation, then request again,
until the model answers without calls, the round cap halts it, or a destructive call waits
for a person. Every step appends trace events and pushes an undo snapshot; edits are steps
too. A step that fails (the player errs, an edit is invalid) raises and changes nothing.

The whole session is one JSON-serialisable :class:`SessionState`, so it can be saved,
restored, forked and compared.
"""

from __future__ import annotations

import copy
import json
import time
import uuid
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field, JsonValue

from flowdebug.engine.edits import EditError, check_index, check_role, parse_message, parse_part
from flowdebug.engine.faults import (
    Fault,
    apply_protocol_faults,
    apply_request_faults,
    first_call_number,
)
from flowdebug.engine.handlers import Toolset
from flowdebug.engine.replay import (
    Replay,
    continuation_event,
    declare_events,
    dispatch_event,
    rebuild,
    result_event,
    turn_events,
)
from flowdebug.engine.runtime import Decision, Edit, Execution, Policy, Runtime, needs_approval
from flowdebug.engine.trace import (
    EventKind,
    Lane,
    Phase,
    TraceEvent,
)
from flowdebug.errors import UsageError
from flowdebug.model import Conversation, Message, ToolCall
from flowdebug.players.base import Player, WireExchange

Status = Literal["ready", "awaiting_approval", "finished", "halted"]
NextPhase = Literal["declaration", "request", "execution", "continuation"]


class Breakpoint(BaseModel):
    """Where ``run`` stops: before a tool executes, after an error result, at a round."""

    kind: Literal["tool", "error", "round"]
    tool: str | None = None
    round: int | None = None

    def describe(self) -> str:
        match self.kind:
            case "tool":
                return f"before {self.tool} runs"
            case "error":
                return "after an error result"
            case "round":
                return f"at round {self.round}"
        return self.kind


class SessionState(BaseModel):
    """Everything a session is, as data."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    scenario: str | None = None
    conversation: Conversation
    toolset: Toolset
    policy: Policy = Field(default_factory=Policy)
    faults: list[Fault] = Field(default_factory=list)
    breakpoints: list[Breakpoint] = Field(default_factory=list)
    tool_state: dict[str, JsonValue] = Field(default_factory=dict)
    decisions: dict[str, Decision] = Field(default_factory=dict)
    next_phase: NextPhase = "declaration"
    status: Status = "ready"
    status_text: str = "ready to declare the tools"
    round: int = 0
    step: int = 0
    events: list[TraceEvent] = Field(default_factory=list)
    executions: list[Execution] = Field(default_factory=list)
    exchanges: list[dict[str, JsonValue]] = Field(default_factory=list)
    passed_breakpoint: int | None = None
    # The history (or the tools, faults) changed by an edit since the last step: the last
    # step's events no longer say how the history came to be what it is.
    edited: bool = False

    def snapshot(self) -> SessionState:
        """A copy safe to keep: messages and events are immutable, the rest is copied."""
        return self.model_copy(
            update={
                "events": list(self.events),
                "executions": list(self.executions),
                "exchanges": list(self.exchanges),
                "tool_state": copy.deepcopy(self.tool_state),
                "decisions": dict(self.decisions),
                "faults": list(self.faults),
                "breakpoints": list(self.breakpoints),
            }
        )


def resume(conv: Conversation, events: list[TraceEvent]) -> tuple[NextPhase, Status, str]:
    """What comes next for a history that was edited, forked or imported, given its trace."""
    messages = conv.messages
    if not messages:
        return (
            "declaration",
            "ready",
            "no message yet: step to declare the tools, and add a user message (History) "
            "for the model to answer",
        )
    if not any(e.kind == "declare" for e in events):
        return "declaration", "ready", "ready to declare the tools"
    last = messages[-1]
    if last.role == "assistant":
        if last.tool_calls:
            return "execution", "ready", "the model's calls are ready to execute"
        return "request", "finished", "the model answered without calls: the cycle is done"
    if last.role == "tool" and not (events and events[-1].kind == "continuation"):
        return "continuation", "ready", "the results are ready to send back; step to send them"
    return "request", "ready", "ready to call the model"


class Session:
    """A debugger session over one :class:`SessionState` and a player."""

    def __init__(self, state: SessionState, player: Player):
        self.state = state
        self.player = player
        self.undo_stack: list[SessionState] = []
        self._t0 = time.perf_counter()
        # Called with the new state after every change (a step, an edit, an undo): the app
        # saves the session here, so nothing is lost on a reload or a restart.
        self.on_change: Callable[[SessionState], None] | None = None

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self.state)

    @classmethod
    def from_scenario(cls, name: str) -> Session:
        from flowdebug.engine import scenarios

        sc = scenarios.load(name)
        state = SessionState(
            scenario=sc.name,
            conversation=sc.conversation(),
            toolset=sc.toolset(),
            policy=sc.policy,
            faults=sc.fault_list(),
        )
        return cls(state, sc.player())

    def clone(self) -> Session:
        """An independent copy to work on (in the background); ``adopt`` takes it back."""
        twin = Session(self.state.snapshot(), self.player)
        twin.undo_stack = list(self.undo_stack)
        twin._t0 = self._t0
        return twin

    def adopt(self, twin: Session) -> None:
        self.state, self.undo_stack = twin.state, twin.undo_stack
        self._changed()

    # -- stepping -------------------------------------------------------------------------

    @property
    def conversation(self) -> Conversation:
        return self.state.conversation

    @property
    def done(self) -> bool:
        return self.state.status in ("finished", "halted")

    def step(self) -> list[TraceEvent]:
        """Run one phase. Raises (changing nothing) when the phase cannot run."""
        s = self.state
        if s.status in ("finished", "halted"):
            raise UsageError(f"the session is over ({s.status_text}); undo, edit or reset")
        if s.status == "awaiting_approval" and not self._approvals_complete():
            raise UsageError("approve, edit or reject the waiting calls first")
        before = s.snapshot()
        work = s.snapshot()
        work.step += 1
        work.edited = False
        self.state = work
        try:
            phase = work.next_phase
            n = len(work.events)
            {
                "declaration": self._declare,
                "request": self._request,
                "execution": self._execute,
                "continuation": self._continue,
            }[phase]()
        except BaseException:
            self.state = before
            raise
        self.undo_stack.append(before)
        self._changed()
        return self.state.events[n:]

    def step_turn(self) -> list[TraceEvent]:
        """Run phases until one model turn and its execution are done (or the run stops)."""
        events: list[TraceEvent] = []
        while self.state.status == "ready" or self.approvals_decided():
            phase = self.state.next_phase
            events += self.step()
            if phase == "continuation" or (phase == "request" and self.done):
                break
        return events

    def run(self, max_steps: int = 500) -> str:
        """Step until the end, a breakpoint, or a call waiting for approval; says why."""
        for _ in range(max_steps):
            s = self.state
            if s.status not in ("ready",) and not self.approvals_decided():
                return s.status_text
            if s.next_phase == "request" and getattr(self.player, "waiting", False):
                # The person plays the model and has not written its turn: stop here.
                s.status_text = "your turn: write the model's next turn, then Step or Run"
                return s.status_text
            hit = self._breakpoint_before()
            if hit and s.passed_breakpoint != s.step:
                # Stop once; the next run or step goes past this breakpoint.
                s.passed_breakpoint = s.step
                s.status_text = f"breakpoint: {hit.describe()}"
                return s.status_text
            self.step()
            hit = self._breakpoint_after()
            if hit:
                self.state.status_text = f"breakpoint: {hit.describe()}"
                return self.state.status_text
        return f"stopped after {max_steps} steps"

    def approvals_decided(self) -> bool:
        """Waiting for approval, and every waiting call has its decision."""
        return self.state.status == "awaiting_approval" and self._approvals_complete()

    # -- phases ---------------------------------------------------------------------------

    def _event(
        self, phase: Phase, kind: EventKind, source: Lane, target: Lane, label: str, **kw: Any
    ) -> None:
        s = self.state
        t_ms = round((time.perf_counter() - self._t0) * 1000, 1)
        at = Replay(s.events, s.step, s.round, len(s.conversation.messages))
        at.add(phase, kind, source, target, label, t_ms=t_ms, **kw)

    def _declare(self) -> None:
        s = self.state
        s.round = 1
        conv = s.conversation.model_copy(update={"tools": s.toolset.tools})
        s.conversation = conv
        declare_events(self._event, conv)
        s.next_phase, s.status_text = "request", "the model is asked; step to get its turn"

    def _request(self) -> None:
        s = self.state
        turn = self.player.respond(s.conversation)
        first = first_call_number(s.conversation.messages)
        message = apply_request_faults(
            turn.response.message, s.faults, first, tools=s.conversation.tools
        )
        if turn.exchange is not None:
            s.exchanges.append(_exchange_json(turn.exchange, s.step))
        s.conversation = s.conversation.model_copy(
            update={"messages": [*s.conversation.messages, message]}
        )
        calls = message.tool_calls
        turn_events(self._event, message, s.round, turn.elapsed_ms or None)
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

    def _execute(self) -> None:
        s = self.state
        calls = s.conversation.messages[-1].tool_calls
        waiting = [c for c in calls if needs_approval(c, s.toolset) and c.id not in s.decisions]
        if waiting:
            s.status = "awaiting_approval"
            s.status_text = "waiting for approval: " + ", ".join(
                f"{c.name} ({c.id})" for c in waiting
            )
            return
        for call_id, decision in s.decisions.items():
            self._event(
                "execution",
                "approval",
                "user",
                "runtime",
                f"{decision.kind} {call_id}",
                call_id=call_id,
            )
        runtime = Runtime(s.toolset, s.policy, session_id=s.id, state=s.tool_state)
        first = first_call_number(s.conversation.messages[:-1])
        batch = runtime.execute(
            calls, decisions=s.decisions, faults=s.faults, first_call_number=first
        )
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
            dispatch_event(self._event, call, s.round, n, edited, data)
        for ex in batch.executions:
            result_event(
                self._event,
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

    def _continue(self) -> None:
        s = self.state
        if s.round >= s.policy.max_rounds:
            self._event(
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
        continuation_event(self._event, len(results))
        s.next_phase, s.status_text = "request", "results sent; step to get the model's turn"

    # -- breakpoints ------------------------------------------------------------------------

    def _breakpoint_before(self) -> Breakpoint | None:
        s = self.state
        if s.next_phase != "execution":
            return None
        names = {c.name for c in s.conversation.messages[-1].tool_calls}
        return next((b for b in s.breakpoints if b.kind == "tool" and b.tool in names), None)

    def _breakpoint_after(self) -> Breakpoint | None:
        s = self.state
        last = s.events[-1] if s.events else None
        if last is None or last.step != s.step:
            return None
        for b in s.breakpoints:
            if b.kind == "error" and any(
                e.error for e in s.events if e.step == s.step and e.kind == "result"
            ):
                return b
            if b.kind == "round" and last.kind == "continuation" and s.round == b.round:
                return b
        return None

    # -- approval -----------------------------------------------------------------------------

    def _approvals_complete(self) -> bool:
        s = self.state
        calls = s.conversation.messages[-1].tool_calls if s.conversation.messages else []
        return all(c.id in s.decisions for c in calls if needs_approval(c, s.toolset))

    def decide(self, call_id: str, decision: Decision) -> None:
        """Approve, edit or reject a call that waits; the next step executes the batch."""
        s = self.state
        calls = s.conversation.messages[-1].tool_calls if s.conversation.messages else []
        if s.status != "awaiting_approval" or call_id not in {c.id for c in calls}:
            raise UsageError(f"no call {call_id!r} is waiting for approval")
        self.undo_stack.append(s.snapshot())
        s.decisions = {**s.decisions, call_id: decision}
        if self._approvals_complete():
            s.status_text = "decided; step to execute"
        self._changed()

    # -- undo, reset, edit -------------------------------------------------------------------

    def undo(self, steps: int = 1) -> None:
        """Go back ``steps`` steps (edits count as steps)."""
        if not self.undo_stack:
            raise UsageError("nothing to undo")
        for _ in range(min(steps, len(self.undo_stack))):
            self.state = self.undo_stack.pop()
        self._changed()

    def undo_to(self, step: int) -> None:
        """Go back to the state just after step ``step`` (0: the start)."""
        while self.undo_stack and self.state.step > step:
            self.state = self.undo_stack.pop()
        self._changed()

    def _commit(self, conversation: Conversation, **changes: Any) -> None:
        before = self.state.snapshot()
        work = self.state.snapshot()
        work.conversation = conversation
        for k, v in changes.items():
            setattr(work, k, v)
        _redraw(work, self.state.conversation)
        work.edited = True
        self.undo_stack.append(before)
        self.state = work
        self._changed()

    def _messages(self) -> list[Message]:
        return list(self.state.conversation.messages)

    def edit_part(self, msg: int, part: int, data: str | dict[str, Any]) -> None:
        """Replace one part with ``data`` (JSON text or a dict), validated."""
        messages = self._messages()
        check_index(messages, msg, "message")
        check_index(messages[msg].parts, part, "part")
        new = parse_part(data, f"messages[{msg}].parts[{part}]")
        check_role(messages[msg].role, new, f"messages[{msg}].parts[{part}]")
        parts = list(messages[msg].parts)
        parts[part] = new
        messages[msg] = messages[msg].model_copy(update={"parts": parts})
        self._commit(self.state.conversation.model_copy(update={"messages": messages}))

    def edit_message(self, msg: int, data: str | dict[str, Any]) -> None:
        """Replace a whole message with ``data`` (JSON text or a dict), validated."""
        messages = self._messages()
        check_index(messages, msg, "message")
        messages[msg] = parse_message(data, f"messages[{msg}]")
        self._commit(self.state.conversation.model_copy(update={"messages": messages}))

    def insert_message(self, index: int, data: str | dict[str, Any]) -> None:
        messages = self._messages()
        if not 0 <= index <= len(messages):
            raise EditError(f"messages[{index}]: no such position (0..{len(messages)})")
        messages.insert(index, parse_message(data, f"messages[{index}]"))
        self._commit(self.state.conversation.model_copy(update={"messages": messages}))

    def delete_message(self, msg: int) -> None:
        messages = self._messages()
        check_index(messages, msg, "message")
        del messages[msg]
        self._commit(self.state.conversation.model_copy(update={"messages": messages}))

    def set_toolset(self, toolset: Toolset) -> None:
        """Replace the tools (declarations and handlers); the next request declares them."""
        conv = self.state.conversation.model_copy(update={"tools": toolset.tools})
        self._commit(conv, toolset=toolset)

    def set_faults(self, faults: list[Fault]) -> None:
        self._commit(self.state.conversation, faults=list(faults))

    def set_breakpoints(self, breakpoints: list[Breakpoint]) -> None:
        self.state.breakpoints = list(breakpoints)
        self._changed()

    def fork(self, msg: int) -> Session:
        """A new session whose history is this one's up to and including message ``msg``."""
        messages = self._messages()
        check_index(messages, msg, "message")
        conv = self.state.conversation.model_copy(update={"messages": messages[: msg + 1]})
        state = self.state.snapshot()
        state.id = uuid.uuid4().hex[:12]
        state.conversation = conv
        _redraw(state, self.state.conversation)
        state.decisions = {}
        return Session(state, self.player)


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


def _redraw(state: SessionState, before: Conversation) -> None:
    """After an edit or a fork: the trace redrawn for the new history (the events of its
    unchanged head kept as recorded), and what comes next."""
    state.events = rebuild(state.events, before, state.conversation)
    state.round = state.events[-1].round if state.events else 0
    state.step = max([state.step, *(e.step for e in state.events[-1:])])
    state.next_phase, state.status, state.status_text = resume(state.conversation, state.events)


def _exchange_json(ex: WireExchange, step: int) -> dict[str, JsonValue]:
    data = {k: v for k, v in vars(ex).items() if not k.startswith("_")}
    return json.loads(json.dumps({"step": step, **data}, default=str))
