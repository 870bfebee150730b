"""Anthropic request bodies (``POST /v1/messages``) <-> canonical conversations.

Anthropic keeps one top-level ``system`` prompt, puts every result of a parallel batch in one
user turn (``tool_result`` blocks first) and names no tool on a result (it comes from the paired
``tool_use``). Fields with no canonical home ride in ``provider_details["anthropic"]``: on
decode the unknown top-level keys, a ``system`` given as blocks, and a tool list holding server
tools; on encode they come back out.
"""

from __future__ import annotations

from typing import Any, assert_never

from flowdebug.errors import CodecError
from flowdebug.model import Conversation, Message, Part, Text, ToolResult
from flowdebug.protocols.anthropic.parts import (
    PROTOCOL,
    Renamer,
    decode_block,
    encode_blocks,
    optional,
    own,
    with_extra,
)
from flowdebug.protocols.anthropic.tools import (
    decode_choice,
    decode_tool,
    encode_choice,
    encode_tool,
    is_server_tool,
    merge_tools,
)
from flowdebug.protocols.base import Converted, Warnings, expect, require
from flowdebug.protocols.models import own_model
from flowdebug.protocols.wire_helpers import empty_user_joined

REQUEST_FIELDS = (
    "model", "max_tokens", "system", "temperature", "tools", "tool_choice", "messages",
)  # fmt: skip
# Blocks that carry a call id and a tool name (client tools, server tools, MCP connector).
CALL_TYPES = ("tool_use", "server_tool_use", "mcp_tool_use")


def encode_request(conv: Conversation) -> Converted[Any]:
    """A Messages API request body for ``conv``."""
    w = Warnings(PROTOCOL)
    names = Renamer(PROTOCOL, w)
    extra = own(conv.provider_details, w, "provider_details")
    system = [conv.system] if conv.system else []
    if conv.system == "":
        w.add("system_dropped", "system", "an empty system prompt is not sent")
    tools = [encode_tool(t, f"tools[{i}]", w, names) for i, t in enumerate(conv.tools)]
    choice = encode_choice(conv.tool_choice, w, names) if conv.tool_choice else None
    messages = _encode_messages(conv.messages, w, names, system)
    body: dict[str, Any] = {
        "model": model(conv.model, w),
        "max_tokens": max_tokens(conv, w),
    }
    stashed_system = extra.pop("system", None)
    if system:
        text = "\n\n".join(system)
        same = isinstance(stashed_system, list) and text == "\n\n".join(
            str(b.get("text")) for b in stashed_system if isinstance(b, dict)
        )
        body["system"] = stashed_system if same else text
    if conv.temperature is not None:
        # The Messages API of anthropic 2.12 has no temperature parameter any more.
        w.add(
            "setting_dropped",
            "temperature",
            "the Messages API (anthropic 2.12) takes no temperature; it was not sent",
        )
    tools = merge_tools(tools, extra.pop("tools", None))
    if tools:
        body["tools"] = tools
    if choice is not None:
        body["tool_choice"] = choice
    body["messages"] = messages
    return w.wrap(with_extra(body, extra))


def decode_request(payload: Any) -> Converted[Conversation]:
    """The canonical conversation of a Messages API request body."""
    w = Warnings(PROTOCOL)
    body = expect(PROTOCOL, payload, "$", dict)
    messages = require(PROTOCOL, body, "messages", "$", list)
    extra = {k: v for k, v in body.items() if k not in REQUEST_FIELDS}
    system = _decode_system(body.get("system"), extra)
    raw_tools = optional(body, "tools", "$", list) or []
    tools = [decode_tool(t, f"$.tools[{i}]", w) for i, t in enumerate(raw_tools)]
    if any(is_server_tool(t) for t in raw_tools):
        # Server tools (web search, code execution ...) have no canonical Tool: the list
        # rides whole so each one goes back to its place.
        extra["tools"] = raw_tools
    choice = body.get("tool_choice")
    return w.wrap(
        Conversation(
            system=system,
            tools=[t for t in tools if t is not None],
            tool_choice=None if choice is None else decode_choice(choice, "$.tool_choice"),
            messages=_decode_messages(messages, w),
            model=optional(body, "model", "$", str),
            max_tokens=optional(body, "max_tokens", "$", int),
            temperature=optional(body, "temperature", "$", (int, float)),
            provider_details={PROTOCOL: extra} if extra else None,
        )
    )


# -------------------------------------------------------------------------- encode request


