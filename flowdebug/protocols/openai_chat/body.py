"""OpenAI Chat Completions, wire -> canonical: request bodies and ChatCompletion objects.

Messages are decoded in ``openai_chat_decode``; this module reads what surrounds them: tools
(``tools`` or the legacy ``functions``), tool_choice (or legacy ``function_call``), the
model, limits, usage and the completion envelope.
"""

from __future__ import annotations

from typing import Any

from flowdebug.errors import CodecError
from flowdebug.model import Conversation, Message, ModelResponse, StopReason, Tool, ToolChoice
from flowdebug.protocols.base import Warnings, expect, require
from flowdebug.protocols.openai_chat.compat import decode_usage
from flowdebug.protocols.openai_chat.decode import (
    PROTOCOL,
    decode_assistant,
    decode_messages,
    validated,
)

_FINISH_TO_STOP: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filter",
}
# Request fields the codec maps; any other top-level field survives a round trip verbatim.
_MAPPED = {
    "model",
    "messages",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "max_completion_tokens",
    "max_tokens",
    "temperature",
    "functions",
    "function_call",
}


def _decode_tools(tools: Any, w: Warnings) -> list[Tool]:
    out = []
    for k, raw in enumerate(expect(PROTOCOL, tools, "$.tools", list)):
        path = f"$.tools[{k}]"
        expect(PROTOCOL, raw, path, dict)
        kind = require(PROTOCOL, raw, "type", path, str)
        if kind != "function":
            w.add("tool_dropped", path, f"{kind!r} tools are not carried; only function tools")
            continue
        function = require(PROTOCOL, raw, "function", path, dict)
        fpath = f"{path}.function"
        fields: dict[str, Any] = {"name": require(PROTOCOL, function, "name", fpath, str)}
        for key, typ in (("description", str), ("parameters", dict), ("strict", bool)):
            if function.get(key) is not None:
                fields[key] = expect(PROTOCOL, function[key], f"{fpath}.{key}", typ)
        out.append(Tool(**fields))
    return out


def _decode_tool_choice(body: dict[str, Any], w: Warnings) -> ToolChoice | None:
    raw, parallel = body.get("tool_choice"), body.get("parallel_tool_calls")
    if parallel is not None:
        expect(PROTOCOL, parallel, "$.parallel_tool_calls", bool)
    if raw is None:
        return None if parallel is None else ToolChoice(parallel=parallel)
    if isinstance(raw, str):
        if raw not in ("auto", "none", "required"):
            raise CodecError(
                PROTOCOL,
                "$.tool_choice",
                f"unknown tool_choice {raw!r}; expected auto, none or required",
            )
        return ToolChoice(mode=raw, parallel=parallel)  # type: ignore[arg-type]
    expect(PROTOCOL, raw, "$.tool_choice", (str, dict))
    kind = require(PROTOCOL, raw, "type", "$.tool_choice", str)
    if kind == "function":
        function = require(PROTOCOL, raw, "function", "$.tool_choice", dict)
        name = require(PROTOCOL, function, "name", "$.tool_choice.function", str)
        return ToolChoice(mode="tool", name=name, parallel=parallel)
    if kind == "allowed_tools":
        allowed = require(PROTOCOL, raw, "allowed_tools", "$.tool_choice", dict)
        mode = allowed.get("mode", "auto")
        if mode not in ("auto", "required"):
            raise CodecError(
                PROTOCOL, "$.tool_choice.allowed_tools.mode", "expected 'auto' or 'required'"
            )
        w.add(
            "tool_choice_dropped",
            "$.tool_choice.allowed_tools.tools",
            f"the allowed_tools list is not carried; the choice becomes {mode!r}",
        )
        return ToolChoice(mode=mode, parallel=parallel)
    raise CodecError(PROTOCOL, "$.tool_choice.type", f"unsupported tool_choice type {kind!r}")


