"""One conversation, every protocol: the payloads each model turn puts on the wire.

A conversation with N assistant turns is N request/response exchanges: the request carries
every message before the turn, the response is the turn itself. The app shows these side by
side; nothing here knows about Streamlit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flowdebug import protocols
from flowdebug.model import Conversation, ModelResponse
from flowdebug.protocols.base import ConversionWarning
from flowdebug.protocols.convert import response_from_message
from flowdebug.protocols.models import choosing


@dataclass
class Payload:
    """One wire payload of one protocol: what it is, the JSON, and what it could not carry."""

    label: str  # "request 1", "response 1", "stream 1"
    kind: str  # request | response | stream
    value: Any
    warnings: list[ConversionWarning] = field(default_factory=list)


@dataclass
class Turn:
    """One model turn: the history it was asked with, and what it answered."""

    number: int
    request: Conversation
    response: ModelResponse


def turns(conv: Conversation) -> list[Turn]:
    """Split a conversation into its model turns (one per assistant message)."""
    out = []
    for i, message in enumerate(conv.messages):
        if message.role != "assistant":
            continue
        out.append(
            Turn(
                number=len(out) + 1,
                request=conv.model_copy(update={"messages": conv.messages[:i]}),
                response=response_from_message(message),
            )
        )
    return out


def encode_turn(turn: Turn, protocol: str, stream: bool = True) -> list[Payload]:
    """The request, the response and (optionally) the stream of one turn in ``protocol``."""
    codec = protocols.get(protocol)
    req = codec.encode_request(turn.request)
    resp = codec.encode_response(turn.response)
    out = [
        Payload(f"request {turn.number}", "request", req.value, req.warnings),
        Payload(f"response {turn.number}", "response", resp.value, resp.warnings),
    ]
    if stream:
        events = codec.encode_stream(turn.response)
        out.append(Payload(f"stream {turn.number}", "stream", events.value, events.warnings))
    return out


def encode_all(
    conv: Conversation,
    names: list[str] | None = None,
    stream: bool = True,
    models: Mapping[str, str] | None = None,
) -> dict[str, list[Payload]]:
    """Every turn of ``conv`` in every protocol named (every registered one by default);
    ``models``: the session's model per vendor (protocols/models.py)."""
    names = names or list(protocols.PROTOCOLS)
    all_turns = turns(conv)
    with choosing(models):
        return {
            name: [p for t in all_turns for p in encode_turn(t, name, stream)]
            + _pending(conv, name, len(all_turns) + 1)
            for name in names
        }


def _pending(conv: Conversation, protocol: str, number: int) -> list[Payload]:
    """The request still waiting for its model turn (a history that does not end with the
    model's answer, e.g. a pasted request), alone; none otherwise."""
    if conv.messages and conv.messages[-1].role == "assistant":
        return []
    if not conv.messages and not conv.tools:
        return []
    req = protocols.get(protocol).encode_request(conv)
    return [Payload(f"request {number}", "request", req.value, req.warnings)]


def pasted(text: str) -> tuple[Conversation, list[str]]:
    """The conversation a pasted payload holds (a request or response of any vendor, a trace),
    and what reading it could not carry, as sentences."""
    from flowdebug.exchange.imports import import_session

    imported = import_session(text)
    return imported.state.conversation, [f"{w.path}: {w.message}" for w in imported.warnings]


def trip_rows(value: Conversation | str) -> list[dict[str, Any]]:
    """The round-trip loss table (:mod:`flowdebug.protocols.roundtrip`, as ``flowdebug
    roundtrip`` prints it) for a conversation or pasted text (a payload of any vendor, or a
    trace): one row per ordered pair of model vendors, what A -> B -> A did to each aspect,
    and a verdict naming what it lost or changed."""
    from flowdebug.exchange.imports import TRACE, import_session, parse
    from flowdebug.protocols.roundtrip import ASPECTS, roundtrip

    if isinstance(value, str):
        payload = parse(value)
        if isinstance(payload, dict) and str(payload.get("format", "")).startswith(TRACE):
            payload = import_session(payload).state.conversation
        value = payload
    rows = []
    for trip in roundtrip(value):
        hurt = [a for a in ASPECTS if trip.aspects.get(a) in ("lost", "changed")]
        verdict = (
            f"refused: {trip.error}"
            if trip.error
            else "keeps everything"
            if not hurt
            else "loses " + ", ".join(f"{a} ({trip.aspects[a]})" for a in hurt)
        )
        rows.append(
            {
                "A": protocols.facts(trip.source).title,
                "B": protocols.facts(trip.via).title,
                "A → B → A": verdict,
                **{a: trip.aspects.get(a, "—") for a in ASPECTS},
                "warnings": ", ".join(trip.warnings),
            }
        )
    return rows
