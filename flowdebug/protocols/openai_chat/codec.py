"""OpenAI Chat Completions (``POST /v1/chat/completions``): ``tool_calls`` and role ``tool``.

Calls are ``{id, type: "function", function: {name, arguments: <JSON string>}}`` on the
assistant message; each result is its own ``{"role": "tool", "tool_call_id", "content"}``
message. There is no error flag; OpenAI-compatible servers add reasoning and Gemini's thought
signatures (``parts/__init__.py``). The messages are encoded and decoded in ``parts/``, the
bodies around them in ``request.py`` and ``response.py``, tools in ``tools.py``, usage in
``usage.py``, streams in ``stream.py``, pasted fragments in ``fragment.py``.
"""

from __future__ import annotations

from typing import Any

from flowdebug.model import Conversation, ModelResponse
from flowdebug.protocols.base import Converted, Kind, Warnings
from flowdebug.protocols.openai_chat.facts import FACTS
from flowdebug.protocols.openai_chat.fragment import fragment
from flowdebug.protocols.openai_chat.parts.decode import PROTOCOL
from flowdebug.protocols.openai_chat.request import decode_request, encode_request
from flowdebug.protocols.openai_chat.response import decode_completion, encode_completion
from flowdebug.protocols.openai_chat.stream import chunks_to_completion, completion_to_chunks

# Top-level keys of the other protocols' payloads (Anthropic, Responses, Gemini, Bedrock, MCP).
_OTHER_PROTOCOL_KEYS = {
    "system",
    "input",
    "instructions",
    "contents",
    "toolConfig",
    "inferenceConfig",
    "jsonrpc",
}
_ANTHROPIC_BLOCKS = {
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
    "document",
    "server_tool_use",
}


def _is_request(payload: dict[str, Any]) -> bool:
    messages = payload.get("messages")
    if not isinstance(messages, list) or not messages or _OTHER_PROTOCOL_KEYS & payload.keys():
        return False
    if not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages):
        return False
    blocks = [b for m in messages if isinstance(m.get("content"), list) for b in m["content"]]
    # Every Chat content part is typed; Anthropic blocks have their own types.
    if any(
        not isinstance(b, dict)
        or (isinstance(b.get("type"), str) and b["type"] in _ANTHROPIC_BLOCKS)
        or (b.get("type") == "image" and "source" in b)
        for b in blocks
    ):
        return False
    tools = payload.get("tools")
    tools = tools if isinstance(tools, list) else []
    if any(not isinstance(t, dict) or "input_schema" in t for t in tools):
        return False
    marked = (
        any(m["role"] in ("developer", "tool") or "tool_calls" in m for m in messages)
        or any(t.get("type") == "function" and "function" in t for t in tools)
        or any(b.get("type") == "image_url" for b in blocks)
        or payload.get("tool_choice") in ("auto", "none", "required")
        or bool({"max_completion_tokens", "parallel_tool_calls"} & payload.keys())
    )
    # Anthropic requires max_tokens; a plain chat request without it is ours.
    return marked or "max_tokens" not in payload


def _is_stream(events: list[Any]) -> bool:
    if not events or not all(isinstance(e, dict) for e in events):
        return False
    if all(e.get("object") == "chat.completion.chunk" for e in events):
        return True
    has_delta = False
    for event in events:
        choices = event.get("choices")
        if "object" in event or not isinstance(choices, list):
            return False
        if not all(isinstance(c, dict) and "delta" in c for c in choices):
            return False
        has_delta = has_delta or bool(choices)
    return has_delta


class OpenAIChatCodec:
    """OpenAI Chat Completions: requests, ChatCompletion responses and chunk streams."""

    name = PROTOCOL
    title = FACTS.title
    facts = FACTS

    def encode_request(self, conv: Conversation) -> Converted[Any]:
        body, w = encode_request(conv)
        return w.wrap(body)

    def decode_request(self, payload: Any) -> Converted[Conversation]:
        w = Warnings(PROTOCOL)
        return w.wrap(decode_request(payload, w))

    def encode_response(self, resp: ModelResponse) -> Converted[Any]:
        completion, w = encode_completion(resp)
        return w.wrap(completion)

    def decode_response(self, payload: Any) -> Converted[ModelResponse]:
        w = Warnings(PROTOCOL)
        return w.wrap(decode_completion(payload, w))

    def encode_stream(self, resp: ModelResponse) -> Converted[list[Any]]:
        completion, w = encode_completion(resp)
        return w.wrap(completion_to_chunks(completion))

    def decode_stream(self, events: list[Any]) -> Converted[ModelResponse]:
        w = Warnings(PROTOCOL)
        return w.wrap(decode_completion(chunks_to_completion(events, w), w))

    def detect(self, payload: Any) -> Kind | None:
        if isinstance(payload, list):
            return "stream" if _is_stream(payload) else None
        if not isinstance(payload, dict):
            return None
        if payload.get("object") == "chat.completion":
            return "response"
        choices = payload.get("choices")
        if (
            "object" not in payload
            and isinstance(choices, list)
            and choices
            and isinstance(choices[0], dict)
            and "message" in choices[0]
            and "finish_reason" in choices[0]
        ):
            return "response"
        return "request" if _is_request(payload) else None

    def fragment(self, payload: Any) -> tuple[Any, str] | None:
        return fragment(payload)


CODEC = OpenAIChatCodec()
