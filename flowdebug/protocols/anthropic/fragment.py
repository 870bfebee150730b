"""Anthropic fragments: one ``messages[]`` entry, or a Message's bare ``content`` array, as
people paste them from docs and logs, read as the whole payload they stand for.

Strict on purpose: a plain ``{"role": "user", "content": [{"type": "text", ...}]}`` is also an
OpenAI Chat message, so a fragment is claimed only when a block is one only Anthropic has
(``tool_use``, ``tool_result``, ``thinking``, an image with a ``source`` ...) or a text block
carries Anthropic-only keys (``citations``, ``cache_control``).
"""

from __future__ import annotations

from typing import Any

from flowdebug.protocols.anthropic.hosted import is_result_type

# Blocks a Message (response) holds; user turns add tool results and documents.
RESPONSE_BLOCKS = frozenset(
    {"text", "thinking", "redacted_thinking", "tool_use", "server_tool_use", "mcp_tool_use",
     "container_upload"}
)  # fmt: skip
USER_BLOCKS = frozenset({"text", "image", "document", "search_result", "tool_result"})
TEXT_KEYS = frozenset({"type", "text"})
OPENAI_TEXT_KEYS = frozenset({"type", "text", "annotations"})


def _kind(block: Any) -> str | None:
    kind = block.get("type") if isinstance(block, dict) else None
    return kind if isinstance(kind, str) else None


def _anthropic_block(block: dict[str, Any], kind: str) -> bool:
    if kind in RESPONSE_BLOCKS | USER_BLOCKS or is_result_type(kind):
        if kind == "image":
            return isinstance(block.get("source"), dict)  # OpenAI images are image_url
        return True
    return False


def _only_anthropic(blocks: list[Any]) -> bool:
    """Every block is an Anthropic block and one of them no other vendor spells this way."""
    if not blocks or not all(isinstance(b, dict) for b in blocks):
        return False
    kinds = [_kind(b) for b in blocks]
    if any(k is None or not _anthropic_block(b, k) for b, k in zip(blocks, kinds, strict=True)):
        return False
    return any(
        k != "text" or (set(b) - OPENAI_TEXT_KEYS) for b, k in zip(blocks, kinds, strict=True)
    )


# A Message's own fields: a response printed without its envelope keeps some of them.
MESSAGE_KEYS = frozenset(
    {"content", "model", "stop_reason", "stop_sequence", "usage", "container",
     "context_management", "id", "type", "role"}
)  # fmt: skip


def _bare_message(payload: dict[str, Any]) -> bool:
    """A Message with its content but without its envelope (``id``, ``type`` or ``role``):
    only response blocks, one of them Anthropic's own."""
    content = payload.get("content")
    return (
        "content" in payload
        and not {"id", "type", "role"} <= set(payload)
        and set(payload) <= MESSAGE_KEYS
        and payload.get("role", "assistant") == "assistant"
        and payload.get("type", "message") == "message"
        and isinstance(content, list)
        and _only_anthropic(content)
        and all(_kind(b) in RESPONSE_BLOCKS or is_result_type(str(_kind(b))) for b in content)
    )


def _response(content: list[Any]) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": content}


def fragment(payload: Any) -> tuple[Any, str] | None:
    """The request or response a fragment stands for and what was assumed, else None."""
    if isinstance(payload, list):
        if not _only_anthropic(payload):
            return None
        kinds = {_kind(b) for b in payload}
        if all(k in RESPONSE_BLOCKS or is_result_type(str(k)) for k in kinds):
            return (
                _response(payload),
                "an Anthropic content array: read as a response (Message) holding only it; "
                "its id, model, usage and stop_reason are unknown",
            )
        return (
            {"messages": [{"role": "user", "content": payload}]},
            "an Anthropic content array with user blocks: read as a request whose one user "
            "message holds it",
        )
    if isinstance(payload, dict) and _bare_message(payload):
        missing = ", ".join(k for k in ("id", "type", "role") if k not in payload)
        return (
            {**_response(payload["content"]), **payload},
            f"an Anthropic Message without {missing} (as the docs print it): read as a "
            "response from the assistant",
        )
    if not isinstance(payload, dict) or set(payload) != {"role", "content"}:
        return None
    role, content = payload["role"], payload["content"]
    if role not in ("user", "assistant") or not isinstance(content, list):
        return None
    if not _only_anthropic(content):
        return None
    if role == "assistant":
        if not all(_kind(b) in RESPONSE_BLOCKS or is_result_type(str(_kind(b))) for b in content):
            return None  # tool results and documents belong to user turns
        return (
            _response(content),
            "one Anthropic assistant message: read as a response (Message) holding its content; "
            "its id, model, usage and stop_reason are unknown",
        )
    return (
        {"messages": [payload]},
        "one Anthropic user message: read as a request holding only it (no model, "
        "max_tokens, system or tools)",
    )
