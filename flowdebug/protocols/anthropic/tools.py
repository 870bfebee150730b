"""Anthropic tool declarations and ``tool_choice`` <-> canonical ``Tool`` and ``ToolChoice``.

Client tools carry ``input_schema``; server tools (``web_search_20250305``, code execution,
the MCP connector's toolsets ...) have no canonical form and ride in
``provider_details["anthropic"]`` with their place in the list. Typed client tools
(``memory_20250818``, ``bash_...``) keep their ``type``."""

from __future__ import annotations

import re
from typing import Any, Literal, assert_never

from flowdebug.errors import CodecError
from flowdebug.model import Tool, ToolChoice
from flowdebug.protocols.anthropic.facts import SERVER_TOOLS
from flowdebug.protocols.anthropic.parts import PROTOCOL, Renamer, optional, own, stash, with_extra
from flowdebug.protocols.base import Warnings, expect, require
from flowdebug.protocols.schema_rewrites import OBJECT_ROOT
from flowdebug.protocols.wire_helpers import tool_metadata

Mode = Literal["auto", "none", "required", "tool"]


def encode_tool(tool: Tool, path: str, w: Warnings, names: Renamer) -> dict[str, Any]:
    # Anthropic: input_schema's root is an object.
    schema = OBJECT_ROOT.apply(tool.parameters, f"{path}.parameters", w, "Anthropic")
    out: dict[str, Any] = {"name": names.name(tool.name, path)}
    if tool.description is not None:
        out["description"] = tool.description
    out["input_schema"] = schema
    if tool.strict is not None:
        out["strict"] = tool.strict
    dropped = tool_metadata(tool)
    if dropped:
        w.add(
            "tool_metadata_dropped", path, f"Anthropic tools have no {', '.join(dropped)}; not sent"
        )
    extra = own(tool.provider_details, w, path)
    if is_typed_client_tool(extra):
        # Anthropic's own client tools (memory, bash...) are declared by type, without a schema.
        out = {k: v for k, v in out.items() if k not in ("input_schema", "strict")}
    return with_extra(out, extra)


def encode_choice(choice: ToolChoice, w: Warnings, names: Renamer) -> dict[str, Any]:
    match choice.mode:
        case "auto":
            out: dict[str, Any] = {"type": "auto"}
        case "required":
            out = {"type": "any"}
        case "none":
            return {"type": "none"}  # no calls at all: the parallel setting is moot
        case "tool" if choice.name:
            out = {"type": "tool", "name": names.name(choice.name, "tool_choice")}
        case "tool":
            w.add(
                "tool_choice_dropped",
                "tool_choice",
                "mode 'tool' without a tool name; sent as 'any'",
            )
            out = {"type": "any"}
        case _:
            assert_never(choice.mode)
    if choice.parallel is not None:
        out["disable_parallel_tool_use"] = not choice.parallel
    return out


def decode_tool(raw: Any, path: str, w: Warnings) -> Tool | None:
    tool = expect(PROTOCOL, raw, path, dict)
    name = require(PROTOCOL, tool, "name", path, str)
    if is_server_tool(tool):
        return None  # kept in the conversation's provider_details by decode_request
    if is_typed_client_tool(tool) and "input_schema" not in tool:
        # Anthropic defines this client tool's schema; the application runs its calls.
        w.add(
            "tool_schema_vendor_defined",
            f"{path}.parameters",
            f"{tool['type']} is a client tool whose input schema Anthropic defines; read "
            "with an open object schema (its type goes back to Anthropic as it was)",
        )
        return Tool(
            name=name,
            description=optional(tool, "description", path, str),
            parameters={"type": "object"},
            provider_details=stash(tool, ("name", "description")),
        )
    if "input_schema" not in tool and "parameters" in tool:
        raise CodecError(
            PROTOCOL,
            f"{path}.input_schema",
            "required field is missing (Anthropic tools use input_schema, not OpenAI's parameters)",
        )
    return Tool(
        name=name,
        description=optional(tool, "description", path, str),
        parameters=require(PROTOCOL, tool, "input_schema", path, dict),
        strict=optional(tool, "strict", path, bool),
        provider_details=stash(tool, ("name", "description", "input_schema", "strict")),
    )


def decode_choice(raw: Any, path: str) -> ToolChoice:
    choice = expect(PROTOCOL, raw, path, dict)
    kind = require(PROTOCOL, choice, "type", path, str)
    modes: dict[str, Mode] = {"auto": "auto", "any": "required", "tool": "tool", "none": "none"}
    if kind not in modes:
        raise CodecError(
            PROTOCOL,
            f"{path}.type",
            f"tool_choice type must be auto, any, tool or none, got {kind!r}",
        )
    disable = optional(choice, "disable_parallel_tool_use", path, bool)
    return ToolChoice(
        mode=modes[kind],
        name=require(PROTOCOL, choice, "name", path, str) if kind == "tool" else None,
        parallel=None if disable is None else not disable,
    )


_VERSION = re.compile(r"_\d{8}$")  # a tool type's version: web_search_20250305


def merge_tools(encoded: list[dict[str, Any]], stashed: Any) -> list[dict[str, Any]]:
    """The request's tools in wire order: server tools (web_search_20250305, code execution,
    ...) have no canonical form and ride in provider_details with their place in the list;
    client tools come from the canonical ones."""
    if not isinstance(stashed, list):
        return encoded
    rest = iter(encoded)
    out: list[dict[str, Any]] = []
    for tool in stashed:
        if is_server_tool(tool):
            out.append(tool)
        elif (client := next(rest, None)) is not None:
            out.append(client)
    return out + list(rest)


def is_server_tool(tool: Any) -> bool:
    """A declaration of one of Anthropic's documented server tools or connectors (any
    version); an unknown type is a client tool."""
    kind = tool.get("type") if isinstance(tool, dict) else None
    return isinstance(kind, str) and _VERSION.sub("", kind) in SERVER_TOOLS


def is_typed_client_tool(tool: Any) -> bool:
    """A client tool whose schema Anthropic defines (``memory_20250818``, ``bash_...``)."""
    kind = tool.get("type") if isinstance(tool, dict) else None
    return isinstance(kind, str) and kind != "custom" and not is_server_tool(tool)
