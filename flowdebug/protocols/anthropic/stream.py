"""Anthropic Messages streaming, wire to wire: a Message body as the SSE events the API sends,
and a list of events assembled back into the Message body they describe.

The canonical side lives in :mod:`flowdebug.protocols.anthropic.response`; this module only
knows Anthropic dicts, and, for the debugger's replay, how a call's arguments grow in a stream:
a ``tool_use`` block opens a call, each ``input_json_delta`` adds a fragment of its JSON.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass, field
from typing import Any

from flowdebug import jsontext
from flowdebug.errors import CodecError
from flowdebug.protocols.base import Warnings, dig, expect, require
from flowdebug.protocols.facts import ArgumentSlots

PROTOCOL = "anthropic"
# Blocks whose input streams as input_json_delta fragments.
INPUT_BLOCKS = ("tool_use", "server_tool_use", "mcp_tool_use")

EVENT_TYPES = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
        "error",
    }
)


def _pieces(text: str, count: int = 2) -> list[str]:
    """``text`` cut into at most ``count`` fragments, so the assembly shows in a debugger."""
    if not text:
        return []
    size = max(1, math.ceil(len(text) / count))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _block_events(index: int, block: dict[str, Any]) -> list[dict[str, Any]]:
    """content_block_start, its deltas and content_block_stop for one content block."""
    deltas: list[dict[str, Any]] = []
    match block.get("type"):
        case "text":
            start = {k: v for k, v in block.items() if k != "citations"} | {"text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in _pieces(block["text"])]
            deltas += [
                {"type": "citations_delta", "citation": c} for c in block.get("citations") or []
            ]
        case "thinking":
            # Anthropic: the signature arrives last, in one signature_delta before the stop.
            start = block | {"thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(block["thinking"])]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        case "tool_use" | "server_tool_use" | "mcp_tool_use":
            # Anthropic: a tool_use (a server tool's and an MCP connector call's too) starts
            # with input {} and its JSON comes as string fragments, the first one often empty.
            start = block | {"input": {}}
            fragments = ["", *_pieces(json.dumps(block["input"], ensure_ascii=False))]
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in fragments]
        case _:
            start = block  # redacted_thinking and server blocks arrive whole
    return [
        {"type": "content_block_start", "index": index, "content_block": start},
        *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def events_from_message(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The stream the API sends for ``message`` (a Message body), in wire order."""
    usage = dict(message["usage"])
    output_tokens = usage.get("output_tokens", 0)
    start: dict[str, Any] = {}
    for key, value in message.items():
        if key == "content":
            start[key] = []
        elif key in ("stop_reason", "stop_sequence"):
            start[key] = None
        elif key == "usage":
            start[key] = usage | {"output_tokens": min(1, output_tokens)}
        elif key != "stop_details":
            start[key] = value
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": message.get("stop_sequence")}
    if message.get("stop_details") is not None:
        delta["stop_details"] = message["stop_details"]
    events = [{"type": "message_start", "message": start}]
    for index, block in enumerate(message["content"]):
        events += _block_events(index, block)
    events.append(
        {"type": "message_delta", "delta": delta, "usage": {"output_tokens": output_tokens}}
    )
    events.append({"type": "message_stop"})
    return events


def unwrap(event: Any) -> tuple[Any, str]:
    """An event dict and its path suffix; accepts ``{"event": ..., "data": {...}}`` captures."""
    if isinstance(event, dict) and "type" not in event and isinstance(event.get("data"), dict):
        return event["data"], ".data"
    return event, ""


def is_stream(payload: Any) -> bool:
    """Whether ``payload`` is a list of Anthropic stream events (bare or SSE-captured)."""
    if not isinstance(payload, list) or not payload:
        return False
    events = [unwrap(e)[0] for e in payload]
    types = [e.get("type") if isinstance(e, dict) else None for e in events]
    return all(isinstance(t, str) and t in EVENT_TYPES for t in types) and "message_start" in types


@dataclass
class Assembled:
    """A Message body rebuilt from events, plus where each block came from."""

    message: dict[str, Any]
    message_path: str
    block_paths: list[str] = field(default_factory=list)
    # Block index -> the accumulated partial_json when it is not a JSON object.
    raw_inputs: dict[int, str] = field(default_factory=dict)


