"""What a trace event's sentence needs to know beyond the event: the call it belongs to, what
the runtime really did with it, what the history now holds, and which vendors refuse which
request. One :class:`Scene` per trace (and session), shared by every caption of a story."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flowdebug.engine.execution.runtime import Execution
from flowdebug.engine.session.session_state import SessionState
from flowdebug.engine.tracing.trace import Rejection, TraceEvent
from flowdebug.model import Message, ToolResult


@dataclass
class Scene:
    """A trace, and (when known) the session it came from and the vendors' refusals."""

    events: Sequence[TraceEvent]
    state: SessionState | None = None
    rejected: Mapping[str, Rejection] = field(default_factory=dict)

    # -- the call an event belongs to -------------------------------------------------------

    def nth(self, e: TraceEvent) -> int:
        """How many events of ``e``'s kind and call id came before it: tells apart calls
        that share an id (a duplicate id, a model that reuses ids)."""
        return sum(
            1 for x in self.events if x.seq < e.seq and x.kind == e.kind and x.call_id == e.call_id
        )

    def call(self, e: TraceEvent) -> dict[str, Any] | None:
        """The call (as the model sent it) that ``e`` dispatches, answers or decides."""
        if e.kind == "tool_call":
            found = e.data.get("call")
            return found if isinstance(found, dict) else None
        calls = [
            x
            for x in self.events
            if x.kind == "tool_call" and x.call_id == e.call_id and x.seq < e.seq
        ]
        if not calls:
            return None
        same_batch = [x for x in calls if x.batch == e.batch] or calls
        pick = same_batch[min(self.nth(e), len(same_batch) - 1)]
        found = pick.data.get("call")
        return found if isinstance(found, dict) else None

    def batch(self, e: TraceEvent) -> list[TraceEvent]:
        """The events of ``e``'s kind in its step: one model turn's calls, one batch's runs."""
        return [x for x in self.events if x.step == e.step and x.kind == e.kind]

    def declared(self) -> list[str] | None:
        """The tool names the model was offered, when the trace says."""
        for x in reversed(self.events):
            tools = x.data.get("tools") if x.kind == "declare" else None
            if isinstance(tools, list):
                return [str(t) for t in tools]
        if self.state is not None:
            return self.state.toolset.names
        return None

    def schema(self, tool: str) -> dict[str, Any] | None:
        if self.state is None:
            return None
        entry = self.state.toolset.get(tool)
        return entry.tool.parameters if entry is not None else None

    def uses_mcp(self) -> bool:
        """Whether the session's tools come from an MCP server."""
        if self.state is None:
            return False
        return any(entry.handler.kind == "mcp" for entry in self.state.toolset.entries)

    def approval(self, call_id: str | None) -> str | None:
        """A person's decision on the call (``approve``, ``edit``, ``reject``), if any."""
        for x in self.events:
            if x.kind == "approval" and x.call_id == call_id:
                return x.label.split(" ", 1)[0]
        return None

    # -- what really happened -----------------------------------------------------------------

    def execution(self, e: TraceEvent) -> Execution | None:
        """The runtime's record of the call that result ``e`` answers (None in a replayed
        history: an import carries the messages, not how they came about)."""
        if self.state is None:
            return None
        runs = [x for x in self.state.executions if x.call.id == e.call_id]
        k = self.nth(e)
        return runs[k] if k < len(runs) else None

    @property
    def messages(self) -> list[Message]:
        return self.state.conversation.messages if self.state is not None else []

    def in_history(self, e: TraceEvent) -> ToolResult | None:
        """The result for ``e``'s call as the history holds it now."""
        found = [r for m in self.messages for r in m.tool_results if r.call_id == e.call_id]
        k = self.nth(e)
        return found[k] if k < len(found) else None

    def stray_with(self, text: str) -> ToolResult | None:
        """A result in the history with this text that answers no call (a wrong id)."""
        ids = {c.id for m in self.messages for c in m.tool_calls}
        return next(
            (
                r
                for m in self.messages
                for r in m.tool_results
                if r.call_id not in ids and r.text == text
            ),
            None,
        )

    def sent_back(self, e: TraceEvent) -> tuple[list[str], list[str], bool]:
        """For a continuation: the ids of the last turn's calls, the ids of the results as
        they go back (in order), and whether a person's text comes before them."""
        upto = self.messages[: e.messages] if e.messages is not None else self.messages
        turn = next(
            (i for i in range(len(upto) - 1, -1, -1) if upto[i].tool_calls),
            None,
        )
        if turn is None:
            return [], [], False
        calls = [c.id for c in upto[turn].tool_calls]
        after = upto[turn + 1 :]
        results = [r.call_id for m in after for r in m.tool_results]
        first_result = next((i for i, m in enumerate(after) if m.tool_results), len(after))
        text_first = any(m.role == "user" and m.text for m in after[:first_result])
        return calls, results, text_first

    def refusing(self, e: TraceEvent) -> list[str]:
        """The vendors that refuse the request ``e`` sends."""
        return [name for name, r in self.rejected.items() if r.seq == e.seq]
