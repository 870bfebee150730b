"""Fragments of OpenAI Chat payloads, as people paste them from docs and logs.

One Chat message (``{"role": ..., "content": ...}``, an assistant turn with ``tool_calls`` or
a legacy ``function_call``, a ``tool`` message with ``tool_call_id``) or a bare ``tool_calls``
array stands for the smallest whole payload holding it: a model turn becomes a completion, any
other message a request with only that message.

Strict, so another vendor's fragment is never claimed: Anthropic messages hold typed blocks
(``tool_use``, ``tool_result``, ``thinking``, ``image`` with a ``source``), Gemini contents
have ``parts``, Responses items have a ``type`` (``message``, ``function_call``...) and
``input_text`` / ``output_text`` content.
"""

from __future__ import annotations

from typing import Any

_ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
_MESSAGE_KEYS = {
    "role",
    "content",
    "name",
    "tool_calls",
    "tool_call_id",
    "function_call",
    "refusal",
    "reasoning_content",
    "reasoning",
    "annotations",
    "audio",
    "tool_name",
}
_CHAT_PARTS = {"text", "image_url", "input_audio", "file", "refusal"}


def _is_call(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get("id"), str)
        and item.get("type", "function") == "function"
        and isinstance(item.get("function"), dict)
        and isinstance(item["function"].get("name"), str)
        and isinstance(item["function"].get("arguments"), str)
    )


def _is_message(payload: dict[str, Any]) -> bool:
    if (
        not isinstance(payload.get("role"), str)
        or payload.get("role") not in _ROLES
        or not set(payload) <= _MESSAGE_KEYS
    ):
        return False
    content = payload.get("content")
    if isinstance(content, list):
        # Every Chat content part is one of a few types; "text" alone is also Anthropic's,
        # so the types decide only together with the fields each type needs.
        for part in content:
            if (
                not isinstance(part, dict)
                or not isinstance(part.get("type"), str)
                or part.get("type") not in _CHAT_PARTS
            ):
                return False
            if part["type"] == "text" and set(part) - {"type", "text"}:
                return False  # Anthropic text blocks carry citations / cache_control
    elif content is not None and not isinstance(content, str):
        return False
    calls = payload.get("tool_calls")
    if calls is not None and not (isinstance(calls, list) and all(_is_call(c) for c in calls)):
        return False
    if payload["role"] == "tool":
        return isinstance(payload.get("tool_call_id"), str) or isinstance(
            payload.get("name", payload.get("tool_name")), str
        )
    return "content" in payload or calls is not None or "function_call" in payload


def _completion(message: dict[str, Any]) -> dict[str, Any]:
    calls = message.get("tool_calls") or message.get("function_call")
    finish = "function_call" if "function_call" in message else "tool_calls" if calls else "stop"
    return {"choices": [{"index": 0, "message": message, "finish_reason": finish}]}


def fragment(payload: Any) -> tuple[Any, str] | None:
    """The whole payload a Chat fragment stands for, and what was assumed (else None)."""
    if isinstance(payload, list):
        if payload and all(_is_call(c) for c in payload):
            message = {"role": "assistant", "content": None, "tool_calls": payload}
            return _completion(message), (
                "a bare OpenAI Chat tool_calls array: read as a completion whose assistant "
                "message holds only these calls"
            )
        return None
    if not isinstance(payload, dict) or not _is_message(payload):
        return None
    role = payload["role"]
    if role == "assistant":
        return _completion(payload), (
            "one OpenAI Chat assistant message: read as a completion (choice 0) holding only it"
        )
    return {"messages": [payload]}, (
        f"one OpenAI Chat {role} message: read as a request holding only it (no model named)"
    )
