"""OpenAI Responses request bodies (``POST /v1/responses``) <-> canonical conversations.

The system prompt travels as ``instructions`` and the history as ``input`` items (see
:mod:`.parts.encode`). Request fields the canonical model has no place for
(``previous_response_id``, ``store``, ``reasoning`` ...) are kept in
``provider_details["openai-responses"]`` so a decoded request re-encodes to itself.
"""

from __future__ import annotations

from typing import Any

from flowdebug.model import Conversation, Message, Text, ToolCall, ToolResult
from flowdebug.protocols.base import Converted, Warnings, expect, require
from flowdebug.protocols.models import own_model
from flowdebug.protocols.openai_responses.parts import DEFAULT_MODEL, PROTOCOL, details, extras, own
from flowdebug.protocols.openai_responses.parts.decode import ItemDecoder
from flowdebug.protocols.openai_responses.parts.encode import ItemEncoder
from flowdebug.protocols.openai_responses.tools import (
    choice_mode,
    decode_choice,
    decode_tool,
    encode_choice,
    encode_tool,
    optional,
)

# Request keys the canonical model carries; every other key is kept in provider_details.
_REQUEST_KEYS = (
    "model",
    "instructions",
    "input",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "max_output_tokens",
    "temperature",
)


def encode_request(conv: Conversation) -> Converted[dict[str, Any]]:
    """The ``responses.create`` body for ``conv``."""
    w = Warnings(PROTOCOL)
    enc = ItemEncoder(w)
    enc.foreign(conv, "provider_details")
    mine = own(conv)
    body: dict[str, Any] = {"model": wire_model(conv.model, w)}
    if conv.system is not None:
        body["instructions"] = conv.system
    input_items = []
    for i, msg in enumerate(conv.messages):
        items = enc.message(msg, f"messages[{i}]")
        if i and msg.role in ("assistant", "tool") and conv.messages[i - 1].role == msg.role:
            # Items carry no turns: a run of assistant items (or of outputs) is one message.
            w.add("messages_merged", "messages", f"messages[{i}] joins the message before it")
        if not items:
            w.add("message_dropped", f"messages[{i}]", "nothing of this message became an item")
            if i < len(conv.messages) - 1:
                w.add(
                    "messages_renumbered", "messages", f"the messages after messages[{i}] move up"
                )
        input_items += items
    body["input"] = input_items
    tools = [encode_tool(t, enc, f"tools[{k}]") for k, t in enumerate(conv.tools)]
    tools += mine.pop("hosted_tools", None) or []
    if tools:
        body["tools"] = tools
    choice = conv.tool_choice
    if choice is not None:
        raw = mine.pop("tool_choice", None)
        body["tool_choice"] = (
            raw
            if raw is not None and choice_mode(raw) == choice.mode
            else encode_choice(choice, enc, w)
        )
    if choice is not None and choice.parallel is not None:
        body["parallel_tool_calls"] = choice.parallel
    elif tools:
        # The SDK-sent reference always states it; true is also the API default.
        body["parallel_tool_calls"] = True
    if conv.max_tokens is not None:
        body["max_output_tokens"] = conv.max_tokens
    if conv.temperature is not None:
        body["temperature"] = conv.temperature
    mine.pop("tool_choice", None)
    body |= {k: v for k, v in mine.items() if k not in body}
    return w.wrap(body)


def wire_model(model: str | None, w: Warnings) -> str:
    model = own_model(model, w)  # another vendor's model id is replaced, and said so
    if not model:
        # The Responses API requires a model; the source named none.
        w.add("model_filled_in", "model", f"the source names no model; sent as {DEFAULT_MODEL}")
    return model or DEFAULT_MODEL


def decode_request(payload: Any) -> Converted[Conversation]:
    """The conversation a ``responses.create`` body describes. A ``previous_response_id``
    request decodes to what it carries (usually only outputs); the id is kept."""
    w = Warnings(PROTOCOL)
    expect(PROTOCOL, payload, "$", dict)
    dec = ItemDecoder(w)
    items = payload.get("input", [])
    expect(PROTOCOL, items, "$.input", (str, list))
    if isinstance(items, str):
        dec.turns.append(("user", None, [Text(text=items)]))
    else:
        for i, item in enumerate(items):
            dec.item(item, f"$.input[{i}]")
    mine = extras(payload, _REQUEST_KEYS)
    tools = []
    for k, tool in enumerate(optional(payload, "tools", list) or []):
        expect(PROTOCOL, tool, f"$.tools[{k}]", dict)
        if require(PROTOCOL, tool, "type", f"$.tools[{k}]", str) == "function":
            tools.append(decode_tool(tool, f"$.tools[{k}]"))
        else:
            mine.setdefault("hosted_tools", []).append(tool)
    choice = decode_choice(payload, mine)
    messages = dec.messages()
    if isinstance(payload.get("previous_response_id"), str):
        _previous_response_needed(payload["previous_response_id"], messages, w)
    return w.wrap(
        Conversation(
            system=optional(payload, "instructions", str),
            tools=tools,
            tool_choice=choice,
            messages=messages,
            model=optional(payload, "model", str),
            max_tokens=optional(payload, "max_output_tokens", int),
            temperature=optional(payload, "temperature", (int, float)),
            provider_details=details(mine),
        )
    )


def _previous_response_needed(stored: str, messages: list[Message], w: Warnings) -> None:
    """Name the results whose calls live only in the stored response the request continues:
    no stateless vendor (nor Responses without ``store``) can take them as they are."""
    calls = {p.id for m in messages for p in m.parts if isinstance(p, ToolCall)}
    for i, msg in enumerate(messages):
        for j, part in enumerate(msg.parts):
            if isinstance(part, ToolResult) and part.call_id not in calls:
                w.add(
                    "previous_response_needed",
                    f"messages[{i}].parts[{j}]",
                    f"the result for call {part.call_id} answers a call of the stored response "
                    f"{stored} (previous_response_id), which is not in this history",
                )
