"""MCP ``CallToolResult`` (and JSON-RPC error responses) <-> canonical tool results, and what
a result loses on its way into an MCP transcript and back, named as a warning.

:func:`response_to_mcp` writes the wire; :func:`check_result` says what decoding that wire will
not give back, path by path (``tests/protocols/test_no_silent_change.py``);
:func:`warn_response_shape` says what ``decode_response`` of a model turn's ``tools/call``
requests cannot give back.
"""

from __future__ import annotations

from typing import Any

from flowdebug.model import (
    HostedCall,
    HostedResult,
    Image,
    ModelResponse,
    Text,
    ToolCall,
    ToolResult,
)
from flowdebug.protocols.base import Warnings, expect, require, safe_call_id
from flowdebug.protocols.mcp.parts import (
    PROTOCOL,
    block_from_mcp,
    content_to_mcp,
    extra_details,
    optional,
    own_details,
    safe_rpc_id,
    warn_foreign,
    without_keys,
)

INVALID_PARAMS = -32602

# MCP: a tool that cannot be found is a protocol error, not a result the model sees.
PROTOCOL_ERROR_TYPES = frozenset({"unknown_tool", "protocol"})

_RESULT_KEYS = frozenset({"content", "structuredContent", "isError"})


def result_to_mcp(
    result: ToolResult, w: Warnings | None = None, path: str = "result"
) -> dict[str, Any]:
    """A canonical result as an MCP ``CallToolResult`` (tool errors set ``isError``)."""
    w = w if w is not None else Warnings(PROTOCOL)
    warn_foreign(w, result.provider_details, path)
    out: dict[str, Any] = {"content": content_to_mcp(result, w, path), "isError": result.is_error}
    if isinstance(result.structured, dict):
        out["structuredContent"] = result.structured
    elif result.structured is not None:
        # The MCP schema's structuredContent is an object (the SDK's type takes any value).
        w.add("structured_content_dropped", path, "structuredContent is not an object")
    # "error" and "task" are ours (a JSON-RPC error, a task exchange), not CallToolResult fields.
    extra = without_keys(own_details(result.provider_details), _RESULT_KEYS | {"error", "task"})
    return {**out, **extra}


def response_to_mcp(
    result: ToolResult, w: Warnings | None = None, path: str = "result"
) -> dict[str, Any]:
    """The JSON-RPC response a server sends for ``result``: a ``CallToolResult``, or a
    protocol error for an unknown tool (or an error decoded from one)."""
    w = w if w is not None else Warnings(PROTOCOL)
    msg_id = safe_rpc_id(w, result.call_id, f"{path}.call_id")
    wire_error = own_details(result.provider_details).get("error")
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


