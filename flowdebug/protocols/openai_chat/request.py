"""OpenAI Chat Completions request bodies (``POST /v1/chat/completions``) <-> canonical
conversations.

The messages are encoded and decoded in :mod:`flowdebug.protocols.openai_chat.parts`; this
module builds and reads what surrounds them (model, limits, tools, legacy ``functions``) and
reports what it fills in or cannot carry (model_filled_in, provider_details_dropped ...).
"""

from __future__ import annotations

from typing import Any

from flowdebug.model import Conversation
from flowdebug.protocols.base import Warnings, expect, require
from flowdebug.protocols.models import own_model
from flowdebug.protocols.openai_chat.parts import PROTOCOL, own_details
from flowdebug.protocols.openai_chat.parts.decode import decode_messages, validated
from flowdebug.protocols.openai_chat.parts.encode import DEFAULT_MODEL, Encoder
from flowdebug.protocols.openai_chat.tools import (
    decode_tool_choice,
    decode_tools,
    encode_tool_choice,
    legacy_choice,
    to_legacy,
)

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


def decode_request(payload: Any, w: Warnings) -> Conversation:
    """A chat.completions request body as a canonical conversation."""
    expect(PROTOCOL, payload, "$", dict)
    found: dict[str, Any] = {"system": None, "details": {}}
    messages = decode_messages(require(PROTOCOL, payload, "messages", "$", list), w, found)
    tools = decode_tools(payload["tools"], w) if payload.get("tools") is not None else []
    details = found["details"]
    tool_choice = decode_tool_choice(payload, w)
    if payload.get("functions") is not None or payload.get("function_call") is not None:
        # Legacy function calling: `functions` are bare function objects.
        functions = expect(PROTOCOL, payload.get("functions") or [], "$.functions", list)
        wrapped = [{"type": "function", "function": f} for f in functions]
        tools += decode_tools(wrapped, w)
        tool_choice = legacy_choice(payload.get("function_call")) or tool_choice
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


def wire_model(model: str | None, w: Warnings) -> str:
    model = own_model(model, w)  # another vendor's model id is replaced, and said so
    if model is not None:
        return model
    w.add(
        "model_filled_in",
        "model",
        f"OpenAI Chat requires a model and the source named none; {DEFAULT_MODEL!r} filled in",
    )
    return DEFAULT_MODEL


def _legacy(conv: Conversation) -> bool:
    """Encode legacy ``functions`` / ``function_call`` when the source did and it still fits
    (one call per assistant turn)."""
    if own_details(conv.provider_details).get("legacy_functions") is not True:
        return False
    return all(len(m.tool_calls) <= 1 for m in conv.messages if m.role == "assistant")


def encode_request(conv: Conversation) -> tuple[dict[str, Any], Warnings]:
    """A chat.completions request body for ``conv``, and what it could not carry."""
    enc = Encoder(conv.model, _legacy(conv))
    own = own_details(conv.provider_details)
    if own_details(conv.provider_details).get("legacy_functions") and not enc.legacy:
        enc.w.add(
            "legacy_functions_dropped",
            "provider_details.openai-chat.legacy_functions",
            "a legacy function_call holds one call and a turn here has more: "
            "the payload uses tools and tool_calls instead",
        )
    enc.foreign_details(conv.provider_details, "")
    tools = [enc.tool(t, f"tools[{k}]") for k, t in enumerate(conv.tools)]
    messages: list[dict[str, Any]] = []
    if conv.system is not None:
        role = "developer" if own.get("system_role") == "developer" else "system"
        messages.append({"role": role, "content": conv.system})
    first = conv.messages[0] if conv.messages else None
    if (
        conv.system is None
        and first is not None
        and first.role == "system"
        and "name" not in own_details(first.provider_details)
    ):
        # Read back, a leading system message is the conversation's system prompt.
        enc.w.add(
            "system_moved", "system", "the leading system message reads back as the system prompt"
        )
        enc.w.add(
            "messages_renumbered",
            "messages",
            "messages[0] leaves the message list when read back, so the ones after it move up",
        )
    previous = None
    for i, msg in enumerate(conv.messages):
        if msg.role == "tool" and previous == "tool":
            # Consecutive tool messages read back as one batch.
            enc.w.add("messages_merged", "messages", f"messages[{i}] joins the tool batch before")
        previous = msg.role
        messages += enc.messages(msg, f"messages[{i}]")
    body: dict[str, Any] = {"model": wire_model(conv.model, enc.w), "messages": messages}
    if tools:
        body["tools"] = tools
    if conv.tool_choice is not None:
        encode_tool_choice(enc, conv.tool_choice, body)
    if enc.legacy:
        to_legacy(body, enc.w)
    if conv.max_tokens is not None:
        body["max_completion_tokens"] = conv.max_tokens
    if conv.temperature is not None:
        body["temperature"] = conv.temperature
    # Fields decode_request could not map come back verbatim.
    extra = own.get("body")
    for key, value in (extra if isinstance(extra, dict) else {}).items():
        body.setdefault(key, value)
    return body, enc.w
