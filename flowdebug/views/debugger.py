"""What the app shows, computed without Streamlit: phase explanations, graphs, pairing,
payload diffs. Pages call these and render the result."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from jsonschema.exceptions import SchemaError

from flowdebug import jsontext, protocols
from flowdebug.engine.execution.validation import argument_errors
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.session_state import SessionState
from flowdebug.engine.tracing.trace import (
    PHASES,
    Arrow,
    Rejection,
    TraceEvent,
    lanes,
    rejections,
    sequence,
)
from flowdebug.engine.tracing.verdicts import VERDICTS
from flowdebug.errors import CodecError
from flowdebug.model import Conversation, Message, ModelResponse
from flowdebug.render import Style, to_dot, to_mermaid
from flowdebug.views.aligned import AlignedView, Events, aligned
from flowdebug.views.encodings import Turn, turns

PHASE_TITLES = {
    "declaration": "1 · Declaration",
    "request": "2 · Request",
    "execution": "3 · Execution",
    "continuation": "4 · Continuation",
}

# What happens in each phase, and which fields carry it in each protocol.
PHASE_TEXT = {
    "declaration": "The runtime sends the conversation and every tool's name, description "
    "and JSON Schema to the model API.",
    "request": "The model answers: zero or more tool calls (a name, an id and arguments), or "
    "a final answer that ends the cycle.",
    "execution": "The runtime validates each call's arguments against the schema, runs the "
    "handlers (in parallel for one turn), applies timeouts and faults, and makes one result "
    "per call — errors are results too.",
    "continuation": "The results, paired to their calls by id, are appended to the history "
    "and the model is called again.",
    "answer": "The model answers without a tool call: its final answer ends the cycle.",
}


def explain(phase: str, names: list[str], final: bool = False) -> tuple[str, dict[str, str]]:
    """The phase's meaning and, per protocol, which fields carry it; ``final``: the model's
    turn was its final answer, not tool calls."""
    key = "answer" if final and phase == "request" else phase
    return PHASE_TEXT[key], {n: getattr(protocols.facts(n).fields, key) for n in names}


def phase_now(state: SessionState) -> str:
    """The phase the person is looking at: the one just run, or the next one at the start."""
    if state.events:
        return state.events[-1].phase
    return state.next_phase


def answered(state: SessionState) -> bool:
    """The step just run was the model's final answer."""
    return bool(state.events) and state.events[-1].kind in ("final_answer", "answer")


def phase_title(state: SessionState) -> str:
    """The title of :func:`phase_now`, naming the model's final answer for what it is."""
    if answered(state):
        return "2 · Final answer"
    return PHASE_TITLES[phase_now(state)]


# A session's status in words (the sidebar, the status line): no code words on a screen.
STATUS_WORDS = {
    "ready": "ready",
    "running": "running",
    "awaiting_approval": "waiting for your approval",
    "finished": "finished",
    "halted": "halted",
}


def status_words(status: str) -> str:
    return STATUS_WORDS.get(status, status.replace("_", " "))


def status_line(
    state: SessionState, refused: dict[str, Rejection], names: Sequence[str]
) -> tuple[str, str]:
    """(icon, sentence) for where the cycle stands, agreeing with the picture: a vendor that
    refuses a request halts its own cycle there, whatever the model did next."""
    icon = {"finished": "✅", "halted": "🛑", "awaiting_approval": "✋"}.get(state.status, "▶️")
    stopped = [n for n in names if n in refused]
    if not stopped:
        return icon, state.status_text
    who = ", ".join(protocols.facts(n).short for n in stopped)
    verb = "refuses" if len(stopped) == 1 else "refuse"
    said = f"{who} {verb} a request, so {'its' if len(stopped) == 1 else 'their'} cycle halted"
    if len(stopped) == len(names):
        return "🛑", said
    return "🛑", f"{said}; the others: {state.status_text}"


# -- graphs -----------------------------------------------------------------------------------

WINDOW = 60  # arrows drawn by default; long sessions show their recent past


@dataclass(frozen=True)
class Graph:
    """One protocol's sequence graph; ``rejection``: the request that vendor refuses, where
    its cycle stops (the graph draws it as a red 400)."""

    protocol: str
    title: str
    dot: str
    mermaid: str
    arrows: int
    hidden: int
    rejection: Rejection | None = None

    @property
    def caption(self) -> str | None:
        """The vendor's refusal in full, for beneath the graph (its arrow is shortened)."""
        r = self.rejection
        if r is None:
            return None
        title = protocols.get(self.protocol).title
        return f"{title} refuses this request (HTTP {r.status}), so its cycle stops: {r.message}"


@lru_cache(maxsize=256)
def _graph(
    protocol: str,
    events: Events,
    current: int | None,
    style: Style,
    hidden: int,
    rejection: Rejection | None,
) -> Graph:
    arrows = sequence(list(events), protocol, rejection)
    title = protocols.get(protocol).title
    if hidden:
        title += f" — last {len(arrows)} arrows"
    return Graph(
        protocol,
        title,
        to_dot(arrows, lanes(protocol), title, current, style),
        to_mermaid(arrows, lanes(protocol), title),
        len(arrows),
        hidden,
        rejection,
    )


# Rejections per conversation revision and trace. The history is never changed in place (a
# step or an edit makes a new Conversation), so the object is the revision; a trace only
# grows (events are frozen and appended, an edit replays a new one), so its length and its
# last event name it. Each entry keeps both objects alive, so their ids cannot be reused
# while the entry is here. The key costs nothing however long the trace: a Step looks it up
# two or three times.
_REJECTIONS: OrderedDict[tuple, tuple[tuple[object, ...], dict[str, Rejection]]] = OrderedDict()


