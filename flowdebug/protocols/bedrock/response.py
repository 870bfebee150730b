"""A ConverseResponse body -> the canonical model turn (streams are assembled into one first).

``metrics``, the usage counters with no canonical name and a stop reason the canonical one
does not spell back ride in ``provider_details["bedrock"]``.
"""

from __future__ import annotations

from typing import Any

from flowdebug.errors import CodecError
from flowdebug.model import Message, ModelResponse, ToolCall
from flowdebug.protocols.base import Warnings, expect, require
from flowdebug.protocols.bedrock.decode import call_names, message_parts
from flowdebug.protocols.bedrock.facts import PROTOCOL, STOP_REASONS, USAGE, WIRE_STOP
from flowdebug.protocols.bedrock.wire import optional


def decode_usage(raw: Any, path: str, extra: dict[str, Any]) -> dict[str, int] | None:
    if raw is None:
        return None
    usage = expect(PROTOCOL, raw, path, dict)
    out: dict[str, int] = {}
    rest: dict[str, Any] = {}
    for key, value in usage.items():
        if key in USAGE and isinstance(value, int) and not isinstance(value, bool):
            out[USAGE[key]] = value
        elif key != "totalTokens":
            rest[key] = value
    total = usage.get("totalTokens")
    if isinstance(total, int) and total != sum(out.values()):
        out["total_tokens"] = total
    if rest:
        extra["usage"] = rest
    return out or None


def decode_response_body(
    body: Any, path: str, w: Warnings, raw_inputs: dict[int, str] | None = None
) -> ModelResponse:
    """A ConverseResponse body (``path`` names it in errors)."""
    expect(PROTOCOL, body, path, dict)
    output = require(PROTOCOL, body, "output", path, dict)
    message = require(PROTOCOL, output, "message", f"{path}.output", dict)
    mpath = f"{path}.output.message"
    role = optional(message, "role", mpath, str)
    if role not in (None, "assistant"):
        raise CodecError(
            PROTOCOL, f"{mpath}.role", f"a response is an assistant message, got {role!r}"
        )
    content = require(PROTOCOL, message, "content", mpath, list)
    parts, kept = message_parts(content, mpath, w, call_names([message]))
    for j, part in enumerate(parts):
        if isinstance(part, ToolCall) and raw_inputs:
            index = _wire_index(j, kept)
            if index in raw_inputs:
                parts[j] = part.model_copy(update={"raw_arguments": raw_inputs[index]})
    extra: dict[str, Any] = {
        k: v for k, v in body.items() if k not in ("output", "stopReason", "usage")
    }
    stop = optional(body, "stopReason", path, str)
    if stop is not None and WIRE_STOP.get(STOP_REASONS.get(stop, "other")) != stop:
        extra["stopReason"] = stop  # a value the canonical stop reason does not spell back
    usage = decode_usage(body.get("usage"), f"{path}.usage", extra)
    return ModelResponse(
        message=Message(
            role="assistant",
            parts=parts,
            provider_details={PROTOCOL: {"blocks": kept}} if kept else None,
        ),
        stop_reason=None if stop is None else STOP_REASONS.get(stop, "other"),
        usage=usage,
        provider_details={PROTOCOL: extra} if extra else None,
    )


def _wire_index(part_index: int, kept: list[list[Any]]) -> int:
    """The wire content index of the ``part_index``-th decoded part."""
    index, seen = 0, -1
    places = {e[0] for e in kept}
    while True:
        if index not in places:
            seen += 1
            if seen == part_index:
                return index
        index += 1
