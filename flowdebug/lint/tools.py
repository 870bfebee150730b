"""Tool declaration rules: what a vendor rejects in a declaration, and what makes a model pick
the wrong tool or send the wrong arguments.

Quality rules (descriptions, ``required``, enums) are protocol-neutral heuristics; the vendor
rules (names, schema dialects, strict mode) quote the vendor's own error text where known.
Paths point into the canonical tools: ``tools[0].parameters.properties.unit``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from flowdebug.lint.finding import Finding, Rule
from flowdebug.model import Tool
from flowdebug.protocols.base import safe_name
from flowdebug.protocols.facts import known

SchemaPath = tuple[str | int, ...]

# fmt: off
# Property names whose values are nearly always one of a few words.
ENUM_HINTS = frozenset({
    "unit", "units", "mode", "type", "format", "status", "level", "sort", "order", "direction",
})
# Words that say nothing about what a tool does beyond its name.
FILLER = frozenset({"a", "an", "the", "this", "tool", "function", "to", "for", "of", "and"})
# What Gemini `parameters` takes: the SDK's Schema model (extra="forbid"), camelCase aliases and
# snake_case field names [google-genai 3.4 types.Schema].
GEMINI_SCHEMA_KEYS = frozenset({
    "additionalProperties", "anyOf", "default", "defs", "description", "enum", "example",
    "format", "items", "maxItems", "maxLength", "maxProperties", "maximum", "minItems",
    "minLength", "minProperties", "minimum", "nullable", "pattern", "properties",
    "propertyOrdering", "ref", "required", "title", "type", "additional_properties", "any_of",
    "max_items", "max_length", "max_properties", "min_items", "min_length", "min_properties",
    "property_ordering",
})
# OpenAI strict mode: composition and conditional keywords are "not permitted" [DOC structured
# outputs "supported schemas"; reference README §3B]; `default` too [3P zenn.dev scrap].
OPENAI_STRICT_UNSUPPORTED = frozenset({
    "allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas",
    "patternProperties", "default",
})
# Anthropic strict tools: size and range constraints are unsupported (minItems above 1 too)
# [DOC structured-outputs "JSON Schema limitations", via reference README §3A; 3P req_llm#302
# for the wording].
ANTHROPIC_STRICT_UNSUPPORTED = frozenset({
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength",
    "maxLength", "maxItems", "minProperties", "maxProperties",
})
# fmt: on
OPENAI_DESCRIPTION_LIMIT = 1024  # "string too long. Expected … maximum length 1024" [3P 5ire#33]
GEMINI_NAME = (
    "Invalid function name. Must start with a letter or an underscore. Must be alphameric "
    "(a-z, A-Z, 0-9), underscores (_), dots (.) or dashes (-), with a maximum length of 64."
)  # [3P google-gemini/gemini-cli#2966]
# OpenAI request validation texts [3P: brekkylab/ailoy#109, Vortiago/mcp-azure-devops#30, 5ire#33].
OPENAI_TOO_LONG = (
    "Invalid '{where}': string too long. Expected a string with maximum length {limit}, but "
    "got a string with length {length} instead."
)

NO_DESCRIPTION = Rule(
    "warning", "tool {name!r} has no description: models choose tools by their descriptions"
)
VAGUE = Rule(
    "warning",
    "the description of {name!r} {reason}: say what it does, when to use it and what it returns",
)
ROOT = Rule("error", "the parameters schema must have type 'object' at its root, not {type!r}")
NO_REQUIRED = Rule(
    "warning",
    "the object lists properties but no 'required': the model cannot tell which arguments it "
    "must send",
)
NO_PARAM_DESCRIPTION = Rule("info", "parameter {name!r} has no description")
ENUM = Rule(
    "info",
    "parameter {name!r} is a free string but its name suggests a closed set of values: "
    "declare them with 'enum'",
)
DUPLICATE = Rule(
    "error", "tool {name!r} is already declared at {first}: calls cannot be dispatched by name"
)
ANTHROPIC_DUPLICATE = Rule(
    "error", "tool {name!r} is declared twice", "tools: Tool names must be unique."
)  # [3P claude-code#10687]
RENAMED = Rule(
    "warning",
    "tool name {name!r} is not allowed ({pattern}); flowdebug's encoder sends it as {safe!r}, "
    "the name the model then sees",
    "{text}",
)
MCP_NAME = Rule(
    "warning", "tool name {name!r} breaks the MCP naming rule (SEP-986, a SHOULD)", "{text}"
)
GEMINI_RISKY = Rule(
    "warning",
    "the SDK accepts {name!r} (':' allowed, up to 128 characters) but the API's own error text "
    "allows neither ':' nor more than 64 characters",
    GEMINI_NAME,
)
TOO_LONG = Rule(
    "error", "the description has {length} characters, more than {limit}", OPENAI_TOO_LONG
)
# OpenAI names the schema node as a Python tuple of keys: context=('properties', 'unit').
_IN_CONTEXT = "Invalid schema for function '{tool}': In context={context}, "
OPENAI_OPEN = Rule(
    "error",
    "strict mode needs 'additionalProperties': false on every object",
    _IN_CONTEXT + "'additionalProperties' is required to be supplied and to be false.",
)
OPENAI_REQUIRED = Rule(
    "error",
    "strict mode needs every property in 'required' ({key!r} is not; make it nullable instead)",
    _IN_CONTEXT + "'required' is required to be supplied and to be an array including every "
    "key in properties. Missing '{key}'.",
)
OPENAI_KEYWORD = Rule(
    "error", "strict mode does not support {key!r}", _IN_CONTEXT + "'{key}' is not permitted."
)
ANTHROPIC_OPEN = Rule("error", "strict tools need 'additionalProperties': false on every object")
ANTHROPIC_KEYWORD = Rule(
    "error",
    "strict tools do not support {key!r}",
    "For '{type}' type, property '{key}' is not supported",
)
GEMINI_KEYWORD = Rule(
    "info",
    "Gemini `parameters` {problem}: use parametersJsonSchema (flowdebug's encoder does)",
    "{text}",
)


def walk(schema: Any, path: SchemaPath = ()) -> Iterator[tuple[SchemaPath, dict[str, Any]]]:
    """Every subschema of ``schema`` with its path of keys, the root first."""
    if not isinstance(schema, dict):
        return
    yield path, schema
    for key in ("properties", "$defs", "defs", "definitions", "patternProperties"):
        sub = schema.get(key)
        if isinstance(sub, dict):
            for name, s in sub.items():
                yield from walk(s, (*path, key, name))
    for key in ("items", "additionalProperties", "not", "if", "then", "else"):
        yield from walk(schema.get(key), (*path, key))
    for key in ("anyOf", "oneOf", "allOf", "prefixItems", "items"):
        sub = schema.get(key)
        if isinstance(sub, list):
            for k, s in enumerate(sub):
                yield from walk(s, (*path, key, k))


def _path(i: int, path: SchemaPath) -> str:
    keys = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    return f"tools[{i}].parameters{keys}"


def _is_object(node: dict[str, Any]) -> bool:
    t = node.get("type")
    return t == "object" or (isinstance(t, list) and "object" in t) or "properties" in node


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text).lower())


def _vague(name: str, description: str) -> str | None:
    words = _words(description)
    meaningful = set(words) - FILLER
    if meaningful and meaningful <= set(_words(name)):
        return "only repeats the tool name"
    if len(words) < 3 or not meaningful:
        return "is too short to tell the model when to use the tool"
    return None


def _wants_enum(name: str, prop: dict[str, Any]) -> bool:
    last = (_words(name) or [""])[-1]
    constrained = any(k in prop for k in ("enum", "const", "anyOf", "oneOf"))
    return prop.get("type") == "string" and last in ENUM_HINTS and not constrained


def _quality(i: int, tool: Tool) -> list[Finding]:
    out: list[Finding] = []
    description = (tool.description or "").strip()
    where = f"tools[{i}].description"
    if not description:
        out.append(NO_DESCRIPTION.at("description_missing", where, name=tool.name))
    elif reason := _vague(tool.name, description):
        out.append(VAGUE.at("description_vague", where, name=tool.name, reason=reason))
    # Every vendor wants an object at the root: Anthropic input_schema type "object", OpenAI
    # "schema must be a JSON Schema of 'type: \"object\"'", Gemini OBJECT, MCP inputSchema.
    if (root := tool.parameters.get("type")) != "object":
        out.append(ROOT.at("root_not_object", f"tools[{i}].parameters", type=root))
    for path, node in walk(tool.parameters):
        props = node.get("properties")
        if not isinstance(props, dict):
            continue
        # Every property with a default says "all optional" on its own.
        defaulted = all(isinstance(p, dict) and "default" in p for p in props.values())
        if props and "required" not in node and not defaulted:
            out.append(NO_REQUIRED.at("required_missing", _path(i, path)))
        for name, prop in props.items():
            if not isinstance(prop, dict):
                continue
            where = _path(i, (*path, "properties", name))
            if not prop.get("description") and "$ref" not in prop:
                out.append(
                    NO_PARAM_DESCRIPTION.at("parameter_description_missing", where, name=name)
                )
            if _wants_enum(name, prop):
                out.append(ENUM.at("enum_suggested", where, name=name))
    return out


def _name(i: int, tool: Tool, protocol: str) -> list[Finding]:
    facts = known(protocol)
    pattern, limit = facts.name_rule, facts.name_limit
    name, path = tool.name, f"tools[{i}].name"
    if protocol == "mcp" and not pattern.match(name):
        # Imported here: the mcp package is slow to import and this rule rarely fires.
        from mcp.shared.tool_name_validation import validate_tool_name

        text = "; ".join(validate_tool_name(name).warnings)
        return [MCP_NAME.at("tool_name_invalid", path, protocol, name=name, text=text)]
    if protocol == "gemini" and pattern.match(name) and (len(name) > 64 or ":" in name):
        return [GEMINI_RISKY.at("tool_name_risky", path, protocol, name=name)]
    if protocol == "mcp" or pattern.match(name):
        return []
    answer = ""
    if facts.name_errors is not None:  # the vendor's own answer, declared in its facts
        template = facts.name_errors[1 if len(name) > limit else 0]
        fields = {"i": i, "i1": i + 1, "limit": limit, "length": len(name)}
        answer = template.format(name=name, pattern=pattern.pattern, **fields)
    safe = safe_name(protocol, name)
    return [
        RENAMED.at(
            "tool_name_invalid",
            path,
            protocol,
            name=name,
            pattern=pattern.pattern,
            safe=safe,
            text=answer,
        )
    ]


def _openai(i: int, tool: Tool, protocol: str) -> list[Finding]:
    out: list[Finding] = []
    description = tool.description or ""
    if len(description) > OPENAI_DESCRIPTION_LIMIT:
        where = f"tools[{i}].function" if protocol == "openai-chat" else f"tools[{i}]"
        out.append(
            TOO_LONG.at(
                "description_too_long",
                f"tools[{i}].description",
                protocol,
                where=f"{where}.description",
                limit=OPENAI_DESCRIPTION_LIMIT,
                length=len(description),
            )
        )
    if not tool.strict:
        return out
    # Strict mode: every object closed, every property required (optional ⇒ nullable) and no
    # composition [reference openai_chat.variant.strict_tool.json].
    for path, node in walk(tool.parameters):
        at = {"tool": tool.name, "context": repr(path)}
        if _is_object(node):
            if node.get("additionalProperties") is not False:
                out.append(
                    OPENAI_OPEN.at("strict_additional_properties", _path(i, path), protocol, **at)
                )
            required = _list(node.get("required"))
            for key in (k for k in _dict(node.get("properties")) if k not in required):
                where = _path(i, (*path, "properties", key))
                out.append(OPENAI_REQUIRED.at("strict_required", where, protocol, key=key, **at))
        for key in sorted(OPENAI_STRICT_UNSUPPORTED & node.keys()):
            where = _path(i, (*path, key))
            out.append(
                OPENAI_KEYWORD.at("strict_keyword_unsupported", where, protocol, key=key, **at)
            )
    return out


def _anthropic_strict(i: int, tool: Tool) -> list[Finding]:
    out: list[Finding] = []
    for path, node in walk(tool.parameters):
        if _is_object(node) and node.get("additionalProperties") is not False:
            out.append(
                ANTHROPIC_OPEN.at("strict_additional_properties", _path(i, path), "anthropic")
            )
        unsupported = ANTHROPIC_STRICT_UNSUPPORTED & node.keys()
        if isinstance(node.get("minItems"), int) and node["minItems"] > 1:
            unsupported |= {"minItems"}
        # The refusal names the node's type; without one, there is no text to quote.
        t = node.get("type")
        rule = ANTHROPIC_KEYWORD if isinstance(t, str) else replace(ANTHROPIC_KEYWORD, vendor=None)
        for key in sorted(unsupported):
            where = _path(i, (*path, key))
            out.append(rule.at("strict_keyword_unsupported", where, "anthropic", key=key, type=t))
    return out


def _gemini_schema(i: int, tool: Tool) -> list[Finding]:
    """Gemini ``parameters`` is an OpenAPI subset; the SDK refuses the rest client-side
    [RUN: google-genai 3.4 FunctionDeclaration(parameters=…)] while ``parametersJsonSchema``
    takes any JSON Schema [reference gemini.variant.tool_parametersJsonSchema.json]. Info only:
    the gemini encoder already sends such schemas as ``parametersJsonSchema``."""
    out: list[Finding] = []
    for path, node in walk(tool.parameters):
        sdk = ".".join(str(p) for p in ("parameters", *path))
        problems = [
            (key, f"rejects {key!r}", f"{sdk}.{key}: Extra inputs are not permitted")
            for key in sorted(node.keys() - GEMINI_SCHEMA_KEYS)
        ]
        if isinstance(node.get("type"), list):
            problems.append(
                (
                    "type",
                    "takes one type, not a list (use nullable)",
                    "'list' object has no attribute 'upper'",
                )
            )
        bad = [k for k, v in enumerate(_list(node.get("enum"))) if not isinstance(v, str)]
        if bad:
            problems.append(
                (
                    "enum",
                    "takes string enums only",
                    f"{sdk}.enum.{bad[0]}: Input should be a valid string",
                )
            )
        for key, problem, text in problems:
            out.append(
                GEMINI_KEYWORD.at(
                    "schema_keyword_unsupported",
                    _path(i, (*path, key)),
                    "gemini",
                    problem=problem,
                    text=text,
                )
            )
    return out


def check_tools(tools: Sequence[Tool], protocols: Sequence[str]) -> list[Finding]:
    """Neutral findings per tool, each protocol's after them, then duplicate names."""
    out: list[Finding] = []
    for i, tool in enumerate(tools):
        out += _quality(i, tool)
        for protocol in protocols:
            out += _name(i, tool, protocol)
            if protocol in ("openai-chat", "openai-responses"):
                out += _openai(i, tool, protocol)
            elif protocol == "anthropic" and tool.strict:
                out += _anthropic_strict(i, tool)
            elif protocol == "gemini":
                out += _gemini_schema(i, tool)
    first: dict[str, str] = {}
    for i, tool in enumerate(tools):
        path = f"tools[{i}].name"
        if tool.name not in first:
            first[tool.name] = path
            continue
        out.append(
            DUPLICATE.at("duplicate_tool_name", path, name=tool.name, first=first[tool.name])
        )
        if "anthropic" in protocols:
            out.append(
                ANTHROPIC_DUPLICATE.at("duplicate_tool_name", path, "anthropic", name=tool.name)
            )
    return out
