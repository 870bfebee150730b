"""Anthropic Messages API codec: ``tool_use`` / ``tool_result`` blocks paired by id.

Requests are ``POST /v1/messages`` bodies, responses are ``Message`` objects, streams are the
list of SSE event objects (see ``anthropic_stream``). Vendor-only fields (``cache_control``,
``citations``, ``thinking`` config, ``pause_turn`` ...) ride in ``provider_details["anthropic"]``
and come back out on encode.
"""

from __future__ import annotations

from typing import Any, Literal, assert_never

from flowdebug.errors import CodecError
from flowdebug.model import (
    Conversation,
    Image,
    Message,
    ModelResponse,
    Part,
    StopReason,
    Text,
    Tool,
    ToolCall,
    ToolChoice,
    ToolResult,
)
from flowdebug.protocols.anthropic import envelope
from flowdebug.protocols.anthropic import fragment as anthropic_fragment
from flowdebug.protocols.anthropic import stream as anthropic_stream
from flowdebug.protocols.anthropic.blocks import (
    PROTOCOL,
    Renamer,
    decode_block,
    encode_blocks,
    encode_part,
    note_shift,
    optional,
    own,
    stash,
    with_extra,
)
from flowdebug.protocols.anthropic.facts import FACTS
from flowdebug.protocols.base import Converted, Kind, Warnings, expect, require

DEFAULT_MODEL = envelope.DEFAULT_MODEL
DEFAULT_MAX_TOKENS = envelope.DEFAULT_MAX_TOKENS
REQUEST_FIELDS = (
    "model", "max_tokens", "system", "temperature", "tools", "tool_choice", "messages",
)  # fmt: skip
MESSAGE_FIELDS = ("id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage")
# Keys and block types an Anthropic request never has (OpenAI Chat, Bedrock Converse).
FOREIGN_KEYS = (
    "max_completion_tokens", "n", "response_format", "parallel_tool_calls", "functions",
    "stream_options", "toolConfig", "inferenceConfig",
)  # fmt: skip
FOREIGN_BLOCKS = (None, "image_url", "input_audio", "file")  # Bedrock blocks have no type
# Blocks that carry a call id and a tool name (client tools, server tools, MCP connector).
CALL_TYPES = ("tool_use", "server_tool_use", "mcp_tool_use")
Mode = Literal["auto", "none", "required", "tool"]
STOP_REASONS: dict[str, StopReason] = {
    r: r for r in ("end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal")
}  # pause_turn, model_context_window_exceeded and newer values decode as "other"


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
                if i < len(messages) - 1 and not any(m.role == "system" for m in messages[:i]):
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
                    if isinstance(before, str):
                        before = [{"type": "text", "text": before}]
                    out[-1]["content"] = before + results + others
                    open_results = out[-1]
                    continue
                open_results = {"role": "user", "content": results + others}
                out.append(open_results)
                continue
            case "user" if open_results is not None:
                open_results["content"].extend(blocks)
            case "user":
                only = blocks[0] if len(blocks) == 1 else None
                plain = (
                    only is not None and only.keys() == {"type", "text"} and only["type"] == "text"
                )
                out.append({"role": "user", "content": only["text"] if plain else blocks})
            case "assistant":
                out.append({"role": "assistant", "content": blocks})
            case _:
                assert_never(msg.role)
        open_results = None
    return out


def _encode_tool(tool: Tool, path: str, w: Warnings, names: Renamer) -> dict[str, Any]:
    schema = dict(tool.parameters)
    if "type" not in schema:
        schema = {"type": "object", **schema}  # Anthropic: input_schema root is an object
    out: dict[str, Any] = {"name": names.name(tool.name, path)}
    if tool.description is not None:
        out["description"] = tool.description
    out["input_schema"] = schema
    if tool.strict is not None:
        out["strict"] = tool.strict
    dropped = [f for f in ("title", "annotations", "output_schema") if getattr(tool, f)]
    if dropped:
        w.add(
            "tool_metadata_dropped", path, f"Anthropic tools have no {', '.join(dropped)}; not sent"
        )
    return with_extra(out, own(tool.provider_details, w, path))


