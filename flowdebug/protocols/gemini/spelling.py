"""Gemini field spellings: the protobuf JSON mapping accepts snake_case as well as camelCase.

The REST API parses requests with the proto3 JSON rules, so ``function_call``,
``inline_data``, ``thought_signature``, ``tool_config``, ``system_instruction``... mean the same
as their camelCase names, and the google-genai SDK itself sends snake_case to Vertex. The
codec decodes both by folding every field name to camelCase first (a pure re-spelling: no
warning) and always encodes camelCase.

Only field names are folded, never data: the values of the keys in :data:`_OPAQUE` are user
JSON (call arguments, function responses, JSON Schemas, labels) whose keys must stay as sent.
``parameters`` / ``response`` schemas keep their spelling here because
:func:`flowdebug.protocols.gemini.schema.from_schema` folds the Schema keywords itself.
"""

from __future__ import annotations

from typing import Any

# camelCase names whose value is free JSON: a google.protobuf.Struct / Value or a JSON Schema.
_OPAQUE = frozenset(
    {
        "args",
        "response",
        "parameters",
        "parametersJsonSchema",
        "responseJsonSchema",
        "responseSchema",
        "labels",
        "partMetadata",
        "structValue",
        "listValue",
    }
)


def camel(name: str) -> str:
    """``function_call`` -> ``functionCall``; a name without ``_`` is returned as is."""
    if "_" not in name or name.startswith("_"):
        return name
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def fold(value: Any) -> Any:
    """``value`` with every proto field name in camelCase (user data left untouched)."""
    if isinstance(value, list):
        return [fold(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = camel(key) if isinstance(key, str) else key
        # When both spellings are present, the camelCase one (already canonical) wins.
        if name in out and name != key:
            continue
        out[name] = item if name in _OPAQUE else fold(item)
    return out


def has_snake(value: Any, depth: int = 0) -> bool:
    """Whether any proto field name in ``value`` is snake_case (user data not searched)."""
    if depth > 64:
        return True
    if isinstance(value, list):
        return any(has_snake(v, depth + 1) for v in value)
    if not isinstance(value, dict):
        return False
    for key, item in value.items():
        if isinstance(key, str) and "_" in key and not key.startswith("_"):
            return True
        if key not in _OPAQUE and isinstance(item, dict | list) and has_snake(item, depth + 1):
            return True
    return False


def _snake_keys(obj: Any) -> bool:
    if type(obj) is dict:  # a plain loop: this runs on every part of every history
        for k in obj:
            if type(k) is str and "_" in k:
                return True
    return False


def _content_snake(content: Any) -> bool:
    """A cheap look at a Content: its keys, its parts' keys and those of the objects in them
    (the arguments inside are never read, so a long history costs one pass over its parts)."""
    if not isinstance(content, dict):
        return False
    if _snake_keys(content):
        return True
    parts = content.get("parts")
    if not isinstance(parts, list):
        return False
    for part in parts:
        if type(part) is dict:
            for key, value in part.items():
                if (type(key) is str and "_" in key) or (
                    type(value) is dict and _snake_keys(value)
                ):
                    return True
    return False


def _fold_contents(items: list[Any]) -> list[Any]:
    return [fold(c) if _content_snake(c) else c for c in items]


def normalize_request(payload: Any) -> Any:
    """A request in camelCase with ``contents`` always a list (the REST API also takes a
    single Content object there, as pasted from many examples)."""
    if not isinstance(payload, dict):
        return payload
    body = dict(payload)
    if _snake_keys(body):
        body = {camel(k): v for k, v in body.items()}
    if isinstance(body.get("contents"), dict):
        body["contents"] = [body["contents"]]
    if isinstance(body.get("contents"), list):
        body["contents"] = _fold_contents(body["contents"])
    for key in ("systemInstruction", "tools", "toolConfig", "generationConfig"):
        if key in body and has_snake(body[key]):
            body[key] = fold(body[key])
    return body


def normalize(payload: Any) -> Any:
    """A response (or a stream's chunk list) in camelCase."""
    if isinstance(payload, list):
        return [normalize(chunk) for chunk in payload]
    if not isinstance(payload, dict):
        return payload
    body = {camel(k): v for k, v in payload.items()} if _snake_keys(payload) else dict(payload)
    candidates = body.get("candidates")
    if isinstance(candidates, list):
        body["candidates"] = [
            fold(c)
            if _snake_keys(c) or (isinstance(c, dict) and _content_snake(c.get("content")))
            else c
            for c in candidates
        ]
    for key, value in body.items():
        if key != "candidates" and isinstance(value, dict | list) and has_snake(value):
            body[key] = fold(value)
    return body
