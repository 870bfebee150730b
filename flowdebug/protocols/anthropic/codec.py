"""Anthropic Messages API codec: ``tool_use`` / ``tool_result`` blocks paired by id.

Requests are ``POST /v1/messages`` bodies (read and written in
:mod:`flowdebug.protocols.anthropic.request`), responses are ``Message`` objects, streams are
the list of SSE event objects (see ``anthropic_stream``). Vendor-only fields
(``cache_control``, ``citations``, ``thinking`` config, ``pause_turn`` ...) ride in
``provider_details["anthropic"]`` and come back out on encode.
"""

from __future__ import annotations

from typing import Any

from flowdebug.errors import CodecError
from flowdebug.model import (
    Conversation,
    Image,
    Message,
    ModelResponse,
    Part,
    StopReason,
    Text,
    ToolCall,
    ToolResult,
)
from flowdebug.protocols.anthropic import envelope, request
from flowdebug.protocols.anthropic import fragment as anthropic_fragment
from flowdebug.protocols.anthropic import stream as anthropic_stream
from flowdebug.protocols.anthropic.blocks import (
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
from flowdebug.protocols.anthropic.facts import FACTS
from flowdebug.protocols.anthropic.request import CALL_TYPES
from flowdebug.protocols.base import Converted, Kind, Warnings, expect, require
from flowdebug.protocols.warning_codes import WarningCode

DEFAULT_MODEL = envelope.DEFAULT_MODEL
DEFAULT_MAX_TOKENS = envelope.DEFAULT_MAX_TOKENS
MESSAGE_FIELDS = ("id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage")
# Keys and block types an Anthropic request never has (OpenAI Chat, Bedrock Converse).
FOREIGN_KEYS = (
    "max_completion_tokens", "n", "response_format", "parallel_tool_calls", "functions",
    "stream_options", "toolConfig", "inferenceConfig",
)  # fmt: skip
FOREIGN_BLOCKS = (None, "image_url", "input_audio", "file")  # Bedrock blocks have no type
STOP_REASONS: dict[str, StopReason] = {
    r: r for r in ("end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal")
}  # pause_turn, model_context_window_exceeded and newer values decode as "other"


# ------------------------------------------------------------------------ decode response


def _decode_message(
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


def _looks_like_request(p: dict[str, Any]) -> bool:
    messages = p.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return False
    tools = p.get("tools")
    tools = [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
    blocks = [
        b
        for m in messages
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict)
    ]
    foreign = (
        any(k in p for k in FOREIGN_KEYS)
        or isinstance(p.get("tool_choice"), str)
        or any(b.get("type") in FOREIGN_BLOCKS for b in blocks)
        or any("function" in t or t.get("type") == "function" for t in tools)
        or any(
            m.get("role") in ("tool", "developer", "function") or "tool_calls" in m
            for m in messages
        )
    )
    if foreign:
        return False
    return (
        "max_tokens" in p
        or "system" in p
        or any("input_schema" in t for t in tools)
        or any(
            b.get("type") in ("tool_use", "tool_result", "thinking", "redacted_thinking")
            for b in blocks
        )
    )


# ---------------------------------------------------------------------------------- codec


class AnthropicCodec:
    """Anthropic Messages: requests, Message responses and their SSE event streams."""

    name = PROTOCOL
    title = FACTS.title
    facts = FACTS

    def encode_request(self, conv: Conversation) -> Converted[Any]:
        return request.encode_request(conv)

    def decode_request(self, payload: Any) -> Converted[Conversation]:
        return request.decode_request(payload)

    def encode_response(self, resp: ModelResponse) -> Converted[Any]:
        w = Warnings(PROTOCOL)
        return w.wrap(self._message(resp, w))

    def _message(self, resp: ModelResponse, w: Warnings) -> dict[str, Any]:
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
                continue
            block = encode_part(part, path, w, names, resp.message.parts)
            slots.append(block)
            if block is not None:
                content.append(block)
        note_shift(slots, "message", w)
        msg_id = envelope.message_id(resp, w)
        usage = envelope.usage(resp, w)
        body: dict[str, Any] = {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": envelope.model(resp.model, w),
            "content": content,
            "stop_reason": self._stop_reason(resp, extra.pop("stop_reason", None), w),
            "stop_sequence": extra.pop("stop_sequence", None),
            "usage": with_extra(usage, envelope.usage_extra(extra.pop("usage", None) or {}, w)),
        }
        return with_extra(body, extra)

    @staticmethod
    def _stop_reason(resp: ModelResponse, raw: Any, w: Warnings) -> str:
        match resp.stop_reason:
            case None if any(isinstance(p, Text) and p.refusal for p in resp.message.parts):
                return "refusal"
            case None:
                return "tool_use" if resp.message.tool_calls else "end_turn"
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

    def decode_response(self, payload: Any) -> Converted[ModelResponse]:
        w = Warnings(PROTOCOL)
        return w.wrap(_decode_message(payload, "$", w))

    def encode_stream(self, resp: ModelResponse) -> Converted[list[Any]]:
        w = Warnings(PROTOCOL)
        return w.wrap(anthropic_stream.events_from_message(self._message(resp, w)))

    def decode_stream(self, events: list[Any]) -> Converted[ModelResponse]:
        w = Warnings(PROTOCOL)
        acc = anthropic_stream.assemble(events, w)
        return w.wrap(
            _decode_message(acc.message, acc.message_path, w, acc.block_paths, acc.raw_inputs)
        )

    def detect(self, payload: Any) -> Kind | None:
        if anthropic_stream.is_stream(payload):
            return "stream"
        if not isinstance(payload, dict):
            return None
        if (
            payload.get("type") == "message"
            and payload.get("role") == "assistant"
            and isinstance(payload.get("content"), list)
        ):
            return "response"
        return "request" if _looks_like_request(payload) else None

    def fragment(self, payload: Any) -> tuple[Any, str] | None:
        if self.detect(payload) is not None:
            return None  # a whole payload, not a fragment
        return anthropic_fragment.fragment(payload)


CODEC = AnthropicCodec()
