"""OpenAI Chat Completions, wire -> canonical: the messages of a request and a ChatCompletion.

Malformed input raises CodecError with the JSON path of the offending value. Each field is
type-checked here as it is read, so the canonical parts are built as plain dicts and the
whole conversation is validated once at the end: one pydantic call instead of thousands
(three times faster on long histories).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from flowdebug.errors import CodecError, json_path
from flowdebug.protocols.base import Warnings, expect, require
from flowdebug.protocols.error_results import error_message
from flowdebug.protocols.openai_chat.parts import (
    PROTOCOL,
    REASONING_FIELDS,
    decode_extra_content,
    decode_reasoning,
)
from flowdebug.protocols.wire_helpers import arguments_from_text

_ASSISTANT_KEYS = {
    "role",
    "content",
    "refusal",
    "tool_calls",
    "function_call",
    "name",
    "annotations",
    "audio",
    "reasoning_content",
    "reasoning",
}


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
        # An empty user or system text is a part of its own; an assistant's "" is no text.
        return [_text(content)] if content or role != "assistant" else []
    parts: list[Raw] = []
    for k, item in enumerate(expect(PROTOCOL, content, path, list)):
        ipath = f"{path}[{k}]"
        expect(PROTOCOL, item, ipath, dict)
        kind = require(PROTOCOL, item, "type", ipath, str)
        if kind == "text":
            parts.append(_text(require(PROTOCOL, item, "text", ipath, str)))
        elif kind == "refusal" and role == "assistant":
            refusal = require(PROTOCOL, item, "refusal", ipath, str)
            parts.append({"kind": "text", "text": refusal, "refusal": True})
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
    # DeepSeek repeats the stream's "index" on a whole message's calls: positional, not kept.
    expect(PROTOCOL, item, path, dict)
    kind = item.get("type", "function")
    if kind != "function":
        raise CodecError(
            PROTOCOL,
            f"{path}.type",
            f"{kind!r} tool calls are not supported; only 'function' calls are",
        )
    function = require(PROTOCOL, item, "function", path, dict)
    arguments, raw = arguments_from_text(
        require(PROTOCOL, function, "arguments", f"{path}.function", str)
    )
    out = {
        "kind": "tool_call",
        "id": require(PROTOCOL, item, "id", path, str),
        "name": require(PROTOCOL, function, "name", f"{path}.function", str),
        "arguments": arguments,
        "raw_arguments": raw,
    }
    details = decode_extra_content(item, path)
    if details is not None:
        out["provider_details"] = details
    return out


def legacy_call_id(index: int) -> str:
    """The id given to a legacy ``function_call`` (the wire has none): its message index."""
    return f"function_call_{index}"


def _decode_function_call(raw: Any, path: str, call_id: str) -> Raw:
    """A legacy ``message.function_call`` ({name, arguments}) as a canonical call."""
    expect(PROTOCOL, raw, path, dict)
    arguments, raw_arguments = arguments_from_text(require(PROTOCOL, raw, "arguments", path, str))
    return {
        "kind": "tool_call",
        "id": call_id,
        "name": require(PROTOCOL, raw, "name", path, str),
        "arguments": arguments,
        "raw_arguments": raw_arguments,
    }


def decode_assistant(raw: dict[str, Any], path: str, w: Warnings, index: int = 0) -> Raw:
    # most messages carry no reasoning: a set test in C before looking for it
    parts = [] if raw.keys().isdisjoint(REASONING_FIELDS) else decode_reasoning(raw, path)
    parts += _decode_content(raw.get("content"), f"{path}.content", w, "assistant")
    if raw.get("refusal") is not None:
        refusal = expect(PROTOCOL, raw["refusal"], f"{path}.refusal", str)
        parts.append({"kind": "text", "text": refusal, "refusal": True})
    if raw.get("function_call") is not None:
        # Legacy (pre tool_calls) function calling: one call, no id.
        parts.append(
            _decode_function_call(
                raw["function_call"], f"{path}.function_call", legacy_call_id(index)
            )
        )
    calls = raw.get("tool_calls")
    if calls is not None:
        expect(PROTOCOL, calls, f"{path}.tool_calls", list)
        parts += [_decode_call(c, f"{path}.tool_calls[{k}]") for k, c in enumerate(calls)]
    details = _name_details(raw, path) or {PROTOCOL: {}}
    # What a compatible server adds to the message (Gemini's OpenAI endpoint: extra_content
    # and thought_signature) comes back verbatim.
    if raw.keys() - _ASSISTANT_KEYS:  # a set difference in C: most messages have none
        details[PROTOCOL]["extra"] = {k: v for k, v in raw.items() if k not in _ASSISTANT_KEYS}
    return _message("assistant", parts, details if details[PROTOCOL] else None)


def _message(role: str, parts: list[Raw], details: Any = None) -> Raw:
    out: Raw = {"role": role, "parts": parts}
    if details is not None:
        out["provider_details"] = details
    return out


def _by_name(
    raw: dict[str, Any], path: str, pending: dict[str, list[str]], w: Warnings
) -> tuple[str, str, dict[str, Any]]:
    """(call id, name, details) of a result that names its tool instead of its call: a legacy
    ``role: "function"`` message, or a ``role: "tool"`` one without ``tool_call_id``
    (Ollama). It answers the earliest unanswered call of that name."""
    key = "tool_name" if raw.get("name") is None and "tool_name" in raw else "name"
    name = require(PROTOCOL, raw, key, path, str)
    waiting = pending.get(name)
    if not waiting:
        raise CodecError(PROTOCOL, f"{path}.{key}", f"no earlier unanswered call of {name!r}")
    if raw["role"] == "tool":
        w.add(
            "tool_call_id_missing",
            path,
            f"a tool message without tool_call_id (paired by name to {waiting[0]}): "
            "OpenAI-compatible servers such as Ollama accept it, api.openai.com rejects it",
        )
        return waiting.pop(0), name, {PROTOCOL: {"paired_by": key}}
    return waiting.pop(0), name, {}


def _decode_result(
    raw: dict[str, Any],
    path: str,
    names: dict[str, str],
    pending: dict[str, list[str]],
    w: Warnings,
) -> Raw:
    details: dict[str, Any] = {}
    named = raw.get("name") is not None or raw.get("tool_name") is not None
    if raw["role"] == "function" or (named and raw.get("tool_call_id") is None):
        call_id, name, details = _by_name(raw, path, pending, w)
        names.setdefault(call_id, name)
    else:
        call_id = require(PROTOCOL, raw, "tool_call_id", path, str)
        waiting = pending.get(names.get(call_id, ""))
        if waiting and call_id in waiting:
            waiting.remove(call_id)
    out = _result(raw, path, call_id, names.get(call_id))
    if details:
        out["provider_details"] = details
    return out


def _result(raw: dict[str, Any], path: str, call_id: str, name: str | None) -> Raw:
    content = require(PROTOCOL, raw, "content", path, (str, list))
    if isinstance(content, str):
        error = error_message(content)
        return {
            "kind": "tool_result",
            "call_id": call_id,
            "name": name,
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
    return {"kind": "tool_result", "call_id": call_id, "name": name, "content": texts}


def decode_messages(raw_messages: Any, w: Warnings, conv: dict[str, Any]) -> list[Raw]:
    messages: list[Raw] = []
    names: dict[str, str] = {}  # call id -> tool name, to name the results
    pending: dict[str, list[str]] = {}  # tool name -> ids of its unanswered calls
    batch: list[Raw] = []  # consecutive tool messages form one canonical tool turn

    def flush() -> None:
        if batch:
            messages.append(_message("tool", list(batch)))
            batch.clear()

    for i, raw in enumerate(expect(PROTOCOL, raw_messages, "$.messages", list)):
        path = f"$.messages[{i}]"
        expect(PROTOCOL, raw, path, dict)
        role = require(PROTOCOL, raw, "role", path, str)
        if role in ("tool", "function"):
            batch.append(_decode_result(raw, path, names, pending, w))
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
                message = decode_assistant(raw, path, w, i)
                for part in message["parts"]:
                    if part["kind"] == "tool_call":
                        names[part["id"]] = part["name"]
                        pending.setdefault(part["name"], []).append(part["id"])
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


def validated(model: Any, data: Raw) -> Any:
    """Validate the decoded tree once. The wire was checked field by field while reading;
    anything still wrong is reported as a codec error, never a pydantic one."""
    try:
        return model.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        where = json_path(err["loc"])
        raise CodecError(PROTOCOL, where, f"not a valid canonical value: {err['msg']}") from None
