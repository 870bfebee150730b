"""Anthropic content blocks <-> canonical parts, shared by requests, responses and streams.

Vendor-only block fields (``cache_control``, ``citations``, ``caller`` ...) are stashed in the
part's ``provider_details["anthropic"]`` on decode and put back on encode.
"""

from __future__ import annotations

from typing import Any, assert_never

from flowdebug.model import (
    Details,
    HostedCall,
    HostedResult,
    Image,
    Message,
    Part,
    Text,
    Thinking,
    ToolCall,
    ToolResult,
)
from flowdebug.protocols import wire_helpers
from flowdebug.protocols.anthropic import hosted as anthropic_hosted
from flowdebug.protocols.base import Renamer, Warnings, expect, foreign_signature, require
from flowdebug.protocols.warning_codes import WarningCode
from flowdebug.protocols.wire_helpers import result_items_shifted, with_extra

PROTOCOL = "anthropic"
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")

# ---------------------------------------------------------------------------------- helpers


def own(details: Details, w: Warnings, path: str) -> dict[str, Any]:
    """Anthropic's own provider_details (:func:`flowdebug.protocols.wire_helpers.own`)."""
    return wire_helpers.own(PROTOCOL, details, w, path)


def stash(obj: dict[str, Any], handled: tuple[str, ...]) -> Details:
    """The vendor-only fields of ``obj`` (those outside ``handled``), nulls left out."""
    return wire_helpers.stash(PROTOCOL, obj, handled)


def optional(obj: dict[str, Any], key: str, path: str, typ: type | tuple[type, ...]) -> Any:
    """``obj[key]`` checked against ``typ``, or None when the key is absent or null."""
    return wire_helpers.optional(PROTOCOL, obj, key, path, typ)


# ----------------------------------------------------------------------------- encode parts


def _encode_image(image: Image, path: str, w: Warnings, code: WarningCode) -> dict[str, Any] | None:
    if image.data is not None and image.media_type in IMAGE_TYPES:
        source = {"type": "base64", "media_type": image.media_type, "data": image.data}
    elif image.url is not None:
        source = {"type": "url", "url": image.url}
    else:
        w.add(
            code,
            path,
            f"Anthropic takes an image as a url or as base64 {', '.join(IMAGE_TYPES)}; "
            f"this {image.media_type} image was dropped",
        )
        return None
    return with_extra({"type": "image", "source": source}, own(image.provider_details, w, path))


def _encode_result_content(result: ToolResult, path: str, w: Warnings) -> str | list[Any]:
    if isinstance(result.content, str):
        return result.content
    blocks: list[Any] = []
    first = len(w.items)
    for j, item in enumerate(result.content):
        item_path = f"{path}.content[{j}]"
        match item:
            case Text():
                blocks.append(
                    with_extra(
                        {"type": "text", "text": item.text},
                        own(item.provider_details, w, item_path),
                    )
                )
            case Image():
                image = _encode_image(item, item_path, w, "image_in_result_dropped")
                if image is not None:
                    blocks.append(image)
            case _:
                assert_never(item)
    result_items_shifted(result, path, w, first)
    return blocks


def encode_part(
    part: Part,
    path: str,
    w: Warnings,
    names: Renamer,
    siblings: list[Part] | None = None,
) -> dict[str, Any] | None:
    """One content block, or None (with a warning) when Anthropic cannot carry the part.
    ``siblings`` are the turn's parts, where a hosted result finds its call."""
    match part:
        case Text():
            block: dict[str, Any] = {"type": "text", "text": part.text}
            if part.refusal:
                # Anthropic has no refusal content: only stop_reason "refusal" on a response.
                w.add(
                    "refusal_flattened",
                    f"{path}.refusal",
                    "Anthropic has no refusal part; the refusal is sent as text",
                )
        case Thinking():
            if foreign_signature(PROTOCOL, part, path, w):
                part = part.model_copy(update={"signature": None, "redacted": False})
                if not part.text:
                    return None
            if part.redacted:
                block = {"type": "redacted_thinking", "data": part.text}
            elif part.signature is None:
                # Anthropic rejects a thinking block sent back without its signature.
                w.add(
                    "thinking_dropped",
                    path,
                    "a thinking block without an Anthropic signature cannot be sent back",
                )
                return None
            else:
                block = {"type": "thinking", "thinking": part.text, "signature": part.signature}
        case Image():
            return _encode_image(part, path, w, "image_dropped")
        case ToolCall():
            if part.raw_arguments is not None:
                w.add(
                    "raw_arguments_dropped",
                    path,
                    f"Anthropic input is an object; the raw text {part.raw_arguments!r} "
                    f"was replaced by {part.arguments}",
                )
            block = {
                "type": "tool_use",
                "id": names.call_id(part.id, path),
                "name": names.name(part.name, path),
                "input": dict(part.arguments),
            }
        case ToolResult():
            if part.structured is not None:
                w.add(
                    "structured_content_dropped",
                    path,
                    "Anthropic tool_result has no structured content; only the content is sent",
                )
            if part.name is not None:
                # No name on the wire: it comes back from the call, renamed like the call.
                names.name(part.name, path)
            block = {
                "type": "tool_result",
                "tool_use_id": names.call_id(part.call_id, path),
                "content": _encode_result_content(part, path, w),
            }
            if part.is_error:
                block["is_error"] = True
        case HostedCall():
            return anthropic_hosted.encode_call(part, path, w, names.call_id(part.id, path))
        case HostedResult():
            call = next(
                (p for p in siblings or () if isinstance(p, HostedCall) and p.id == part.call_id),
                None,
            )
            return anthropic_hosted.encode_result(
                part, path, w, names.call_id(part.call_id, path), call
            )
        case _:
            assert_never(part)
    details = part.provider_details
    return with_extra(block, own(details, w, path)) if details else block


