"""Tool declaration rules: what a vendor rejects in a declaration, and what makes a model pick
the wrong tool or send the wrong arguments.

Quality rules (descriptions, ``required``, enums) are protocol-neutral heuristics; the vendor
rules quote the vendor's own error text where known: names by each vendor's declared rule
(``name_rule``, ``name_errors``), schema dialects, strict mode and the like by the code in its
folder (``protocols/<vendor>/rules.py``, found through ``Facts.lint``).
Paths point into the canonical tools: ``tools[0].parameters.properties.unit``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from flowdebug.lint.base.findings import Finding, Rule
from flowdebug.lint.base.schema_walk import tool_path, walk
from flowdebug.model import Tool
from flowdebug.protocols.base import known, safe_name

# fmt: off
# Property names whose values are nearly always one of a few words.
ENUM_HINTS = frozenset({
    "unit", "units", "mode", "type", "format", "status", "level", "sort", "order", "direction",
})
# Words that say nothing about what a tool does beyond its name.
FILLER = frozenset({"a", "an", "the", "this", "tool", "function", "to", "for", "of", "and"})
# fmt: on

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
REQUIRED_UNKNOWN = Rule(
    "error",
    "'required' names {name!r}, which is not among the properties: the model is told to send "
    "an argument it has no schema for",
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
RENAMED = Rule(
    "warning",
    "tool name {name!r} is not allowed ({pattern}); flowdebug's encoder sends it as {safe!r}, "
    "the name the model then sees",
    "{text}",
)


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
            out.append(NO_REQUIRED.at("required_missing", tool_path(i, path)))
        required = node.get("required")
        for name in required if isinstance(required, list) else []:
            if isinstance(name, str) and name not in props:
                where = tool_path(i, (*path, "required"))
                out.append(REQUIRED_UNKNOWN.at("required_unknown_property", where, name=name))
        for name, prop in props.items():
            if not isinstance(prop, dict):
                continue
            where = tool_path(i, (*path, "properties", name))
            if not prop.get("description") and "$ref" not in prop:
                out.append(
                    NO_PARAM_DESCRIPTION.at("parameter_description_missing", where, name=name)
                )
            if _wants_enum(name, prop):
                out.append(ENUM.at("enum_suggested", where, name=name))
    return out


def _name(i: int, tool: Tool, protocol: str) -> list[Finding]:
    facts = known(protocol)
    if facts.lint.name is not None and (own := facts.lint.name(i, tool)) is not None:
        return own
    pattern, limit = facts.name_rule, facts.name_limit
    name, path = tool.name, f"tools[{i}].name"
    if pattern.match(name):
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


def check_tools(tools: Sequence[Tool], protocols: Sequence[str]) -> list[Finding]:
    """Neutral findings per tool, each protocol's after them, then duplicate names."""
    out: list[Finding] = []
    for i, tool in enumerate(tools):
        out += _quality(i, tool)
        for protocol in protocols:
            out += _name(i, tool, protocol)
            if (check := known(protocol).lint.tool) is not None:
                out += check(i, tool)
    first: dict[str, str] = {}
    for i, tool in enumerate(tools):
        path = f"tools[{i}].name"
        if tool.name not in first:
            first[tool.name] = path
            continue
        out.append(
            DUPLICATE.at("duplicate_tool_name", path, name=tool.name, first=first[tool.name])
        )
        for protocol in protocols:
            if (rule := known(protocol).lint.duplicate_tool) is not None:
                out.append(rule.at("duplicate_tool_name", path, protocol, name=tool.name))
    return out
