"""Canonical parts <-> Bedrock content blocks (``{"text"}``, ``{"toolUse"}``, ``{"toolResult"}``,
``{"reasoningContent"}``, ``{"image"}``): one key per block, named by its type, and the small
helpers every Bedrock module shares (provider_details in and out, optional fields).

Unknown keys never vanish: vendor-only fields ride in ``provider_details["bedrock"]`` and
blocks with no canonical form (``cachePoint``, ``document``, ``guardContent`` ...) keep their
place in the message's ``provider_details``. Tool names and call ids are kept legal by
``base.Renamer`` (Bedrock's rules in its facts).

Blobs (image bytes, redacted reasoning) travel as base64 strings, as in the JSON body the
service receives; boto3 callers pass bytes instead.
"""

from __future__ import annotations

import json
from typing import Any, assert_never

from flowdebug import jsontext
from flowdebug.errors import CodecError
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
from flowdebug.protocols.base import Renamer, Warnings, expect, foreign_signature, require
from flowdebug.protocols.warning_codes import WarningCode
from flowdebug.protocols.wire_helpers import result_items_shifted, with_extra

# A Text part in a tool result that came from a {"json": ...} block goes back as one.
JSON_MARK = "json"
PROTOCOL = "bedrock"
# botocore ContentBlock members (a union: one key per block, no "type").
BLOCK_NAMES = frozenset(
    {"text", "image", "document", "video", "audio", "toolUse", "toolResult", "guardContent",
     "cachePoint", "reasoningContent", "citationsContent", "searchResult", "toolAddition",
     "toolRemoval"}
)  # fmt: skip
# Blocks no other vendor spells this way (Gemini parts also have a bare "text").
OWN_BLOCKS = BLOCK_NAMES - {"text"}
# botocore ToolResultContentBlock members.
RESULT_BLOCK_NAMES = frozenset({"json", "text", "image", "document", "video", "searchResult"})
# botocore ImageFormat.
IMAGE_FORMATS = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}
MEDIA_FORMATS = {media: fmt for fmt, media in IMAGE_FORMATS.items()}


def own(details: Details, w: Warnings, path: str) -> dict[str, Any]:
    """Bedrock's own provider_details (:func:`flowdebug.protocols.wire_helpers.own`)."""
    return wire_helpers.own(PROTOCOL, details, w, path)


def stash(obj: dict[str, Any], handled: tuple[str, ...] | frozenset[str]) -> Details:
    """The vendor-only fields of ``obj`` (those outside ``handled``), nulls included."""
    return wire_helpers.stash(PROTOCOL, obj, handled, keep_null=True)


def optional(obj: dict[str, Any], key: str, path: str, typ: type | tuple[type, ...]) -> Any:
    """``obj[key]`` checked against ``typ``, or None when the key is absent or null."""
    return wire_helpers.optional(PROTOCOL, obj, key, path, typ)


def encode_image(image: Image, path: str, w: Warnings, code: WarningCode) -> dict[str, Any] | None:
    """An ImageBlock: base64 bytes of png/jpeg/gif/webp, or an ``s3://`` location."""
    extra = own(image.provider_details, w, path)
    fmt = MEDIA_FORMATS.get(image.media_type)
    if image.data is not None and fmt is not None:
        source: dict[str, Any] = {"bytes": image.data}
    elif image.url is not None and image.url.startswith("s3://") and fmt is not None:
        source = with_extra({"uri": image.url}, extra.pop("s3Location", None) or {})
        source = {"s3Location": source}
    else:
        where = f" at {image.url}" if image.url else ""
        w.add(
            code,
            path,
            f"Bedrock takes an image as base64 bytes or an s3:// location, in "
            f"{', '.join(IMAGE_FORMATS)}; this {image.media_type} image{where} was dropped",
        )
        return None
    return {"image": with_extra({"format": fmt, "source": source}, extra)}


def text_as_json(text: str) -> Any:
    """The JSON object or array ``text`` spells exactly (as ``json.dumps`` writes it), else
    None: such a result goes as a ``{"json": ...}`` block and decodes to the same text."""
    try:
        value = jsontext.embedded(text)
    except ValueError:
        return None
    if isinstance(value, dict | list) and json.dumps(value, ensure_ascii=False) == text:
        return value
    return None


def _encode_result_content(result: ToolResult, path: str, w: Warnings) -> list[dict[str, Any]]:
    if isinstance(result.content, str):
        value = text_as_json(result.content)
        return [{"json": value}] if value is not None else [{"text": result.content}]
    if len(result.content) == 1 and isinstance(result.content[0], Text):
        # Bedrock content is always a list; one text block reads back as a plain string.
        w.add(
            "result_content_flattened",
            f"{path}.content",
            "a result holding one text part reads back from Bedrock as plain text",
        )
    blocks: list[dict[str, Any]] = []
    first = len(w.items)
    for j, item in enumerate(result.content):
        item_path = f"{path}.content[{j}]"
        match item:
            case Text():
                extra = own(item.provider_details, w, item_path)
                if extra.get(JSON_MARK) is True:
                    try:
                        blocks.append({"json": jsontext.embedded(item.text)})
                        continue
                    except ValueError:
                        pass  # edited into plain text: it goes as text
                blocks.append({"text": item.text})
            case Image():
                image = encode_image(item, item_path, w, "image_in_result_dropped")
                if image is not None:
                    blocks.append(image)
            case _:
                assert_never(item)
    result_items_shifted(result, path, w, first)
    return blocks


