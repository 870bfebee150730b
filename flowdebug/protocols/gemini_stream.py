"""Gemini streams: the ``GenerateContentResponse`` chunks of ``:streamGenerateContent?alt=sse``.

Each chunk is a whole response object. Text arrives in pieces that the client concatenates
(each piece is a new part in a new chunk); every function call arrives whole in its own chunk
(no argument deltas on the Gemini API); ``finishReason`` and the final ``usageMetadata`` come
on the last chunk [RUN, reference stream].

Decoding joins a chunk's first text part to the previous chunk's last one when both are text
of the same kind (thought or not) and the earlier piece has no ``thoughtSignature`` yet (the
signature closes a part). Encoding splits text so that exactly this rule rebuilds the parts.
"""

from __future__ import annotations

import itertools
from typing import Any

from flowdebug.errors import CodecError
from flowdebug.model import ModelResponse
from flowdebug.protocols.base import Converted, Warnings, expect
from flowdebug.protocols.gemini_parts import PROTOCOL
from flowdebug.protocols.gemini_response import (
    candidate_tail,
    decode_response,
    encode_parts,
    envelope,
    usage_metadata,
)

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
    common = envelope(resp)
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
    chunks = expect(PROTOCOL, events, "$", list)
    if not chunks:
        raise CodecError(PROTOCOL, "$", "a stream has at least one chunk")
    top: dict[str, Any] = {}
    cand: dict[str, Any] = {}
    parts: list[dict[str, Any]] = []
    many = False
    for i, chunk in enumerate(chunks):
        decode_response(chunk, f"$[{i}]")  # reports a bad chunk with its own path
        top.update({k: v for k, v in chunk.items() if k != "candidates"})
        candidates = chunk.get("candidates") or []
        many = many or len(candidates) > 1
        if not candidates:
            continue
        cand.update({k: v for k, v in candidates[0].items() if k != "content"})
        for n, part in enumerate((candidates[0].get("content") or {}).get("parts") or []):
            if n == 0 and parts and _joins(parts[-1], part):
                parts[-1] = {**parts[-1], **part, "text": parts[-1]["text"] + part["text"]}
            else:
                parts.append(part)
    w = Warnings(PROTOCOL)
    if many:
        w.add("candidates_dropped", "$", "only the first candidate of each chunk is kept")
    merged = {"candidates": [{"content": {"role": "model", "parts": parts}, **cand}], **top}
    out = decode_response(merged)
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
