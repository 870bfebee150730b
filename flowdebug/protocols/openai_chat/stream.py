"""OpenAI Chat Completions streaming: a ``chat.completion`` object <-> its chunk list.

Works on wire dicts only. :mod:`flowdebug.protocols.openai_chat.response` encodes a response
to a ChatCompletion and splits it here into ``chat.completion.chunk`` objects; decoding
assembles the chunks back into a ChatCompletion and decodes that, so a stream and a response
of the same turn always decode to the same canonical value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flowdebug.errors import CodecError
from flowdebug.protocols.base import Warnings, dig, expect, require
from flowdebug.protocols.facts import ArgumentSlots
from flowdebug.protocols.openai_chat.parts import REASONING_FIELDS

PROTOCOL = "openai-chat"

# Envelope fields every chunk repeats, in the order the API sends them.
_ENVELOPE = ("id", "created", "model", "service_tier", "system_fingerprint")


def fragments(text: str, pieces: int = 3) -> list[str]:
    """``text`` cut into a few nearly equal pieces, so the assembly is visible."""
    if not text:
        return []
    size = -(-len(text) // pieces)
    return [text[i : i + size] for i in range(0, len(text), size)]


def completion_to_chunks(completion: dict[str, Any]) -> list[dict[str, Any]]:
    """The chunks the API streams for ``completion`` (a ChatCompletion dict we encoded)."""
    base: dict[str, Any] = {"id": completion["id"], "object": "chat.completion.chunk"}
    base |= {k: completion[k] for k in _ENVELOPE[1:] if k in completion}
    choice = completion["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            **base,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }

    content = message.get("content")
    # The first delta names the role; the API sends content "" when text follows, null when
    # the turn is only tool calls.
    chunks = [chunk({"role": "assistant", "content": "" if content else None, "refusal": None})]
    for key in REASONING_FIELDS:
        if isinstance(message.get(key), str):
            # DeepSeek streams its reasoning before the answer, in the same deltas.
            chunks += [chunk({key: piece}) for piece in fragments(message[key]) or [""]]
    chunks += [chunk({"content": piece}) for piece in fragments(content or "")]
    chunks += [chunk({"refusal": piece}) for piece in fragments(message.get("refusal") or "")]
    for index, call in enumerate(message.get("tool_calls") or []):
        # Per call: the first delta carries index, id, type and name with arguments "";
        # later deltas carry only the index and an arguments fragment.
        first = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        if "extra_content" in call:
            first["extra_content"] = call["extra_content"]
        chunks.append(chunk({"tool_calls": [first]}))
        chunks += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in fragments(call["function"]["arguments"])
        ]
    legacy = message.get("function_call")
    if legacy is not None:
        chunks.append(chunk({"function_call": {"name": legacy["name"], "arguments": ""}}))
        chunks += [
            chunk({"function_call": {"arguments": piece}})
            for piece in fragments(legacy["arguments"])
        ]
    chunks.append(chunk({}, choice["finish_reason"]))
    if "usage" in completion:
        # With stream_options.include_usage the last chunk has no choices, only usage.
        chunks.append({**base, "choices": [], "usage": completion["usage"]})
    return chunks


@dataclass
class _Call:
    path: str  # where the call's first delta is, for error messages
    id: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list)
    extra_content: Any = None  # Gemini's OpenAI endpoint: the call's thought signature


@dataclass
class _Accumulator:
    envelope: dict[str, Any] = field(default_factory=dict)
    content: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    reasoning: dict[str, list[str]] = field(default_factory=dict)  # wire field -> pieces
    function_call: _Call | None = None  # legacy delta.function_call
    calls: dict[int, _Call] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None


def chunks_to_completion(events: Any, w: Warnings) -> dict[str, Any]:
    """Assemble a chunk list into one ChatCompletion dict (choice 0 only).

    Tool calls are keyed by ``index``, never by id: only a call's first delta has the id.
    """
    expect(PROTOCOL, events, "$", list)
    acc = _Accumulator()
    other_choices: set[int] = set()
    for i, event in enumerate(events):
        path = f"$[{i}]"
        expect(PROTOCOL, event, path, dict)
        for key in _ENVELOPE:
            if key in event and key not in acc.envelope and event[key] is not None:
                acc.envelope[key] = event[key]
        if event.get("usage") is not None:
            acc.usage = expect(PROTOCOL, event["usage"], f"{path}.usage", dict)
            for key in ("prompt_tokens", "completion_tokens"):
                if key in acc.usage:
                    expect(PROTOCOL, acc.usage[key], f"{path}.usage.{key}", int)
        choices = require(PROTOCOL, event, "choices", path, list)
        for j, choice in enumerate(choices):
            cpath = f"{path}.choices[{j}]"
            expect(PROTOCOL, choice, cpath, dict)
            index = expect(PROTOCOL, choice.get("index", 0), f"{cpath}.index", int)
            if index != 0:
                other_choices.add(index)
                continue
            _add_delta(acc, require(PROTOCOL, choice, "delta", cpath, dict), f"{cpath}.delta")
            finish = choice.get("finish_reason")
            if finish is not None:
                acc.finish_reason = expect(PROTOCOL, finish, f"{cpath}.finish_reason", str)
    for index in sorted(other_choices):
        w.add(
            "choice_dropped",
            f"$.choices[{index}]",
            f"choice {index} dropped: only the first choice becomes the model turn",
        )
    return _completion(acc)


def _add_delta(acc: _Accumulator, delta: dict[str, Any], path: str) -> None:
    for key, parts in (("content", acc.content), ("refusal", acc.refusal)):
        if delta.get(key) is not None:
            parts.append(expect(PROTOCOL, delta[key], f"{path}.{key}", str))
    for key in REASONING_FIELDS:
        if delta.get(key) is not None:
            piece = expect(PROTOCOL, delta[key], f"{path}.{key}", str)
            acc.reasoning.setdefault(key, []).append(piece)
    if delta.get("function_call") is not None:
        legacy = expect(PROTOCOL, delta["function_call"], f"{path}.function_call", dict)
        acc.function_call = acc.function_call or _Call(f"{path}.function_call")
        _add_function(acc.function_call, legacy, f"{path}.function_call")
    calls = delta.get("tool_calls")
    if calls is None:
        return
    for k, item in enumerate(expect(PROTOCOL, calls, f"{path}.tool_calls", list)):
        ipath = f"{path}.tool_calls[{k}]"
        expect(PROTOCOL, item, ipath, dict)
        if "index" not in item and item.get("id") is not None:
            # Mistral and other OpenAI-compatible servers send each call whole in one delta
            # without an index: a delta with a new id is a new call.
            same = [i for i, c in acc.calls.items() if c.id == item["id"]]
            index = same[0] if same else max(acc.calls, default=-1) + 1
        else:
            index = require(PROTOCOL, item, "index", ipath, int)
        call = acc.calls.setdefault(index, _Call(ipath))
        if item.get("id") is not None and call.id is None:
            call.id = expect(PROTOCOL, item["id"], f"{ipath}.id", str)
        if item.get("extra_content") is not None:
            call.extra_content = item["extra_content"]
        function = item.get("function")
        if function is not None:
            fpath = f"{ipath}.function"
            _add_function(call, expect(PROTOCOL, function, fpath, dict), fpath)


def _add_function(call: _Call, function: dict[str, Any], path: str) -> None:
    if function.get("name") is not None and call.name is None:
        call.name = expect(PROTOCOL, function["name"], f"{path}.name", str)
    if function.get("arguments") is not None:
        call.arguments.append(expect(PROTOCOL, function["arguments"], f"{path}.arguments", str))


def _completion(acc: _Accumulator) -> dict[str, Any]:
    tool_calls = []
    for index in sorted(acc.calls):
        call = acc.calls[index]
        if call.id is None:
            raise CodecError(
                PROTOCOL, f"{call.path}.id", f"tool call index {index} never received an id"
            )
        if call.name is None:
            raise CodecError(
                PROTOCOL,
                f"{call.path}.function.name",
                f"tool call index {index} never received a function name",
            )
        entry: dict[str, Any] = {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": "".join(call.arguments)},
        }
        if call.extra_content is not None:
            entry["extra_content"] = call.extra_content
        tool_calls.append(entry)
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(acc.content) if acc.content else None,
        "refusal": "".join(acc.refusal) if acc.refusal else None,
    }
    for key, pieces in acc.reasoning.items():
        message[key] = "".join(pieces)
    if acc.function_call is not None:
        if acc.function_call.name is None:
            raise CodecError(
                PROTOCOL, f"{acc.function_call.path}.name", "the function_call never got a name"
            )
        message["function_call"] = {
            "name": acc.function_call.name,
            "arguments": "".join(acc.function_call.arguments),
        }
    if tool_calls:
        message["tool_calls"] = tool_calls
    completion: dict[str, Any] = {
        **acc.envelope,
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": acc.finish_reason}],
    }
    if acc.usage is not None:
        completion["usage"] = acc.usage
    return completion


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def stream_arguments(event: Any, slots: ArgumentSlots) -> None:
    """Feeds the argument fragments ``event`` carries, if any, into ``slots``."""
    for choice in _list(dig(event, "choices")):
        for call in _list(dig(choice, "delta", "tool_calls")):
            key = (dig(choice, "index"), dig(call, "index"))
            slots.open(key)
            slots.append(key, dig(call, "function", "arguments"))
