"""Gemini streams: the ``GenerateContentResponse`` chunks of ``:streamGenerateContent?alt=sse``.

Each chunk is a whole response object. Text arrives in pieces that the client concatenates
(each piece is a new part in a new chunk); every function call arrives whole in its own chunk
(no argument deltas on the Gemini API; Vertex with ``streamFunctionCallArguments`` streams
them as ``partialArgs``, see :mod:`flowdebug.protocols.gemini.stream_args`); ``finishReason``
and the final ``usageMetadata`` come on the last chunk [RUN, reference stream].

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
from flowdebug.protocols.gemini.parts import PROTOCOL
from flowdebug.protocols.gemini.response import (
    candidate_tail,
    decode_response,
    encode_parts,
    envelope,
    usage_metadata,
)
from flowdebug.protocols.gemini.spelling import normalize
from flowdebug.protocols.gemini.stream_args import ArgumentAssembler, is_streamed

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