def _thinking(part: Thinking, path: str, w: Warnings) -> dict[str, Any] | None:
    if foreign_signature(PROTOCOL, part, path, w):
        part = part.model_copy(update={"signature": None, "redacted": False})
        if not part.text:
            return None
    elif part.source is not None and part.signature is None and not part.redacted:
        # Unsigned reasoning reads back from Bedrock with no issuer.
        w.add(
            "thinking_source_dropped",
            f"{path}.source",
            f"a Bedrock reasoning block cannot say that {part.source} produced it; "
            "it goes as reasoning text without a signature",
        )
    if part.redacted:
        return {"reasoningContent": {"redactedContent": part.text}}
    # ReasoningTextBlock: text required, signature optional (only Claude signs its reasoning).
    text: dict[str, Any] = {"text": part.text}
    if part.signature is not None:
        text["signature"] = part.signature
    return {"reasoningContent": {"reasoningText": text}}


def _hosted(part: HostedCall | HostedResult, path: str, w: Warnings) -> dict[str, Any] | None:
    """A server tool block Bedrock issued goes back verbatim; no other vendor's fits."""
    wire = (part.provider_details or {}).get(PROTOCOL)
    if part.source == PROTOCOL and isinstance(wire, dict) and len(wire) == 1:
        return dict(wire)
    w.add(
        "hosted_call_dropped" if isinstance(part, HostedCall) else "hosted_result_dropped",
        path,
        f"Bedrock Converse cannot replay the hosted tool {part.name!r} run by "
        f"{part.source or 'another vendor'}; this {part.kind} was dropped",
    )
    return None


def encode_part(part: Part, path: str, w: Warnings, names: Renamer) -> dict[str, Any] | None:
    """One content block, or None (with a warning) when Bedrock cannot carry the part."""
    match part:
        case Text():
            own(part.provider_details, w, path)
            if part.refusal:
                w.add(
                    "refusal_flattened",
                    f"{path}.refusal",
                    "Bedrock has no refusal block; the refusal is sent as text",
                )
            return {"text": part.text}
        case Thinking():
            own(part.provider_details, w, path)
            return _thinking(part, path, w)
        case Image():
            return encode_image(part, path, w, "image_dropped")
        case ToolCall():
            extra = own(part.provider_details, w, path)
            if part.raw_arguments is not None:
                w.add(
                    "raw_arguments_dropped",
                    path,
                    f"Bedrock toolUse input is an object; the raw text {part.raw_arguments!r} "
                    f"was replaced by {part.arguments}",
                )
            use = {
                "toolUseId": names.call_id(part.id, path),
                "name": names.name(part.name, path),
                "input": dict(part.arguments),
            }
            return {"toolUse": with_extra(use, extra)}
        case ToolResult():
            extra = own(part.provider_details, w, path)
            if part.structured is not None:
                w.add(
                    "structured_content_dropped",
                    path,
                    "a Bedrock toolResult has no structured content apart from its content; "
                    "only the content is sent",
                )
            if part.name is not None:
                names.name(part.name, path)  # no name on the wire: renamed like its call
            result: dict[str, Any] = {
                "toolUseId": names.call_id(part.call_id, path),
                "content": _encode_result_content(part, path, w),
            }
            # Bedrock: status "error" marks a failed tool (honoured by Claude and Nova).
            status = extra.pop("status", None)
            if part.is_error:
                result["status"] = "error"
            elif status == "success":
                result["status"] = "success"
            return {"toolResult": with_extra(result, extra)}
        case HostedCall() | HostedResult():
            return _hosted(part, path, w)
        case _:
            assert_never(part)


def encode_blocks(msg: Message, path: str, w: Warnings, names: Renamer) -> list[dict[str, Any]]:
    """A message's blocks; blocks with no canonical form (cachePoint, document, guardContent
    ...) that were decoded from Bedrock go back to their places."""
    extra = own(msg.provider_details, w, path)
    blocks = [encode_part(p, f"{path}.parts[{j}]", w, names) for j, p in enumerate(msg.parts)]
    gone = [j for j, b in enumerate(blocks) if b is None]
    if gone and any(b is not None for b in blocks[gone[0] + 1 :]):
        w.add(
            "parts_shifted",
            path,
            f"parts after the left-out part {gone[0]} move up by one place each time one is "
            "left out",
        )
    out = [b for b in blocks if b is not None]
    kept = extra.get("blocks")
    for entry in kept if isinstance(kept, list) else []:
        if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], int):
            out.insert(min(entry[0], len(out)), entry[1])
    return out


def _mine(details: Details) -> dict[str, Any]:
    """Bedrock's own entry of ``details`` (empty when there is none)."""
    mine = (details or {}).get(PROTOCOL)
    return mine if isinstance(mine, dict) else {}


def one_key(block: Any, path: str, allowed: frozenset[str], what: str) -> tuple[str, Any]:
    """A union member: exactly one key, named by its type (``{"toolUse": {...}}``)."""
    expect(PROTOCOL, block, path, dict)
    if "type" in block and "type" not in allowed:
        raise CodecError(
            PROTOCOL,
            f"{path}.type",
            f"Bedrock {what}s have no type field; a block is one key such as "
            f"{{'text': ...}} or {{'toolUse': ...}} (this looks like another vendor's block)",
        )
    keys = [k for k in block if block[k] is not None]
    if len(keys) != 1:
        raise CodecError(
            PROTOCOL, path, f"a {what} has exactly one member, got {sorted(block) or 'none'}"
        )
    return keys[0], block[keys[0]]


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
            details = {PROTOCOL: {**_mine(details), "s3Location": rest}}
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
                details = {PROTOCOL: {**_mine(details), "status": "success"}}
            return ToolResult(
                call_id=call_id,
                name=names.get(call_id),
                content=content,
                is_error=status == "error",
                provider_details=details,
            )
        case _:
            return None  # kept in the message's provider_details with its place
