"""Predict, then step: questions about a session's next event, made from the session itself.

Three kinds, each built from what the session and the vendors' facts say, never from a list
kept here:

- ``next_tool``: which tool the model calls next (the session's tools, and :data:`NO_TOOL`);
  its answer is known once the model's next turn is in the history.
- ``refusals``: which of the vendors shown refuse the history after the next Step (each
  vendor, and :data:`NONE_REFUSES`); known once the session has stepped on.
- ``result_field``: which field carries a tool's result back in one vendor (that vendor's own
  field names, read from its facts' continuation explanation, against those of the others).

A question is stored with the session by :class:`flowdebug.store.rooms.Rooms`;
:func:`settle` reveals it when the session has moved past the step it was asked at.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from flowdebug import protocols
from flowdebug.engine.session.session_state import SessionState
from flowdebug.errors import UsageError
from flowdebug.exchange.exports import trace
from flowdebug.store.rooms import Question, Rooms
from flowdebug.views.debugger import refusals

KINDS = {
    "next_tool": "Which tool does the model call next?",
    "refusals": "Which vendors refuse this history after the next Step?",
    "result_field": "Which field carries the tool's result back in {vendor}?",
}
NO_TOOL = "no tool: it answers"
NONE_REFUSES = "none of them"
_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CODE = re.compile(r"`([^`]*)`")


def field_names(vendor: str) -> list[str]:
    """The wire field names a vendor's facts give for carrying results back (continuation),
    in order, each once."""
    facts = protocols.facts(vendor)
    text = facts.fields.continuation if facts.fields else ""
    names: list[str] = []
    for span in _CODE.findall(text):
        names += [n for n in _FIELD.findall(span) if n not in names]
    return names


def _own_fields(vendor: str, others: Sequence[str]) -> list[str]:
    """``vendor``'s field names that none of ``others`` uses."""
    theirs = {n for o in others if o != vendor for n in field_names(o)}
    # Short words (role, type, tool) are values or generic keys, not what carries a result.
    return [n for n in field_names(vendor) if n not in theirs and len(n) > 4]


def make(
    kind: str, state: SessionState, shown: Sequence[str], vendor: str | None = None
) -> Question:
    """A question of ``kind`` about ``state``'s next event, for the vendors ``shown``."""
    asked = (state.step, len(state.conversation.messages))
    if kind == "next_tool":
        tools = [t.name for t in state.conversation.tools]
        return Question(-1, kind, KINDS[kind], (*tools, NO_TOOL), None, *asked)
    if kind == "refusals":
        if not shown:
            raise UsageError("choose the vendors to ask about (sidebar)")
        return Question(-1, kind, KINDS[kind], (*shown, NONE_REFUSES), None, *asked)
    if kind == "result_field":
        vendor = vendor or (shown[0] if shown else None)
        if vendor is None:
            raise UsageError("choose a vendor to ask about")
        everyone = list(protocols.PROTOCOLS)
        own = _own_fields(vendor, everyone)
        if not own:
            raise UsageError(f"{vendor}'s facts name no field of its own for a result")
        right = own[0]
        # Distractors: each other vendor's own first field, so every wrong choice is real.
        foreign = [f[0] for o in everyone if o != vendor if (f := _own_fields(o, everyone))]
        choices = sorted({right, *foreign[:3]}, key=str.lower)
        prompt = KINDS[kind].format(vendor=protocols.facts(vendor).title)
        return Question(-1, kind, prompt, tuple(choices), (right,), *asked)
    raise UsageError(f"no question of kind {kind!r}; one of {', '.join(KINDS)}")


def answers(question: Question, state: SessionState) -> tuple[str, ...] | None:
    """The right answers of ``question`` as ``state`` shows them, or None while it is not
    known yet (the session has not moved past the step it was asked at)."""
    if state.step <= question.asked_step:
        return None
    if question.kind == "next_tool":
        later = state.conversation.messages[question.asked_messages :]
        turn = next((m for m in later if m.role == "assistant"), None)
        if turn is None:
            return None
        names = [c.name for c in turn.tool_calls if c.name in question.choices]
        return tuple(dict.fromkeys(names)) or (NO_TOOL,)
    if question.kind == "refusals":
        shown = [c for c in question.choices if c != NONE_REFUSES]
        refused = refusals(state.conversation, state.events, shown)
        return tuple(n for n in shown if n in refused) or (NONE_REFUSES,)
    return question.answers


def settle(rooms: Rooms, state: SessionState) -> Question | None:
    """Reveal the session's open question when the session has moved on far enough; the
    question revealed, if one was."""
    for q in rooms.questions(state.id):
        if not q.closed:
            known = answers(q, state)
            if known is not None:
                return rooms.reveal(state.id, q.index, known)
    return None


def current(rooms: Rooms, session_id: str) -> Question | None:
    """The question asked last (open or revealed), if any."""
    asked = rooms.questions(session_id)
    return asked[-1] if asked else None


def trace_with_questions(
    rooms: Rooms, state: SessionState, name: str | None = None, parent: str | None = None
) -> str:
    """The session's trace (``flowdebug.trace/1``) with the questions asked about it and their
    tallies in its metadata (``predictions``), as the text of a ``.trace.json`` file."""
    data = trace(state, name, parent)
    data["metadata"]["predictions"] = rooms.export(state.id)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