def _encode_choice(choice: ToolChoice, w: Warnings, names: Renamer) -> dict[str, Any]:
    match choice.mode:
        case "auto":
            out: dict[str, Any] = {"type": "auto"}
        case "required":
            out = {"type": "any"}
        case "none":
            return {"type": "none"}  # no calls at all: the parallel setting is moot
        case "tool" if choice.name:
            out = {"type": "tool", "name": names.name(choice.name, "tool_choice")}
        case "tool":
            w.add(
                "tool_choice_dropped",
                "tool_choice",
                "mode 'tool' without a tool name; sent as 'any'",
            )
            out = {"type": "any"}
        case _:
            assert_never(choice.mode)
    if choice.parallel is not None:
        out["disable_parallel_tool_use"] = not choice.parallel
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


def _decode_tool(raw: Any, path: str, w: Warnings) -> Tool | None:
    tool = expect(PROTOCOL, raw, path, dict)
    name = require(PROTOCOL, tool, "name", path, str)
    if envelope.is_server_tool(tool):
        return None  # kept in the conversation's provider_details by decode_request
    if "input_schema" not in tool and "parameters" in tool:
        raise CodecError(
            PROTOCOL,
            f"{path}.input_schema",
            "required field is missing (Anthropic tools use input_schema, not OpenAI's parameters)",
        )
    return Tool(
        name=name,
        description=optional(tool, "description", path, str),
        parameters=require(PROTOCOL, tool, "input_schema", path, dict),
        strict=optional(tool, "strict", path, bool),
        provider_details=stash(tool, ("name", "description", "input_schema", "strict")),
    )


def _decode_choice(raw: Any, path: str) -> ToolChoice:
    choice = expect(PROTOCOL, raw, path, dict)
    kind = require(PROTOCOL, choice, "type", path, str)
    modes: dict[str, Mode] = {"auto": "auto", "any": "required", "tool": "tool", "none": "none"}
    if kind not in modes:
        raise CodecError(
            PROTOCOL,
            f"{path}.type",
            f"tool_choice type must be auto, any, tool or none, got {kind!r}",
        )
    disable = optional(choice, "disable_parallel_tool_use", path, bool)
    return ToolChoice(
        mode=modes[kind],
        name=require(PROTOCOL, choice, "name", path, str) if kind == "tool" else None,
        parallel=None if disable is None else not disable,
    )


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


# ------------------------------------------------------------------------ decode response


def _decode_message(
    msg: Any,
    path: str,
    w: Warnings,
    block_paths: list[str] | None = None,
    raw_inputs: dict[int, str] | None = None,
) -> ModelResponse:
    expect(PROTOCOL, msg, path, dict)
    if msg.get("type") != "message":
        raise CodecError(PROTOCOL, f"{path}.type", 'expected "message"')
    content = require(PROTOCOL, msg, "content", path, list)
    # A hosted result names its tool through the call before it (the MCP connector's tools).
    names = {
        b["id"]: b["name"]
        for b in content
        if isinstance(b, dict)
        and b.get("type") in CALL_TYPES
        and isinstance(b.get("id"), str)
        and isinstance(b.get("name"), str)
    }
    parts: list[Part] = []
    for j, block in enumerate(content):
        where = block_paths[j] if block_paths else f"{path}.content[{j}]"
        part = decode_block(block, where, w, names)
        if isinstance(part, ToolCall) and raw_inputs and j in raw_inputs:
            part = ToolCall(**(part.model_dump() | {"raw_arguments": raw_inputs[j]}))
        if part is not None:
            parts.append(part)
    stop = optional(msg, "stop_reason", path, str)
    extra: dict[str, Any] = dict((stash(msg, MESSAGE_FIELDS) or {}).get(PROTOCOL, {}))
    if stop is not None and stop not in STOP_REASONS:
        extra["stop_reason"] = stop
    if "stop_details" in msg:  # kept even when null, so the Message comes back as it was
        extra["stop_details"] = msg["stop_details"]
    if msg.get("stop_sequence") is not None:
        extra["stop_sequence"] = msg["stop_sequence"]
    usage: dict[str, int] = {}
    for key, value in (optional(msg, "usage", path, dict) or {}).items():
        if isinstance(value, int) and not isinstance(value, bool):
            usage[key] = value
        elif value is not None:
            extra.setdefault("usage", {})[key] = value
    return ModelResponse(
        message=Message(role="assistant", parts=parts),
        stop_reason=None if stop is None else STOP_REASONS.get(stop, "other"),
        id=optional(msg, "id", path, str),
        model=optional(msg, "model", path, str),
        usage=usage or None,
        provider_details={PROTOCOL: extra} if extra else None,
    )


