"""MCP objects <-> canonical types, one object at a time: tools, calls, results, content.

The codec in :mod:`flowdebug.protocols.mcp.codec` frames these into JSON-RPC transcripts; the engine
uses them directly when it talks to a real MCP server. Fields without a canonical home ride in
``provider_details["mcp"]`` and are written back on encode.
"""

from __future__ import annotations

from typing import Any, assert_never

from flowdebug.errors import CodecError
from flowdebug.model import Details, Image, Text, Tool, ToolCall, ToolResult
from flowdebug.protocols.base import (
    Warnings,
    expect,
    require,
    safe_call_id,
    safe_name,
)
from flowdebug.protocols.mcp.facts import FACTS
from flowdebug.protocols.warning_codes import WarningCode

PROTOCOL = "mcp"
INVALID_PARAMS = -32602
# MCP: a tool that cannot be found is a protocol error, not a result the model sees.
PROTOCOL_ERROR_TYPES = frozenset({"unknown_tool", "protocol"})

_TOOL_KEYS = frozenset(
    {"name", "title", "description", "inputSchema", "outputSchema", "annotations"}
)
_PARAM_KEYS = frozenset({"name", "arguments"})
_RESULT_KEYS = frozenset({"content", "structuredContent", "isError"})
_TEXT_KEYS = frozenset({"type", "text"})
_IMAGE_KEYS = frozenset({"type", "data", "mimeType"})
_LINK_KEYS = frozenset({"type", "uri", "mimeType"})
_LINK_NAME = "image"


# --- small shared pieces --------------------------------------------------------------------


def _ours(details: Details) -> dict[str, Any]:
    if not details:
        return {}
    mine = details.get(PROTOCOL)
    return dict(mine) if isinstance(mine, dict) else {}


def _extras(obj: dict[str, Any], known: frozenset[str]) -> Details:
    extra = {k: v for k, v in obj.items() if k not in known}
    return {PROTOCOL: extra} if extra else None


def _without(extra: dict[str, Any], known: frozenset[str]) -> dict[str, Any]:
    if not extra:
        return extra
    return {k: v for k, v in extra.items() if k not in known}


def warn_foreign(w: Warnings, details: Details, path: str) -> None:
    """Warn ``provider_details_dropped`` when a part carries another protocol's details."""
    if not details:
        return
    others = sorted(k for k in details if k != PROTOCOL)
    if others:
        w.add(
            "provider_details_dropped",
            path,
            f"{', '.join(others)} details cannot be carried by MCP",
        )


def _once(w: Warnings, code: WarningCode, path: str, message: str) -> None:
    # Once per path: every renamed occurrence is a changed canonical path of its own.
    if not any(x.code == code and x.path == path and x.message == message for x in w.items):
        w.add(code, path, message)


def _name(w: Warnings, name: str, path: str) -> str:
    safe = safe_name(PROTOCOL, name)
    if safe != name:
        _once(
            w,
            "tool_name_renamed",
            path,
            f"tool name {name!r} sent as {safe!r}: MCP names "
            f"should match {FACTS.name_rule.pattern}",
        )
    return safe


def _call_id(w: Warnings, call_id: str, path: str) -> str:
    safe = safe_call_id(PROTOCOL, call_id)
    if safe != call_id:
        _once(w, "call_id_renamed", path, f"call id {call_id!r} sent as JSON-RPC id {safe!r}")
    return safe


def _opt(obj: dict[str, Any], key: str, path: str, typ: type | tuple[type, ...]) -> Any:
    value = obj.get(key)
    return None if value is None else expect(PROTOCOL, value, f"{path}.{key}", typ)


# --- canonical -> MCP -----------------------------------------------------------------------


def tool_to_mcp(tool: Tool, w: Warnings | None = None, path: str = "tool") -> dict[str, Any]:
    """A canonical tool as an MCP ``Tool`` object (an entry of a ``tools/list`` result)."""
    w = w if w is not None else Warnings(PROTOCOL)
    warn_foreign(w, tool.provider_details, path)
    if tool.strict is not None:
        w.add("strict_dropped", path, "MCP has no strict mode; the schema is sent as is")
    out: dict[str, Any] = {"name": _name(w, tool.name, f"{path}.name")}
    if tool.title is not None:
        out["title"] = tool.title
    if tool.description is not None:
        out["description"] = tool.description
    out["inputSchema"] = tool.parameters
    if tool.output_schema is not None:
        out["outputSchema"] = tool.output_schema
    if tool.annotations is not None:
        out["annotations"] = tool.annotations
    return {**out, **_without(_ours(tool.provider_details), _TOOL_KEYS)}


