"""MCP ``Tool`` objects (the entries of a ``tools/list`` result) <-> canonical tools.

Fields without a canonical home (``_meta``, ``icons`` ...) ride in ``provider_details["mcp"]``
and are written back on encode.
"""

from __future__ import annotations

from typing import Any

from flowdebug.model import Tool
from flowdebug.protocols.base import Warnings, expect, require
from flowdebug.protocols.mcp.parts import (
    PROTOCOL,
    extra_details,
    optional,
    own_details,
    safe_tool_name,
    warn_foreign,
    without_keys,
)
from flowdebug.protocols.schema_rewrites import OBJECT_ROOT

_TOOL_KEYS = frozenset(
    {"name", "title", "description", "inputSchema", "outputSchema", "annotations"}
)


def tool_to_mcp(tool: Tool, w: Warnings | None = None, path: str = "tool") -> dict[str, Any]:
    """A canonical tool as an MCP ``Tool`` object (an entry of a ``tools/list`` result)."""
    w = w if w is not None else Warnings(PROTOCOL)
    warn_foreign(w, tool.provider_details, path)
    if tool.strict is not None:
        w.add("strict_dropped", path, "MCP has no strict mode; the schema is sent as is")
    out: dict[str, Any] = {"name": safe_tool_name(w, tool.name, f"{path}.name")}
    if tool.title is not None:
        out["title"] = tool.title
    if tool.description is not None:
        out["description"] = tool.description
    # MCP: a Tool's inputSchema (and outputSchema) is an object schema, "type": "object".
    out["inputSchema"] = OBJECT_ROOT.apply(tool.parameters, f"{path}.parameters", w, "MCP")
    if tool.output_schema is not None:
        out["outputSchema"] = OBJECT_ROOT.apply(
            tool.output_schema, f"{path}.output_schema", w, "MCP"
        )
    if tool.annotations is not None:
        out["annotations"] = tool.annotations
    return {**out, **without_keys(own_details(tool.provider_details), _TOOL_KEYS)}


def tool_from_mcp(tool: Any, path: str = "$") -> Tool:
    """An MCP ``Tool`` object as a canonical tool."""
    expect(PROTOCOL, tool, path, dict)
    return Tool(
        name=require(PROTOCOL, tool, "name", path, str),
        title=optional(tool, "title", path, str),
        description=optional(tool, "description", path, str),
        parameters=require(PROTOCOL, tool, "inputSchema", path, dict),
        output_schema=optional(tool, "outputSchema", path, dict),
        annotations=optional(tool, "annotations", path, dict),
        provider_details=extra_details(tool, _TOOL_KEYS),
    )