def result_from_mcp(call_id: str, name: str | None, result: Any, path: str = "$") -> ToolResult:
    """An MCP ``CallToolResult`` object as the canonical result of call ``call_id``."""
    expect(PROTOCOL, result, path, dict)
    blocks = require(PROTOCOL, result, "content", path, list)
    parts = [block_from_mcp(b, f"{path}.content[{i}]") for i, b in enumerate(blocks)]
    content: str | list[Text | Image] = parts
    if not parts:
        content = ""
    elif len(parts) == 1 and isinstance(parts[0], Text) and parts[0].provider_details is None:
        content = parts[0].text
    return ToolResult(
        call_id=call_id,
        name=name,
        content=content,
        is_error=optional(result, "isError", path, bool) or False,
        structured=result.get("structuredContent"),
        provider_details=extra_details(result, _RESULT_KEYS),
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


def hosted_type(part: HostedCall | HostedResult) -> str:
    """How a vendor-run call or result is named on its own wire (``anthropic
    server_tool_use web_search``), for the warning that drops it."""
    wire = (part.provider_details or {}).get(part.source or "")
    kind = wire.get("type") if isinstance(wire, dict) else None
    label = " ".join(str(x) for x in (part.source, kind, part.name) if x)
    return label or part.kind


def check_result(result: ToolResult, names: dict[str, str], w: Warnings, path: str) -> None:
    """Warn what of ``result`` will not read back from its JSON-RPC response; ``names`` maps
    the JSON-RPC ids of the calls already written to their tool names."""
    back_name = names.get(safe_call_id(PROTOCOL, result.call_id))
    if result.name != back_name:
        # MCP: a CallToolResult names no tool; the reader takes the name of the call it
        # answers, when that call is in the transcript.
        w.add(
            "result_name_changed",
            f"{path}.name",
            f"MCP results carry no tool name: {result.name!r} reads back as {back_name!r} "
            "(the name of the call with its id, if any)",
        )
    mine = (result.provider_details or {}).get(PROTOCOL)
    wire_error = mine.get("error") if isinstance(mine, dict) else None
    if result.error_type in PROTOCOL_ERROR_TYPES or isinstance(wire_error, dict):
        _check_protocol_error(result, wire_error, w, path)
        return
    if result.error_type is not None:
        w.add(
            "error_type_dropped",
            f"{path}.error_type",
            f"MCP results carry only isError, not why ({result.error_type})",
        )
    if isinstance(result.content, str):
        return
    _check_content(result.content, w, f"{path}.content")


def _check_protocol_error(result: ToolResult, wire_error: Any, w: Warnings, path: str) -> None:
    same = (
        isinstance(wire_error, dict)
        and result.error_type == "protocol"
        and result.is_error
        and result.content == wire_error.get("message")
    )
    if not same:
        # MCP: an unknown tool is a JSON-RPC error (-32602), not a CallToolResult.
        w.add(
            "result_sent_as_protocol_error",
            path,
            f"a {result.error_type or 'protocol'} error travels as a JSON-RPC error: it reads "
            "back as error_type protocol, with its text as the message and the wire error "
            "in provider_details",
        )


def _check_content(content: list[Text | Image], w: Warnings, path: str) -> None:
    only_text = len(content) == 1 and isinstance(content[0], Text)
    if not content or (only_text and not (content[0].provider_details or {}).get(PROTOCOL)):
        # MCP content is always a block list; the reader gives one plain text block (or
        # none) back as a string.
        w.add(
            "content_flattened",
            path,
            "MCP content is a list of blocks; one text block (or none) reads back as a string",
        )
    for k, part in enumerate(content):
        if isinstance(part, Text) and part.refusal:
            w.add("refusal_flattened", f"{path}[{k}]", "MCP text blocks have no refusal flag")
        if isinstance(part, Image) and part.data is not None and part.url is not None:
            w.add(
                "image_url_dropped",
                f"{path}[{k}]",
                "an MCP image block is inline data only; the url is not sent",
            )
        if (
            isinstance(part, Image)
            and part.data is None
            and part.url is not None
            and not part.media_type.startswith("image/")
        ):
            w.add(
                "image_in_result_dropped",
                f"{path}[{k}]",
                f"a link of type {part.media_type} reads back as a resource link placeholder",
            )


def warn_response_shape(resp: ModelResponse, w: Warnings) -> None:
    """Warnings for what ``decode_response`` of MCP's ``tools/call`` requests cannot give
    back: the turn's other parts' places, its role, stop reason and envelope."""
    parts = resp.message.parts
    calls = [j for j, p in enumerate(parts) if isinstance(p, ToolCall)]
    if parts and not calls:
        w.add("messages_regrouped", "message.parts", "MCP carries none of this turn's parts")
    elif calls != list(range(len(calls))):
        w.add(
            "messages_regrouped",
            "message.parts",
            f"MCP carries only the turn's tool calls: they move to parts[0..{len(calls) - 1}]",
        )
    if resp.message.role != "assistant":
        w.add("messages_regrouped", "message.role", "an MCP model turn reads back as assistant")
    stop = "tool_use" if calls else None
    if resp.stop_reason != stop:
        w.add(
            "stop_reason_dropped",
            "stop_reason",
            f"MCP has no stop reason; {resp.stop_reason} reads back as "
            + ("tool_use (the turn has calls)" if stop else "none"),
        )
    if resp.id is not None:
        w.add("response_id_dropped", "id", f"MCP has no response id ({resp.id} is not sent)")
    if resp.model is not None:
        w.add("model_settings_dropped", "model", f"MCP does not talk to a model ({resp.model})")
    if resp.usage:
        w.add("usage_dropped", "usage", f"MCP carries no token usage ({', '.join(resp.usage)})")
    if resp.provider_details:
        w.add(
            "provider_details_dropped",
            "provider_details",
            f"{', '.join(sorted(resp.provider_details))} details of the turn cannot be "
            "carried by MCP",
        )
    if resp.message.provider_details:
        w.add(
            "provider_details_dropped",
            "message.provider_details",
            f"{', '.join(sorted(resp.message.provider_details))} details of the message "
            "cannot be carried by MCP",
        )
