"""OpenAI Responses API (``POST /v1/responses``): ``function_call`` / ``function_call_output``
items paired by ``call_id``.

The request carries the system prompt as ``instructions`` and the history as ``input`` items
(see :mod:`.encode`); the response is a ``Response`` object whose ``output``
holds reasoning, message and function_call items. There is no finish reason: a turn wants
tools when its output holds function calls. There is no error flag on results either: error
results travel as ``{"error": "<text>"}``.

Request and response fields the canonical model has no place for (``previous_response_id``,
``store``, ``reasoning``, a response's echoed ``tools``, ``created_at`` ...) are kept in
``provider_details["openai-responses"]`` so a decoded payload re-encodes to itself.
"""

from __future__ import annotations

import json
from typing import Any

from flowdebug.errors import CodecError
from flowdebug.model import (
    Conversation,
    Message,
    ModelResponse,
    StopReason,
    Text,
    ToolCall,
    ToolResult,
    dump,
)
from flowdebug.protocols.base import Converted, Kind, Warnings, expect, require
from flowdebug.protocols.models import own_model
from flowdebug.protocols.openai_responses import stream
from flowdebug.protocols.openai_responses.decode import ItemDecoder
from flowdebug.protocols.openai_responses.encode import ItemEncoder
from flowdebug.protocols.openai_responses.facts import FACTS
from flowdebug.protocols.openai_responses.fields import (
    DEFAULT_MODEL,
    PROTOCOL,
    derived_id,
    details,
    extras,
    own,
)
from flowdebug.protocols.openai_responses.fragment import fragment
from flowdebug.protocols.openai_responses.tools import (
    choice_mode,
    decode_choice,
    decode_tool,
    encode_choice,
    encode_tool,
    optional,
)
from flowdebug.protocols.openai_responses.usage import decode_usage, encode_usage

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

# What the API echoes on a Response when the request set nothing, in the order it sends
# them. The decoder keeps only values that differ from these.
_RESPONSE_DEFAULTS: dict[str, Any] = {
    "error": None,
    "incomplete_details": None,
    "instructions": None,
    "metadata": {},
    "parallel_tool_calls": True,
    "temperature": 1.0,
    "top_p": 1.0,
    "tool_choice": "auto",
    "tools": [],
    "previous_response_id": None,
    "text": {"format": {"type": "text"}},
    "truncation": "disabled",
}
_INCOMPLETE = {"max_tokens": "max_output_tokens", "content_filter": "content_filter"}


class OpenAIResponsesCodec:
    """The Responses API: requests, Response objects and their event streams."""

    name = PROTOCOL
    title = FACTS.title
    facts = FACTS

    def encode_request(self, conv: Conversation) -> Converted[dict[str, Any]]:
        return encode_request(conv)

    def decode_request(self, payload: Any) -> Converted[Conversation]:
        return decode_request(payload)

    def encode_response(self, resp: ModelResponse) -> Converted[dict[str, Any]]:
        return encode_response(resp)

    def decode_response(self, payload: Any) -> Converted[ModelResponse]:
        w = Warnings(PROTOCOL)
        return w.wrap(decode_response_object(payload, w))

    def encode_stream(self, resp: ModelResponse) -> Converted[list[Any]]:
        encoded = encode_response(resp)
        return Converted(stream.response_to_events(encoded.value), encoded.warnings)

    def decode_stream(self, events: list[Any]) -> Converted[ModelResponse]:
        w = Warnings(PROTOCOL)
        response, item_paths = stream.events_to_response(events, w)
        return w.wrap(decode_response_object(response, w, "$", item_paths))

    def detect(self, payload: Any) -> Kind | None:
        return detect(payload)

    def fragment(self, payload: Any) -> tuple[Any, str] | None:
        return fragment(payload) if detect(payload) is None else None


CODEC = OpenAIResponsesCodec()


def detect(payload: Any) -> Kind | None:
    """request: ``input`` (string or item list) or ``instructions`` with a model, and none of
    the keys other protocols use; response: ``object == "response"``; stream: events whose
    ``type`` is ``response.*`` (plus ``error``)."""
    if isinstance(payload, list):
        types = [e.get("type") if isinstance(e, dict) else None for e in payload]
        if (
            payload
            and all(
                isinstance(t, str) and (t.startswith("response.") or t == "error") for t in types
            )
            and any(t != "error" for t in types)
        ):
            return "stream"
        return None
    if not isinstance(payload, dict):
        return None
    if payload.get("object") == "response":
        return "response"
    if any(k in payload for k in ("object", "messages", "contents", "jsonrpc")):
        return None
    if isinstance(payload.get("input"), str | list):
        return "request"
    if isinstance(payload.get("instructions"), str) and (
        "model" in payload or "previous_response_id" in payload
    ):
        return "request"
    return None


# -- requests -------------------------------------------------------------------------------


def encode_request(conv: Conversation) -> Converted[dict[str, Any]]:
    """The ``responses.create`` body for ``conv``."""
    w = Warnings(PROTOCOL)
    enc = ItemEncoder(w)
    enc.foreign(conv, "provider_details")
    mine = own(conv)
    body: dict[str, Any] = {"model": _model(conv.model, w)}
    if conv.system is not None:
        body["instructions"] = conv.system
    input_items = []
    for i, msg in enumerate(conv.messages):
        input_items += enc.message(msg, f"messages[{i}]")
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


def _model(model: str | None, w: Warnings) -> str:
    model = own_model(model, w)  # another vendor's model id is replaced, and said so
    if model is None:
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


