"""ConverseStream, wire to wire: a ConverseResponse body as the events the service sends, and
a list of events assembled back into the ConverseResponse body they describe.

On the wire each event is an AWS event-stream frame whose ``:event-type`` header names it;
flowdebug writes a stream as a JSON array of ``{"<event-type>": <payload>}`` objects, the
shape boto3's ``converse_stream()["stream"]`` yields. The service pads payloads with a
random ``"p"`` field, which assembly ignores.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from dataclasses import dataclass, field
from typing import Any

from flowdebug import jsontext
from flowdebug.errors import CodecError
from flowdebug.protocols.base import Warnings, dig, expect, require
from flowdebug.protocols.bedrock.parts import PROTOCOL
from flowdebug.protocols.facts import ArgumentSlots

# Fields of a ConverseResponse that travel in messageStop and metadata.
STOP_FIELDS = ("stopReason", "additionalModelResponseFields")
METADATA_FIELDS = ("usage", "metrics", "trace", "performanceConfig", "serviceTier")
PADDING = "p"


def _pieces(text: str, count: int = 2) -> list[str]:
    """``text`` cut into at most ``count`` fragments, so the assembly shows in a debugger."""
    if not text:
        return [""]
    size = max(1, math.ceil(len(text) / count))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"contentBlockDelta": {"delta": delta, "contentBlockIndex": index}}


def _block_events(index: int, block: dict[str, Any], w: Warnings, path: str) -> list[Any]:
    kind = next(iter(block))
    value = block[kind]
    events: list[Any] = []
    match kind:
        case "text":
            events = [_delta(index, {"text": p}) for p in _pieces(value)]
        case "toolUse":
            # Bedrock: a toolUse starts with its id and name; its input follows as JSON text
            # fragments to concatenate and parse at contentBlockStop.
            start = {k: v for k, v in value.items() if k != "input"}
            events = [
                {"contentBlockStart": {"start": {"toolUse": start}, "contentBlockIndex": index}}
            ]
            text = json.dumps(value["input"], ensure_ascii=False)
            events += [_delta(index, {"toolUse": {"input": p}}) for p in _pieces(text)]
        case "reasoningContent" if "reasoningText" in value:
            reasoning = value["reasoningText"]
            events = [
                _delta(index, {"reasoningContent": {"text": p}}) for p in _pieces(reasoning["text"])
            ]
            if "signature" in reasoning:  # the signature comes last, in a delta of its own
                events.append(
                    _delta(index, {"reasoningContent": {"signature": reasoning["signature"]}})
                )
        case "reasoningContent":
            events = [_delta(index, {"reasoningContent": value})]
        case _:
            w.add(
                "block_dropped",
                path,
                f"a {kind} block has no ConverseStream delta; it was left out of the stream",
            )
            return []
    return [*events, {"contentBlockStop": {"contentBlockIndex": index}}]


def events_from_response(body: dict[str, Any], w: Warnings) -> list[dict[str, Any]]:
    """The stream the service sends for ``body`` (a ConverseResponse), in wire order."""
    message = body["output"]["message"]
    events: list[dict[str, Any]] = [{"messageStart": {"role": message["role"]}}]
    index = 0
    for j, block in enumerate(message["content"]):
        got = _block_events(index, block, w, f"message.parts[{j}]")
        index += bool(got)
        events += got
    events.append({"messageStop": {k: body[k] for k in STOP_FIELDS if k in body}})
    events.append({"metadata": {k: body[k] for k in METADATA_FIELDS if k in body}})
    for key in body:
        if key not in ("output", *STOP_FIELDS, *METADATA_FIELDS):
            w.add(
                "field_dropped",
                f"provider_details.{PROTOCOL}.{key}",
                f"ConverseStream has no place for the response field {key}; it was left out",
            )
    return events


def is_stream(payload: Any) -> bool:
    """Whether ``payload`` is a list of ConverseStream events (one named member each)."""
    if not isinstance(payload, list) or not payload:
        return False
    names = []
    for event in payload:
        if not isinstance(event, dict) or len(event) != 1:
            return False
        name = next(iter(event))
        if name not in EVENT_NAMES | ERROR_EVENTS or not isinstance(event[name], dict):
            return False
        names.append(name)
    return "messageStart" in names or "contentBlockDelta" in names


@dataclass
class Assembled:
    """A ConverseResponse body rebuilt from events."""

    body: dict[str, Any]
    # Content index -> the accumulated toolUse input when it is not a JSON object.
    raw_inputs: dict[int, str] = field(default_factory=dict)


def _payload(event: Any, path: str) -> tuple[str, dict[str, Any]]:
    expect(PROTOCOL, event, path, dict)
    if len(event) != 1:
        raise CodecError(PROTOCOL, path, f"an event has exactly one member, got {sorted(event)}")
    name = next(iter(event))
    payload = expect(PROTOCOL, event[name], f"{path}.{name}", dict)
    return name, {k: v for k, v in payload.items() if k != PADDING}


def _index(payload: dict[str, Any], path: str) -> int:
    index = require(PROTOCOL, payload, "contentBlockIndex", path, int)
    if index < 0:
        raise CodecError(PROTOCOL, f"{path}.contentBlockIndex", "must not be negative")
    return index


class _Blocks:
    """The content blocks being built, by contentBlockIndex."""

    def __init__(self, w: Warnings):
        self.w = w
        self.blocks: dict[int, dict[str, Any]] = {}
        self.inputs: dict[int, str] = {}
        self.skipped: set[int] = set()

    def start(self, index: int, start: dict[str, Any], path: str) -> None:
        if index in self.blocks:
            raise CodecError(PROTOCOL, f"{path}.contentBlockIndex", f"block {index} started twice")
        if set(start) != {"toolUse"}:
            self.w.add(
                "stream_event_dropped",
                f"{path}.start",
                f"a {sorted(start)} start has no canonical form; skipped",
            )
            self.skipped.add(index)
            return
        use = expect(PROTOCOL, start["toolUse"], f"{path}.start.toolUse", dict)
        require(PROTOCOL, use, "toolUseId", f"{path}.start.toolUse", str)
        require(PROTOCOL, use, "name", f"{path}.start.toolUse", str)
        self.blocks[index] = {"toolUse": {**use, "input": {}}}
        self.inputs[index] = ""

    def delta(self, index: int, delta: dict[str, Any], path: str) -> None:
        if index in self.skipped:
            return
        if len(delta) != 1:
            raise CodecError(PROTOCOL, path, f"a delta has exactly one member, got {sorted(delta)}")
        kind, value = next(iter(delta.items()))
        where = f"{path}.{kind}"
        block = self.blocks.get(index)
        match kind:
            case "text":
                text = expect(PROTOCOL, value, where, str)
                if block is None:
                    block = self.blocks[index] = {"text": ""}
                if "text" not in block:
                    raise CodecError(
                        PROTOCOL, where, f"a text delta for block {index}, which is not text"
                    )
                block["text"] += text
            case "toolUse":
                fragment = require(
                    PROTOCOL, expect(PROTOCOL, value, where, dict), "input", where, str
                )
                if index not in self.inputs:
                    raise CodecError(
                        PROTOCOL,
                        where,
                        f"a toolUse delta for block {index}, which no toolUse start opened",
                    )
                self.inputs[index] += fragment
            case "reasoningContent":
                self._reasoning(index, expect(PROTOCOL, value, where, dict), where)
            case _:
                self.w.add(
                    "stream_event_dropped", where, f"a {kind} delta has no canonical form; skipped"
                )

    def _reasoning(self, index: int, value: dict[str, Any], path: str) -> None:
        block = self.blocks.setdefault(index, {"reasoningContent": {}})
        if "reasoningContent" not in block:
            raise CodecError(
                PROTOCOL, path, f"a reasoning delta for block {index}, which is not reasoning"
            )
        reasoning = block["reasoningContent"]
        for key, piece in value.items():
            expect(PROTOCOL, piece, f"{path}.{key}", str)
            if key == "redactedContent":
                reasoning["redactedContent"] = _join_base64(
                    reasoning.get("redactedContent"), piece, f"{path}.{key}"
                )
                continue
            text = reasoning.setdefault("reasoningText", {"text": ""})
            if key == "text":
                text["text"] += piece
            elif key == "signature":
                text["signature"] = text.get("signature", "") + piece
            else:
                self.w.add(
                    "stream_event_dropped",
                    f"{path}.{key}",
                    f"unknown reasoning delta {key!r}; skipped",
                )

    def content(self) -> tuple[list[dict[str, Any]], dict[int, str]]:
        content, raw = [], {}
        for position, index in enumerate(sorted(self.blocks)):
            block = self.blocks[index]
            if index in self.inputs and self.inputs[index].strip():
                buffer = self.inputs[index]
                try:
                    parsed = jsontext.embedded(buffer)
                except ValueError:
                    parsed = None
                if isinstance(parsed, dict):
                    block["toolUse"]["input"] = parsed
                else:
                    raw[position] = buffer
            content.append(block)
        return content, raw


def _join_base64(before: str | None, piece: str, path: str) -> str:
    if before is None:
        return piece
    try:
        joined = base64.b64decode(before, validate=True) + base64.b64decode(piece, validate=True)
    except binascii.Error:
        raise CodecError(PROTOCOL, path, "redactedContent is not base64") from None
    return base64.b64encode(joined).decode()


def assemble(events: Any, w: Warnings) -> Assembled:
    """Accumulate ``events`` into the ConverseResponse they stream."""
    expect(PROTOCOL, events, "$", list)
    blocks = _Blocks(w)
    body: dict[str, Any] = {}
    role: str | None = None
    stopped = False
    for n, event in enumerate(events):
        path = f"$[{n}]"
        name, payload = _payload(event, path)
        here = f"{path}.{name}"
        if name in ERROR_EVENTS:
            raise CodecError(
                PROTOCOL, here, f"the stream ended in a {name}: {payload.get('message')}"
            )
        if name == "messageStart":
            if role is not None:
                raise CodecError(PROTOCOL, here, "a second messageStart in one stream")
            role = require(PROTOCOL, payload, "role", here, str)
            if role != "assistant":
                raise CodecError(
                    PROTOCOL,
                    f"{here}.role",
                    f"a response streams an assistant message, got {role!r}",
                )
            continue
        if role is None:
            raise CodecError(
                PROTOCOL, here, f"{name} before messageStart; a stream starts with messageStart"
            )
        match name:
            case "contentBlockStart":
                blocks.start(
                    _index(payload, here), require(PROTOCOL, payload, "start", here, dict), here
                )
            case "contentBlockDelta":
                blocks.delta(
                    _index(payload, here),
                    require(PROTOCOL, payload, "delta", here, dict),
                    f"{here}.delta",
                )
            case "contentBlockStop":
                _index(payload, here)
            case "messageStop":
                require(PROTOCOL, payload, "stopReason", here, str)
                body |= payload
                stopped = True
            case "metadata":
                body |= payload
            case _:
                w.add("stream_event_dropped", here, f"unknown stream event {name!r} was skipped")
    if role is None:
        raise CodecError(PROTOCOL, "$", "no messageStart event: not a ConverseStream")
    if not stopped:
        w.add("stream_incomplete", "$", "the stream has no messageStop: it was cut short")
    content, raw = blocks.content()
    return Assembled({"output": {"message": {"role": role, "content": content}}, **body}, raw)


# botocore ConverseStreamOutput members: the ``:event-type`` of each event-stream frame.
EVENT_NAMES = frozenset(
    {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop",
     "messageStop", "metadata"}
)  # fmt: skip

ERROR_EVENTS = frozenset(
    {"internalServerException", "modelStreamErrorException", "validationException",
     "throttlingException", "serviceUnavailableException"}
)  # fmt: skip


def stream_arguments(event: Any, slots: ArgumentSlots) -> None:
    """Feeds the argument fragment ``event`` carries, if any, into ``slots``."""
    if isinstance(start := dig(event, "contentBlockStart"), dict):
        if isinstance(dig(start, "start", "toolUse"), dict):
            slots.open(dig(start, "contentBlockIndex"))
    elif isinstance(delta := dig(event, "contentBlockDelta"), dict):
        index = dig(delta, "contentBlockIndex")
        if slots.is_open(index):
            slots.append(index, dig(delta, "delta", "toolUse", "input"))
