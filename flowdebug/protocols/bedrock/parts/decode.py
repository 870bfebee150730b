"""Bedrock content blocks -> canonical parts."""

from __future__ import annotations

import json
from typing import Any

from flowdebug.errors import CodecError
from flowdebug.model import (
    HostedCall,
    HostedResult,
    Image,
    Part,
    Text,
    Thinking,
    ToolCall,
    ToolResult,
)
from flowdebug.protocols.base import Warnings, expect, require
from flowdebug.protocols.bedrock.parts import (
    BLOCK_NAMES,
    IMAGE_FORMATS,
    JSON_MARK,
    PROTOCOL,
    RESULT_BLOCK_NAMES,
    mine,
    one_key,
    optional,
    stash,
)


def _image(image: Any, path: str) -> Image:
    expect(PROTOCOL, image, path, dict)
    fmt = require(PROTOCOL, image, "format", path, str)
    if fmt not in IMAGE_FORMATS:
        raise CodecError(
            PROTOCOL, f"{path}.format", f"format must be one of {', '.join(IMAGE_FORMATS)}"
        )
    source = require(PROTOCOL, image, "source", path, dict)
    kind, value = one_key(source, f"{path}.source", frozenset({"bytes", "s3Location"}), "source")
    details = stash(image, ("format", "source"))
    if kind == "bytes":
        data = expect(PROTOCOL, value, f"{path}.source.bytes", str)
        return Image(media_type=IMAGE_FORMATS[fmt], data=data, provider_details=details)
    if kind == "s3Location":
        where = f"{path}.source.s3Location"
        uri = require(PROTOCOL, expect(PROTOCOL, value, where, dict), "uri", where, str)
        rest = {k: v for k, v in value.items() if k != "uri"}
        if rest:
            details = {PROTOCOL: {**mine(details), "s3Location": rest}}
        return Image(media_type=IMAGE_FORMATS[fmt], url=uri, provider_details=details)
    raise CodecError(PROTOCOL, f"{path}.source", f"unknown image source {kind!r}")


def _decode_result_content(value: Any, path: str, w: Warnings) -> str | list[Text | Image]:
    items = expect(PROTOCOL, value, path, list)
    out: list[Text | Image] = []
    for j, item in enumerate(items):
        where = f"{path}[{j}]"
        kind, inner = one_key(item, where, RESULT_BLOCK_NAMES, "tool result content block")
        match kind:
            case "text":
                out.append(Text(text=expect(PROTOCOL, inner, f"{where}.text", str)))
            case "json":
                text = json.dumps(inner, ensure_ascii=False)
                out.append(Text(text=text, provider_details={PROTOCOL: {JSON_MARK: True}}))
            case "image":
                out.append(_image(inner, f"{where}.image"))
            case _:
                w.add(
                    "block_dropped",
                    where,
                    f"a {kind} block in a tool result has no canonical form; skipped",
                )
    if len(out) == 1 and isinstance(out[0], Text):
        # One text (or one JSON object or array, which re-encodes as json) reads as a string.
        only = out[0]
        mark = only.provider_details is not None
        if not mark or isinstance(json.loads(only.text), dict | list):
            return only.text
    return out


def decode_block(
    block: Any, path: str, w: Warnings, names: dict[str, str], hosted: set[str]
) -> Part | None:
    """One content block as a canonical part; None for blocks kept apart by the caller."""
    kind, value = one_key(block, path, BLOCK_NAMES, "content block")
    where = f"{path}.{kind}"
    match kind:
        case "text":
            return Text(text=expect(PROTOCOL, value, where, str))
        case "image":
            return _image(value, where)
        case "reasoningContent":
            inner, body = one_key(
                value, where, frozenset({"reasoningText", "redactedContent"}), "reasoning block"
            )
            if inner == "redactedContent":
                data = expect(PROTOCOL, body, f"{where}.redactedContent", str)
                return Thinking(text=data, redacted=True, source=PROTOCOL)
            text_path = f"{where}.reasoningText"
            expect(PROTOCOL, body, text_path, dict)
            signature = optional(body, "signature", text_path, str)
            return Thinking(
                text=require(PROTOCOL, body, "text", text_path, str),
                signature=signature,
                source=PROTOCOL if signature is not None else None,
                provider_details=stash(body, ("text", "signature")),
            )
        case "toolUse":
            expect(PROTOCOL, value, where, dict)
            call_id = require(PROTOCOL, value, "toolUseId", where, str)
            name = require(PROTOCOL, value, "name", where, str)
            arguments = require(PROTOCOL, value, "input", where, dict)
            if value.get("type") == "server_tool_use":
                hosted.add(call_id)
                return HostedCall(
                    id=call_id,
                    name=name,
                    arguments=arguments,
                    source=PROTOCOL,
                    provider_details={PROTOCOL: block},
                )
            return ToolCall(
                id=call_id,
                name=name,
                arguments=arguments,
                provider_details=stash(value, ("toolUseId", "name", "input")),
            )
        case "toolResult":
            expect(PROTOCOL, value, where, dict)
            call_id = require(PROTOCOL, value, "toolUseId", where, str)
            content = _decode_result_content(
                require(PROTOCOL, value, "content", where, list), f"{where}.content", w
            )
            status = optional(value, "status", where, str)
            if status not in (None, "success", "error"):
                raise CodecError(
                    PROTOCOL,
                    f"{where}.status",
                    f'status must be "success" or "error", got {status!r}',
                )
            if call_id in hosted:
                return HostedResult(
                    call_id=call_id,
                    name=names.get(call_id),
                    content=content,
                    is_error=status == "error",
                    source=PROTOCOL,
                    provider_details={PROTOCOL: block},
                )
            details = stash(value, ("toolUseId", "content", "status"))
            if status == "success":  # said out loud on the wire: kept so it comes back
                details = {PROTOCOL: {**mine(details), "status": "success"}}
            return ToolResult(
                call_id=call_id,
                name=names.get(call_id),
                content=content,
                is_error=status == "error",
                provider_details=details,
            )
        case _:
            return None  # kept in the message's provider_details with its place
