"""OpenAI Chat Completions, canonical -> wire: the whole request body and ChatCompletion.

``openai_chat_encode`` places the parts of each message; this module builds what surrounds
them (model, ids, usage, tools, legacy ``functions``) and reports what it fills in or cannot
carry: model_filled_in, response_id_replaced, created_filled_in, usage_dropped,
usage_rewritten, messages_merged, provider_details_dropped, part_dropped.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, assert_never

from flowdebug.model import Conversation, ModelResponse, ToolChoice, ToolResult, dump
from flowdebug.protocols.base import Warnings
from flowdebug.protocols.models import own_model
from flowdebug.protocols.openai_chat.compat import encode_usage
from flowdebug.protocols.openai_chat.encode import (
    CREATED,
    DEFAULT_MODEL,
    PROTOCOL,
    Encoder,
    own_extra,
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


def _own(details: dict[str, Any] | None) -> dict[str, Any]:
    value = (details or {}).get(PROTOCOL)
    return value if isinstance(value, dict) else {}


def _model(model: str | None, w: Warnings) -> str:
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
    if _own(conv.provider_details).get("legacy_functions") is not True:
        return False
    return all(len(m.tool_calls) <= 1 for m in conv.messages if m.role == "assistant")


def encode_request(conv: Conversation) -> tuple[dict[str, Any], Warnings]:
    """A chat.completions request body for ``conv``, and what it could not carry."""
    enc = Encoder(conv.model, _legacy(conv))
    own = _own(conv.provider_details)
    if _own(conv.provider_details).get("legacy_functions") and not enc.legacy:
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
    previous = None
    for i, msg in enumerate(conv.messages):
        if msg.role == "tool" and previous == "tool":
            # Consecutive tool messages read back as one batch.
            enc.w.add("messages_merged", "messages", f"messages[{i}] joins the tool batch before")
        previous = msg.role
        messages += enc.messages(msg, f"messages[{i}]")
    body: dict[str, Any] = {"model": _model(conv.model, enc.w), "messages": messages}
    if tools:
        body["tools"] = tools
    if conv.tool_choice is not None:
        _tool_choice(enc, conv.tool_choice, body)
    if enc.legacy:
        _to_legacy(body, enc.w)
    if conv.max_tokens is not None:
        body["max_completion_tokens"] = conv.max_tokens
    if conv.temperature is not None:
        body["temperature"] = conv.temperature
    # Fields decode_request could not map come back verbatim.
    extra = own.get("body")
    for key, value in (extra if isinstance(extra, dict) else {}).items():
        body.setdefault(key, value)
    return body, enc.w


def _tool_choice(enc: Encoder, choice: ToolChoice, body: dict[str, Any]) -> None:
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


def _to_legacy(body: dict[str, Any], w: Warnings) -> None:
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


def encode_completion(resp: ModelResponse) -> tuple[dict[str, Any], Warnings]:
    """A ChatCompletion object for ``resp``, and what it could not carry."""
    own = _own(resp.provider_details)
    enc = Encoder(resp.model, own.get("legacy_functions") is True)
    enc.foreign_details(resp.provider_details, "")
    enc.foreign_details(resp.message.provider_details, "message")
    for j, part in enumerate(resp.message.parts):
        if isinstance(part, ToolResult):
            enc.w.add("part_dropped", f"message.parts[{j}]", "a model turn has no results")
    parts = enc.parts(resp.message.model_copy(update={"role": "assistant"}), "message")
    text = "".join(p["text"] for p in parts.content if p["type"] == "text")
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
        "model": _model(resp.model, enc.w),
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
