"""OpenAI Responses API (``POST /v1/responses``): ``function_call`` / ``function_call_output``
items paired by ``call_id``.

The request carries the system prompt as ``instructions`` and the history as ``input`` items
(see :mod:`openai_responses_items`); the response is a ``Response`` object whose ``output``
holds reasoning, message and function_call items. There is no finish reason: a turn wants
tools when its output holds function calls. There is no error flag on results either: error
results travel as ``{"error": "<text>"}``.

Request and response fields the canonical model has no place for (``previous_response_id``,
``store``, ``reasoning``, a response's echoed ``tools``, ``created_at`` ...) are kept in
``provider_details["openai-responses"]`` so a decoded payload re-encodes to itself.
"""

from __future__ import annotations

from typing import Any

from flowdebug.errors import CodecError
from flowdebug.model import (
    Conversation,
    Message,
    ModelResponse,
    StopReason,
    Text,
    Thinking,
    Tool,
    ToolChoice,
    canonical_json,
)
from flowdebug.protocols import openai_responses_stream as stream
from flowdebug.protocols.base import Converted, Kind, Warnings, expect, require
from flowdebug.protocols.openai_responses_item_decode import ItemDecoder
from flowdebug.protocols.openai_responses_items import (
    PROTOCOL,
    ItemEncoder,
    derived_id,
    details,
    extras,
    own,
)