def encode_blocks(msg: Message, path: str, w: Warnings, names: Renamer) -> list[Any]:
    blocks = [
        encode_part(p, f"{path}.parts[{j}]", w, names, msg.parts) for j, p in enumerate(msg.parts)
    ]
    if None not in blocks:
        return blocks
    note_shift(blocks, path, w)
    return [b for b in blocks if b is not None]


def note_shift(blocks: list[Any], path: str, w: Warnings) -> None:
    """Name the turn when a left-out part moves the parts after it to other indexes."""
    gone = [j for j, b in enumerate(blocks) if b is None]
    if gone and any(b is not None for b in blocks[gone[0] + 1 :]):
        w.add(
            "parts_shifted",
            path,
            f"parts after the left-out part {gone[0]} move up by one place each time one is "
            "left out",
        )


# -------------------------------------------------------------------------- decode blocks


def _decode_result_content(value: Any, path: str, w: Warnings) -> str | list[Text | Image]:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    items: list[Text | Image] = []
    for j, item in enumerate(expect(PROTOCOL, value, path, (str, list))):
        part = decode_block(item, f"{path}[{j}]", w, {})
        if isinstance(part, Text | Image):
            items.append(part)
        elif part is not None:
            w.add("block_dropped", f"{path}[{j}]", "only text and images fit in a tool result")
    return items


def _decode_image(block: dict[str, Any], path: str, w: Warnings) -> Image | None:
    source = require(PROTOCOL, block, "source", path, dict)
    kind = require(PROTOCOL, source, "type", f"{path}.source", str)
    details = stash(block, ("type", "source"))
    if kind == "base64":
        return Image(
            media_type=require(PROTOCOL, source, "media_type", f"{path}.source", str),
            data=require(PROTOCOL, source, "data", f"{path}.source", str),
            provider_details=details,
        )
    if kind == "url":
        return Image(
            url=require(PROTOCOL, source, "url", f"{path}.source", str), provider_details=details
        )
    w.add("block_dropped", f"{path}.source", f"{kind} image sources have no canonical form")
    return None


def decode_block(block: Any, path: str, w: Warnings, names: dict[str, str]) -> Part | None:
    """One content block as a canonical part; None (with a warning) for server-side blocks."""
    expect(PROTOCOL, block, path, dict)
    kind = require(PROTOCOL, block, "type", path, str)
    match kind:
        case "text":
            return Text(
                text=require(PROTOCOL, block, "text", path, str),
                provider_details=stash(block, ("type", "text")),
            )
        case "thinking":
            return Thinking(
                text=require(PROTOCOL, block, "thinking", path, str),
                signature=optional(block, "signature", path, str),
                source=PROTOCOL,
                provider_details=stash(block, ("type", "thinking", "signature")),
            )
        case "redacted_thinking":
            return Thinking(
                text=require(PROTOCOL, block, "data", path, str),
                redacted=True,
                source=PROTOCOL,
                provider_details=stash(block, ("type", "data")),
            )
        case "image":
            return _decode_image(block, path, w)
        case "tool_use":
            return ToolCall(
                id=require(PROTOCOL, block, "id", path, str),
                name=require(PROTOCOL, block, "name", path, str),
                arguments=require(PROTOCOL, block, "input", path, dict),
                provider_details=stash(block, ("type", "id", "name", "input")),
            )
        case "tool_result":
            call_id = require(PROTOCOL, block, "tool_use_id", path, str)
            return ToolResult(
                call_id=call_id,
                name=names.get(call_id),
                content=_decode_result_content(block.get("content"), f"{path}.content", w),
                is_error=optional(block, "is_error", path, bool) or False,
                provider_details=stash(block, ("type", "tool_use_id", "content", "is_error")),
            )
        case "server_tool_use" | "mcp_tool_use":
            return anthropic_hosted.decode_call(block, path)
        case _ if anthropic_hosted.is_result_type(kind):
            return anthropic_hosted.decode_result(block, path, names)
        case _:
            w.add("block_dropped", path, f"{kind} blocks have no canonical form; skipped")
            return None
