"""MCP fragments: the two MCP objects people paste without their JSON-RPC envelope.

A single JSON-RPC message is already a whole MCP payload (``detect`` handles it), so the
only fragments are the bare objects the spec and SDK docs show on their own:

- a ``CallToolResult``: ``{"content": [typed blocks], "isError"?, "structuredContent"?,
  "_meta"?, "resultType"? (draft)}`` and nothing else; read as the JSON-RPC response to
  request id 1.
- a ``Tool``: ``{"name", "inputSchema", ...}`` with only ``Tool`` fields (camelCase
  ``inputSchema`` is MCP's own: Anthropic writes ``input_schema``, OpenAI ``parameters``);
  read as a ``tools/list`` result holding only it.

Strict on purpose: any key outside those MCP objects (``role``, ``type``, ``tool_use_id``,
``parts`` ...) means another vendor's fragment, and a bare content block is not claimed.
"""

from __future__ import annotations

from typing import Any

RESULT_KEYS = frozenset({"content", "isError", "structuredContent", "_meta", "resultType"})
TOOL_KEYS = frozenset(
    {
        "name",
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
        "icons",
        "execution",
        "_meta",
    }
)
BLOCK_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})
FRAGMENT_ID = 1


def _is_call_tool_result(obj: dict[str, Any]) -> bool:
    content = obj.get("content")
    return (
        set(obj) <= RESULT_KEYS
        and isinstance(content, list)
        and all(
            isinstance(b, dict) and isinstance(b.get("type"), str) and b.get("type") in BLOCK_TYPES
            for b in content
        )
        and isinstance(obj.get("isError", False), bool)
    )


def _is_tool(obj: dict[str, Any]) -> bool:
    return (
        set(obj) <= TOOL_KEYS
        and isinstance(obj.get("name"), str)
        and isinstance(obj.get("inputSchema"), dict)
    )


def fragment(payload: Any) -> tuple[Any, str] | None:
    """The whole MCP payload a bare ``CallToolResult`` or ``Tool`` stands for, and a note."""
    if not isinstance(payload, dict) or "jsonrpc" in payload:
        return None
    if _is_call_tool_result(payload):
        whole = {"jsonrpc": "2.0", "id": FRAGMENT_ID, "result": payload}
        return whole, (
            f"a bare MCP CallToolResult: read as the JSON-RPC response to request id "
            f"{FRAGMENT_ID} (its call is not in the payload)"
        )
    if _is_tool(payload):
        return {
            "tools": [payload]
        }, "one bare MCP Tool: read as a tools/list result holding only it"
    return None
