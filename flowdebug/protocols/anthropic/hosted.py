"""Anthropic server tools and the MCP connector <-> canonical hosted calls and results.

Anthropic runs some tools itself and returns call and result in the same assistant turn:
``server_tool_use`` (web_search, web_fetch, code_execution, bash_code_execution,
text_editor_code_execution, tool_search_tool_*) answered by a ``<tool>_tool_result`` block,
and the MCP connector's ``mcp_tool_use`` answered by ``mcp_tool_result``. The exact wire block
rides in ``provider_details["anthropic"]`` so it goes back byte-identical (results hold
encrypted content the API verifies); another vendor's hosted call is mapped where Anthropic
has the same tool (web search, an MCP connector call) and dropped with a warning elsewhere.
"""

from __future__ import annotations

import json
from typing import Any

from flowdebug.model import HostedCall, HostedResult, Text
from flowdebug.protocols.base import Warnings, require

PROTOCOL = "anthropic"
CALL_TYPES = ("server_tool_use", "mcp_tool_use")
# OpenAI Responses MCP items that are no tool call: Anthropic's connector lists the server's
# tools itself and has no approval step, so these have no Anthropic block.
NOT_MCP_CALLS = ("mcp_list_tools", "mcp_approval_request", "mcp_approval_response")


def _mcp_call(part: HostedCall | None) -> bool:
    return part is not None and part.server is not None and part.name not in NOT_MCP_CALLS


def is_result_type(kind: str) -> bool:
    """``web_search_tool_result``, ``mcp_tool_result`` ... (never the client ``tool_result``)."""
    return kind.endswith("_tool_result") and kind != "tool_result"


def _wire(part: HostedCall | HostedResult) -> dict[str, Any] | None:
    """The block this part was decoded from, when Anthropic issued it."""
    if part.source != PROTOCOL:
        return None
    block = (part.provider_details or {}).get(PROTOCOL)
    return block if isinstance(block, dict) and "type" in block else None


# ---------------------------------------------------------------------------------- decode


def decode_call(block: dict[str, Any], path: str) -> HostedCall:
    """A ``server_tool_use`` or ``mcp_tool_use`` block (the MCP server is ``server``)."""
    mcp = block["type"] == "mcp_tool_use"
    return HostedCall(
        id=require(PROTOCOL, block, "id", path, str),
        name=require(PROTOCOL, block, "name", path, str),
        arguments=require(PROTOCOL, block, "input", path, dict),
        server=require(PROTOCOL, block, "server_name", path, str) if mcp else None,
        source=PROTOCOL,
        provider_details={PROTOCOL: block},
    )


def decode_result(block: dict[str, Any], path: str, names: dict[str, str]) -> HostedResult:
    """A server-tool or MCP result block; its content read as text for the debugger."""
    kind = block["type"]
    call_id = require(PROTOCOL, block, "tool_use_id", path, str)
    content = block.get("content")
    # Server tools report failure as a ``<tool>_tool_result_error`` (or ``..._error``) object
    # with an error_code; the MCP connector sets is_error like a client tool_result.
    error = isinstance(content, dict) and str(content.get("type", "")).endswith("_error")
    return HostedResult(
        call_id=call_id,
        name=names.get(call_id) or kind.removesuffix("_tool_result"),
        content=_content_text(content),
        is_error=bool(block.get("is_error")) or error,
        source=PROTOCOL,
        provider_details={PROTOCOL: block},
    )


def _content_text(content: Any) -> str | list[Text]:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        for b in content
    ):
        return [Text(text=b["text"]) for b in content]  # MCP connector: text blocks
    if isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "web_search_result" for b in content
    ):
        return "\n".join(f"{b.get('title')} <{b.get('url')}>" for b in content)
    if isinstance(content, dict):
        if "error_code" in content:
            return str(content["error_code"])
        if "stdout" in content:  # code_execution_result, bash_code_execution_result
            return str(content.get("stdout", "")) + str(content.get("stderr", ""))
        document = content.get("content")
        if content.get("type") == "web_fetch_result" and isinstance(document, dict):
            source = document.get("source")
            data = source.get("data") if isinstance(source, dict) else None
            if isinstance(source, dict) and source.get("type") == "text" and isinstance(data, str):
                return data
            return f"[document {content.get('url')}]"
    return json.dumps(content, ensure_ascii=False)


# ---------------------------------------------------------------------------------- encode


def encode_call(part: HostedCall, path: str, w: Warnings, call_id: str) -> dict[str, Any] | None:
    """The wire block for a hosted call, or None (with a warning) when Anthropic has no such
    hosted tool. ``call_id`` is the id already made legal for Anthropic."""
    wire = _wire(part)
    if wire is not None and (wire.get("id"), wire.get("name"), wire.get("input")) == (
        part.id,
        part.name,
        part.arguments,
    ):
        return dict(wire)
    if _mcp_call(part):
        # Anthropic's MCP connector (beta mcp-client) runs the same remote tool call.
        block: dict[str, Any] = {
            "type": "mcp_tool_use",
            "id": call_id,
            "name": part.name,
            "input": dict(part.arguments),
            "server_name": str(part.server),
        }
    elif part.name == "web_search":
        block = {
            "type": "server_tool_use",
            "id": call_id,
            "name": "web_search",
            "input": dict(part.arguments),
        }
    else:
        w.add(
            "hosted_call_dropped",
            path,
            f"the {part.source or 'foreign'} hosted {part.name!r} call has no Anthropic "
            "server tool; it was left out",
        )
        return None
    w.add(
        "hosted_call_mapped",
        path,
        f"the {part.source or 'foreign'} hosted {part.name!r} call is sent as an Anthropic "
        f"{block['type']} block; its vendor details do not carry over",
    )
    return block


def encode_result(
    part: HostedResult, path: str, w: Warnings, call_id: str, call: HostedCall | None
) -> dict[str, Any] | None:
    """The wire block for a hosted result, or None (with a warning)."""
    wire = _wire(part)
    if wire is not None and wire.get("tool_use_id") == part.call_id:
        return dict(wire)
    if call is not None and _mcp_call(call):
        text = part.content if isinstance(part.content, str) else part.text
        w.add(
            "hosted_result_mapped",
            path,
            f"the {part.source or 'foreign'} MCP result is sent as an Anthropic mcp_tool_result "
            "block holding its text",
        )
        return {
            "type": "mcp_tool_result",
            "tool_use_id": call_id,
            "is_error": part.is_error,
            "content": [{"type": "text", "text": text}] if text else [],
        }
    w.add(
        "hosted_result_dropped",
        path,
        f"the {part.source or 'foreign'} hosted {part.name or 'tool'} result has no Anthropic "
        "form (Anthropic results carry content only Anthropic issues); it was left out",
    )
    return None
