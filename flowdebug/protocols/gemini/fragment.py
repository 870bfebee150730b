"""Gemini fragments: what people paste from docs and logs instead of a whole payload.

- one ``contents[]`` entry, ``{"role": "user" | "model" | "function", "parts": [...]}`` (or a
  bare ``{"parts": [...]}``, role ``user`` by the API's default): a model turn stands for a
  response holding it, any other turn for a request whose only content it is;
- a bare ``parts`` array (a response's ``candidates[0].content.parts``): a response, unless it
  holds function responses, which only a user turn sends.

Strict, so no other vendor's fragment is claimed: an entry has no keys but ``role`` and
``parts``; every part is an object with a Gemini part field and no ``type`` (Anthropic blocks,
OpenAI content parts and Responses items all have one).
"""

from __future__ import annotations

from typing import Any

from flowdebug.protocols.gemini.spelling import camel

_PART_KEYS = frozenset(
    {
        "text",
        "thought",
        "thoughtSignature",
        "functionCall",
        "functionResponse",
        "inlineData",
        "fileData",
        "executableCode",
        "codeExecutionResult",
        "toolCall",
        "toolResponse",
        "videoMetadata",
    }
)
_ROLES = ("user", "model", "function")


def _is_part(part: Any) -> bool:
    if not isinstance(part, dict) or not part or "type" in part:
        return False
    keys = {camel(k) for k in part if isinstance(k, str)}
    return bool(keys & _PART_KEYS) and keys <= _PART_KEYS | {"partMetadata", "mediaResolution"}


def _is_parts(parts: Any) -> bool:
    return isinstance(parts, list) and bool(parts) and all(_is_part(p) for p in parts)


def _answers(parts: list[dict[str, Any]]) -> bool:
    return any(camel(k) == "functionResponse" for p in parts for k in p)


def fragment(payload: Any) -> tuple[Any, str] | None:
    """The whole payload a Gemini fragment stands for, and what was assumed; else None."""
    if isinstance(payload, dict):
        role = payload.get("role", "user")
        if (
            set(payload) - {"role", "parts"}
            or not isinstance(role, str | None)
            or role not in _ROLES
        ):
            return None
        parts = payload.get("parts")
        if not _is_parts([parts] if isinstance(parts, dict) else parts):  # one Part: a list
            return None
        if role == "model":
            return (
                {"candidates": [{"content": payload}]},
                "one Gemini model Content: read as a response whose only candidate holds it",
            )
        said = f"role {role}" if "role" in payload else "no role (user)"
        return {"contents": [payload]}, (
            f"one Gemini Content with {said}: read as a request whose only content it is"
        )
    if _is_parts(payload):
        if _answers(payload):
            return {"contents": [{"role": "user", "parts": payload}]}, (
                "a bare Gemini parts array with function responses: read as a request "
                "holding one user turn of them"
            )
        return {"candidates": [{"content": {"role": "model", "parts": payload}}]}, (
            "a bare Gemini parts array: read as a response whose model turn holds them"
        )
    return None
