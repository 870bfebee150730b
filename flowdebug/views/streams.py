"""Streamed arguments, per vendor: how each call's arguments assemble from their deltas.

No network: the model's turn is encoded as the vendor's own stream by its codec, and the
events are fed to :class:`flowdebug.players.assembly.ArgumentAssembler`, the same one that
follows a live stream. Anthropic sends ``input_json_delta`` fragments, OpenAI Chat
``tool_calls[].function.arguments`` pieces, Responses ``function_call_arguments.delta``, and
Gemini each ``functionCall`` whole in one chunk.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from flowdebug import protocols
from flowdebug.engine.tracing.trace import TraceEvent
from flowdebug.errors import FlowdebugError
from flowdebug.model import Conversation, Message
from flowdebug.players.assembly import ArgumentAssembler
from flowdebug.protocols.convert import response_from_message
from flowdebug.render.aligned import Delta

MAX_DELTAS = 12  # rows per call; a longer stream shows its first and last fragments


TAIL = 256  # characters of a fragment and of the arguments so far kept per delta
MAX_CACHED = 64 * 1024  # a turn whose JSON is longer is encoded each time, never cached


def _turn(protocol: str, message_json: str) -> tuple[tuple[Delta, ...], ...]:
    """Per call of the turn (in order), its deltas in ``protocol``'s stream. Cached per turn:
    the message's JSON is the key, so an edited turn is encoded again; a large turn is not
    cached (its JSON would be kept as the key)."""
    if len(message_json) > MAX_CACHED:
        return _encode(protocol, message_json)
    return _cached(protocol, message_json)


@lru_cache(maxsize=512)
def _cached(protocol: str, message_json: str) -> tuple[tuple[Delta, ...], ...]:
    return _encode(protocol, message_json)


def _encode(protocol: str, message_json: str) -> tuple[tuple[Delta, ...], ...]:
    message = Message.model_validate_json(message_json)
    try:
        events = protocols.get(protocol).encode_stream(response_from_message(message)).value
    except FlowdebugError:  # a turn this vendor cannot stream is drawn without deltas
        return ()
    assembler = ArgumentAssembler(protocol)
    calls: dict[int, list[Delta]] = {}
    so_far: dict[int, str] = {}  # the whole arguments so far, per call (deltas keep tails)
    for event in events:
        for snap in assembler.feed(event):
            done = calls.setdefault(snap.index, [])
            before = so_far.get(snap.index, "")
            fragment = snap.text[len(before) :] if snap.text.startswith(before) else snap.text
            so_far[snap.index] = snap.text
            done.append(Delta(fragment[-TAIL:], snap.text[-TAIL:]))
    return tuple(_trim(tuple(calls.get(i, ()))) for i in range(max(calls, default=-1) + 1))


def _trim(deltas: tuple[Delta, ...]) -> tuple[Delta, ...]:
    if len(deltas) <= MAX_DELTAS:
        return deltas
    half = MAX_DELTAS // 2
    return deltas[:half] + deltas[-half:]


def stream_deltas(
    conv: Conversation, events: Sequence[TraceEvent], protocol: str
) -> dict[int, tuple[Delta, ...]]:
    """Per ``tool_call`` event seq, the deltas that carried its arguments in ``protocol``'s
    stream of the turn it came in (empty for a vendor whose stream sends no fragments)."""
    out: dict[int, tuple[Delta, ...]] = {}
    for e in events:
        if e.kind != "tool_call" or not e.messages or e.index is None:
            continue
        if e.messages > len(conv.messages):
            continue
        message = conv.messages[e.messages - 1]
        calls = message.tool_calls
        if message.role != "assistant" or e.index >= len(calls) or calls[e.index].id != e.call_id:
            continue
        per_call = _turn(protocol, message.model_dump_json())
        if e.index < len(per_call) and per_call[e.index]:
            out[e.seq] = per_call[e.index]
    return out
