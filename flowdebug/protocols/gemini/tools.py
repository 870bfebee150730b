"""Gemini tool declarations (``functionDeclarations``) and ``toolConfig`` <-> canonical
``Tool`` and ``ToolChoice``, and a tool's JSON Schema <-> Gemini ``parameters``.

Gemini takes a tool's schema either as ``parameters`` (its own ``Schema`` type, the OpenAPI 3.0
subset: upper-case ``type``, string-only ``enum``, no ``$ref``/``oneOf``/``allOf``/``const``...)
or as ``parametersJsonSchema`` (real JSON Schema, passed through verbatim; the two are mutually
exclusive). The encoder sends ``parameters`` only when the schema converts to it exactly and
back again; anything else goes as ``parametersJsonSchema``, so no keyword is ever lost.
Built-in tool entries (``googleSearch`` ...) ride in ``provider_details["gemini"]``.
"""

from __future__ import annotations

from typing import Any

from flowdebug.errors import CodecError
from flowdebug.model import Tool, ToolChoice
from flowdebug.protocols.base import expect, require
from flowdebug.protocols.gemini.parts import (
    PROTOCOL,
    check_foreign,
    wire_extras,
    with_details,
)
from flowdebug.protocols.gemini.parts.encode import Encoder

_DECL_KEYS = {
    "name",
    "description",
    "parameters",
    "parametersJsonSchema",
    "parameters_json_schema",
    "response",
    "responseJsonSchema",
    "response_json_schema",
}


def decode_tools(raw: Any) -> tuple[list[Tool], list[Any]]:
    tools: list[Tool] = []
    others: list[Any] = []
    for i, entry in enumerate(expect(PROTOCOL, raw or [], "$.tools", list)):
        path = f"$.tools[{i}]"
        entry = expect(PROTOCOL, entry, path, dict)
        key = (
            "functionDeclarations" if "functionDeclarations" in entry else ("function_declarations")
        )
        # Built-in tools (googleSearch, codeExecution...) ride along untouched.
        if rest := {k: v for k, v in entry.items() if k != key}:
            others.append(rest)
        for j, decl in enumerate(expect(PROTOCOL, entry.get(key, []), f"{path}.{key}", list)):
            tools.append(_decode_declaration(decl, f"{path}.{key}[{j}]"))
    return tools, others


def _decode_declaration(raw: Any, path: str) -> Tool:
    decl = expect(PROTOCOL, raw, path, dict)
    name = require(PROTOCOL, decl, "name", path, str)
    description = decl.get("description")
    if description is not None:
        expect(PROTOCOL, description, f"{path}.description", str)
    schemas = [
        k for k in ("parameters", "parametersJsonSchema", "parameters_json_schema") if k in decl
    ]
    if len(schemas) > 1:
        raise CodecError(
            PROTOCOL,
            f"{path}.{schemas[1]}",
            "parameters and parametersJsonSchema are mutually exclusive",
        )
    parameters = EMPTY_OBJECT
    if schemas == ["parameters"]:
        parameters = from_schema(decl["parameters"], f"{path}.parameters")
    elif schemas:
        parameters = expect(PROTOCOL, decl[schemas[0]], f"{path}.{schemas[0]}", dict)
    output = None
    if "response" in decl:
        output = from_schema(decl["response"], f"{path}.response")
    for key in ("responseJsonSchema", "response_json_schema"):
        if key in decl:
            output = expect(PROTOCOL, decl[key], f"{path}.{key}", dict)
    extras = {k: v for k, v in decl.items() if k not in _DECL_KEYS}
    return Tool(
        name=name,
        description=description,
        parameters=parameters,
        output_schema=output,
        provider_details=with_details(extras),
    )


def decode_tool_config(raw: Any) -> tuple[ToolChoice | None, dict[str, Any]]:
    if raw is None:
        return None, {}
    config = dict(expect(PROTOCOL, raw, "$.toolConfig", dict))
    if "functionCallingConfig" not in config:
        return None, config
    path = "$.toolConfig.functionCallingConfig"
    fcc = dict(expect(PROTOCOL, config.pop("functionCallingConfig"), path, dict))
    mode = expect(PROTOCOL, fcc.pop("mode", "AUTO"), f"{path}.mode", str)
    names = expect(
        PROTOCOL, fcc.pop("allowedFunctionNames", []), f"{path}.allowedFunctionNames", list
    )
    for i, name in enumerate(names):
        expect(PROTOCOL, name, f"{path}.allowedFunctionNames[{i}]", str)
    if mode == "ANY" and len(names) == 1:
        choice = ToolChoice(mode="tool", name=names[0])
        names = []
    elif mode == "ANY":
        choice = ToolChoice(mode="required")
    elif mode == "NONE":
        choice = ToolChoice(mode="none")
    else:
        # AUTO, or VALIDATED / MODE_UNSPECIFIED, which canonical "auto" approximates.
        choice = ToolChoice(mode="auto")
        if mode != "AUTO":
            fcc["mode"] = mode
    if names:
        fcc["allowedFunctionNames"] = names
    if fcc:
        config["functionCallingConfig"] = fcc
    return choice, config


_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY", "tool": "ANY"}


def encode_tools(tools: list[Tool], enc: Encoder) -> list[dict[str, Any]]:
    decls = []
    for i, tool in enumerate(tools):
        path = f"tools[{i}]"
        check_foreign(tool.provider_details, path, enc.w)
        decl: dict[str, Any] = {"name": enc.name(tool.name, f"{path}.name")}
        if tool.description is not None:
            decl["description"] = tool.description
        # A function without parameters sends none (see EMPTY_OBJECT); a schema that fits
        # Gemini's OpenAPI subset goes as ``parameters``, anything richer verbatim as
        # ``parametersJsonSchema`` so no keyword is dropped.
        if tool.parameters != EMPTY_OBJECT:
            params = to_parameters(tool.parameters)
            if params is not None:
                decl["parameters"] = params
            else:
                decl["parametersJsonSchema"] = tool.parameters
        if tool.output_schema is not None:
            decl["responseJsonSchema"] = tool.output_schema
        for field in ("title", "annotations", "strict"):
            if getattr(tool, field) is not None:
                enc.w.add(
                    "tool_field_dropped",
                    f"{path}.{field}",
                    f"a Gemini function declaration has no {field}",
                )
        decl.update(wire_extras(tool.provider_details))
        decls.append(decl)
    return [{"functionDeclarations": decls}] if decls else []


def encode_tool_choice(choice: ToolChoice | None, enc: Encoder, stored: Any) -> dict[str, Any]:
    config = dict(stored) if isinstance(stored, dict) else {}
    if choice is None:
        return config
    fcc: dict[str, Any] = {"mode": _MODES[choice.mode]}
    if choice.mode == "tool" and choice.name is not None:
        fcc["allowedFunctionNames"] = [enc.name(choice.name, "tool_choice.name")]
    if choice.parallel is False:
        enc.w.add(
            "tool_choice_dropped",
            "tool_choice.parallel",
            "Gemini has no switch to disable parallel function calls",
        )
    overrides = config.pop("functionCallingConfig", None)
    fcc.update(overrides if isinstance(overrides, dict) else {})
    return {"functionCallingConfig": fcc, **config}


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