def refusals(
    conv: Conversation, events: Sequence[TraceEvent], names: Sequence[str]
) -> dict[str, Rejection]:
    """:func:`flowdebug.engine.tracing.trace.rejections`, linted once per conversation revision."""
    last = events[-1] if events else None
    key = (id(conv), len(events), id(last), tuple(names))
    hit = _REJECTIONS.get(key)
    if hit is not None and hit[0][0] is conv and hit[0][1] is last:
        _REJECTIONS.move_to_end(key)
        return hit[1]
    found = rejections(conv, events, names)
    _REJECTIONS[key] = ((conv, last), found)
    if len(_REJECTIONS) > 64:
        _REJECTIONS.popitem(last=False)
    return found


def lint_ahead(state: SessionState, names: Sequence[str]) -> None:
    """When the next Step sends the results back (the continuation: a request carrying the
    history as it stands), lint that request now, between the Steps, for the vendors ``names``
    (see :meth:`~flowdebug.engine.tracing.verdicts.Verdicts.ahead`: long histories only)."""
    sends = state.next_phase == "continuation" and state.round < state.policy.max_rounds
    if sends and state.status == "ready" and names:  # (at the round cap the cycle halts)
        VERDICTS.ahead(state.conversation, tuple(names))


def graphs(
    state: SessionState,
    names: list[str],
    presenter: bool = False,
    window: int | None = WINDOW,
    style: Style | None = None,
) -> list[Graph]:
    """One graph per protocol; only the last ``window`` events unless window is None.
    ``style`` (type sizes) defaults to the presenter style when ``presenter``.

    A vendor that refuses a request (see :func:`refusals`) is drawn up to its refusal: its
    window is the last events before it.
    """
    refused = refusals(state.conversation, state.events, names)
    current = state.step if state.events and state.events[-1].step == state.step else None
    out = []
    for name in names:
        events = state.events
        rejection = refused.get(name)
        if rejection is not None:
            events = events[: rejection.seq + 1]
        hidden = 0
        if window is not None and len(events) > window:
            hidden = len(events) - window
            events = events[-window:]
        chosen = style or (Style.presenter() if presenter else Style())
        out.append(_graph(name, Events(events), current, chosen, hidden, rejection))
    return out


# -- pairing ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    call_message: int
    call_id: str
    tool: str
    result_message: int | None
    is_error: bool
    error_type: str | None
    problem: str | None


def pairing(conv: Conversation) -> list[Pair]:
    """Every call with the result that answers it (by id), and what is wrong if anything."""
    results: dict[str, list[tuple[int, object]]] = {}
    for i, m in enumerate(conv.messages):
        for r in m.tool_results:
            results.setdefault(r.call_id, []).append((i, r))
    out = []
    seen: set[str] = set()
    for i, m in enumerate(conv.messages):
        for c in m.tool_calls:
            found = results.get(c.id, [])
            problem = None
            if c.id in seen:
                problem = "duplicate call id"
            elif not found:
                # Calls in the last message are simply not executed yet.
                problem = "no result" if i < len(conv.messages) - 1 else None
            elif len(found) > 1:
                problem = f"{len(found)} results"
            elif found[0][0] != i + 1:
                problem = "result is not in the next message"
            seen.add(c.id)
            j, r = found[0] if found else (None, None)
            out.append(
                Pair(
                    i,
                    c.id,
                    c.name,
                    j,
                    bool(r and r.is_error),
                    getattr(r, "error_type", None),
                    problem,
                )
            )
    call_ids = {c.id for m in conv.messages for c in m.tool_calls}
    for cid, found in results.items():
        if cid not in call_ids:
            for j, r in found:
                out.append(
                    Pair(
                        -1,
                        cid,
                        getattr(r, "name", None) or "?",
                        j,
                        r.is_error,
                        r.error_type,
                        "no call has this id",
                    )
                )
    return out


# -- payloads of the current step ---------------------------------------------------------------


def current_turn(conv: Conversation) -> Turn:
    """The exchange of the current step: the last model turn, or the pending request."""
    all_turns = turns(conv)
    if all_turns and conv.messages[-1].role == "assistant":
        return all_turns[-1]
    pending = ModelResponse(message=Message(role="assistant", parts=[]))
    return Turn(len(all_turns) + 1, conv, pending)


def edited_arguments(text: str, schema: dict[str, Any]) -> tuple[Any, list[str]]:
    """Arguments a person typed for a waiting call: (the parsed value or None, problems).

    Invalid JSON is one problem with its line and column, and no value. Arguments that break
    the tool's schema come back with every violation: running them is allowed (it is how a
    person sees the runtime refuse a call), but not without saying so first.
    """
    try:
        value = jsontext.loads(text, "arguments")
    except CodecError as e:
        where = "" if e.path == "$" else f"{e.path}: "
        return None, [f"{where}{e.reason}"]
    if not isinstance(value, dict):
        return None, ["arguments must be a JSON object"]
    try:
        return value, argument_errors(schema, value)
    except SchemaError as e:
        return value, [f"the tool's own parameters schema is invalid: {e.message}"]


def previous_state(session: Session) -> SessionState | None:
    return session.undo_stack[-1] if session.undo_stack else None


__all__ = [
    "PHASES",
    "PHASE_TITLES",
    "AlignedView",
    "Arrow",
    "Graph",
    "Pair",
    "Rejection",
    "aligned",
    "edited_arguments",
    "explain",
    "graphs",
    "pairing",
    "phase_now",
    "phase_title",
    "previous_state",
    "refusals",
    "status_line",
    "status_words",
]
