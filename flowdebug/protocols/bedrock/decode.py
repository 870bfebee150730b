"""Converse request and response bodies -> the canonical conversation and model turn.

Unknown keys never vanish: vendor-only fields ride in ``provider_details["bedrock"]`` and
blocks with no canonical form (``cachePoint``, ``document``, ``guardContent`` ...) keep their
place in the message's ``provider_details``, so a Bedrock -> canonical -> Bedrock trip is exact.
"""

from __future__ import annotations

import json
from typing import Any, Literal

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
    Tool,
    ToolCall,
    ToolChoice,
    ToolResult,
)
from flowdebug.protocols.base import Warnings, expect, require
from flowdebug.protocols.bedrock.facts import (
    BLOCK_NAMES,
    IMAGE_FORMATS,
    PROTOCOL,
    RESULT_BLOCK_NAMES,
)
from flowdebug.protocols.bedrock.parts import JSON_MARK
from flowdebug.protocols.bedrock.wire import optional, stash

Mode = Literal["auto", "required", "tool"]
CHOICES: dict[str, Mode] = {"auto": "auto", "any": "required", "tool": "tool"}


def _mine(details: Details) -> dict[str, Any]:
    """Bedrock's own entry of ``details`` (empty when there is none)."""
    mine = (details or {}).get(PROTOCOL)
    return mine if isinstance(mine, dict) else {}


def _one_key(block: Any, path: str, allowed: frozenset[str], what: str) -> tuple[str, Any]:
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


# --------------------------------------------------------------------------------- blocks


def _image(image: Any, path: str) -> Image:
    expect(PROTOCOL, image, path, dict)
    fmt = require(PROTOCOL, image, "format", path, str)
    if fmt not in IMAGE_FORMATS:
        raise CodecError(
            PROTOCOL, f"{path}.format", f"format must be one of {', '.join(IMAGE_FORMATS)}"
        )
    source = require(PROTOCOL, image, "source", path, dict)
    kind, value = _one_key(source, f"{path}.source", frozenset({"bytes", "s3Location"}), "source")
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


