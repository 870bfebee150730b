"""The step debugger: one session of the tool-calling cycle, a phase at a time.

A session walks declaration → request → execution → continuation, then request again,
until the model answers without calls, the round cap halts it, or a destructive call waits
for a person. Every step appends trace events and pushes an undo snapshot; edits are steps
too. A step that fails (the player errs, an edit is invalid) raises and changes nothing.

The whole session is one JSON-serialisable
:class:`~flowdebug.engine.session.session_state.SessionState`, so it can be saved, restored, forked
and compared. The phases themselves are :mod:`flowdebug.engine.session.phases`.

What the session's handlers start (an MCP server, a connection) is held under the session's
id in :data:`flowdebug.engine.execution.resources.RESOURCES` and let go of when the cycle ends,
when the
session is back at its start, and by :meth:`Session.release` (the app calls it when a browser
session moves on to another session, and when Streamlit drops the browser session).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from flowdebug.engine.execution.approval import Decision, needs_approval
from flowdebug.engine.execution.faults import Fault
from flowdebug.engine.execution.handlers import Toolset
from flowdebug.engine.execution.resources import RESOURCES
from flowdebug.engine.session.edits import (
    EditError,
    check_index,
    check_role,
    parse_message,
    parse_part,
)
from flowdebug.engine.session.phases import continuation, declare, execute, request
from flowdebug.engine.session.session_state import (
    Breakpoint,
    PlayerSettings,
    SessionState,
    redraw,
)
from flowdebug.engine.tracing.replay import Replay
from flowdebug.engine.tracing.trace import EventKind, Lane, Phase, TraceEvent
from flowdebug.errors import UsageError
from flowdebug.model import Conversation, Message
from flowdebug.players.base import Player

UNDO_LIMIT = 200
"""Steps a session can undo one by one. Each keeps a snapshot of the state (its event list
grows with the history), so an unbounded undo history made a long-lived server's memory grow
with every step of every session; the session's start is always kept, so Reset and
``undo_to(0)`` still reach it."""


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
        self._cancelled = threading.Event()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self.state)
        if self.done or self.state.step == 0:
            # Over (or back at its start): nothing its handlers started is needed until the
            # next step, which starts it again. Closed in the background: a stdio server may
            # take a moment to exit, and the step that ended the cycle does not wait for it.
            self.release(wait=False)

    def release(self, wait: bool = True) -> int:
        """Close what this session's handlers started (its MCP servers and connections);
        the next step that needs one starts it again. Returns how many were closed."""
        close = RESOURCES.close if wait else RESOURCES.close_later
        return close(self.state.id)

    def cancel(self) -> None:
        """Stop stepping: a step under way finishes its phase, and every later step raises
        (a cancelled background run must not go on starting servers nobody will look at)."""
        self._cancelled.set()

    @classmethod
    def from_scenario(cls, name: str) -> Session:
        from flowdebug.engine.session import scenarios

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

    def next_step_is_local(self) -> bool:
        """The next :meth:`step` runs no tool and waits for no remote model: declaring the
        tools, sending the results back, or a turn from a player that answers from memory
        (``local``). A moment's work, with nothing to show progress for or to cancel."""
        phase = self.state.next_phase
        if self.state.status != "ready":
            return False
        if phase in ("declaration", "continuation"):
            return True
        return phase == "request" and bool(getattr(self.player, "local", False))

    def step(self) -> list[TraceEvent]:
        """Run one phase. Raises (changing nothing) when the phase cannot run."""
        s = self.state
        if self._cancelled.is_set():
            raise UsageError("the step was cancelled")
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
                "declaration": lambda: declare(work, self._event),
                "request": lambda: request(work, self.player, self._event),
                "execution": lambda: execute(work, self._event),
                "continuation": lambda: continuation(work, self._event),
            }[phase]()
        except BaseException:
            self.state = before
            raise
        self._remember(before)
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

    # -- the phases' trace events (the phases are flowdebug.engine.session.phases) ------------

    def _event(
        self, phase: Phase, kind: EventKind, source: Lane, target: Lane, label: str, **kw: Any
    ) -> None:
        s = self.state
        t_ms = round((time.perf_counter() - self._t0) * 1000, 1)
        at = Replay(s.events, s.step, s.round, len(s.conversation.messages))
        at.add(phase, kind, source, target, label, t_ms=t_ms, **kw)

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
        self._remember(s.snapshot())
        s.decisions = {**s.decisions, call_id: decision}
        if self._approvals_complete():
            s.status_text = "decided; step to execute"
        self._changed()

    # -- undo, reset, edit -------------------------------------------------------------------

    def _remember(self, before: SessionState) -> None:
        """Keep ``before`` to undo to: the last :data:`UNDO_LIMIT` steps and the start."""
        self.undo_stack.append(before)
        if len(self.undo_stack) > UNDO_LIMIT + 1:
            del self.undo_stack[1]  # the oldest step but the start

    def undo(self, steps: int = 1) -> None:
        """Go back ``steps`` steps (edits count as steps)."""
        if not self.undo_stack:
            raise UsageError("nothing to undo")
        now = self.state
        for _ in range(min(steps, len(self.undo_stack))):
            self.state = self.undo_stack.pop()
        self.state.keep_settings(now)
        self._changed()

    def undo_to(self, step: int) -> None:
        """Go back to the state just after step ``step`` (0: the start). A step older than
        the last :data:`UNDO_LIMIT` is no longer kept: that goes back to the start."""
        now = self.state
        while self.undo_stack and self.state.step > step:
            self.state = self.undo_stack.pop()
        self.state.keep_settings(now)
        self._changed()

    def _commit(self, conversation: Conversation, **changes: Any) -> None:
        before = self.state.snapshot()
        work = self.state.snapshot()
        work.conversation = conversation
        for k, v in changes.items():
            setattr(work, k, v)
        redraw(work, self.state.conversation)
        work.edited = True
        self._remember(before)
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

    def set_settings(
        self,
        *,
        player: PlayerSettings | None = None,
        models: dict[str, str] | None = None,
        manual_turn: str | None = None,
    ) -> None:
        """Change the settings given (who plays the model, the per-vendor models, the manual
        player's draft) and save; not a step, so not undone (see ``KEPT_BY_UNDO``)."""
        s = self.state
        if player is not None:
            s.player = player
        if models is not None:
            s.models = {k: v.strip() for k, v in models.items() if v.strip()}
        if manual_turn is not None:
            s.manual_turn = manual_turn
        self._changed()

    def restart(self) -> None:
        """Back to the start the undo history keeps, with the tools as edited: Reset never
        undoes a tool edit (a scenario's own tools come back by :meth:`set_toolset`, an edit
        of its own)."""
        tools = self.state.toolset
        self.undo_to(0)
        self.use_tools(tools)
        self._changed()

    def use_tools(self, toolset: Toolset) -> None:
        """Declare ``toolset`` from now on without an undo step of its own: a session started
        again (Reset) keeps the tools as edited."""
        if self.state.toolset != toolset:
            conv = self.state.conversation.model_copy(update={"tools": toolset.tools})
            self.state.conversation, self.state.toolset = conv, toolset

    def fork(self, msg: int) -> Session:
        """A new session whose history is this one's up to and including message ``msg``."""
        messages = self._messages()
        check_index(messages, msg, "message")
        conv = self.state.conversation.model_copy(update={"messages": messages[: msg + 1]})
        state = self.state.snapshot()
        state.id = uuid.uuid4().hex[:12]
        state.conversation = conv
        redraw(state, self.state.conversation)
        state.decisions = {}
        return Session(state, self.player)
