"""What the app shows, computed without Streamlit: phase explanations, graphs, pairing,
payload diffs. Pages call these and render the result."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from jsonschema.exceptions import SchemaError

from flowdebug import protocols
from flowdebug.engine.debugger import Session, SessionState
from flowdebug.engine.runtime import argument_errors
from flowdebug.engine.trace import PHASES, Arrow, lanes, sequence
from flowdebug.model import Conversation, Message, ModelResponse
from flowdebug.render import Style, to_dot, to_mermaid
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
FIELDS = {
    "declaration": {
        "anthropic": "`tools[]` `{name, description, input_schema}` in POST /v1/messages",
        "openai-chat": "`tools[]` `{type: function, function: {name, description, parameters}}`",
        "openai-responses": "`tools[]` flat `{type: function, name, parameters, strict}`",
        "gemini": "`tools[].functionDeclarations[]` `{name, description, parameters}`",
        "mcp": "`tools/list` result: `tools[]` `{name, description, inputSchema}`",
    },
    "request": {
        "anthropic": "`content[]` blocks `{type: tool_use, id, name, input}`; "
        "`stop_reason: tool_use`",
        "openai-chat": "`message.tool_calls[]` `{id, function: {name, arguments}}` — "
        "arguments is a JSON *string*; `finish_reason: tool_calls`",
        "openai-responses": "`output[]` items `{type: function_call, call_id, name, arguments}`",
        "gemini": "`parts[].functionCall` `{name, args, id?}`; finishReason stays `STOP`",
        "mcp": "not MCP's part: the host's model picks the tool; MCP starts at `tools/call`",
    },
    "answer": {
        "anthropic": "`content[]` text blocks; `stop_reason: end_turn`",
        "openai-chat": "`message.content` text, no `tool_calls`; `finish_reason: stop`",
        "openai-responses": "`output[]` `{type: message, content: [{type: output_text, text}]}`",
        "gemini": "`parts[].text`, no `functionCall`; `finishReason: STOP`",
        "mcp": "not MCP's part: the host's model answers the user",
    },
    "execution": {
        "anthropic": "runtime-side: each `tool_use.input` is validated and dispatched",
        "openai-chat": "runtime-side: `arguments` is parsed (it may be invalid JSON), "
        "validated and dispatched",
        "openai-responses": "runtime-side: `arguments` is parsed, validated and dispatched",
        "gemini": "runtime-side: `args` is validated and dispatched",
        "mcp": "`tools/call {name, arguments}` → `CallToolResult {content, "
        "structuredContent, isError}`; unknown tool → JSON-RPC error -32602",
    },
    "continuation": {
        "anthropic": "one user turn, `tool_result` blocks first: `{tool_use_id, content, "
        "is_error}`",
        "openai-chat": "one `{role: tool, tool_call_id, content}` message per call (no error "
        'flag: errors travel as `{"error": …}`)',
        "openai-responses": "`{type: function_call_output, call_id, output}` items",
        "gemini": "one user content with `functionResponse {name, id, response}` parts; "
        "`response` is an object: `{output}` or `{error}`",
        "mcp": "the host hands each `CallToolResult` to its model in that model's format",
    },
}


def explain(phase: str, names: list[str], final: bool = False) -> tuple[str, dict[str, str]]:
    """The phase's meaning and, per protocol, which fields carry it; ``final``: the model's
    turn was its final answer, not tool calls."""
    key = "answer" if final and phase == "request" else phase
    return PHASE_TEXT[key], {n: FIELDS[key][n] for n in names}


def phase_now(state: SessionState) -> str:
    """The phase the person is looking at: the one just run, or the next one at the start."""
    if state.events:
        return state.events[-1].phase
    return state.next_phase


# -- graphs -----------------------------------------------------------------------------------

WINDOW = 60  # arrows drawn by default; long sessions show their recent past


@dataclass(frozen=True)
class Graph:
    protocol: str
    title: str
    dot: str
    mermaid: str
    arrows: int
    hidden: int


class _Events(tuple):
    """Trace events hashed by what the graph shows, so graphs are cached per trace."""

    def _key(self) -> tuple:
        return tuple(
            (e.seq, e.step, e.kind, e.label, e.error, e.call_id, e.source, e.target) for e in self
        )

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Events) and self._key() == other._key()


@lru_cache(maxsize=256)
def _graph(
    protocol: str, events: _Events, current: int | None, presenter: bool, hidden: int
) -> Graph:
    arrows = sequence(list(events), protocol)
    title = protocols.get(protocol).title
    if hidden:
        title += f" — last {len(arrows)} arrows"
    style = Style.presenter() if presenter else Style()
    return Graph(
        protocol,
        title,
        to_dot(arrows, lanes(protocol), title, current, style),
        to_mermaid(arrows, lanes(protocol), title),
        len(arrows),
        hidden,
    )


def graphs(
    state: SessionState, names: list[str], presenter: bool = False, window: int | None = WINDOW
) -> list[Graph]:
    """One graph per protocol; only the last ``window`` events unless window is None."""
    events = state.events
    hidden = 0
    if window is not None and len(events) > window:
        hidden = len(events) - window
        events = events[-window:]
    current = state.step if state.events and state.events[-1].step == state.step else None
    key = _Events(events)
    return [_graph(n, key, current, presenter, hidden) for n in names]


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
        value = json.loads(text)
    except json.JSONDecodeError as e:
        return None, [f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}"]
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
    "Arrow",
    "Graph",
    "Pair",
    "edited_arguments",
    "explain",
    "graphs",
    "pairing",
    "phase_now",
    "previous_state",
]
