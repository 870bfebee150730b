"""Anthropic ``Message`` objects <-> canonical model turns.

Anthropic requires ``id``, ``model`` and ``usage`` on every Message; when the canonical value
has none, one is made up and a warning says which. A stop reason the canonical set has no name
for (``pause_turn``, ``model_context_window_exceeded`` ...) decodes as ``other`` and keeps its
wire value in ``provider_details["anthropic"]``, so it comes back unchanged."""

from __future__ import annotations

import hashlib
from typing import Any

from flowdebug.errors import CodecError
from flowdebug.model import (
    Image,
    Message,
    ModelResponse,
    Part,
    StopReason,
    Text,
    ToolCall,
    ToolResult,
    canonical_json,
)
from flowdebug.protocols.anthropic.parts import (
    PROTOCOL,
    Renamer,
    decode_block,
    encode_part,
    note_shift,
    optional,
    own,
    stash,
    with_extra,
)
from flowdebug.protocols.anthropic.request import CALL_TYPES, model
from flowdebug.protocols.anthropic.usage import usage, usage_extra
from flowdebug.protocols.base import Warnings, expect, require
from flowdebug.protocols.warning_codes import WarningCode
from flowdebug.protocols.wire_helpers import stop_filled_in


def message_id(resp: ModelResponse, w: Warnings) -> str:
    """``resp.id`` when it is an Anthropic id, else a deterministic ``msg_`` id (warned)."""
    if resp.id is not None and resp.id.startswith("msg_"):
        return resp.id
    digest = hashlib.sha1(canonical_json(resp.message).encode()).hexdigest()[:24]
    made = f"msg_{digest}"
    if resp.id is None:
        w.add("response_id_replaced", "id", f"the response has no id; Anthropic needs one: {made}")
    else:
        w.add(
            "response_id_replaced",
            "id",
            f"Anthropic message ids start with msg_; {resp.id!r} became {made}",
        )
    return made


MESSAGE_FIELDS = ("id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage")

STOP_REASONS: dict[str, StopReason] = {
    r: r for r in ("end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal")
}  # pause_turn, model_context_window_exceeded and newer values decode as "other"


def decode_message(
    msg: Any,
    path: str,
    w: Warnings,
    block_paths: list[str] | None = None,
    raw_inputs: dict[int, str] | None = None,
) -> ModelResponse:
    expect(PROTOCOL, msg, path, dict)
    if msg.get("type") != "message":
        raise CodecError(PROTOCOL, f"{path}.type", 'expected "message"')
    content = require(PROTOCOL, msg, "content", path, list)
    # A hosted result names its tool through the call before it (the MCP connector's tools).
    names = {
        b["id"]: b["name"]
        for b in content
        if isinstance(b, dict)
        and b.get("type") in CALL_TYPES
        and isinstance(b.get("id"), str)
        and isinstance(b.get("name"), str)
    }
    parts: list[Part] = []
    for j, block in enumerate(content):
        where = block_paths[j] if block_paths else f"{path}.content[{j}]"
        part = decode_block(block, where, w, names)
        if isinstance(part, ToolCall) and raw_inputs and j in raw_inputs:
            part = ToolCall(**(part.model_dump() | {"raw_arguments": raw_inputs[j]}))
        if part is not None:
            parts.append(part)
    stop = optional(msg, "stop_reason", path, str)
    stashed = (stash(msg, MESSAGE_FIELDS) or {}).get(PROTOCOL)
    extra: dict[str, Any] = dict(stashed) if isinstance(stashed, dict) else {}
    if stop is not None and stop not in STOP_REASONS:
        extra["stop_reason"] = stop
    if "stop_details" in msg:  # kept even when null, so the Message comes back as it was
        extra["stop_details"] = msg["stop_details"]
    if msg.get("stop_sequence") is not None:
        extra["stop_sequence"] = msg["stop_sequence"]
    usage: dict[str, int] = {}
    for key, value in (optional(msg, "usage", path, dict) or {}).items():
        if isinstance(value, int) and not isinstance(value, bool):
            usage[key] = value
        elif value is not None:
            extra.setdefault("usage", {})[key] = value
    return ModelResponse(
        message=Message(role="assistant", parts=parts),
        stop_reason=None if stop is None else STOP_REASONS.get(stop, "other"),
        id=optional(msg, "id", path, str),
        model=optional(msg, "model", path, str),
        usage=usage or None,
        provider_details={PROTOCOL: extra} if extra else None,
    )


def encode_message(resp: ModelResponse, w: Warnings) -> dict[str, Any]:
    """A Message body for ``resp`` (the response, and what a stream is cut from)."""
    names = Renamer(PROTOCOL, w)
    extra = own(resp.provider_details, w, "provider_details")
    own(resp.message.provider_details, w, "message")
    content = []
    slots: list[Any] = []  # None where a part was left out
    for j, part in enumerate(resp.message.parts):
        path = f"message.parts[{j}]"
        if isinstance(part, Image | ToolResult):
            code: WarningCode = (
                "image_dropped" if isinstance(part, Image) else "tool_result_dropped"
            )
            w.add(code, path, f"an Anthropic response cannot hold a {part.kind} part")
            slots.append(None)
            continue
        block = encode_part(part, path, w, names, resp.message.parts)
        slots.append(block)
        if block is not None:
            content.append(block)
    note_shift(slots, "message", w)
    msg_id = message_id(resp, w)
    counters = usage(resp, w)
    body: dict[str, Any] = {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": model(resp.model, w),
        "content": content,
        "stop_reason": _stop_reason(resp, extra.pop("stop_reason", None), w),
        "stop_sequence": extra.pop("stop_sequence", None),
        "usage": with_extra(counters, usage_extra(extra.pop("usage", None) or {}, w)),
    }
    return with_extra(body, extra)


def _stop_reason(resp: ModelResponse, raw: Any, w: Warnings) -> str:
    match resp.stop_reason:
        case None if any(isinstance(p, Text) and p.refusal for p in resp.message.parts):
            return stop_filled_in(resp, w, "refusal")
        case None:
            return stop_filled_in(resp, w)
        case "content_filter":
            w.add(
                "stop_reason_mapped",
                "stop_reason",
                "content_filter has no Anthropic value; sent as refusal",
            )
            return "refusal"
        case "other" if isinstance(raw, str):
            return raw
        case "other":
            w.add(
                "stop_reason_mapped",
                "stop_reason",
                "stop reason 'other' has no Anthropic value; sent as end_turn",
            )
            return "end_turn"
        case reason:
            return reason
