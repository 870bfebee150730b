"""MCP content blocks <-> canonical parts, and the helpers every MCP module shares.

The codec in :mod:`flowdebug.protocols.mcp.codec` frames tools, calls and results into
JSON-RPC transcripts; the engine uses the object converters (:mod:`.tools`, :mod:`.request`,
:mod:`.response`) directly when it talks to a real MCP server. Fields without a canonical home
ride in ``provider_details["mcp"]`` and are written back on encode.
"""

from __future__ import annotations

from typing import Any, assert_never

from flowdebug.errors import CodecError
from flowdebug.model import Details, Image, Text, ToolResult
from flowdebug.protocols.base import Warnings, expect, require, safe_call_id, safe_name
from flowdebug.protocols.mcp.facts import FACTS
from flowdebug.protocols.warning_codes import WarningCode

PROTOCOL = "mcp"

_TEXT_KEYS = frozenset({"type", "text"})
_IMAGE_KEYS = frozenset({"type", "data", "mimeType"})
_LINK_KEYS = frozenset({"type", "uri", "mimeType"})
_LINK_NAME = "image"


# --- small shared pieces --------------------------------------------------------------------


def own_details(details: Details) -> dict[str, Any]:
    if not details:
        return {}
    mine = details.get(PROTOCOL)
    return dict(mine) if isinstance(mine, dict) else {}


def extra_details(obj: dict[str, Any], known: frozenset[str]) -> Details:
    extra = {k: v for k, v in obj.items() if k not in known}
    return {PROTOCOL: extra} if extra else None


def without_keys(extra: dict[str, Any], known: frozenset[str]) -> dict[str, Any]:
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


def safe_tool_name(w: Warnings, name: str, path: str) -> str:
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


def safe_rpc_id(w: Warnings, call_id: str, path: str) -> str:
    safe = safe_call_id(PROTOCOL, call_id)
    if safe != call_id:
        _once(w, "call_id_renamed", path, f"call id {call_id!r} sent as JSON-RPC id {safe!r}")
    return safe


def optional(obj: dict[str, Any], key: str, path: str, typ: type | tuple[type, ...]) -> Any:
    value = obj.get(key)
    return None if value is None else expect(PROTOCOL, value, f"{path}.{key}", typ)


# --- canonical -> MCP -----------------------------------------------------------------------


def content_to_mcp(result: ToolResult, w: Warnings, path: str) -> list[dict[str, Any]]:
    if isinstance(result.content, str):
        return [{"type": "text", "text": result.content}]
    blocks: list[dict[str, Any]] = []
    for i, part in enumerate(result.content):
        where = f"{path}.content[{i}]"
        warn_foreign(w, part.provider_details, where)
        extra = own_details(part.provider_details)
        match part:
            case Text() if isinstance(extra.get("block"), dict):
                blocks.append(extra["block"])
            case Text():
                blocks.append(
                    {"type": "text", "text": part.text, **without_keys(extra, _TEXT_KEYS)}
                )
            case Image(data=str(data)):
                blocks.append(
                    {
                        "type": "image",
                        "data": data,
                        "mimeType": part.media_type,
                        **without_keys(extra, _IMAGE_KEYS),
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
                        **without_keys(extra, _LINK_KEYS),
                    }
                )
            case Image():
                w.add("image_in_result_dropped", where, "an image with neither data nor url")
            case _:
                assert_never(part)
    return blocks


# --- MCP -> canonical -----------------------------------------------------------------------


def block_from_mcp(block: Any, path: str) -> Text | Image:
    expect(PROTOCOL, block, path, dict)
    kind = require(PROTOCOL, block, "type", path, str)
    mime = block.get("mimeType")
    if kind == "text":
        return Text(
            text=require(PROTOCOL, block, "text", path, str),
            provider_details=extra_details(block, _TEXT_KEYS),
        )
    if kind == "image":
        return Image(
            data=require(PROTOCOL, block, "data", path, str),
            media_type=require(PROTOCOL, block, "mimeType", path, str),
            provider_details=extra_details(block, _IMAGE_KEYS),
        )
    if kind == "resource_link" and isinstance(mime, str) and mime.startswith("image/"):
        link = {k: v for k, v in block.items() if not (k == "name" and v == _LINK_NAME)}
        return Image(
            url=require(PROTOCOL, block, "uri", path, str),
            media_type=mime,
            provider_details=extra_details(link, _LINK_KEYS),
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
