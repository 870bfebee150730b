"""ConverseResponse bodies <-> the canonical model turn (streams are assembled into one first).

``metrics``, the usage counters with no canonical name and a stop reason the canonical one
does not spell back ride in ``provider_details["bedrock"]``.
"""

from __future__ import annotations

from typing import Any

from flowdebug.errors import CodecError
from flowdebug.model import Message, ModelResponse, StopReason, ToolCall
from flowdebug.protocols.base import Renamer, Warnings, expect, require
from flowdebug.protocols.bedrock.parts import PROTOCOL, optional, own, with_extra
from flowdebug.protocols.bedrock.parts.encode import encode_blocks
from flowdebug.protocols.bedrock.request import call_names, message_parts
from flowdebug.protocols.bedrock.usage import decode_usage, encode_usage
from flowdebug.protocols.wire_helpers import results_left_out, stop_filled_in


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


# botocore StopReason -> canonical. guardrail_intervened, malformed_model_output,
# malformed_tool_use and model_context_window_exceeded keep their wire value in
# provider_details so they come back unchanged.
STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "content_filtered": "content_filter",
    "guardrail_intervened": "content_filter",
    "malformed_model_output": "other",
    "malformed_tool_use": "other",
    "model_context_window_exceeded": "other",
}

WIRE_STOP: dict[StopReason, str] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "content_filter": "content_filtered",
}


def _stop_reason(resp: ModelResponse, raw: Any, w: Warnings) -> str:
    match resp.stop_reason:
        case None:
            return stop_filled_in(resp, w)
        case "content_filter" if raw == "guardrail_intervened":
            return raw
        case "other" if isinstance(raw, str):
            return raw
        case "refusal" | "other" as reason:
            w.add(
                "stop_reason_mapped",
                "stop_reason",
                f"stop reason {reason!r} has no Bedrock value; sent as end_turn",
            )
            return "end_turn"
        case reason:
            return WIRE_STOP[reason]


def encode_response(resp: ModelResponse, w: Warnings) -> dict[str, Any]:
    """The ConverseResponse body for ``resp``."""
    names = Renamer(PROTOCOL, w)
    extra = own(resp.provider_details, w, "provider_details")
    parts = resp.message.parts
    results_left_out(parts, w, "a Bedrock response (an assistant message) holds no tool result")
    kept = resp.message.model_copy(update={"parts": [p for p in parts if p.kind != "tool_result"]})
    if len(kept.parts) != len(parts) and kept.provider_details:
        kept = kept.model_copy(update={"provider_details": None})  # block places moved
    content = encode_blocks(kept, "message", w, names)
    if resp.id is not None:
        w.add("response_id_dropped", "id", "a ConverseResponse has no id; it was not sent")
    if resp.model is not None:
        w.add(
            "model_dropped",
            "model",
            "a ConverseResponse names no model (the model id is in the request URL)",
        )
    metrics = extra.pop("metrics", None)
    if not isinstance(metrics, dict):
        metrics = {"latencyMs": 0}
        w.add(
            "metrics_filled_in",
            "provider_details.bedrock.metrics",
            "a ConverseResponse requires metrics; latencyMs 0 was sent",
        )
    body: dict[str, Any] = {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": _stop_reason(resp, extra.pop("stopReason", None), w),
        "usage": encode_usage(resp, extra, w),
        "metrics": metrics,
    }
    return with_extra(body, extra)