def decode_completion(payload: Any, w: Warnings) -> ModelResponse:
    expect(PROTOCOL, payload, "$", dict)
    choices = require(PROTOCOL, payload, "choices", "$", list)
    if not choices:
        raise CodecError(PROTOCOL, "$.choices", "the completion has no choices")
    for k in range(1, len(choices)):
        w.add(
            "choice_dropped",
            f"$.choices[{k}]",
            f"choice {k} dropped: only the first choice becomes the model turn",
        )
    expect(PROTOCOL, choices[0], "$.choices[0]", dict)
    message = require(PROTOCOL, choices[0], "message", "$.choices[0]", dict)
    finish = choices[0].get("finish_reason")
    if finish is not None:
        expect(PROTOCOL, finish, "$.choices[0].finish_reason", str)
    details: dict[str, Any] = {}
    for key, typ in (("created", int), ("service_tier", str), ("system_fingerprint", str)):
        if payload.get(key) is not None:
            details[key] = expect(PROTOCOL, payload[key], f"$.{key}", typ)
    for key in ("id", "model"):
        if payload.get(key) is not None:
            expect(PROTOCOL, payload[key], f"$.{key}", str)
    if message.get("function_call") is not None:
        details["legacy_functions"] = True
    usage, usage_rest = decode_usage(payload.get("usage"), "$.usage")
    if usage_rest:
        details["usage"] = usage_rest
    decoded = decode_assistant(message, "$.choices[0].message", w)
    stop = None if finish is None else _FINISH_TO_STOP.get(finish, "other")
    if stop == "end_turn" and any(p.get("refusal") for p in decoded["parts"]):
        stop = "refusal"  # a refusal ends with "stop": the turn is the model refusing
    return ModelResponse(
        message=validated(Message, decoded),
        stop_reason=stop,
        id=payload.get("id"),
        model=payload.get("model"),
        usage=usage,
        provider_details={PROTOCOL: details} if details else None,
    )


def decode_request(payload: Any, w: Warnings) -> Conversation:
    """A chat.completions request body as a canonical conversation."""
    expect(PROTOCOL, payload, "$", dict)
    found: dict[str, Any] = {"system": None, "details": {}}
    messages = decode_messages(require(PROTOCOL, payload, "messages", "$", list), w, found)
    tools = _decode_tools(payload["tools"], w) if payload.get("tools") is not None else []
    details = found["details"]
    tool_choice = _decode_tool_choice(payload, w)
    if payload.get("functions") is not None or payload.get("function_call") is not None:
        # Legacy function calling: `functions` are bare function objects.
        functions = expect(PROTOCOL, payload.get("functions") or [], "$.functions", list)
        wrapped = [{"type": "function", "function": f} for f in functions]
        tools += _decode_tools(wrapped, w)
        tool_choice = _legacy_choice(payload.get("function_call")) or tool_choice
        details["legacy_functions"] = True
    elif any(m.get("role") == "function" or "function_call" in m for m in payload["messages"]):
        details["legacy_functions"] = True
    extra = {k: v for k, v in payload.items() if k not in _MAPPED}
    if extra:
        details["body"] = extra
    max_tokens = None
    for key in ("max_tokens", "max_completion_tokens"):  # the newer name wins
        if payload.get(key) is not None:
            max_tokens = expect(PROTOCOL, payload[key], f"$.{key}", int)
    if payload.get("temperature") is not None:
        expect(PROTOCOL, payload["temperature"], "$.temperature", (int, float))
    if payload.get("model") is not None:
        expect(PROTOCOL, payload["model"], "$.model", str)
    return validated(
        Conversation,
        {
            "system": found["system"],
            "tools": tools,
            "tool_choice": tool_choice,
            "messages": messages,
            "model": payload.get("model"),
            "max_tokens": max_tokens,
            "temperature": payload.get("temperature"),
            "provider_details": {PROTOCOL: details} if details else None,
        },
    )


def _legacy_choice(raw: Any) -> ToolChoice | None:
    """Legacy ``function_call``: "auto", "none" or ``{"name": ...}``."""
    if raw is None:
        return None
    if raw in ("auto", "none"):
        return ToolChoice(mode=raw)
    expect(PROTOCOL, raw, "$.function_call", dict)
    return ToolChoice(mode="tool", name=require(PROTOCOL, raw, "name", "$.function_call", str))