def _encode_messages(
    messages: list[Message], w: Warnings, names: Renamer, system: list[str]
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    open_results: dict[str, Any] | None = None  # the user turn holding the last result batch
    for i, msg in enumerate(messages):
        path = f"messages[{i}]"
        own(msg.provider_details, w, path)
        blocks = encode_blocks(msg, path, w, names)
        match msg.role:
            case "system":
                # Anthropic has one top-level system prompt; a system message joins it.
                w.add(
                    "system_moved",
                    "system",
                    f"the system message {path} inside the history was appended to the "
                    "top-level system prompt; its position is lost"
                    if out or system
                    else f"the leading system message {path} became the top-level system prompt",
                )
                if i == len(messages) - 1:
                    w.add("system_moved", path, f"{path} leaves the message list")
                elif not any(m.role == "system" for m in messages[:i]):
                    # the messages after it move up one place when it leaves the list
                    w.add(
                        "messages_renumbered",
                        "messages",
                        "system messages leave the message list, so the ones after them "
                        "are numbered anew",
                    )
                dropped = [b["type"] for b in blocks if b["type"] != "text"]
                if dropped:
                    w.add(
                        "part_dropped",
                        path,
                        f"{', '.join(dropped)} blocks cannot go in the system prompt",
                    )
                system.append("".join(b["text"] for b in blocks if b["type"] == "text"))
                continue
            case "tool":
                # Anthropic: every result of a parallel batch in one user message, tool_result
                # blocks first (text only after them).
                results = [b for b in blocks if b["type"] == "tool_result"]
                others = [b for b in blocks if b["type"] != "tool_result"]
                if i and messages[i - 1].role == "user" and out and out[-1]["role"] == "user":
                    # Text before the results: the API merges consecutive user turns, so
                    # send the one turn it would see, in this order (the linter flags it).
                    before = out[-1]["content"]
                    if not before:
                        empty_user_joined(f"messages[{i - 1}]", w)
                    if isinstance(before, str):
                        before = [{"type": "text", "text": before}]
                    out[-1]["content"] = before + results + others
                    open_results = out[-1]
                    continue
                open_results = {"role": "user", "content": results + others}
                out.append(open_results)
                continue
            case "user" if open_results is not None:
                if not blocks:
                    empty_user_joined(path, w)
                open_results["content"].extend(blocks)
            case "user":
                only = blocks[0] if len(blocks) == 1 else None
                if only is not None and only.keys() == {"type", "text"} and only["type"] == "text":
                    out.append({"role": "user", "content": only["text"]})  # a plain text turn
                else:
                    out.append({"role": "user", "content": blocks})
            case "assistant":
                out.append({"role": "assistant", "content": blocks})
            case _:
                assert_never(msg.role)
        open_results = None
    return out


# -------------------------------------------------------------------------- decode request


def _split_user_turn(parts: list[Part]) -> list[Message]:
    """Runs of tool_result blocks become tool messages, everything else user messages."""
    runs: list[tuple[str, list[Part]]] = []
    for part in parts:
        role = "tool" if isinstance(part, ToolResult) else "user"
        if runs and runs[-1][0] == role:
            runs[-1][1].append(part)
        else:
            runs.append((role, [part]))
    return [Message(role=role, parts=run) for role, run in runs] or [Message(role="user")]


def _decode_messages(messages: list[Any], w: Warnings) -> list[Message]:
    # Anthropic results carry no tool name: take it from the paired tool_use.
    names = {
        b["id"]: b["name"]
        for m in messages
        if isinstance(m, dict) and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict)
        and b.get("type") in CALL_TYPES
        and isinstance(b.get("id"), str)
        and isinstance(b.get("name"), str)
    }
    out: list[Message] = []
    for i, raw in enumerate(messages):
        path = f"$.messages[{i}]"
        msg = expect(PROTOCOL, raw, path, dict)
        role = require(PROTOCOL, msg, "role", path, str)
        if role not in ("user", "assistant", "system"):
            raise CodecError(
                PROTOCOL, f"{path}.role", f"role must be user or assistant, got {role!r}"
            )
        content = require(PROTOCOL, msg, "content", path, (str, list))
        if isinstance(content, str):
            parts: list[Part] = [Text(text=content)]
        else:
            decoded = [
                decode_block(b, f"{path}.content[{j}]", w, names) for j, b in enumerate(content)
            ]
            parts = [p for p in decoded if p is not None]
        if role == "user":
            out += _split_user_turn(parts)
        else:
            out.append(Message(role=role, parts=parts))
    return out


def _decode_system(value: Any, extra: dict[str, Any]) -> str | None:
    if value is None or isinstance(value, str):
        return value
    blocks = expect(PROTOCOL, value, "$.system", list)
    texts = []
    for j, block in enumerate(blocks):
        expect(PROTOCOL, block, f"$.system[{j}]", dict)
        texts.append(require(PROTOCOL, block, "text", f"$.system[{j}]", str))
    # Text blocks (with cache_control ...) come back verbatim while the text is unchanged.
    extra["system"] = blocks
    return "\n\n".join(texts)


DEFAULT_MODEL = "claude-sonnet-4-6"

DEFAULT_MAX_TOKENS = 1024  # Anthropic requires max_tokens on every request


def model(value: str | None, w: Warnings) -> str:
    value = own_model(value, w)  # another vendor's model id is replaced, and said so
    if value is not None:
        return value
    w.add(
        "model_filled_in",
        "model",
        f"the source names no model and Anthropic requires one; {DEFAULT_MODEL} was filled in",
    )
    return DEFAULT_MODEL


def max_tokens(conv: Conversation, w: Warnings) -> int:
    if conv.max_tokens is not None:
        return conv.max_tokens
    w.add(
        "max_tokens_filled_in",
        "max_tokens",
        f"Anthropic requires max_tokens; the source has none, so {DEFAULT_MAX_TOKENS} was sent",
    )
    return DEFAULT_MAX_TOKENS
