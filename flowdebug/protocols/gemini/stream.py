"""Gemini streams: the ``GenerateContentResponse`` chunks of ``:streamGenerateContent?alt=sse``.

Each chunk is a whole response object. Text arrives in pieces that the client concatenates
(each piece is a new part in a new chunk); every function call arrives whole in its own chunk
(no argument deltas on the Gemini API; Vertex with ``streamFunctionCallArguments`` streams
them as ``partialArgs``, assembled here as Google's own aggregator does it); ``finishReason``
and the final ``usageMetadata`` come on the last chunk [RUN, reference stream].

Decoding joins a chunk's first text part to the previous chunk's last one when both are text
of the same kind (thought or not) and the earlier piece has no ``thoughtSignature`` yet (the
signature closes a part). Encoding splits text so that exactly this rule rebuilds the parts.

For the debugger's replay, each ``functionCall`` part of a chunk is one snapshot of its
``args`` as JSON (:func:`stream_arguments`).
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from flowdebug.errors import CodecError
from flowdebug.model import ModelResponse
from flowdebug.protocols.base import Converted, Warnings, dig, expect
from flowdebug.protocols.facts import ArgumentSlots
from flowdebug.protocols.gemini.parts import PROTOCOL
from flowdebug.protocols.gemini.response import (
    candidate_tail,
    decode_response,
    encode_parts,
    envelope,
)
from flowdebug.protocols.gemini.spelling import normalize
from flowdebug.protocols.gemini.usage import usage_metadata

_CONTENT_KEYS = ("functionCall", "functionResponse", "inlineData", "fileData")


def encode_stream(resp: ModelResponse) -> Converted[list[dict[str, Any]]]:
    """The chunks Gemini would stream for ``resp``."""
    w = Warnings(PROTOCOL)
    groups: list[list[dict[str, Any]]] = []
    after_text = False
    for part in encode_parts(resp, w):
        if not _is_text(part):
            groups.append([part])
            after_text = False
            continue
        pieces = _pieces(part["text"])
        head = {"thought": part["thought"]} if "thought" in part else {}
        tail = {k: v for k, v in part.items() if k not in ("text", "thought")}
        for n, piece in enumerate(pieces):
            wire = {"text": piece, **head, **(tail if n == len(pieces) - 1 else {})}
            # A new text part right after another starts in the same chunk, so the decoder
            # does not join the two.
            if n == 0 and after_text:
                groups[-1].append(wire)
            else:
                groups.append([wire])
        after_text = True
    groups = groups or [[]]
    common = envelope(resp, w)
    chunks = []
    for n, parts in enumerate(groups):
        cand: dict[str, Any] = {"content": {"role": "model", "parts": parts}}
        chunk: dict[str, Any] = {"candidates": [cand]}
        if n == len(groups) - 1:
            cand.update(candidate_tail(resp, w))
            if usage := usage_metadata(resp, w):
                chunk["usageMetadata"] = usage
        else:
            cand["index"] = 0
        chunks.append({**chunk, **common})
    return w.wrap(chunks)


def decode_stream(events: Any) -> Converted[ModelResponse]:
    """The streamed chunks assembled into one canonical response."""
    chunks = expect(PROTOCOL, normalize(events), "$", list)
    if not chunks:
        raise CodecError(PROTOCOL, "$", "a stream has at least one chunk")
    top: dict[str, Any] = {}
    cand: dict[str, Any] = {}
    parts: list[Any] = []
    args = ArgumentAssembler(parts)
    many = False
    for i, chunk in enumerate(chunks):
        path = f"$[{i}]"
        expect(PROTOCOL, chunk, path, dict)
        top.update({k: v for k, v in chunk.items() if k != "candidates"})
        candidates = expect(PROTOCOL, chunk.get("candidates") or [], f"{path}.candidates", list)
        many = many or len(candidates) > 1
        if not candidates:
            decode_response(chunk, path)  # reports a bad chunk with its own path
            continue
        first = expect(PROTOCOL, candidates[0], f"{path}.candidates[0]", dict)
        here = f"{path}.candidates[0].content"
        content = expect(PROTOCOL, first.get("content") or {}, here, dict)
        raw = expect(PROTOCOL, content.get("parts") or [], f"{here}.parts", list)
        whole = [p for p in raw if not is_streamed(p, args.open is not None)]
        if len(whole) < len(raw):
            # Streamed call pieces have no name yet: check the chunk without them.
            checked = {**first, "content": {**content, "parts": whole}}
            decode_response({**chunk, "candidates": [checked, *candidates[1:]]}, path)
        else:
            decode_response(chunk, path)
        cand.update({k: v for k, v in first.items() if k != "content"})
        for n, part in enumerate(raw):
            if is_streamed(part, args.open is not None):
                args.feed(part, f"{here}.parts[{n}]")
            elif n == 0 and parts and parts[-1] is not None and _joins(parts[-1], part):
                parts[-1] = {**parts[-1], **part, "text": parts[-1]["text"] + part["text"]}
            else:
                parts.append(part)
    args.finish()
    w = Warnings(PROTOCOL)
    if many:
        w.add("candidates_dropped", "$", "only the first candidate of each chunk is kept")
    merged = {"candidates": [{"content": {"role": "model", "parts": parts}, **cand}], **top}
    out = decode_response(merged)
    for slot in args.incomplete:
        call = parts[slot]["functionCall"]
        w.add(
            "arguments_incomplete",
            f"message.parts[{slot}]",
            f"the stream ended before the arguments of call {call['name']!r}"
            f"{' (' + call['id'] + ')' if 'id' in call else ''} were complete (willContinue "
            "was never false); they hold only what arrived",
        )
    return Converted(out.value, w.items + out.warnings)


def _is_text(part: dict[str, Any]) -> bool:
    return isinstance(part.get("text"), str) and not any(k in part for k in _CONTENT_KEYS)


def _joins(prev: dict[str, Any], part: Any) -> bool:
    return (
        isinstance(part, dict)
        and _is_text(prev)
        and _is_text(part)
        and bool(prev.get("thought")) == bool(part.get("thought"))
        and "thoughtSignature" not in prev
    )


def _pieces(text: str, count: int = 3) -> list[str]:
    """``text`` cut before spaces into about ``count`` pieces (whole when short)."""
    if len(text) < 24:
        return [text]
    cuts = [0]
    for k in range(1, count):
        cut = text.find(" ", len(text) * k // count)
        if cut > cuts[-1]:
            cuts.append(cut)
    cuts.append(len(text))
    return [text[a:b] for a, b in itertools.pairwise(cuts)]


def stream_arguments(event: Any, slots: ArgumentSlots) -> None:
    """Feeds the calls ``event`` carries, if any, into ``slots``."""
    parts = dig(event, "candidates", 0, "content", "parts")
    for part in parts if isinstance(parts, list) else []:
        call = dig(part, "functionCall")
        if isinstance(call, dict):
            args = call.get("args") if isinstance(call.get("args"), dict) else {}
            slots.append(len(slots), json.dumps(args, ensure_ascii=False))


# Streamed function-call arguments (Gemini 3 on Vertex, ``streamFunctionCallArguments``).
#
# With argument streaming on, a call arrives over several chunks: the first ``functionCall``
# part has the ``name`` (and ``id``, and the part its ``thoughtSignature``) with
# ``willContinue: true``; later ones have no name, only ``partialArgs`` — a list of
# ``{jsonPath, stringValue | numberValue | boolValue | nullValue, willContinue}`` — and the
# chunk with ``willContinue`` false or absent closes the call.
#
# Assembled as Google's own aggregator does it (google/adk-python
# ``utils/streaming_utils.py``, ``StreamingResponseAggregator``): string pieces for one path are
# concatenated (onto a string already there), a number, boolean or null replaces what the path
# held, objects on the way are created, the first signature seen is kept. The call takes the
# place of its first chunk. A stream that ends with a call still open is assembled from what
# arrived and reported (``arguments_incomplete``): the model never said its arguments were done.
_STEP = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\['([^']*)'\]|\[\"([^\"]*)\"\]")
_VALUES = ("numberValue", "boolValue", "nullValue")


def is_streamed(part: Any, open_call: bool) -> bool:
    """Whether ``part`` is a piece of a streamed call (or closes the open one)."""
    if not isinstance(part, dict) or not isinstance(part.get("functionCall"), dict):
        return False
    fc = part["functionCall"]
    if fc.get("partialArgs") or fc.get("willContinue"):
        return True
    # A part without a name continues (and closes) the call being streamed.
    return open_call and "name" not in fc


def _steps(json_path: str, path: str) -> list[str | int]:
    """``$.a.b[0]['c']`` as ``["a", "b", 0, "c"]`` (RFC 9535 names and indexes)."""
    if not json_path.startswith("$"):
        raise CodecError(PROTOCOL, path, f"jsonPath {json_path!r} does not start with $")
    steps: list[str | int] = []
    pos = 1
    while pos < len(json_path):
        m = _STEP.match(json_path, pos)
        if m is None:
            raise CodecError(PROTOCOL, path, f"cannot read jsonPath {json_path!r}")
        name, index, quoted, dquoted = m.groups()
        steps.append(int(index) if index is not None else (name or quoted or dquoted or ""))
        pos = m.end()
    if not steps:
        raise CodecError(PROTOCOL, path, "jsonPath $ names no argument")
    return steps


class _Call:
    def __init__(self, slot: int):
        self.slot = slot  # where the assembled part goes among the response's parts
        self.name: str | None = None
        self.id: str | None = None
        self.signature: str | None = None
        self.args: dict[str, Any] = {}
        self.extras: dict[str, Any] = {}

    def get(self, steps: list[str | int]) -> Any:
        node: Any = self.args
        for step in steps:
            if isinstance(node, list) and isinstance(step, int) and step < len(node):
                node = node[step]
                continue
            if isinstance(node, dict) and isinstance(step, str) and step in node:
                node = node[step]
                continue
            return None
        return node

    def set(self, steps: list[str | int], value: Any) -> None:
        node: Any = self.args
        for step, following in zip(steps, [*steps[1:], None], strict=True):
            fresh: Any = value if following is None else [] if isinstance(following, int) else {}
            if isinstance(step, int):
                if not isinstance(node, list):
                    return
                node.extend([None] * (step + 1 - len(node)))
                if following is None or not isinstance(node[step], dict | list):
                    node[step] = fresh
            else:
                if not isinstance(node, dict):
                    return
                if following is None or not isinstance(node.get(step), dict | list):
                    node[step] = fresh
            node = node[step]

    def part(self) -> dict[str, Any]:
        fc: dict[str, Any] = {}
        if self.id is not None:
            fc["id"] = self.id
        fc["name"] = self.name or ""
        fc["args"] = self.args
        out: dict[str, Any] = {"functionCall": fc, **self.extras}
        if self.signature is not None:
            out["thoughtSignature"] = self.signature
        return out


class ArgumentAssembler:
    """Feeds streamed call pieces; ``parts`` gets each assembled call at its first slot."""

    def __init__(self, parts: list[Any]):
        self.parts = parts
        self.open: _Call | None = None
        self.incomplete: list[int] = []  # slots of calls the stream never closed

    def feed(self, part: dict[str, Any], path: str) -> None:
        fc = expect(PROTOCOL, part["functionCall"], f"{path}.functionCall", dict)
        if self.open is None:
            if not fc.get("partialArgs") and not fc.get("willContinue") and "name" not in fc:
                return  # an empty end marker after a closed call carries nothing
            self.open = _Call(len(self.parts))
            self.parts.append(None)
        call = self.open
        if fc.get("name"):
            call.name = expect(PROTOCOL, fc["name"], f"{path}.functionCall.name", str)
        if fc.get("id"):
            call.id = expect(PROTOCOL, fc["id"], f"{path}.functionCall.id", str)
        if part.get("thoughtSignature") and call.signature is None:
            call.signature = part["thoughtSignature"]
        call.extras.update(
            {k: v for k, v in part.items() if k not in ("functionCall", "thoughtSignature")}
        )
        pieces = expect(PROTOCOL, fc.get("partialArgs") or [], f"{path}.partialArgs", list)
        for i, raw in enumerate(pieces):
            here = f"{path}.functionCall.partialArgs[{i}]"
            piece = expect(PROTOCOL, raw, here, dict)
            if not piece.get("jsonPath"):
                continue
            steps = _steps(expect(PROTOCOL, piece["jsonPath"], f"{here}.jsonPath", str), here)
            if "stringValue" in piece:
                text = expect(PROTOCOL, piece["stringValue"], f"{here}.stringValue", str)
                before = call.get(steps)
                call.set(steps, before + text if isinstance(before, str) else text)
            elif value := next((k for k in _VALUES if k in piece), None):
                call.set(steps, None if value == "nullValue" else piece[value])
        if not fc.get("willContinue"):
            self.close()

    def close(self) -> None:
        if self.open is not None:
            self.parts[self.open.slot] = self.open.part()
            self.open = None

    def finish(self) -> None:
        """End of stream: a call still open is assembled from what arrived."""
        if self.open is not None:
            self.incomplete.append(self.open.slot)
            self.close()