def assemble(events: Any, w: Warnings) -> Assembled:
    """Accumulate ``events`` into the Message they stream (like the SDK's MessageStream)."""
    expect(PROTOCOL, events, "$", list)
    acc: Assembled | None = None
    buffers: dict[int, str] = {}
    stopped = False
    for n, raw in enumerate(events):
        event, suffix = unwrap(raw)
        path = f"$[{n}]{suffix}"
        expect(PROTOCOL, event, path, dict)
        kind = require(PROTOCOL, event, "type", path, str)
        if kind == "ping":
            continue
        if kind == "error":
            error = event.get("error")
            detail = error.get("message") if isinstance(error, dict) else None
            raise CodecError(PROTOCOL, f"{path}.error", f"the stream ended in an error: {detail}")
        if kind == "message_start":
            if acc is not None:
                raise CodecError(PROTOCOL, f"{path}.type", "a second message_start in one stream")
            message = copy.deepcopy(require(PROTOCOL, event, "message", path, dict))
            message["content"] = list(
                require(PROTOCOL, message, "content", f"{path}.message", list)
            )
            here = f"{path}.message"
            acc = Assembled(
                message, here, [f"{here}.content[{i}]" for i in range(len(message["content"]))]
            )
            continue
        if acc is None:
            raise CodecError(
                PROTOCOL,
                f"{path}.type",
                f"{kind} before message_start; a stream starts with message_start",
            )
        content = acc.message["content"]
        match kind:
            case "content_block_start":
                index = require(PROTOCOL, event, "index", path, int)
                if index != len(content):
                    raise CodecError(
                        PROTOCOL,
                        f"{path}.index",
                        f"expected block index {len(content)}, got {index}",
                    )
                block = copy.deepcopy(require(PROTOCOL, event, "content_block", path, dict))
                content.append(block)
                acc.block_paths.append(f"{path}.content_block")
                if block.get("type") in INPUT_BLOCKS:
                    buffers[index] = ""
            case "content_block_delta":
                block = _block_at(content, event, path)
                index = event["index"]
                delta = require(PROTOCOL, event, "delta", path, dict)
                _apply_delta(block, index, delta, f"{path}.delta", buffers, w)
            case "content_block_stop":
                _block_at(content, event, path)
            case "message_delta":
                delta = require(PROTOCOL, event, "delta", path, dict)
                usage = require(PROTOCOL, event, "usage", path, dict)
                # Like the SDK: stop fields always overwrite; usage counts are cumulative.
                for key, value in delta.items():
                    if key in ("stop_reason", "stop_sequence", "stop_details") or value is not None:
                        acc.message[key] = value
                if not isinstance(acc.message.get("usage"), dict):
                    acc.message["usage"] = {}
                acc.message["usage"].update({k: v for k, v in usage.items() if v is not None})
            case "message_stop":
                stopped = True
            case _:
                w.add("stream_event_dropped", path, f"unknown stream event {kind!r} was skipped")
    if acc is None:
        raise CodecError(PROTOCOL, "$", "no message_start event: not an Anthropic stream")
    if not stopped:
        w.add("stream_incomplete", "$", "the stream has no message_stop: it was cut short")
    for index, buffer in buffers.items():
        _finish_input(acc, index, buffer)
    return acc


def _block_at(content: list[dict[str, Any]], event: dict[str, Any], path: str) -> dict[str, Any]:
    index = require(PROTOCOL, event, "index", path, int)
    if not 0 <= index < len(content):
        raise CodecError(
            PROTOCOL, f"{path}.index", f"no content_block_start for block index {index}"
        )
    return content[index]


def _apply_delta(
    block: dict[str, Any],
    index: int,
    delta: dict[str, Any],
    path: str,
    buffers: dict[int, str],
    w: Warnings,
) -> None:
    kind = require(PROTOCOL, delta, "type", path, str)
    match kind:
        case "text_delta":
            block["text"] = str(block.get("text", "")) + require(PROTOCOL, delta, "text", path, str)
        case "thinking_delta":
            block["thinking"] = str(block.get("thinking", "")) + require(
                PROTOCOL, delta, "thinking", path, str
            )
        case "signature_delta":
            block["signature"] = require(PROTOCOL, delta, "signature", path, str)
        case "input_json_delta":
            if index not in buffers:
                raise CodecError(
                    PROTOCOL,
                    f"{path}.type",
                    "input_json_delta for a block that is not a tool_use, server_tool_use or "
                    "mcp_tool_use",
                )
            buffers[index] += require(PROTOCOL, delta, "partial_json", path, str)
        case "citations_delta":
            citations = block.get("citations") or []
            block["citations"] = [*citations, require(PROTOCOL, delta, "citation", path, dict)]
        case _:
            w.add("stream_event_dropped", path, f"unknown delta {kind!r} was skipped")


def _finish_input(acc: Assembled, index: int, buffer: str) -> None:
    """Parse a tool_use's accumulated JSON; keep what is not a JSON object as raw text."""
    if not buffer.strip():
        return  # no fragments: the input from content_block_start stands
    try:
        parsed = jsontext.embedded(buffer)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        acc.message["content"][index]["input"] = parsed
    else:
        acc.message["content"][index]["input"] = {}
        acc.raw_inputs[index] = buffer


def stream_arguments(event: Any, slots: ArgumentSlots) -> None:
    """Feeds the argument fragment ``event`` carries, if any, into ``slots``."""
    kind, index = dig(event, "type"), dig(event, "index")
    if kind == "content_block_start" and dig(event, "content_block", "type") == "tool_use":
        slots.open(index)
    elif (
        kind == "content_block_delta"
        and dig(event, "delta", "type") == "input_json_delta"
        and slots.is_open(index)
    ):
        slots.append(index, dig(event, "delta", "partial_json"))