def call_to_mcp(call: ToolCall, w: Warnings | None = None, path: str = "call") -> dict[str, Any]:
    """A canonical call as a ``tools/call`` JSON-RPC request whose id is the call id."""
    w = w if w is not None else Warnings(PROTOCOL)
    warn_foreign(w, call.provider_details, path)
    if call.raw_arguments is not None:
        w.add(
            "raw_arguments_dropped",
            path,
            "MCP arguments are an object; the unparsed "
            f"arguments {call.raw_arguments!r} are not sent",
        )
    params = {
        **_without(_ours(call.provider_details), _PARAM_KEYS),
        "name": _name(w, call.name, f"{path}.name"),
        "arguments": call.arguments,
    }
    return {
        "jsonrpc": "2.0",
        "id": _call_id(w, call.id, f"{path}.id"),
        "method": "tools/call",
        "params": params,
    }


def result_to_mcp(
    result: ToolResult, w: Warnings | None = None, path: str = "result"
) -> dict[str, Any]:
    """A canonical result as an MCP ``CallToolResult`` (tool errors set ``isError``)."""
    w = w if w is not None else Warnings(PROTOCOL)
    warn_foreign(w, result.provider_details, path)
    out: dict[str, Any] = {"content": _content_to_mcp(result, w, path), "isError": result.is_error}
    if result.structured is not None:
        out["structuredContent"] = result.structured
    # "error" and "task" are ours (a JSON-RPC error, a task exchange), not CallToolResult fields.
    extra = _without(_ours(result.provider_details), _RESULT_KEYS | {"error", "task"})
    return {**out, **extra}


def response_to_mcp(
    result: ToolResult, w: Warnings | None = None, path: str = "result"
) -> dict[str, Any]:
    """The JSON-RPC response a server sends for ``result``: a ``CallToolResult``, or a
    protocol error for an unknown tool (or an error decoded from one)."""
    w = w if w is not None else Warnings(PROTOCOL)
    msg_id = _call_id(w, result.call_id, f"{path}.call_id")
    wire_error = _ours(result.provider_details).get("error")
    if result.error_type not in PROTOCOL_ERROR_TYPES and not isinstance(wire_error, dict):
        return {"jsonrpc": "2.0", "id": msg_id, "result": result_to_mcp(result, w, path)}
    warn_foreign(w, result.provider_details, path)
    wire_error = wire_error if isinstance(wire_error, dict) else {}
    if not isinstance(result.content, str) and any(isinstance(p, Image) for p in result.content):
        w.add("image_in_result_dropped", path, "a JSON-RPC error carries only a message")
    if result.structured is not None:
        w.add("structured_content_dropped", path, "a JSON-RPC error has no structuredContent")
    error: dict[str, Any] = {"code": wire_error.get("code", INVALID_PARAMS), "message": result.text}
    if "data" in wire_error:
        error["data"] = wire_error["data"]
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}


def _content_to_mcp(result: ToolResult, w: Warnings, path: str) -> list[dict[str, Any]]:
    if isinstance(result.content, str):
        return [{"type": "text", "text": result.content}]
    blocks: list[dict[str, Any]] = []
    for i, part in enumerate(result.content):
        where = f"{path}.content[{i}]"
        warn_foreign(w, part.provider_details, where)
        extra = _ours(part.provider_details)
        match part:
            case Text() if isinstance(extra.get("block"), dict):
                blocks.append(extra["block"])
            case Text():
                blocks.append({"type": "text", "text": part.text, **_without(extra, _TEXT_KEYS)})
            case Image(data=str(data)):
                blocks.append(
                    {
                        "type": "image",
                        "data": data,
                        "mimeType": part.media_type,
                        **_without(extra, _IMAGE_KEYS),
                    }
                )
            case Image(url=str(url)):
                # MCP image blocks are inline base64 only; a URL travels as a resource link.
                blocks.append(
                    {
                        "type": "resource_link",
                        "uri": url,
                        "name": _LINK_NAME,
                        "mimeType": part.media_type,
                        **_without(extra, _LINK_KEYS),
                    }
                )
            case Image():
                w.add("image_in_result_dropped", where, "an image with neither data nor url")
            case _:
                assert_never(part)
    return blocks


# --- MCP -> canonical -----------------------------------------------------------------------


