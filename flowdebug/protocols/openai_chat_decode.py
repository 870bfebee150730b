"""OpenAI Chat Completions, wire -> canonical: request bodies and ChatCompletion objects.

Malformed input raises CodecError with the JSON path of the offending value. Each field is
type-checked here as it is read, so the canonical parts are built as plain dicts and the
whole conversation is validated once at the end: one pydantic call instead of thousands
(three times faster on long histories).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from flowdebug.errors import CodecError, json_path
from flowdebug.model import (
    Conversation,
    Message,
    ModelResponse,
    StopReason,
    Tool,
    ToolChoice,
)
from flowdebug.protocols.base import Warnings, expect, require

PROTOCOL = "openai-chat"

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
}


def _parse_arguments(text: str) -> tuple[dict[str, Any], str | None]:
    """(arguments, raw_arguments): a string that is not a JSON object is kept raw."""
    if text == "":  # a streamed call starts with arguments "": no arguments at all
        return {}, None
    try:
        value = json.loads(text)
    except ValueError:
        return {}, text
    return (value, None) if isinstance(value, dict) else ({}, text)


def _error_text(content: str) -> str | None:
    """The message of an error result encoded as ``{"error": "<text>"}``, else None."""
    if not content.startswith("{") or '"error"' not in content:
        return None  # most results: no need to parse them
    try:
        value = json.loads(content)
    except ValueError:
        return None
    if isinstance(value, dict) and list(value) == ["error"] and isinstance(value["error"], str):
        return value["error"]
    return None


def _name_details(raw: dict[str, Any], path: str, **more: Any) -> dict[str, Any] | None:
    details = dict(more)
    if raw.get("name") is not None:
        details["name"] = expect(PROTOCOL, raw["name"], f"{path}.name", str)
    return {PROTOCOL: details} if details else None


Raw = dict[str, Any]  # a canonical object as plain data, validated later in one go


def _text(text: str, details: Any = None) -> Raw:
    out: Raw = {"kind": "text", "text": text}
    if details is not None:
        out["provider_details"] = details
    return out


def _decode_content(content: Any, path: str, w: Warnings, role: str) -> list[Raw]:
    """Message content (null, a string or a list of parts) as canonical parts."""
    if content is None:
        return []
    if isinstance(content, str):
        return [_text(content)] if content else []
    parts: list[Raw] = []
    for k, item in enumerate(expect(PROTOCOL, content, path, list)):
        ipath = f"{path}[{k}]"
        expect(PROTOCOL, item, ipath, dict)
        kind = require(PROTOCOL, item, "type", ipath, str)
        if kind == "text":
            parts.append(_text(require(PROTOCOL, item, "text", ipath, str)))
        elif kind == "refusal" and role == "assistant":
            refusal = require(PROTOCOL, item, "refusal", ipath, str)
            parts.append(_text(refusal, {PROTOCOL: {"refusal": True}}))
        elif kind == "image_url" and role == "user":
            parts.append(
                _decode_image(
                    require(PROTOCOL, item, "image_url", ipath, dict), f"{ipath}.image_url"
                )
            )
        else:
            w.add(
                "content_part_dropped", ipath, f"{kind!r} parts in {role} messages are not carried"
            )
    return parts


def _decode_image(image_url: dict[str, Any], path: str) -> Raw:
    url = require(PROTOCOL, image_url, "url", path, str)
    details = {PROTOCOL: {"detail": image_url["detail"]}} if "detail" in image_url else None
    if url.startswith("data:") and ";base64," in url:
        media_type, data = url[5:].split(";base64,", 1)
        image = {"kind": "image", "media_type": media_type, "data": data}
    else:
        image = {"kind": "image", "url": url}
    return image | ({"provider_details": details} if details else {})


def _decode_call(item: Any, path: str) -> Raw:
    expect(PROTOCOL, item, path, dict)
    kind = item.get("type", "function")
    if kind != "function":
        raise CodecError(
            PROTOCOL,
            f"{path}.type",
            f"{kind!r} tool calls are not supported; only 'function' calls are",
        )
    function = require(PROTOCOL, item, "function", path, dict)
    arguments, raw = _parse_arguments(
        require(PROTOCOL, function, "arguments", f"{path}.function", str)
    )
    return {
        "kind": "tool_call",
        "id": require(PROTOCOL, item, "id", path, str),
        "name": require(PROTOCOL, function, "name", f"{path}.function", str),
        "arguments": arguments,
        "raw_arguments": raw,
    }


def _decode_assistant(raw: dict[str, Any], path: str, w: Warnings) -> Raw:
    parts = _decode_content(raw.get("content"), f"{path}.content", w, "assistant")
    if raw.get("refusal") is not None:
        refusal = expect(PROTOCOL, raw["refusal"], f"{path}.refusal", str)
        parts.append(_text(refusal, {PROTOCOL: {"refusal": True}}))
    if raw.get("function_call") is not None:
        raise CodecError(
            PROTOCOL,
            f"{path}.function_call",
            "the deprecated function_call is not supported; use tool_calls",
        )
    calls = raw.get("tool_calls")
    if calls is not None:
        expect(PROTOCOL, calls, f"{path}.tool_calls", list)
        parts += [_decode_call(c, f"{path}.tool_calls[{k}]") for k, c in enumerate(calls)]
    return _message("assistant", parts, _name_details(raw, path))


def _message(role: str, parts: list[Raw], details: Any = None) -> Raw:
    out: Raw = {"role": role, "parts": parts}
    if details is not None:
        out["provider_details"] = details
    return out


def _decode_result(raw: dict[str, Any], path: str, names: dict[str, str]) -> Raw:
    call_id = require(PROTOCOL, raw, "tool_call_id", path, str)
    content = require(PROTOCOL, raw, "content", path, (str, list))
    if isinstance(content, str):
        error = _error_text(content)
        return {
            "kind": "tool_result",
            "call_id": call_id,
            "name": names.get(call_id),
            "content": content if error is None else error,
            "is_error": error is not None,
        }
    texts: list[Raw] = []
    for k, item in enumerate(content):
        ipath = f"{path}.content[{k}]"
        expect(PROTOCOL, item, ipath, dict)
        if item.get("type") != "text":
            raise CodecError(PROTOCOL, f"{ipath}.type", "tool message content parts must be text")
        texts.append(_text(require(PROTOCOL, item, "text", ipath, str)))
    return {"kind": "tool_result", "call_id": call_id, "name": names.get(call_id), "content": texts}


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


def _decode_messages(raw_messages: Any, w: Warnings, conv: dict[str, Any]) -> list[Raw]:
    messages: list[Raw] = []
    names: dict[str, str] = {}  # call id -> tool name, to name the results
    batch: list[Raw] = []  # consecutive tool messages form one canonical tool turn

    def flush() -> None:
        if batch:
            messages.append(_message("tool", list(batch)))
            batch.clear()

    for i, raw in enumerate(expect(PROTOCOL, raw_messages, "$.messages", list)):
        path = f"$.messages[{i}]"
        expect(PROTOCOL, raw, path, dict)
        role = require(PROTOCOL, raw, "role", path, str)
        if role == "tool":
            batch.append(_decode_result(raw, path, names))
            continue
        flush()
        match role:
            case "system" | "developer":
                parts = _decode_content(
                    require(PROTOCOL, raw, "content", path, (str, list)),
                    f"{path}.content",
                    w,
                    "system",
                )
                if i == 0 and "name" not in raw:
                    conv["system"] = "\n".join(p["text"] for p in parts if p["kind"] == "text")
                    if role == "developer":
                        conv["details"]["system_role"] = "developer"
                    continue
                more = {"role": "developer"} if role == "developer" else {}
                messages.append(_message("system", parts, _name_details(raw, path, **more)))
            case "user":
                parts = _decode_content(
                    require(PROTOCOL, raw, "content", path, (str, list)),
                    f"{path}.content",
                    w,
                    "user",
                )
                messages.append(_message("user", parts, _name_details(raw, path)))
            case "assistant":
                message = _decode_assistant(raw, path, w)
                for part in message["parts"]:
                    if part["kind"] == "tool_call":
                        names[part["id"]] = part["name"]
                messages.append(message)
            case _:
                raise CodecError(
                    PROTOCOL,
                    f"{path}.role",
                    f"unsupported role {role!r}; "
                    "expected system, developer, user, assistant or tool",
                )
    flush()
    return messages


def _decode_usage(usage: Any, path: str) -> dict[str, int] | None:
    if usage is None:
        return None
    expect(PROTOCOL, usage, path, dict)
    out = {}
    for wire, canonical in (
        ("prompt_tokens", "input_tokens"),
        ("completion_tokens", "output_tokens"),
    ):
        if wire in usage:
            out[canonical] = expect(PROTOCOL, usage[wire], f"{path}.{wire}", int)
    return out


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
    details = {}
    for key, typ in (("created", int), ("service_tier", str), ("system_fingerprint", str)):
        if payload.get(key) is not None:
            details[key] = expect(PROTOCOL, payload[key], f"$.{key}", typ)
    for key in ("id", "model"):
        if payload.get(key) is not None:
            expect(PROTOCOL, payload[key], f"$.{key}", str)
    return ModelResponse(
        message=_validated(Message, _decode_assistant(message, "$.choices[0].message", w)),
        stop_reason=None if finish is None else _FINISH_TO_STOP.get(finish, "other"),
        id=payload.get("id"),
        model=payload.get("model"),
        usage=_decode_usage(payload.get("usage"), "$.usage"),
        provider_details={PROTOCOL: details} if details else None,
    )


def decode_request(payload: Any, w: Warnings) -> Conversation:
    """A chat.completions request body as a canonical conversation."""
    expect(PROTOCOL, payload, "$", dict)
    found: dict[str, Any] = {"system": None, "details": {}}
    messages = _decode_messages(require(PROTOCOL, payload, "messages", "$", list), w, found)
    tools = _decode_tools(payload["tools"], w) if payload.get("tools") is not None else []
    details = found["details"]
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
    return _validated(
        Conversation,
        {
            "system": found["system"],
            "tools": tools,
            "tool_choice": _decode_tool_choice(payload, w),
            "messages": messages,
            "model": payload.get("model"),
            "max_tokens": max_tokens,
            "temperature": payload.get("temperature"),
            "provider_details": {PROTOCOL: details} if details else None,
        },
    )


def _validated(model: Any, data: Raw) -> Any:
    """Validate the decoded tree once. The wire was checked field by field while reading;
    anything still wrong is reported as a codec error, never a pydantic one."""
    try:
        return model.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        where = json_path(err["loc"])
        raise CodecError(PROTOCOL, where, f"not a valid canonical value: {err['msg']}") from None
