"""Anthropic Messages API codec: ``tool_use`` / ``tool_result`` blocks paired by id.

Requests are ``POST /v1/messages`` bodies (read and written in
:mod:`flowdebug.protocols.anthropic.request`), responses are ``Message`` objects, streams are
the list of SSE event objects (see :mod:`.stream`). Vendor-only fields
(``cache_control``, ``citations``, ``thinking`` config, ``pause_turn`` ...) ride in
``provider_details["anthropic"]`` and come back out on encode.
"""

from __future__ import annotations

from typing import Any

from flowdebug.model import Conversation, ModelResponse
from flowdebug.protocols.anthropic import fragment as anthropic_fragment
from flowdebug.protocols.anthropic import request
from flowdebug.protocols.anthropic import stream as anthropic_stream
from flowdebug.protocols.anthropic.facts import FACTS
from flowdebug.protocols.anthropic.parts import PROTOCOL
from flowdebug.protocols.anthropic.response import decode_message, encode_message
from flowdebug.protocols.base import Converted, Kind, Warnings

# Keys and block types an Anthropic request never has (OpenAI Chat, Bedrock Converse).
FOREIGN_KEYS = (
    "max_completion_tokens", "n", "response_format", "parallel_tool_calls", "functions",
    "stream_options", "toolConfig", "inferenceConfig",
)  # fmt: skip
FOREIGN_BLOCKS = (None, "image_url", "input_audio", "file")  # Bedrock blocks have no type


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
        return w.wrap(encode_message(resp, w))

    def decode_response(self, payload: Any) -> Converted[ModelResponse]:
        w = Warnings(PROTOCOL)
        return w.wrap(decode_message(payload, "$", w))

    def encode_stream(self, resp: ModelResponse) -> Converted[list[Any]]:
        w = Warnings(PROTOCOL)
        return w.wrap(anthropic_stream.events_from_message(encode_message(resp, w)))

    def decode_stream(self, events: list[Any]) -> Converted[ModelResponse]:
        w = Warnings(PROTOCOL)
        acc = anthropic_stream.assemble(events, w)
        return w.wrap(
            decode_message(acc.message, acc.message_path, w, acc.block_paths, acc.raw_inputs)
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
