"""Converse ``toolConfig``: tool declarations and ``toolChoice`` <-> canonical ``Tool`` and
``ToolChoice``.

A declaration is ``{"toolSpec": {name, description, inputSchema: {json}}}``; ``cachePoint`` and
``systemTool`` entries have no canonical form and keep their place in the list through
``provider_details["bedrock"]``.
"""

from __future__ import annotations

from typing import Any, Literal, assert_never

from flowdebug.errors import CodecError
from flowdebug.model import Tool, ToolChoice
from flowdebug.protocols.base import Renamer, Warnings, expect, require
from flowdebug.protocols.bedrock.parts import PROTOCOL, one_key, optional, own, stash, with_extra
from flowdebug.protocols.schema_rewrites import OBJECT_ROOT
from flowdebug.protocols.wire_helpers import tool_metadata

Mode = Literal["auto", "required", "tool"]

CHOICES: dict[str, Mode] = {"auto": "auto", "any": "required", "tool": "tool"}


def decode_tool(raw: Any, path: str) -> Tool | None:
    """A toolSpec as a Tool; None for entries with no canonical form (cachePoint ...)."""
    expect(PROTOCOL, raw, path, dict)
    if "toolSpec" not in raw:
        if "function" in raw or "name" in raw:
            raise CodecError(
                PROTOCOL,
                f"{path}.toolSpec",
                "required field is missing (Bedrock tools are {'toolSpec': {name, "
                "description, inputSchema: {json}}})",
            )
        return None
    where = f"{path}.toolSpec"
    spec = expect(PROTOCOL, raw["toolSpec"], where, dict)
    schema = require(PROTOCOL, spec, "inputSchema", where, dict)
    return Tool(
        name=require(PROTOCOL, spec, "name", where, str),
        description=optional(spec, "description", where, str),
        parameters=require(PROTOCOL, schema, "json", f"{where}.inputSchema", dict),
        strict=optional(spec, "strict", where, bool),
        provider_details=stash(spec, ("name", "description", "inputSchema", "strict")),
    )


def decode_choice(raw: Any, path: str) -> ToolChoice:
    kind, value = one_key(raw, path, frozenset(CHOICES), "toolChoice")
    if kind not in CHOICES:
        raise CodecError(PROTOCOL, f"{path}.{kind}", "toolChoice must be auto, any or tool")
    name = None
    if kind == "tool":
        name = require(
            PROTOCOL, expect(PROTOCOL, value, f"{path}.tool", dict), "name", f"{path}.tool", str
        )
    return ToolChoice(mode=CHOICES[kind], name=name)


def encode_tool(tool: Tool, path: str, w: Warnings, names: Renamer) -> dict[str, Any]:
    # Bedrock: the top-level inputSchema.json type must be "object".
    schema = OBJECT_ROOT.apply(tool.parameters, f"{path}.parameters", w, "Bedrock")
    spec: dict[str, Any] = {"name": names.name(tool.name, path)}
    if tool.description:
        spec["description"] = tool.description
    elif tool.description == "":
        w.add(
            "tool_metadata_dropped",
            f"{path}.description",
            "Bedrock rejects an empty description; it was left out",
        )
    spec["inputSchema"] = {"json": schema}
    if tool.strict is not None:
        spec["strict"] = tool.strict
    dropped = tool_metadata(tool)
    if dropped:
        w.add(
            "tool_metadata_dropped", path, f"Bedrock tools have no {', '.join(dropped)}; not sent"
        )
    return {"toolSpec": with_extra(spec, own(tool.provider_details, w, path))}


def encode_choice(choice: ToolChoice, w: Warnings, names: Renamer) -> dict[str, Any] | None:
    if choice.parallel is not None:
        w.add(
            "tool_choice_dropped",
            "tool_choice.parallel",
            "Bedrock Converse has no switch for parallel tool calls; the setting was not sent",
        )
    match choice.mode:
        case "auto":
            return {"auto": {}}
        case "required":
            return {"any": {}}
        case "tool" if choice.name:
            return {"tool": {"name": names.name(choice.name, "tool_choice")}}
        case "tool":
            w.add(
                "tool_choice_dropped",
                "tool_choice",
                "mode 'tool' without a tool name; sent as any",
            )
            return {"any": {}}
        case "none":
            w.add(
                "tool_choice_dropped",
                "tool_choice",
                "Bedrock toolChoice has no 'none' (only auto, any, tool); toolChoice was left out",
            )
            return None
        case _:
            assert_never(choice.mode)


def merge_tools(encoded: list[dict[str, Any]], stashed: Any) -> list[dict[str, Any]]:
    """Tools in wire order: entries with no canonical form (cachePoint, systemTool) ride in
    provider_details with their place in the list; toolSpecs come from the canonical tools."""
    if not isinstance(stashed, list):
        return encoded
    rest = iter(encoded)
    out: list[dict[str, Any]] = []
    for entry in stashed:
        if isinstance(entry, dict) and "toolSpec" not in entry:
            out.append(entry)
        elif (spec := next(rest, None)) is not None:
            out.append(spec)
    return out + list(rest)
