"""JSON Schema <-> Gemini ``parameters`` (the OpenAPI 3.0 subset ``Schema``).

Gemini takes a tool's schema either as ``parameters`` (its own ``Schema`` type: upper-case
``type``, string-only ``enum``, no ``$ref``/``oneOf``/``allOf``/``const``...) or as
``parametersJsonSchema`` (real JSON Schema, passed through verbatim; the two are mutually
exclusive). The encoder sends ``parameters`` only when the schema converts to it exactly
and back again; anything else goes as ``parametersJsonSchema``, so no keyword is ever lost.
"""

from __future__ import annotations

from typing import Any

from flowdebug.errors import CodecError
from flowdebug.protocols.base import expect

PROTOCOL = "gemini"

# What a canonical tool without parameters looks like: Gemini gets no schema at all, because
# an OBJECT with empty ``properties`` is rejected by the API ("should be non-empty for
# OBJECT type") [3P, reported against v1beta].
EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}

_TYPES = {"string", "number", "integer", "boolean", "array", "object", "null"}
# Gemini Schema only knows these formats per type; others are rejected server-side [DOC
# Schema.format: NUMBER float/double, INTEGER int32/int64, STRING enum/date-time].
_FORMATS = {
    "number": {"float", "double"},
    "integer": {"int32", "int64"},
    "string": {"enum", "date-time"},
}
_TEXT_KEYS = {"title", "description", "pattern"}
_COUNT_KEYS = {"minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"}
_NUMBER_KEYS = {"minimum", "maximum"}
_ANY_KEYS = {"default", "example"}
# Not listed: ``additionalProperties`` (the SDK type has it, but the Gemini API has answered
# 'Unknown name "additionalProperties"' for it [3P]), ``$ref``/``$defs``, ``oneOf``,
# ``allOf``, ``const``, ``exclusiveMinimum``, ``$schema`` (rejected by the SDK [RUN]).
_STRUCTURE_KEYS = {
    "type",
    "format",
    "nullable",
    "enum",
    "properties",
    "required",
    "items",
    "anyOf",
    "propertyOrdering",
}
_ALLOWED = _STRUCTURE_KEYS | _TEXT_KEYS | _COUNT_KEYS | _NUMBER_KEYS | _ANY_KEYS

# The Python SDK sends snake_case inside function declarations and proto-JSON servers accept
# both spellings [RUN]; decoding folds them to the JSON Schema spelling.
_SNAKE = {
    "any_of": "anyOf",
    "additional_properties": "additionalProperties",
    "min_items": "minItems",
    "max_items": "maxItems",
    "min_length": "minLength",
    "max_length": "maxLength",
    "min_properties": "minProperties",
    "max_properties": "maxProperties",
    "property_ordering": "propertyOrdering",
}


def to_parameters(schema: Any) -> dict[str, Any] | None:
    """``schema`` as a Gemini ``Schema``, or None when it uses anything that type lacks."""
    if not isinstance(schema, dict):
        return None
    out: dict[str, Any] = {}
    for key, value in schema.items():
        converted = _convert(key, value, schema)
        if converted is None:
            return None
        out[key] = converted[0]
    if out.get("type") == "OBJECT" and not out.get("properties"):
        return None
    return out


def _convert(key: str, value: Any, schema: dict[str, Any]) -> tuple[Any] | None:
    """``(gemini_value,)`` for one keyword, or None when ``parameters`` cannot carry it."""
    if key not in _ALLOWED:
        return None
    ok: bool
    match key:
        case "type":
            ok = isinstance(value, str) and value in _TYPES
            return (value.upper(),) if ok else None
        case "format":
            kind = schema.get("type")
            formats = _FORMATS.get(kind, ()) if isinstance(kind, str) else ()
            ok = isinstance(value, str) and value in formats
        case "nullable":
            ok = isinstance(value, bool)
        case "enum":
            # Gemini enums are strings only (an integer enum is rejected [RUN]).
            ok = (
                isinstance(value, list)
                and all(isinstance(v, str) for v in value)
                and schema.get("type", "string") == "string"
            )
        case "required" | "propertyOrdering":
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        case "properties":
            if not isinstance(value, dict):
                return None
            props = {name: to_parameters(sub) for name, sub in value.items()}
            return None if any(p is None for p in props.values()) else (props,)
        case "items":
            items = to_parameters(value)
            return None if items is None else (items,)
        case "anyOf":
            if not isinstance(value, list) or not value:
                return None
            subs = [to_parameters(sub) for sub in value]
            return None if any(s is None for s in subs) else (subs,)
        case _ if key in _TEXT_KEYS:
            ok = isinstance(value, str)
        case _ if key in _COUNT_KEYS:
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        case _ if key in _NUMBER_KEYS:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
        case _:
            ok = True
    return (value,) if ok else None


def from_schema(schema: Any, path: str) -> dict[str, Any]:
    """A Gemini ``Schema`` (either spelling) back to JSON Schema: lower-case types,
    camelCase keywords."""
    schema = expect(PROTOCOL, schema, path, dict)
    out: dict[str, Any] = {}
    for raw_key, value in schema.items():
        key = _SNAKE.get(raw_key, raw_key)
        here = f"{path}.{raw_key}"
        match key:
            case "type":
                kind = expect(PROTOCOL, value, here, str).lower()
                if kind == "type_unspecified":
                    continue
                if kind not in _TYPES:
                    raise CodecError(PROTOCOL, here, f"unknown schema type {value!r}")
                out[key] = kind
            case "properties" | "defs" | "$defs":
                props = expect(PROTOCOL, value, here, dict)
                out[key] = {name: from_schema(sub, f"{here}.{name}") for name, sub in props.items()}
            case "items":
                out[key] = from_schema(value, here)
            case "anyOf":
                subs = expect(PROTOCOL, value, here, list)
                out[key] = [from_schema(sub, f"{here}[{i}]") for i, sub in enumerate(subs)]
            case "additionalProperties" if isinstance(value, dict):
                out[key] = from_schema(value, here)
            case _:
                out[key] = value
    return out
