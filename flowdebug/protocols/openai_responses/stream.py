"""OpenAI Responses streaming: a ``Response`` object <-> its server-sent event sequence.

Works on wire dicts only. Encoding splits a Response we encoded into the events the API
streams (every event numbered by ``sequence_number``); decoding assembles the events back into
a Response dict, so a stream and a response of the same turn decode to the same value.
"""

from __future__ import annotations

import copy
from typing import Any

from flowdebug.errors import CodecError
from flowdebug.protocols.base import Warnings, dig, expect, require
from flowdebug.protocols.facts import ArgumentSlots
from flowdebug.protocols.openai_responses.parts import PROTOCOL

_TERMINAL = ("response.completed", "response.incomplete", "response.failed")


def fragments(text: str, size: int = 12, pieces: int = 4) -> list[str]:
    """``text`` cut into a few pieces (at least ``size`` characters, at most ``pieces`` of
    them), so the assembly is visible."""
    if not text:
        return []
    size = max(size, -(-len(text) // pieces))
    return [text[i : i + size] for i in range(0, len(text), size)]


def response_to_events(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The events the API streams for ``response`` (a Response dict we encoded)."""
    events: list[dict[str, Any]] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append({"type": kind, "sequence_number": len(events), **fields})

    # The opening snapshots have no output and no usage yet.
    start = response | {
        "status": "in_progress",
        "output": [],
        "incomplete_details": None,
        "usage": None,
    }
    emit("response.created", response=start)
    emit("response.in_progress", response=copy.deepcopy(start))
    for index, item in enumerate(response["output"]):
        at = {"output_index": index}
        match item.get("type"):
            case "function_call":
                emit(
                    "response.output_item.added",
                    **at,
                    item=item | {"arguments": "", "status": "in_progress"},
                )
                ref = {"item_id": item["id"], **at}
                for piece in fragments(item["arguments"]):
                    emit("response.function_call_arguments.delta", **ref, delta=piece)
                # As the reference capture and openai 3.54's event type: no name here (older
                # SDKs had one; decoding accepts both).
                emit("response.function_call_arguments.done", **ref, arguments=item["arguments"])
            case "message":
                emit(
                    "response.output_item.added",
                    **at,
                    item=item | {"status": "in_progress", "content": []},
                )
                for k, part in enumerate(item["content"]):
                    _content_events(emit, {"item_id": item["id"], **at, "content_index": k}, part)
            case "reasoning":
                # encrypted_content is only complete on output_item.done.
                added = {k: v for k, v in item.items() if k != "encrypted_content"}
                emit("response.output_item.added", **at, item=added | {"summary": []})
                for k, part in enumerate(item["summary"]):
                    ref = {"item_id": item["id"], **at, "summary_index": k}
                    emit(
                        "response.reasoning_summary_part.added",
                        **ref,
                        part={"type": "summary_text", "text": ""},
                    )
                    for piece in fragments(part["text"]):
                        emit("response.reasoning_summary_text.delta", **ref, delta=piece)
                    emit("response.reasoning_summary_text.done", **ref, text=part["text"])
                    emit("response.reasoning_summary_part.done", **ref, part=part)
            case "custom_tool_call":
                emit("response.output_item.added", **at, item=item | {"input": ""})
                ref = {"item_id": item.get("id", item["call_id"]), **at}
                for piece in fragments(item["input"]):
                    emit("response.custom_tool_call_input.delta", **ref, delta=piece)
                emit("response.custom_tool_call_input.done", **ref, input=item["input"])
            case "mcp_call":
                emit(
                    "response.output_item.added",
                    **at,
                    item=item | {"arguments": "", "output": None, "status": "in_progress"},
                )
                ref = {"item_id": item["id"], **at}
                emit("response.mcp_call.in_progress", **ref)
                for piece in fragments(item["arguments"]):
                    emit("response.mcp_call_arguments.delta", **ref, delta=piece)
                emit("response.mcp_call_arguments.done", **ref, arguments=item["arguments"])
                failed = item.get("status") == "failed"
                emit(f"response.mcp_call.{'failed' if failed else 'completed'}", **ref)
            case "web_search_call" | "file_search_call" | "mcp_list_tools" as kind:
                # As the API streams them: the bare item, then its progress events. The SDK's
                # item types require a search's action and a file search's queries up front.
                bare = {k: v for k, v in item.items() if k in _ADDED_KEYS}
                bare |= {"tools": []} if kind == "mcp_list_tools" else {}
                emit("response.output_item.added", **at, item=bare | _in_progress(item))
                ref = {"item_id": item["id"], **at}
                emit(f"response.{kind}.in_progress", **ref)
                if kind != "mcp_list_tools":
                    emit(f"response.{kind}.searching", **ref)
                emit(f"response.{kind}.completed", **ref)
            case _:
                emit("response.output_item.added", **at, item=item)
        emit("response.output_item.done", **at, item=item)
    terminal = f"response.{response['status']}"
    emit(terminal if terminal in _TERMINAL else "response.completed", response=response)
    return events


_ADDED_KEYS = ("id", "type", "server_label", "action", "queries")


def _in_progress(item: dict[str, Any]) -> dict[str, Any]:
    return {"status": "in_progress"} if "status" in item else {}


def _content_events(emit: Any, ref: dict[str, Any], part: dict[str, Any]) -> None:
    if part["type"] == "refusal":
        emit("response.content_part.added", **ref, part={"type": "refusal", "refusal": ""})
        for piece in fragments(part["refusal"]):
            emit("response.refusal.delta", **ref, delta=piece)
        emit("response.refusal.done", **ref, refusal=part["refusal"])
    else:
        emit(
            "response.content_part.added",
            **ref,
            part={"type": "output_text", "text": "", "annotations": []},
        )
        for piece in fragments(part["text"]):
            emit("response.output_text.delta", **ref, delta=piece, logprobs=[])
        emit("response.output_text.done", **ref, text=part["text"], logprobs=[])
    emit("response.content_part.done", **ref, part=part)


class _Assembly:
    """Output items rebuilt from added / delta / done events, by output index."""

    def __init__(self) -> None:
        self.items: dict[int, dict[str, Any]] = {}
        self.paths: dict[int, str] = {}

    def put(self, event: dict[str, Any], path: str) -> None:
        index = require(PROTOCOL, event, "output_index", path, int)
        item = require(PROTOCOL, event, "item", path, dict)
        self.items[index] = copy.deepcopy(item)
        self.paths[index] = f"{path}.item"

    def item(self, event: dict[str, Any], path: str) -> dict[str, Any]:
        index = require(PROTOCOL, event, "output_index", path, int)
        if index not in self.items:
            raise CodecError(
                PROTOCOL,
                f"{path}.output_index",
                f"no response.output_item.added event for output index {index}",
            )
        return self.items[index]

    def slot(self, event: dict[str, Any], path: str, key: str, index_key: str) -> dict[str, Any]:
        """The content (or summary) part an event refers to."""
        parts = self.item(event, path).setdefault(key, [])
        index = require(PROTOCOL, event, index_key, path, int)
        if (
            not isinstance(parts, list)
            or not 0 <= index < len(parts)
            or not isinstance(parts[index], dict)
        ):
            raise CodecError(PROTOCOL, f"{path}.{index_key}", f"no part was added at {index}")
        return parts[index]

    def append(self, event: dict[str, Any], path: str, key: str, index_key: str) -> None:
        parts = self.item(event, path).setdefault(key, [])
        index = require(PROTOCOL, event, index_key, path, int)
        part = copy.deepcopy(require(PROTOCOL, event, "part", path, dict))
        if not isinstance(parts, list) or index > len(parts):
            raise CodecError(PROTOCOL, f"{path}.{index_key}", f"part {index} arrived out of order")
        parts[index : index + 1] = [part]


def events_to_response(events: Any, w: Warnings) -> tuple[dict[str, Any], list[str]]:
    """The Response dict a stream amounts to, and where each output item came from.

    The terminal event's response is authoritative when it lists the output (as the SDK's
    ``get_final_response`` does); otherwise, as for a stream that was cut short, the output
    is rebuilt from the item events.
    """
    expect(PROTOCOL, events, "$", list)
    envelope: dict[str, Any] | None = None
    terminal: tuple[dict[str, Any], str] | None = None
    acc = _Assembly()
    for i, event in enumerate(events):
        path = f"$[{i}]"
        expect(PROTOCOL, event, path, dict)
        kind = require(PROTOCOL, event, "type", path, str)
        match kind:
            case "response.created" | "response.queued" | "response.in_progress":
                envelope = require(PROTOCOL, event, "response", path, dict)
            case "response.completed" | "response.incomplete" | "response.failed":
                envelope = require(PROTOCOL, event, "response", path, dict)
                terminal = envelope, f"{path}.response"
            case "response.output_item.added" | "response.output_item.done":
                acc.put(event, path)
            case "response.function_call_arguments.delta":
                item = acc.item(event, path)
                item["arguments"] = str(item.get("arguments") or "") + _str(event, "delta", path)
            case "response.function_call_arguments.done" | "response.mcp_call_arguments.done":
                acc.item(event, path)["arguments"] = _str(event, "arguments", path)
            case "response.mcp_call_arguments.delta":
                item = acc.item(event, path)
                item["arguments"] = str(item.get("arguments") or "") + _str(event, "delta", path)
            case "response.custom_tool_call_input.delta":
                item = acc.item(event, path)
                item["input"] = str(item.get("input") or "") + _str(event, "delta", path)
            case "response.custom_tool_call_input.done":
                acc.item(event, path)["input"] = _str(event, "input", path)
            case "response.code_interpreter_call_code.delta":
                item = acc.item(event, path)
                item["code"] = str(item.get("code") or "") + _str(event, "delta", path)
            case "response.code_interpreter_call_code.done":
                acc.item(event, path)["code"] = _str(event, "code", path)
            case "response.content_part.added" | "response.content_part.done":
                acc.append(event, path, "content", "content_index")
            case "response.output_text.delta" | "response.refusal.delta":
                field = "text" if kind == "response.output_text.delta" else "refusal"
                part = acc.slot(event, path, "content", "content_index")
                part[field] = str(part.get(field) or "") + _str(event, "delta", path)
            case "response.output_text.done":
                acc.slot(event, path, "content", "content_index")["text"] = _str(
                    event, "text", path
                )
            case "response.refusal.done":
                part = acc.slot(event, path, "content", "content_index")
                part["refusal"] = _str(event, "refusal", path)
            case "response.reasoning_summary_part.added" | "response.reasoning_summary_part.done":
                acc.append(event, path, "summary", "summary_index")
            case "response.reasoning_summary_text.delta":
                part = acc.slot(event, path, "summary", "summary_index")
                part["text"] = str(part.get("text") or "") + _str(event, "delta", path)
            case "response.reasoning_summary_text.done":
                part = acc.slot(event, path, "summary", "summary_index")
                part["text"] = _str(event, "text", path)
            case "error":
                w.add("stream_error", path, f"the stream reported an error: {event.get('message')}")
            case _:
                # Progress events (web_search_call.searching, mcp_call.completed, annotation
                # added ...) change no item: output_item.done brings the finished one.
                pass
    if envelope is None:
        raise CodecError(PROTOCOL, "$", "the stream has no response.created event")
    if terminal is not None and terminal[0].get("output"):
        output = expect(PROTOCOL, terminal[0]["output"], f"{terminal[1]}.output", list)
        return terminal[0], [f"{terminal[1]}.output[{k}]" for k in range(len(output))]
    order = sorted(acc.items)
    response = envelope | {"output": [acc.items[k] for k in order]}
    return response, [acc.paths[k] for k in order]


def _str(event: dict[str, Any], key: str, path: str) -> str:
    return require(PROTOCOL, event, key, path, str)


def stream_arguments(event: Any, slots: ArgumentSlots) -> None:
    """Feeds the argument fragment ``event`` carries, if any, into ``slots``."""
    kind, index = dig(event, "type"), dig(event, "output_index")
    if kind == "response.output_item.added" and dig(event, "item", "type") == "function_call":
        slots.open(index)
    elif kind == "response.function_call_arguments.delta" and slots.is_open(index):
        slots.append(index, dig(event, "delta"))