def _looks_like_request(p: dict[str, Any]) -> bool:
    messages = p.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return False
    tools = p.get("tools")
    tools = [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
    blocks = [
        b
        for m in messages
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict)
    ]
    foreign = (
        any(k in p for k in FOREIGN_KEYS)
        or isinstance(p.get("tool_choice"), str)
        or any(b.get("type") in FOREIGN_BLOCKS for b in blocks)
        or any("function" in t or t.get("type") == "function" for t in tools)
        or any(
            m.get("role") in ("tool", "developer", "function") or "tool_calls" in m
            for m in messages
        )
    )
    if foreign:
        return False
    return (
        "max_tokens" in p
        or "system" in p
        or any("input_schema" in t for t in tools)
        or any(
            b.get("type") in ("tool_use", "tool_result", "thinking", "redacted_thinking")
            for b in blocks
        )
    )


# ---------------------------------------------------------------------------------- codec


class AnthropicCodec:
    """Anthropic Messages: requests, Message responses and their SSE event streams."""

    name = PROTOCOL
    title = FACTS.title
    facts = FACTS

    def encode_request(self, conv: Conversation) -> Converted[Any]:
        w = Warnings(PROTOCOL)
        names = Renamer(w)
        extra = own(conv.provider_details, w, "provider_details")
        system = [conv.system] if conv.system else []
        tools = [_encode_tool(t, f"tools[{i}]", w, names) for i, t in enumerate(conv.tools)]
        choice = _encode_choice(conv.tool_choice, w, names) if conv.tool_choice else None
        messages = _encode_messages(conv.messages, w, names, system)
        body: dict[str, Any] = {
            "model": envelope.model(conv.model, w),
            "max_tokens": envelope.max_tokens(conv, w),
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
        tools = envelope.merge_tools(tools, extra.pop("tools", None))
        if tools:
            body["tools"] = tools
        if choice is not None:
            body["tool_choice"] = choice
        body["messages"] = messages
        return w.wrap(with_extra(body, extra))

    def decode_request(self, payload: Any) -> Converted[Conversation]:
        w = Warnings(PROTOCOL)
        body = expect(PROTOCOL, payload, "$", dict)
        messages = require(PROTOCOL, body, "messages", "$", list)
        extra = {k: v for k, v in body.items() if k not in REQUEST_FIELDS}
        system = _decode_system(body.get("system"), extra)
        raw_tools = optional(body, "tools", "$", list) or []
        tools = [_decode_tool(t, f"$.tools[{i}]", w) for i, t in enumerate(raw_tools)]
        if any(envelope.is_server_tool(t) for t in raw_tools):
            # Server tools (web search, code execution ...) have no canonical Tool: the list
            # rides whole so each one goes back to its place.
            extra["tools"] = raw_tools
        choice = body.get("tool_choice")
        return w.wrap(
            Conversation(
                system=system,
                tools=[t for t in tools if t is not None],
                tool_choice=None if choice is None else _decode_choice(choice, "$.tool_choice"),
                messages=_decode_messages(messages, w),
                model=optional(body, "model", "$", str),
                max_tokens=optional(body, "max_tokens", "$", int),
                temperature=optional(body, "temperature", "$", (int, float)),
                provider_details={PROTOCOL: extra} if extra else None,
            )
        )

    def encode_response(self, resp: ModelResponse) -> Converted[Any]:
        w = Warnings(PROTOCOL)
        return w.wrap(self._message(resp, w))

    def _message(self, resp: ModelResponse, w: Warnings) -> dict[str, Any]:
        names = Renamer(w)
        extra = own(resp.provider_details, w, "provider_details")
        own(resp.message.provider_details, w, "message")
        content = []
        slots: list[Any] = []  # None where a part was left out
        for j, part in enumerate(resp.message.parts):
            path = f"message.parts[{j}]"
            if isinstance(part, Image | ToolResult):
                code = "image_dropped" if isinstance(part, Image) else "tool_result_dropped"
                w.add(code, path, f"an Anthropic response cannot hold a {part.kind} part")
                continue
            block = encode_part(part, path, w, names, resp.message.parts)
            slots.append(block)
            if block is not None:
                content.append(block)
        note_shift(slots, "message", w)
        msg_id = envelope.message_id(resp, w)
        usage = envelope.usage(resp, w)
        body: dict[str, Any] = {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": envelope.model(resp.model, w),
            "content": content,
            "stop_reason": self._stop_reason(resp, extra.pop("stop_reason", None), w),
            "stop_sequence": extra.pop("stop_sequence", None),
            "usage": with_extra(usage, extra.pop("usage", None) or {}),
        }
        return with_extra(body, extra)

    @staticmethod
    def _stop_reason(resp: ModelResponse, raw: Any, w: Warnings) -> str:
        match resp.stop_reason:
            case None if any(isinstance(p, Text) and p.refusal for p in resp.message.parts):
                return "refusal"
            case None:
                return "tool_use" if resp.message.tool_calls else "end_turn"
            case "content_filter":
                w.add(
                    "stop_reason_mapped",
                    "stop_reason",
                    "content_filter has no Anthropic value; sent as refusal",
                )
                return "refusal"
            case "other" if isinstance(raw, str):
                return raw
            case "other":
                w.add(
                    "stop_reason_mapped",
                    "stop_reason",
                    "stop reason 'other' has no Anthropic value; sent as end_turn",
                )
                return "end_turn"
            case reason:
                return reason

    def decode_response(self, payload: Any) -> Converted[ModelResponse]:
        w = Warnings(PROTOCOL)
        return w.wrap(_decode_message(payload, "$", w))

    def encode_stream(self, resp: ModelResponse) -> Converted[list[Any]]:
        w = Warnings(PROTOCOL)
        return w.wrap(anthropic_stream.events_from_message(self._message(resp, w)))

    def decode_stream(self, events: list[Any]) -> Converted[ModelResponse]:
        w = Warnings(PROTOCOL)
        acc = anthropic_stream.assemble(events, w)
        return w.wrap(
            _decode_message(acc.message, acc.message_path, w, acc.block_paths, acc.raw_inputs)
        )

    def detect(self, payload: Any) -> Kind | None:
        if anthropic_stream.is_stream(payload):
            return "stream"
        if not isinstance(payload, dict):
            return None
        if (
            payload.get("type") == "message"
            and payload.get("role") == "assistant"
            and isinstance(payload.get("content"), list)
        ):
            return "response"
        return "request" if _looks_like_request(payload) else None

    def fragment(self, payload: Any) -> tuple[Any, str] | None:
        if self.detect(payload) is not None:
            return None  # a whole payload, not a fragment
        return anthropic_fragment.fragment(payload)


CODEC = AnthropicCodec()