def tool_from_mcp(tool: Any, path: str = "$") -> Tool:
    """An MCP ``Tool`` object as a canonical tool."""
    expect(PROTOCOL, tool, path, dict)
    return Tool(
        name=require(PROTOCOL, tool, "name", path, str),
        title=_opt(tool, "title", path, str),
        description=_opt(tool, "description", path, str),
        parameters=require(PROTOCOL, tool, "inputSchema", path, dict),
        output_schema=_opt(tool, "outputSchema", path, dict),
        annotations=_opt(tool, "annotations", path, dict),
        provider_details=_extras(tool, _TOOL_KEYS),
    )


def call_from_mcp(msg: Any, path: str = "$") -> ToolCall:
    """A ``tools/call`` JSON-RPC request as a canonical call (id: the JSON-RPC id as text)."""
    expect(PROTOCOL, msg, path, dict)
    params = require(PROTOCOL, msg, "params", path, dict)
    return ToolCall(
        id=rpc_id(msg, path),
        name=require(PROTOCOL, params, "name", f"{path}.params", str),
        arguments=_opt(params, "arguments", f"{path}.params", dict) or {},
        provider_details=_extras(params, _PARAM_KEYS),
    )


def result_from_mcp(call_id: str, name: str | None, result: Any, path: str = "$") -> ToolResult:
    """An MCP ``CallToolResult`` object as the canonical result of call ``call_id``."""
    expect(PROTOCOL, result, path, dict)
    blocks = require(PROTOCOL, result, "content", path, list)
    parts = [_block_from_mcp(b, f"{path}.content[{i}]") for i, b in enumerate(blocks)]
    content: str | list[Text | Image] = parts
    if not parts:
        content = ""
    elif len(parts) == 1 and isinstance(parts[0], Text) and parts[0].provider_details is None:
        content = parts[0].text
    return ToolResult(
        call_id=call_id,
        name=name,
        content=content,
        is_error=_opt(result, "isError", path, bool) or False,
        structured=result.get("structuredContent"),
        provider_details=_extras(result, _RESULT_KEYS),
    )


def error_from_mcp(call_id: str, name: str | None, error: Any, path: str = "$") -> ToolResult:
    """A JSON-RPC ``error`` object answering a ``tools/call`` as a canonical error result."""
    expect(PROTOCOL, error, path, dict)
    require(PROTOCOL, error, "code", path, int)
    message = require(PROTOCOL, error, "message", path, str)
    return ToolResult(
        call_id=call_id,
        name=name,
        content=message,
        is_error=True,
        error_type="protocol",
        provider_details={PROTOCOL: {"error": error}},
    )


def _block_from_mcp(block: Any, path: str) -> Text | Image:
    expect(PROTOCOL, block, path, dict)
    kind = require(PROTOCOL, block, "type", path, str)
    mime = block.get("mimeType")
    if kind == "text":
        return Text(
            text=require(PROTOCOL, block, "text", path, str),
            provider_details=_extras(block, _TEXT_KEYS),
        )
    if kind == "image":
        return Image(
            data=require(PROTOCOL, block, "data", path, str),
            media_type=require(PROTOCOL, block, "mimeType", path, str),
            provider_details=_extras(block, _IMAGE_KEYS),
        )
    if kind == "resource_link" and isinstance(mime, str) and mime.startswith("image/"):
        link = {k: v for k, v in block.items() if not (k == "name" and v == _LINK_NAME)}
        return Image(
            url=require(PROTOCOL, block, "uri", path, str),
            media_type=mime,
            provider_details=_extras(link, _LINK_KEYS),
        )
    # Audio, embedded resources, other links: canonical results hold text and images only,
    # so keep the block whole and show a placeholder.
    resource = block.get("resource")
    label = block.get("uri") or (resource.get("uri") if isinstance(resource, dict) else None)
    label = label if isinstance(label, str) else mime if isinstance(mime, str) else ""
    return Text(
        text=f"[{kind} {label}]".replace(" ]", "]"), provider_details={PROTOCOL: {"block": block}}
    )


def rpc_id(msg: dict[str, Any], path: str) -> str:
    """The JSON-RPC id of ``msg`` as a canonical call id (integers become text)."""
    value = require(PROTOCOL, msg, "id", path, (str, int))
    if isinstance(value, bool):
        raise CodecError(PROTOCOL, f"{path}.id", "expected a string or an integer, got a boolean")
    return str(value)
