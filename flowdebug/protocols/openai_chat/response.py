"""OpenAI Chat ``ChatCompletion`` objects <-> canonical model turns.

The assistant message is encoded and decoded in :mod:`flowdebug.protocols.openai_chat.parts`;
this module handles its envelope (id, ``created``, model, ``finish_reason``, usage) and reports
what it fills in or cannot carry (response_id_replaced, created_filled_in, stop_reason_mapped ...).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from flowdebug.model import Message, ModelResponse, StopReason, dump
from flowdebug.protocols.base import Warnings, expect, require
from flowdebug.protocols.openai_chat.parts import PROTOCOL, own_details
from flowdebug.protocols.openai_chat.parts.decode import decode_assistant, validated
from flowdebug.protocols.openai_chat.parts.encode import CREATED, Encoder, own_extra
from flowdebug.protocols.openai_chat.request import wire_model
from flowdebug.protocols.openai_chat.usage import decode_usage, encode_usage
from flowdebug.protocols.wire_helpers import results_left_out

_FINISH_TO_STOP: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filter",
}


def decode_completion(payload: Any, w: Warnings) -> ModelResponse:
    expect(PROTOCOL, payload, "$", dict)
    choices = require(PROTOCOL, payload, "choices", "$", list)
    if not choices:
        # The SDK's ChatCompletion takes an empty list: Azure OpenAI answers a prompt its
        # content filter stopped with no choice (its prompt_filter_results say why).
        w.add("no_choices", "$.choices", "the completion has no choice: an empty model turn")
        choices = [{"message": {"role": "assistant", "content": None}, "finish_reason": None}]
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


_STOP_TO_FINISH = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "refusal": "stop",
    "content_filter": "content_filter",
    "other": "stop",
}


def encode_completion(resp: ModelResponse) -> tuple[dict[str, Any], Warnings]:
    """A ChatCompletion object for ``resp``, and what it could not carry."""
    own = own_details(resp.provider_details)
    enc = Encoder(resp.model, own.get("legacy_functions") is True)
    enc.foreign_details(resp.provider_details, "")
    enc.foreign_details(resp.message.provider_details, "message")
    results_left_out(resp.message.parts, enc.w, "a model turn has no results")
    parts = enc.parts(resp.message.model_copy(update={"role": "assistant"}), "message")
    texts = [p["text"] for p in parts.content if p["type"] == "text"]
    text = "".join(texts)
    if len(texts) > 1:
        enc.w.add("parts_merged", "message", "a ChatCompletion message has one content string")
    elif parts.content and not text:
        enc.w.add("text_dropped", "message", "an empty text reads back as no text")
    message: dict[str, Any] = {
        "role": "assistant",
        "content": text if parts.content else None,
        "refusal": "".join(parts.refusal) if parts.refusal else None,
        "annotations": [],
    }
    message |= parts.reasoning
    if len(parts.calls) > 1 and enc.legacy:
        enc.legacy = False
        enc.w.add(
            "legacy_functions_dropped",
            "provider_details.openai-chat.legacy_functions",
            "a legacy function_call holds one call and this turn has more: sent as tool_calls",
        )
    enc.put_calls(message, parts.calls, "message")
    message |= own_extra(resp.message.provider_details)
    if resp.stop_reason is not None:
        finish = _STOP_TO_FINISH[resp.stop_reason]
    else:
        finish = "tool_calls" if parts.calls else "stop"
        enc.w.add(
            "stop_reason_filled_in",
            "stop_reason",
            f"a choice requires a finish_reason and the turn has none; sent as {finish}",
        )
    if finish == "tool_calls" and "function_call" in message:
        finish = "function_call"
    _check_stop(resp, finish, message, enc.w)
    created = own.get("created")
    if not isinstance(created, int):
        created = CREATED
        enc.w.add(
            "created_filled_in",
            "provider_details.openai-chat.created",
            f"a ChatCompletion needs a creation time; {CREATED} filled in",
        )
    completion: dict[str, Any] = {
        "id": _response_id(resp, own, enc.w),
        "object": "chat.completion",
        "created": created,
        "model": wire_model(resp.model, enc.w),
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
    }
    if resp.usage is not None:
        rest = own.get("usage")
        completion["usage"] = encode_usage(
            resp.usage, rest if isinstance(rest, dict) else None, enc.w
        )
    for key in ("service_tier", "system_fingerprint"):
        if key in own:
            completion[key] = own[key]
    return completion, enc.w


def _check_stop(resp: ModelResponse, finish: str, message: dict[str, Any], w: Warnings) -> None:
    """Warn when the finish_reason reads back as another stop reason."""
    back = {"stop": "end_turn", "length": "max_tokens", "content_filter": "content_filter"}.get(
        finish, "tool_use"
    )
    if back == "end_turn" and message.get("refusal"):
        back = "refusal"
    if resp.stop_reason is not None and resp.stop_reason != back:
        w.add(
            "stop_reason_rewritten",
            "stop_reason",
            f"OpenAI Chat has no {resp.stop_reason!r} finish; sent as {finish!r}",
        )


def _response_id(resp: ModelResponse, own: dict[str, Any], w: Warnings) -> str:
    # Any id an OpenAI-compatible server gave stays; another vendor's id (msg_..., resp_...)
    # is replaced by one shaped like OpenAI's.
    if resp.id and (resp.id.startswith("chatcmpl-") or own):
        return resp.id
    new = _completion_id(resp)
    w.add(
        "response_id_replaced",
        "id",
        f"the turn's id {resp.id!r} is not a ChatCompletion id; sent as {new!r}"
        if resp.id
        else f"the turn had no id; {new!r} made up",
    )
    return new


def _completion_id(resp: ModelResponse) -> str:
    digest = hashlib.sha1(json.dumps(dump(resp.message), sort_keys=True).encode()).hexdigest()
    return f"chatcmpl-{digest[:29]}"
