"""OpenAI Responses tool declarations and ``tool_choice`` <-> canonical ``Tool`` and
``ToolChoice``.

Responses tools are flat (``{"type": "function", "name": ..., "parameters": ...}``, unlike
Chat Completions' nested ``function``); hosted tools (web_search, mcp, file_search, custom
...) have no canonical declaration and are kept verbatim by the request codec.
"""

from __future__ import annotations

from typing import Any

from flowdebug.errors import CodecError
from flowdebug.model import Tool, ToolChoice
from flowdebug.protocols.base import Warnings, expect, require
from flowdebug.protocols.openai_responses.parts import PROTOCOL, details, extras, own
from flowdebug.protocols.openai_responses.parts.encode import ItemEncoder

_TOOL_KEYS = {"type", "name", "description", "parameters", "strict", "output_schema"}


def encode_tool(tool: Tool, enc: ItemEncoder, path: str) -> dict[str, Any]:
    """A canonical tool as a flat Responses function tool."""
    enc.foreign(tool, path)
    out: dict[str, Any] = {"type": "function", "name": enc.tool_name(tool.name, path)}
    if tool.description is not None:
        out["description"] = tool.description
    out["parameters"] = tool.parameters
    # The SDK marks strict Required (nullable) and older docs say it defaults to true, so
    # always state it: a schema not written for strict mode would be rejected.
    out["strict"] = bool(tool.strict)
    if tool.strict is False:
        enc.w.add("strict_unset", f"{path}.strict", "strict: false is sent for an unset one too")
    if tool.output_schema is not None:
        out["output_schema"] = tool.output_schema
    lost = ["title"] * (tool.title is not None) + ["annotations"] * bool(tool.annotations)
    if lost:
        enc.w.add(
            "tool_metadata_dropped",
            path,
            f"Responses function tools have no {' or '.join(lost)}; not sent",
        )
    return out | {k: v for k, v in own(tool).items() if k not in out}


def encode_choice(choice: ToolChoice, enc: ItemEncoder, w: Warnings) -> Any:
    """A canonical tool choice as the wire ``tool_choice``."""
    if choice.mode != "tool":
        return choice.mode
    if choice.name is None:
        w.add(
            "tool_choice_dropped",
            "tool_choice",
            'a named tool choice without a name; sent as "required"',
        )
        return "required"
    # Flat, unlike Chat Completions' {"type": "function", "function": {"name": ...}}.
    return {"type": "function", "name": enc.tool_name(choice.name, "tool_choice")}


def choice_mode(raw: Any) -> str:
    """The canonical mode closest to a wire tool_choice."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict) and raw.get("type") == "function":
        return "tool"
    if isinstance(raw, dict) and raw.get("type") == "allowed_tools":
        return str(raw.get("mode"))
    return "required"  # hosted-tool, mcp and custom choices force a (non-function) tool


def optional(obj: dict[str, Any], key: str, typ: type | tuple[type, ...]) -> Any:
    """``obj[key]`` checked against ``typ``, or None when absent or null."""
    if obj.get(key) is None:
        return None
    return require(PROTOCOL, obj, key, "$", typ)


def decode_tool(tool: dict[str, Any], path: str) -> Tool:
    """A Responses function tool as a canonical tool."""
    if "name" not in tool and isinstance(tool.get("function"), dict):
        raise CodecError(
            PROTOCOL,
            f"{path}.name",
            "missing: this is a Chat Completions tool; Responses tools are flat "
            '({"type": "function", "name": ..., "parameters": ...})',
        )
    name = require(PROTOCOL, tool, "name", path, str)
    parameters = tool.get("parameters")
    if parameters is not None:
        expect(PROTOCOL, parameters, f"{path}.parameters", dict)
    description = tool.get("description")
    if description is not None:
        expect(PROTOCOL, description, f"{path}.description", str)
    output_schema = tool.get("output_schema")
    if output_schema is not None:
        expect(PROTOCOL, output_schema, f"{path}.output_schema", dict)
    extra = extras(tool, _TOOL_KEYS)
    return Tool(
        name=name,
        description=description,
        **({"parameters": parameters} if parameters is not None else {}),
        output_schema=output_schema,
        strict=True if tool.get("strict") is True else None,
        provider_details=details(extra),
    )


def decode_choice(payload: dict[str, Any], mine: dict[str, Any]) -> ToolChoice | None:
    """The canonical tool choice; choices it cannot name go verbatim into ``mine``."""
    raw = payload.get("tool_choice")
    parallel = optional(payload, "parallel_tool_calls", bool)
    # true is the API default, so only false is worth a canonical value.
    parallel = False if parallel is False else None
    if raw is None:
        return ToolChoice(parallel=False) if parallel is False else None
    if raw in ("auto", "none", "required"):
        return ToolChoice(mode=raw, parallel=parallel)
    expect(PROTOCOL, raw, "$.tool_choice", (str, dict))
    if isinstance(raw, str):
        raise CodecError(
            PROTOCOL,
            "$.tool_choice",
            f"unknown tool_choice {raw!r}; expected auto, none or required",
        )
    kind = require(PROTOCOL, raw, "type", "$.tool_choice", str)
    if kind == "function":
        name = require(PROTOCOL, raw, "name", "$.tool_choice", str)
        return ToolChoice(mode="tool", name=name, parallel=parallel)
    # allowed_tools, hosted tools, mcp, custom: kept verbatim, mapped to the nearest mode.
    mine["tool_choice"] = raw
    mode = choice_mode(raw)
    return ToolChoice(
        mode=mode if mode in ("auto", "required") else "required",  # type: ignore[arg-type]
        parallel=parallel,
    )
