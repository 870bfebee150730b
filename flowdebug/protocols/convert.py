"""Payload conversion between protocols: detect, decode to canonical, encode to the target.

This is what ``flowdebug convert`` and the app's import box run. A request becomes a request,
a response a response and a stream a stream; ``canonical`` is the canonical conversation JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from flowdebug import jsontext, protocols
from flowdebug.errors import CodecError, UsageError, validation_path
from flowdebug.model import Conversation, Message, ModelResponse, dump
from flowdebug.protocols.base import ConversionWarning, Kind

CANONICAL = "canonical"
TARGETS = (*protocols.PROTOCOLS, CANONICAL)


@dataclass
class Decoded:
    """A payload understood: where it came from and its canonical meaning."""

    protocol: str
    kind: str
    conversation: Conversation | None = None
    response: ModelResponse | None = None
    warnings: list[ConversionWarning] = field(default_factory=list)

    def as_conversation(self) -> Conversation:
        """The conversation the payload belongs to. A response that echoes its request's
        fields (OpenAI Responses echoes tools, tool_choice, instructions...) keeps them: its
        codec leaves them as a canonical conversation under ``provider_details[...]["echo"]``.
        """
        if self.conversation is not None:
            return self.conversation
        assert self.response is not None
        for details in (self.response.provider_details or {}).values():
            echo = details.get("echo") if isinstance(details, dict) else None
            if isinstance(echo, dict):
                base = Conversation.model_validate(echo)
                return base.model_copy(update={"messages": [self.response.message]})
        return Conversation(messages=[self.response.message])


# The one reader of JSON text (:mod:`flowdebug.jsontext`), under the name the library exports.
load_json = jsontext.loads


def _decode_canonical(payload: Any) -> Decoded:
    try:
        conv = Conversation.model_validate(payload)
    except ValidationError as e:
        err = e.errors()[0]
        raise CodecError(CANONICAL, validation_path(err["loc"]), err["msg"]) from None
    return Decoded(CANONICAL, "request", conversation=conv)


def is_canonical(payload: Any) -> bool:
    """Canonical conversation JSON: an object whose ``messages`` all have ``parts`` (no
    vendor's message has them)."""
    messages = payload.get("messages") if isinstance(payload, dict) else None
    return isinstance(messages, list) and all(
        isinstance(m, dict) and "parts" in m for m in messages
    )


def _fragment(payload: Any, names: list[str]) -> tuple[str, Any, str] | None:
    """The first of ``names`` whose codec reads ``payload`` as a fragment: its name, the whole
    payload the fragment stands for and what was assumed (other readings named too)."""
    found = []
    for name in names:
        fragment = getattr(protocols.get(name), "fragment", None)
        got = fragment(payload) if fragment is not None else None
        if got is not None:
            found.append((name, *got))
    if not found:
        return None
    name, whole, note = found[0]
    if len(found) > 1:
        others = ", ".join(n for n, *_ in found[1:])
        note += f" (it also reads as {others}: name it with --from if it is)"
    return name, whole, note


def decode(payload: Any, source: str | None = None) -> Decoded:
    """Understand ``payload``: detect (or take) its protocol and kind and decode it.

    A fragment (one message, item or content entry, as pasted from docs and logs, or a
    response's bare content array) is read as the whole payload it stands for, and a
    ``fragment_assumed`` warning says in one line what was assumed. Any JSON value gives a
    result or a :class:`CodecError` naming the JSON path: what no codec must see (too deep,
    NaN, a lone surrogate...) is refused first (:func:`flowdebug.jsontext.check`).
    """
    jsontext.check(payload)
    if source == CANONICAL or (source is None and is_canonical(payload)):
        return _decode_canonical(payload)
    assumed: list[ConversionWarning] = []
    found: tuple[str, Kind] | None = protocols.detect(payload) if source is None else None
    if source is not None:
        kind = protocols.get(source).detect(payload)
        found = (source, kind) if kind is not None else None
    if found is None:
        fragment = _fragment(payload, [source] if source else list(protocols.PROTOCOLS))
        if fragment is not None:
            source, payload, note = fragment
            assumed.append(ConversionWarning(source, "fragment_assumed", "$", note))
            kind = protocols.get(source).detect(payload)
            found = (source, kind or "request")
    if found is None and source is not None:
        found = (source, "request")  # named by the person: its decoder says what is wrong
    if found is None:
        raise CodecError(
            "input",
            "$",
            "not a payload of any supported protocol ("
            f"{', '.join(protocols.PROTOCOLS)}), nor one message or content array of one; "
            "if it is one of them, name it (--from on the command line)",
        )
    name, kind = found
    codec = protocols.get(name)
    if kind in ("response", "stream"):
        decode_turn = codec.decode_response if kind == "response" else codec.decode_stream
        turn = decode_turn(payload)
        return Decoded(name, kind, response=turn.value, warnings=[*assumed, *turn.warnings])
    got = codec.decode_request(payload)
    return Decoded(name, kind, conversation=got.value, warnings=[*assumed, *got.warnings])


def encode(decoded: Decoded, target: str) -> tuple[Any, list[ConversionWarning]]:
    """The payload of the same kind in ``target`` (or canonical JSON) plus its warnings."""
    if target == CANONICAL:
        if decoded.response is not None:
            out = dump(decoded.as_conversation())
            if decoded.response.stop_reason:
                out["stop_reason"] = decoded.response.stop_reason
            return out, []
        return dump(decoded.as_conversation()), []
    if target not in protocols.PROTOCOLS:
        raise UsageError(f"unknown target {target!r}; choose one of: {', '.join(TARGETS)}")
    codec = protocols.get(target)
    if decoded.response is not None:
        got = (
            codec.encode_stream(decoded.response)
            if decoded.kind == "stream"
            else codec.encode_response(decoded.response)
        )
    else:
        got = codec.encode_request(decoded.as_conversation())
    return got.value, got.warnings


def convert(
    payload: Any, target: str, source: str | None = None
) -> tuple[Any, list[ConversionWarning]]:
    """Convert one payload; warnings cover both decoding and encoding losses."""
    decoded = decode(payload, source)
    out, warnings = encode(decoded, target)
    return out, [*decoded.warnings, *warnings]


def response_from_message(message: Message) -> ModelResponse:
    stop = "tool_use" if message.tool_calls else "end_turn"
    return ModelResponse(message=message, stop_reason=stop)