def _result_content(value: Any, path: str, w: Warnings) -> str | list[Text | Image]:
    items = expect(PROTOCOL, value, path, list)
    out: list[Text | Image] = []
    for j, item in enumerate(items):
        where = f"{path}[{j}]"
        kind, inner = _one_key(item, where, RESULT_BLOCK_NAMES, "tool result content block")
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
    kind, value = _one_key(block, path, BLOCK_NAMES, "content block")
    where = f"{path}.{kind}"
    match kind:
        case "text":
            return Text(text=expect(PROTOCOL, value, where, str))
        case "image":
            return _image(value, where)
        case "reasoningContent":
            inner, body = _one_key(
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
            content = _result_content(
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


def message_parts(
    content: list[Any], path: str, w: Warnings, names: dict[str, str]
) -> tuple[list[Part], list[list[Any]]]:
    """The parts of one message and the blocks with no canonical form, with their places."""
    parts: list[Part] = []
    kept: list[list[Any]] = []
    hosted: set[str] = set()
    for j, block in enumerate(content):
        part = decode_block(block, f"{path}.content[{j}]", w, names, hosted)
        if part is None:
            kept.append([j, block])
        else:
            parts.append(part)
    return parts, kept


def _split_user_turn(parts: list[Part], kept: list[list[Any]]) -> list[Message]:
    """Runs of tool results become tool messages, everything else user messages; a kept
    block stays in the run it was written in, at its place there."""
    runs: list[tuple[Literal["user", "tool"], list[Part], list[list[Any]]]] = []
    index = 0  # position in the wire content
    pending = sorted(kept, key=lambda e: e[0])
    queue = list(parts)
    while queue or pending:
        if pending and pending[0][0] == index:
            if not runs:
                runs.append(("user", [], []))
            run = runs[-1]
            run[2].append([len(run[1]) + len(run[2]), pending.pop(0)[1]])
        else:
            part = queue.pop(0)
            role: Literal["user", "tool"] = "tool" if isinstance(part, ToolResult) else "user"
            if not runs or runs[-1][0] != role:
                runs.append((role, [], []))
            runs[-1][1].append(part)
        index += 1
    return [
        Message(role=r, parts=run, provider_details={PROTOCOL: {"blocks": k}} if k else None)
        for r, run, k in runs
    ] or [Message(role="user")]


def call_names(messages: list[Any]) -> dict[str, str]:
    """toolUseId -> tool name: Bedrock results carry no name, their calls do."""
    out: dict[str, str] = {}
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else None
        for b in content if isinstance(content, list) else []:
            use = b.get("toolUse") if isinstance(b, dict) else None
            if (
                isinstance(use, dict)
                and isinstance(use.get("toolUseId"), str)
                and isinstance(use.get("name"), str)
            ):
                out[use["toolUseId"]] = use["name"]
    return out


def decode_messages(messages: list[Any], w: Warnings) -> list[Message]:
    names = call_names(messages)
    out: list[Message] = []
    for i, raw in enumerate(messages):
        path = f"$.messages[{i}]"
        msg = expect(PROTOCOL, raw, path, dict)
        role = require(PROTOCOL, msg, "role", path, str)
        if role not in ("user", "assistant"):
            raise CodecError(
                PROTOCOL, f"{path}.role", f"role must be user or assistant, got {role!r}"
            )
        content = require(PROTOCOL, msg, "content", path, list)
        parts, kept = message_parts(content, path, w, names)
        if role == "user":
            out += _split_user_turn(parts, kept)
        else:
            details = {PROTOCOL: {"blocks": kept}} if kept else None
            out.append(Message(role="assistant", parts=parts, provider_details=details))
    return out


# -------------------------------------------------------------------------------- request


def decode_tool(raw: Any, path: str) -> Tool | None:
    """A toolSpec as a Tool; None for entries with no canonical form (cachePoint ...)."""
    expect(PROTOCOL, raw, path, dict)
    if "toolSpec" not in raw:
        if "function" in raw or "name" in raw:
            raise CodecError(
                PROTOCOL,
                f"{path}.toolSpec",
                "required field is missing (Bedrock tools are {'toolSpec': {name, "
                "description, inputSchema: {json}}})",
            )
        return None
    where = f"{path}.toolSpec"
    spec = expect(PROTOCOL, raw["toolSpec"], where, dict)
    schema = require(PROTOCOL, spec, "inputSchema", where, dict)
    return Tool(
        name=require(PROTOCOL, spec, "name", where, str),
        description=optional(spec, "description", where, str),
        parameters=require(PROTOCOL, schema, "json", f"{where}.inputSchema", dict),
        strict=optional(spec, "strict", where, bool),
        provider_details=stash(spec, ("name", "description", "inputSchema", "strict")),
    )


def decode_choice(raw: Any, path: str) -> ToolChoice:
    kind, value = _one_key(raw, path, frozenset(CHOICES), "toolChoice")
    if kind not in CHOICES:
        raise CodecError(PROTOCOL, f"{path}.{kind}", "toolChoice must be auto, any or tool")
    name = None
    if kind == "tool":
        name = require(
            PROTOCOL, expect(PROTOCOL, value, f"{path}.tool", dict), "name", f"{path}.tool", str
        )
    return ToolChoice(mode=CHOICES[kind], name=name)


def decode_system(value: Any, extra: dict[str, Any]) -> str | None:
    if value is None:
        return None
    blocks = expect(PROTOCOL, value, "$.system", list)
    texts = []
    for j, block in enumerate(blocks):
        expect(PROTOCOL, block, f"$.system[{j}]", dict)
        if "text" in block:
            texts.append(expect(PROTOCOL, block["text"], f"$.system[{j}].text", str))
    if len(blocks) != 1 or set(blocks[0]) != {"text"}:
        extra["system"] = blocks  # cache points, guard content, several texts: kept as sent
    return "\n\n".join(texts) if texts else None