# -- responses ------------------------------------------------------------------------------


def encode_response(resp: ModelResponse) -> Converted[dict[str, Any]]:
    """The ``Response`` object the API returns for ``resp``."""
    w = Warnings(PROTOCOL)
    enc = ItemEncoder(w)
    enc.foreign(resp, "provider_details")
    output = enc.message(resp.message, "message", output=True)
    mine = own(resp)
    reason = _INCOMPLETE.get(resp.stop_reason or "")
    mine.pop("echo", None)  # derived from the echoed fields below, on every decode
    body: dict[str, Any] = {
        "id": resp.id or _response_id(output),
        "object": "response",
        "created_at": mine.pop("created_at", 0),
        "status": "incomplete" if reason else "completed",
        "model": _model(resp.model, w),
        "output": output,
        **_RESPONSE_DEFAULTS,
        "incomplete_details": {"reason": reason} if reason else None,
        "usage": encode_usage(resp.usage, w),
    }
    body |= mine
    derived = _stop_reason(body["status"], body["incomplete_details"], output)
    if resp.stop_reason is not None and derived != resp.stop_reason:
        w.add(
            "stop_reason_changed",
            "stop_reason",
            f"Responses has no finish reason; {resp.stop_reason!r} reads back as {derived!r}",
        )
    return w.wrap(body)


def decode_response_object(
    payload: Any, w: Warnings, path: str = "$", item_paths: list[str] | None = None
) -> ModelResponse:
    """The canonical turn of a ``Response`` dict. ``item_paths`` names where each output item
    came from when the response was assembled from a stream."""
    expect(PROTOCOL, payload, path, dict)
    if payload.get("object") != "response":
        raise CodecError(PROTOCOL, f"{path}.object", 'expected "response"')
    resp_id = require(PROTOCOL, payload, "id", path, str)
    model = require(PROTOCOL, payload, "model", path, str)
    output = require(PROTOCOL, payload, "output", path, list)
    dec = ItemDecoder(w)
    for i, item in enumerate(output):
        dec.item(item, item_paths[i] if item_paths else f"{path}.output[{i}]", output=True)
    status = payload.get("status")
    incomplete = payload.get("incomplete_details")
    stop = _stop_reason(status, incomplete, output)
    reason = _INCOMPLETE.get(stop or "")
    derived_status = "incomplete" if reason else "completed"
    defaults = _RESPONSE_DEFAULTS | {
        "created_at": 0,
        "status": derived_status,
        "incomplete_details": {"reason": reason} if reason else None,
    }
    mine = {
        k: v
        for k, v in payload.items()
        if k not in ("id", "object", "model", "output", "usage")
        and (defaults[k] != v if k in defaults else v is not None)
    }
    echo = _echo(payload, path)
    if echo:
        mine["echo"] = echo
    message = Message(role="assistant", parts=[p for _, _, turn in dec.turns for p in turn])
    return ModelResponse(
        message=message,
        stop_reason=stop,
        id=None if resp_id == _response_id(output) else resp_id,
        model=model,
        usage=decode_usage(payload.get("usage"), f"{path}.usage"),
        provider_details=details(mine),
    )


# The request fields a Response echoes, as the canonical Conversation spells them.
_ECHOED: tuple[str, ...] = (
    "instructions",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "temperature",
    "max_output_tokens",
)


def _echo(payload: dict[str, Any], path: str) -> dict[str, Any]:
    """The request fields the Response echoes, decoded as a canonical Conversation dump
    without messages (``system``, ``tools``, ``tool_choice``, ``temperature``,
    ``max_tokens``; hosted tools under its ``provider_details``), so the conversation the
    response belongs to can take them back. Default values are left out."""
    echoed = {
        k: payload[k]
        for k in _ECHOED
        if payload.get(k) is not None and payload[k] != _RESPONSE_DEFAULTS.get(k, ...)
    }
    if not echoed:
        return {}
    try:
        conv = decode_request({"input": [], **echoed}).value
    except CodecError as err:
        raise CodecError(PROTOCOL, path, f"echoed request fields: {err}") from err
    data = dump(conv)
    data.pop("messages", None)
    return {k: v for k, v in data.items() if v not in (None, [])}


def _response_id(output: list[Any]) -> str:
    """The id of a response that has none: derived from its output items as sent, so the
    decoder recognises it (and leaves it out) whatever the canonical parts carried."""
    # Null fields are left out: SDK dumps add them (``"parsed": null``) without changing
    # what the output says.
    return derived_id("resp", json.dumps(_no_nulls(output), sort_keys=True, ensure_ascii=False))


def _no_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _no_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_no_nulls(v) for v in value]
    return value


def _stop_reason(status: Any, incomplete: Any, output: list[Any]) -> StopReason | None:
    """Responses has no finish reason: read it off the status and the output items."""
    if status in ("in_progress", "queued"):
        return None
    if status == "incomplete":
        reason = incomplete.get("reason") if isinstance(incomplete, dict) else None
        stops: dict[Any, StopReason] = {
            "max_output_tokens": "max_tokens",
            "content_filter": "content_filter",
        }
        return stops.get(reason, "other")
    if status in ("failed", "cancelled"):
        return "other"
    items = [i for i in output if isinstance(i, dict)]
    if any(i.get("type") in ("function_call", "custom_tool_call") for i in items):
        return "tool_use"
    if any(
        isinstance(c, dict) and c.get("type") == "refusal"
        for i in items
        if i.get("type") == "message"
        for c in i.get("content") or []
    ):
        return "refusal"
    return "end_turn"
