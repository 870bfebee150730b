"""A debugger session as data: :class:`SessionState` (JSON-serialisable, so it can be
saved, restored, forked and compared), its :class:`Breakpoint` s, and what comes next for a
history (:func:`resume`), redrawn after an edit or a fork (:func:`redraw`)."""

from __future__ import annotations

import copy
import uuid
from typing import Literal

from pydantic import BaseModel, Field, JsonValue

from flowdebug.engine.execution.approval import Decision
from flowdebug.engine.execution.faults import Fault
from flowdebug.engine.execution.handlers import Toolset
from flowdebug.engine.execution.runtime import Execution, Policy
from flowdebug.engine.tracing.replay import rebuild
from flowdebug.engine.tracing.trace import TraceEvent
from flowdebug.model import Conversation

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


class PlayerSettings(BaseModel):
    """Who plays the model, as saved with the session: never the key (a live player takes it
    from the environment, or from the browser session that typed it), and the base URL
    without the credentials it may carry."""

    kind: Literal["scripted", "offline", "manual", "live"] = "scripted"
    protocol: str | None = None
    model: str | None = None
    base_url: str | None = None
    stream: bool = False


KEPT_BY_UNDO = ("player", "models", "manual_turn")
"""Settings of a session that are not changes of its cycle: Undo goes back a step and keeps
them as they are (who plays the model, the per-vendor models, the manual player's draft)."""


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
    # Who plays the model (None: the session's default, see player_choice.default_kind).
    player: PlayerSettings | None = None
    # The model each vendor gets for this session, by protocol name (protocols/models.py):
    # a vendor not named here gets its default.
    models: dict[str, str] = Field(default_factory=dict)
    # The manual player's turn as last typed (JSON text), kept until another is typed.
    manual_turn: str | None = None

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
                "models": dict(self.models),
            }
        )

    def keep_settings(self, newer: SessionState) -> None:
        """Take ``newer``'s :data:`KEPT_BY_UNDO` settings (an undo back to this state)."""
        for name in KEPT_BY_UNDO:
            setattr(self, name, getattr(newer, name))


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


def redraw(state: SessionState, before: Conversation) -> None:
    """After an edit or a fork: the trace redrawn for the new history (the events of its
    unchanged head kept as recorded), and what comes next."""
    state.events = rebuild(state.events, before, state.conversation)
    state.round = state.events[-1].round if state.events else 0
    state.step = max([state.step, *(e.step for e in state.events[-1:])])
    state.next_phase, state.status, state.status_text = resume(state.conversation, state.events)