DEFAULT_MODEL = "gpt-4.1"

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
_TOOL_KEYS = {"type", "name", "description", "parameters", "strict", "output_schema"}

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
    title = "OpenAI Responses"

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
    body: dict[str, Any] = {"model": conv.model or DEFAULT_MODEL}
    if conv.system is not None:
        body["instructions"] = conv.system
    input_items = []
    for i, msg in enumerate(conv.messages):
        input_items += enc.message(msg, f"messages[{i}]")
    body["input"] = input_items
    tools = [_encode_tool(t, enc, f"tools[{k}]") for k, t in enumerate(conv.tools)]
    tools += mine.pop("hosted_tools", None) or []
    if tools:
        body["tools"] = tools
    choice = conv.tool_choice
    if choice is not None:
        raw = mine.pop("tool_choice", None)
        body["tool_choice"] = (
            raw
            if raw is not None and _choice_mode(raw) == choice.mode
            else _encode_choice(choice, enc, w)
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


def _encode_tool(tool: Tool, enc: ItemEncoder, path: str) -> dict[str, Any]:
    enc.foreign(tool, path)
    out: dict[str, Any] = {"type": "function", "name": enc.tool_name(tool.name, path)}
    if tool.description is not None:
        out["description"] = tool.description
    out["parameters"] = tool.parameters
    # The SDK marks strict Required (nullable) and older docs say it defaults to true, so
    # always state it: a schema not written for strict mode would be rejected.
    out["strict"] = bool(tool.strict)
    if tool.output_schema is not None:
        out["output_schema"] = tool.output_schema
    lost = ["title"] * (tool.title is not None) + ["annotations"] * bool(tool.annotations)
    if lost:
        enc.w.add(
            "tool_metadata_dropped",
            path,
            f"Responses function tools have no {' or '.join(lost)}; not sent",
        )
    return out | {k: v for k, v in own(tool).items() if k not in out}


def _encode_choice(choice: ToolChoice, enc: ItemEncoder, w: Warnings) -> Any:
    if choice.mode != "tool":
        return choice.mode
    if choice.name is None:
        w.add(
            "tool_choice_dropped",
            "tool_choice",
            'a named tool choice without a name; sent as "required"',
        )
        return "required"
    # Flat, unlike Chat Completions' {"type": "function", "function": {"name": ...}}.
    return {"type": "function", "name": enc.tool_name(choice.name, "tool_choice")}


def _choice_mode(raw: Any) -> str:
    """The canonical mode closest to a wire tool_choice."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict) and raw.get("type") == "function":
        return "tool"
    if isinstance(raw, dict) and raw.get("type") == "allowed_tools":
        return str(raw.get("mode"))
    return "required"  # hosted-tool, mcp and custom choices force a (non-function) tool


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
    for k, tool in enumerate(_optional(payload, "tools", list) or []):
        expect(PROTOCOL, tool, f"$.tools[{k}]", dict)
        if require(PROTOCOL, tool, "type", f"$.tools[{k}]", str) == "function":
            tools.append(_decode_tool(tool, f"$.tools[{k}]"))
        else:
            mine.setdefault("hosted_tools", []).append(tool)
    choice = _decode_choice(payload, mine)
    return w.wrap(
        Conversation(
            system=_optional(payload, "instructions", str),
            tools=tools,
            tool_choice=choice,
            messages=dec.messages(),
            model=_optional(payload, "model", str),
            max_tokens=_optional(payload, "max_output_tokens", int),
            temperature=_optional(payload, "temperature", (int, float)),
            provider_details=details(mine),
        )
    )


def _optional(obj: dict[str, Any], key: str, typ: type | tuple[type, ...]) -> Any:
    if obj.get(key) is None:
        return None
    return require(PROTOCOL, obj, key, "$", typ)


def _decode_tool(tool: dict[str, Any], path: str) -> Tool:
    if "name" not in tool and isinstance(tool.get("function"), dict):
        raise CodecError(
            PROTOCOL,
            f"{path}.name",
            "missing: this is a Chat Completions tool; Responses tools are flat "
            '({"type": "function", "name": ..., "parameters": ...})',
        )
    name = require(PROTOCOL, tool, "name", path, str)
    parameters = tool.get("parameters")
    if parameters is not None:
        expect(PROTOCOL, parameters, f"{path}.parameters", dict)
    description = tool.get("description")
    if description is not None:
        expect(PROTOCOL, description, f"{path}.description", str)
    output_schema = tool.get("output_schema")
    if output_schema is not None:
        expect(PROTOCOL, output_schema, f"{path}.output_schema", dict)
    extra = extras(tool, _TOOL_KEYS)
    return Tool(
        name=name,
        description=description,
        **({"parameters": parameters} if parameters is not None else {}),
        output_schema=output_schema,
        strict=True if tool.get("strict") is True else None,
        provider_details=details(extra),
    )


def _decode_choice(payload: dict[str, Any], mine: dict[str, Any]) -> ToolChoice | None:
    raw = payload.get("tool_choice")
    parallel = _optional(payload, "parallel_tool_calls", bool)
    # true is the API default, so only false is worth a canonical value.
    parallel = False if parallel is False else None
    if raw is None:
        return ToolChoice(parallel=False) if parallel is False else None
    if raw in ("auto", "none", "required"):
        return ToolChoice(mode=raw, parallel=parallel)
    expect(PROTOCOL, raw, "$.tool_choice", (str, dict))
    if isinstance(raw, str):
        raise CodecError(
            PROTOCOL,
            "$.tool_choice",
            f"unknown tool_choice {raw!r}; expected auto, none or required",
        )
    kind = require(PROTOCOL, raw, "type", "$.tool_choice", str)
    if kind == "function":
        name = require(PROTOCOL, raw, "name", "$.tool_choice", str)
        return ToolChoice(mode="tool", name=name, parallel=parallel)
    # allowed_tools, hosted tools, mcp, custom: kept verbatim, mapped to the nearest mode.
    mine["tool_choice"] = raw
    mode = _choice_mode(raw)
    return ToolChoice(
        mode=mode if mode in ("auto", "required") else "required",  # type: ignore[arg-type]
        parallel=parallel,
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
    body: dict[str, Any] = {
        "id": resp.id or _response_id(resp.message),
        "object": "response",
        "created_at": mine.pop("created_at", 0),
        "status": "incomplete" if reason else "completed",
        "model": resp.model or DEFAULT_MODEL,
        "output": output,
        **_RESPONSE_DEFAULTS,
        "incomplete_details": {"reason": reason} if reason else None,
        "usage": _encode_usage(resp.usage),
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
    message = Message(role="assistant", parts=[p for _, _, turn in dec.turns for p in turn])
    return ModelResponse(
        message=message,
        stop_reason=stop,
        id=None if resp_id == _response_id(message) else resp_id,
        model=model,
        usage=_decode_usage(payload.get("usage"), f"{path}.usage"),
        provider_details=details(mine),
    )


def _response_id(message: Message) -> str:
    """The id of a response that has none: derived from its content, so it is stable."""
    # Which vendor issued a signature is canonical bookkeeping, not content: leave it out so
    # the id is the same before and after a decode marks the source.
    parts = [
        p.model_copy(update={"source": None}) if isinstance(p, Thinking) else p
        for p in message.parts
    ]
    return derived_id("resp", canonical_json(message.model_copy(update={"parts": parts})))


def _stop_reason(status: Any, incomplete: Any, output: list[Any]) -> StopReason | None:
    """Responses has no finish reason: read it off the status and the output items."""
    if status in ("in_progress", "queued"):
        return None
    if status == "incomplete":
        reason = incomplete.get("reason") if isinstance(incomplete, dict) else None
        return {"max_output_tokens": "max_tokens", "content_filter": "content_filter"}.get(
            reason, "other"
        )  # type: ignore[return-value]
    if status in ("failed", "cancelled"):
        return "other"
    items = [i for i in output if isinstance(i, dict)]
    if any(i.get("type") == "function_call" for i in items):
        return "tool_use"
    if any(
        isinstance(c, dict) and c.get("type") == "refusal"
        for i in items
        if i.get("type") == "message"
        for c in i.get("content") or []
    ):
        return "refusal"
    return "end_turn"


def _encode_usage(usage: dict[str, int] | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    prompt, completion = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
    return {
        "input_tokens": prompt,
        "input_tokens_details": {
            "cached_tokens": usage.get("cached_tokens", 0),
            "cache_write_tokens": usage.get("cache_write_tokens", 0),
        },
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": usage.get("reasoning_tokens", 0)},
        "total_tokens": usage.get("total_tokens", prompt + completion),
    }


def _decode_usage(usage: Any, path: str) -> dict[str, int] | None:
    """Flat token counts; zero details and a total equal to the sum are left out."""
    if usage is None:
        return None
    expect(PROTOCOL, usage, path, dict)
    out = {k: require(PROTOCOL, usage, k, path, int) for k in ("input_tokens", "output_tokens")}
    for key, field in (
        ("input_tokens_details", "cached_tokens"),
        ("input_tokens_details", "cache_write_tokens"),
        ("output_tokens_details", "reasoning_tokens"),
    ):
        details = usage.get(key)
        value = details.get(field) if isinstance(details, dict) else None
        if isinstance(value, int) and value:
            out[field] = value
    total = usage.get("total_tokens")
    if isinstance(total, int) and total != out["input_tokens"] + out["output_tokens"]:
        out["total_tokens"] = total
    return out
