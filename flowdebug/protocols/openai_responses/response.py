"""OpenAI Responses ``Response`` objects <-> canonical model turns.

A Response's ``output`` holds reasoning, message and function_call items. There is no finish
reason: a turn wants tools when its output holds function calls. The request fields a
Response echoes (``tools``, ``instructions`` ...), ``created_at`` and the other fields without
a canonical home are kept in ``provider_details["openai-responses"]``.
"""

from __future__ import annotations

import json
from typing import Any

from flowdebug.errors import CodecError
from flowdebug.model import Message, ModelResponse, StopReason, dump
from flowdebug.protocols.base import Converted, Warnings, expect, require
from flowdebug.protocols.openai_responses.parts import PROTOCOL, derived_id, details, own
from flowdebug.protocols.openai_responses.parts.decode import ItemDecoder
from flowdebug.protocols.openai_responses.parts.encode import ItemEncoder
from flowdebug.protocols.openai_responses.request import decode_request, wire_model
from flowdebug.protocols.openai_responses.usage import decode_usage, encode_usage

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
        "id": _response_id(output) if resp.id is None else resp.id,
        "object": "response",
        "created_at": mine.pop("created_at", 0),
        "status": "incomplete" if reason else "completed",
        "model": wire_model(resp.model, w),
        "output": output,
        **_RESPONSE_DEFAULTS,
        "incomplete_details": {"reason": reason} if reason else None,
        "usage": encode_usage(resp.usage, w),
    }
    body |= mine
    derived = _stop_reason(body["status"], body["incomplete_details"], output)
    if resp.stop_reason is None and derived is not None:
        w.add(
            "stop_reason_filled_in",
            "stop_reason",
            f"a Response has a status and the turn has no stop reason; it reads back as {derived}",
        )
    elif resp.stop_reason is not None and derived != resp.stop_reason:
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
