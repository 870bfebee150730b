"""Import: a trace file, a vendor payload or an MCP transcript becomes a new session.

``import_session(data)`` takes what a person pasted (text), uploaded (bytes) or already
parsed, and returns an :class:`Imported` with a fresh :class:`SessionState`:

- a ``flowdebug.trace/1`` file (:mod:`flowdebug.exchange.exports`, or ``flowdebug run --json``)
  comes back whole: tools and handlers, history, trace, policy, faults;
- an OpenTelemetry GenAI trace in OTLP JSON (:mod:`flowdebug.exchange.otel`) becomes a
  session with the conversation its model calls held;
- anything :func:`flowdebug.protocols.convert.decode` understands (a request, response or stream of
  any vendor, canonical JSON, an MCP message or transcript, as JSON or JSON Lines) becomes
  a session with that history, whose tools answer a fixed "ok" until given handlers.

Nothing is half done: an import that fails raises a :class:`~flowdebug.errors.CodecError`
naming the JSON path of the problem, and a store passed in is written only on success.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from flowdebug import jsontext, protocols
from flowdebug.engine.execution.canned_handlers import FixedHandler
from flowdebug.engine.execution.handlers import ToolEntry, Toolset
from flowdebug.engine.session.session_state import SessionState, resume
from flowdebug.engine.tracing.replay import replay
from flowdebug.errors import CodecError, FlowdebugError, json_path
from flowdebug.exchange import otel
from flowdebug.exchange.tool_imports import tools_only
from flowdebug.model import Conversation
from flowdebug.protocols.base import ConversionWarning
from flowdebug.protocols.convert import Decoded, decode
from flowdebug.protocols.tools import tool_envelope

if TYPE_CHECKING:
    from flowdebug.store.sessions import Store

TRACE = "flowdebug.trace"
TRACE_FORMAT = "flowdebug.trace/1"
IMPORTED_RESULT = "ok"
_TRACE_ONLY = {"format", "metadata", "sequence", "protocol"}  # keys that are not state


@dataclass(frozen=True)
class Imported:
    """A new session made from imported data, not yet saved unless a store was given."""

    state: SessionState
    name: str
    source: str  # "flowdebug.trace", "otel", "canonical" or a protocol name
    kind: str  # "trace", "request", "response", "stream", or an MCP kind
    warnings: list[ConversionWarning] = field(default_factory=list)


def parse(data: str | bytes | bytearray) -> Any:
    """Text or bytes as JSON (JSON Lines too: one value a line becomes a list), refused when
    too large, empty, not JSON, nested too deeply or holding NaN or Infinity, by the one
    reader (:mod:`flowdebug.jsontext`)."""
    return jsontext.loads(data, "input", lines=True)


def _toolset_for(conv: Conversation, source: str) -> Toolset:
    try:
        return Toolset(
            entries=[
                ToolEntry(tool=t, handler=FixedHandler(result=IMPORTED_RESULT)) for t in conv.tools
            ]
        )
    except ValidationError as e:
        msg = e.errors()[0]["msg"].removeprefix("Value error, ")
        raise CodecError(source, "$.tools", msg) from None


def _from_trace(payload: dict[str, Any]) -> Imported:
    fmt = payload.get("format")
    if fmt != TRACE_FORMAT:
        raise CodecError(
            TRACE, "$.format", f"unknown trace version {fmt!r}; this flowdebug reads {TRACE_FORMAT}"
        )
    body = {k: v for k, v in payload.items() if k not in _TRACE_ONLY}
    if "toolset" not in body:  # `flowdebug run --json` leaves the tools' handlers out
        conv = _validate(Conversation, body.get("conversation"), ("conversation",))
        body["toolset"] = _scenario_toolset(body.get("scenario")) or _toolset_for(conv, TRACE)
    state = _validate(SessionState, body, ())
    state.id = uuid.uuid4().hex[:12]  # an import is a new session, never an overwrite
    # Who plays the model is the importer's choice: a trace's kept live player would send
    # the next Step to a base URL its author chose.
    state.player = None
    metadata = payload.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if not isinstance(name, str) or not name.strip():
        name = f"{state.scenario or 'session'} (imported)"
    return Imported(state, name, TRACE, "trace")


def _validate(model: Any, value: Any, where: tuple[Any, ...]) -> Any:
    try:
        return model.model_validate(value)
    except ValidationError as e:
        err = e.errors()[0]
        msg = err["msg"].removeprefix("Value error, ")
        raise CodecError(TRACE, json_path((*where, *_drop_tags(err["loc"]))), msg) from None


def _drop_tags(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """pydantic puts union tags into locations (parts.1.tool_call.id): drop them."""
    tags = {"text", "thinking", "image", "tool_call", "tool_result", "str", "list[...]"}
    tags |= {"python", "fixed", "template", "rules", "code", "mcp", "approve", "edit", "reject"}
    return tuple(p for i, p in enumerate(loc) if not (i and p in tags))


def _scenario_toolset(name: Any) -> Toolset | None:
    if not isinstance(name, str):
        return None
    from flowdebug.engine.session import scenarios

    try:
        scenario = scenarios.load(name)
    except FlowdebugError:
        return None
    # An MCP scenario's tools come from starting its server: an import starts nothing.
    return scenario.toolset() if scenario.mcp is None else None


def _unrecognised(payload: Any) -> CodecError:
    """Why ``payload`` is no conversation, said for someone importing in the app."""
    spoken = ", ".join(protocols.get(p).title for p in protocols.PROTOCOLS)
    if tool_envelope(payload) is not None or tools_only(payload):
        why = "these are tool declarations, not a conversation: add them on the Tools page"
    else:
        found = ", ".join(payload) if isinstance(payload, dict) else type(payload).__name__
        why = f"not a payload of any protocol flowdebug speaks ({spoken}); found: {found}"
    return CodecError("input", "$", why)


def _from_payload(payload: Any) -> Imported:
    try:
        decoded = decode(payload)
    except CodecError as e:
        if e.protocol == "input" and e.path == "$":  # no protocol recognised it
            raise _unrecognised(payload) from None
        raise
    imported = _from_conversation(
        decoded.as_conversation(), decoded.protocol, decoded.kind, list(decoded.warnings)
    )
    if decoded.response is not None:
        imported.state.exchanges.append(_answer(decoded, payload, imported.state.events))
    return imported


def _from_otel(payload: Any) -> Imported:
    reading = otel.read(payload)
    imported = _from_conversation(reading.conversation, otel.SOURCE, "trace", reading.warnings)
    scope = f" from {reading.scope}" if reading.scope else ""
    return replace(imported, name=f"OpenTelemetry trace{scope} (imported)")


def _from_conversation(
    conv: Conversation, source: str, kind: str, warnings: list[ConversionWarning]
) -> Imported:
    if not conv.messages and not conv.tools:
        raise CodecError(
            source, "$", f"this {source} {kind} holds no messages and no tools: nothing to import"
        )
    # The payload holds the history, not how it came about: draw its turns as the debugger
    # would have, so the graph starts at the first turn and not at the next step.
    past = replay(conv)
    state = SessionState(
        conversation=conv,
        toolset=_toolset_for(conv, source),
        events=past.events,
        step=past.step,
        round=past.round,
    )
    state.next_phase, state.status, state.status_text = resume(conv, past.events)
    if not past.events and any(m.role == "tool" for m in conv.messages):
        warnings.append(
            ConversionWarning(
                source,
                "calls_missing",
                "messages",
                "the payload holds tool results but not the model turn that asked for them "
                "(it was in an earlier response): History shows the results; the graph starts "
                "with the next step",
            )
        )
    return Imported(state, f"{source} {kind} (imported)", source, kind, warnings)


def _answer(decoded: Decoded, payload: Any, events: list[Any]) -> dict[str, Any]:
    """An imported response (or stream) kept as the vendor sent it, as an exchange of the
    session, so what only the wire holds (the usage the vendor reported) stays exact.
    ``at_step`` is the step its turn was drawn at (not ``step``: no live call made it)."""
    steps = [e.step for e in events if e.phase == "request"]
    kept = "stream_events" if decoded.kind == "stream" else "response"
    return {
        "protocol": decoded.protocol,
        "imported": True,
        "at_step": steps[-1] if steps else None,
        kept: payload,
    }


def import_session(
    data: str | bytes | bytearray | Any,
    name: str | None = None,
    store: Store | None = None,
    owner: str | None = None,
) -> Imported:
    """A new session from ``data`` (text, bytes or parsed JSON); saved in ``store`` when
    given, under ``name`` (else a name saying where it came from), as ``owner``'s (a
    browser's secret on a shared server, see :class:`~flowdebug.store.sessions.Store`)."""
    if isinstance(data, str | bytes | bytearray):
        payload = parse(data)
    else:
        payload = data
        jsontext.check(payload, "input")
    is_trace = isinstance(payload, dict) and str(payload.get("format", "")).startswith(TRACE)
    if is_trace:
        imported = _from_trace(payload)
    elif otel.is_otlp(payload):
        imported = _from_otel(payload)
    else:
        imported = _from_payload(payload)
    if name:
        imported = replace(imported, name=name)
    if store is not None:
        store.save(imported.state, name=imported.name, expected=0, owner=owner)
    return imported
