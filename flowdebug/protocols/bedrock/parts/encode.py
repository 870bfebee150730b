"""Canonical parts -> Bedrock content blocks."""

from __future__ import annotations

from typing import Any, assert_never

from flowdebug import jsontext
from flowdebug.model import (
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
from flowdebug.protocols.base import Renamer, Warnings, foreign_signature
from flowdebug.protocols.bedrock.parts import (
    IMAGE_FORMATS,
    JSON_MARK,
    MEDIA_FORMATS,
    PROTOCOL,
    own,
)
from flowdebug.protocols.warning_codes import WarningCode
from flowdebug.protocols.wire_helpers import exact_json, result_items_shifted, with_extra


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


def _encode_result_content(result: ToolResult, path: str, w: Warnings) -> list[dict[str, Any]]:
    if isinstance(result.content, str):
        value = exact_json(result.content)
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
