"""OpenAI Chat tool declarations and ``tool_choice`` <-> canonical ``Tool`` and ``ToolChoice``.

Tools are ``{"type": "function", "function": {name, description, parameters, strict}}``; the
legacy ``functions`` / ``function_call`` pair is read, and written back when the source used it
and it still fits (one call per assistant turn).
"""

from __future__ import annotations

from typing import Any, assert_never

from flowdebug.errors import CodecError
from flowdebug.model import Tool, ToolChoice
from flowdebug.protocols.base import Warnings, expect, require
from flowdebug.protocols.openai_chat.parts import PROTOCOL
from flowdebug.protocols.openai_chat.parts.encode import Encoder


def decode_tools(tools: Any, w: Warnings) -> list[Tool]:
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


def decode_tool_choice(body: dict[str, Any], w: Warnings) -> ToolChoice | None:
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


def legacy_choice(raw: Any) -> ToolChoice | None:
    """Legacy ``function_call``: "auto", "none" or ``{"name": ...}``."""
    if raw is None:
        return None
    if raw in ("auto", "none"):
        return ToolChoice(mode=raw)
    expect(PROTOCOL, raw, "$.function_call", dict)
    return ToolChoice(mode="tool", name=require(PROTOCOL, raw, "name", "$.function_call", str))


def encode_tool_choice(enc: Encoder, choice: ToolChoice, body: dict[str, Any]) -> None:
    """``tool_choice`` and ``parallel_tool_calls`` of the body."""
    if "tools" not in body:
        # OpenAI rejects tool_choice and parallel_tool_calls when no tools are declared.
        enc.w.add(
            "tool_choice_dropped",
            "tool_choice",
            "no tools are declared, so tool_choice cannot be sent",
        )
        return
    match choice.mode:
        case "tool" if choice.name is not None:
            name = enc.name(choice.name, "tool_choice")
            body["tool_choice"] = {"type": "function", "function": {"name": name}}
        case "tool":
            enc.w.add(
                "tool_choice_dropped",
                "tool_choice",
                "tool choice 'tool' names no tool; sent as 'required'",
            )
            body["tool_choice"] = "required"
        case "auto" | "none" | "required" as mode:
            body["tool_choice"] = mode
        case _:
            assert_never(choice.mode)
    if choice.parallel is not None:
        body["parallel_tool_calls"] = choice.parallel


def to_legacy(body: dict[str, Any], w: Warnings) -> None:
    """``tools`` and ``tool_choice`` in the legacy spelling: ``functions``, ``function_call``."""
    if "tools" in body:
        body["functions"] = [t["function"] for t in body.pop("tools")]
    choice = body.pop("tool_choice", None)
    if choice in ("auto", "none"):
        body["function_call"] = choice
    elif isinstance(choice, dict):
        body["function_call"] = {"name": choice["function"]["name"]}
    elif choice is not None:
        w.add("tool_choice_dropped", "tool_choice", f"legacy function_call has no {choice!r}")
    if body.pop("parallel_tool_calls", None) is not None:
        w.add("tool_choice_dropped", "tool_choice.parallel", "legacy functions run one at a time")
