"""Gemini ``GenerateContentResponse`` <-> canonical ``ModelResponse``.

Gemini says ``finishReason: "STOP"`` even when the model called tools; the canonical
``stop_reason`` is ``tool_use`` whenever the message holds calls. Usage maps
``promptTokenCount`` -> ``input_tokens``, ``candidatesTokenCount`` + ``thoughtsTokenCount`` ->
``output_tokens`` (Gemini counts thoughts apart; OpenAI and Anthropic output counts include
reasoning, so the canonical count does too), ``totalTokenCount`` -> ``total_tokens``,
``thoughtsTokenCount`` -> ``reasoning_tokens``, ``cachedContentTokenCount`` -> ``cached_tokens``
(the OpenAI Responses spellings, also part of the prompt count); ``toolUsePromptTokenCount``
keeps its Gemini name.

``provider_details["gemini"]`` on a response holds the top-level wire fields without a
canonical home (``promptFeedback``, ...), ``usageMetadata`` (its non-integer fields) and
``candidate`` (the candidate's extra fields, and ``finishReason`` when the canonical stop
reason does not give it back).
"""

from __future__ import annotations

from typing import Any

from flowdebug.model import Message, ModelResponse, Part, StopReason, ToolResult
from flowdebug.protocols.base import Converted, Warnings, expect
from flowdebug.protocols.gemini.parts import (
    PROTOCOL,
    check_foreign,
    own,
    renumbered,
    with_details,
)
from flowdebug.protocols.gemini.parts.decode import Decoder
from flowdebug.protocols.gemini.parts.encode import Encoder
from flowdebug.protocols.gemini.spelling import normalize
from flowdebug.protocols.gemini.usage import decode_usage, usage_metadata
from flowdebug.protocols.models import own_model

_FINISH: dict[str, str] = {
    "end_turn": "STOP",
    "tool_use": "STOP",
    "stop_sequence": "STOP",
    "max_tokens": "MAX_TOKENS",
    "refusal": "SAFETY",
    "content_filter": "SAFETY",
    "other": "OTHER",
}
_FILTERED = {
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
    "MODEL_ARMOR",
}
_RESPONSE_KEYS = {"candidates", "usageMetadata", "modelVersion", "responseId"}


def encode_parts(resp: ModelResponse, w: Warnings) -> list[dict[str, Any]]:
    """The model turn's wire parts."""
    enc = Encoder(w)
    check_foreign(resp.provider_details, "provider_details", w)
    check_foreign(resp.message.provider_details, "message", w)
    wires: list[dict[str, Any] | None] = []
    for i, part in enumerate(resp.message.parts):
        path = f"message.parts[{i}]"
        if isinstance(part, ToolResult):
            w.add("part_dropped", path, "a Gemini model turn cannot hold a function response")
            wires.append(None)
        else:
            wires.append(enc.part(part, path, {}))
    renumbered(wires, "message", w)
    return [wire for wire in wires if wire]


def candidate_tail(resp: ModelResponse, w: Warnings) -> dict[str, Any]:
    """What the (last) candidate carries besides its content: finishReason, index, extras."""
    tail: dict[str, Any] = {}
    if resp.stop_reason is not None:
        tail["finishReason"] = _FINISH[resp.stop_reason]
        if resp.stop_reason in ("stop_sequence", "refusal"):
            w.add(
                "stop_reason_lost",
                "stop_reason",
                f"Gemini has no finish reason for "
                f"{resp.stop_reason}; sent as {tail['finishReason']}",
            )
        else:
            back = _stop_reason(tail["finishReason"], bool(resp.message.tool_calls))
            if back != resp.stop_reason:
                # STOP means tool_use or end_turn by whether the turn holds calls.
                w.add(
                    "stop_reason_changed",
                    "stop_reason",
                    f"{resp.stop_reason} sent as {tail['finishReason']} reads back as {back}",
                )
    tail["index"] = 0
    extra = own(resp.provider_details).get("candidate")
    tail.update(extra if isinstance(extra, dict) else {})
    return tail


def envelope(resp: ModelResponse, w: Warnings) -> dict[str, Any]:
    """Top-level fields every chunk repeats: modelVersion, responseId, stored extras."""
    out: dict[str, Any] = {}
    model = own_model(resp.model, w)  # another vendor's model id is replaced, and said so
    if model is not None:
        out["modelVersion"] = model
    if resp.id is not None:
        out["responseId"] = resp.id
    extras = own(resp.provider_details)
    out.update({k: v for k, v in extras.items() if k not in ("candidate", "usageMetadata")})
    return out


def encode_response(resp: ModelResponse) -> Converted[dict[str, Any]]:
    """A ``GenerateContentResponse`` with one candidate."""
    w = Warnings(PROTOCOL)
    content = {"role": "model", "parts": encode_parts(resp, w)}
    out: dict[str, Any] = {"candidates": [{"content": content, **candidate_tail(resp, w)}]}
    if usage := usage_metadata(resp, w):
        out["usageMetadata"] = usage
    out.update(envelope(resp, w))
    return w.wrap(out)


def _unpaired(w: Warnings) -> Any:
    def pair(
        wire_id: str | None, name: str | None, path: str, synthetic: str
    ) -> tuple[str, str | None]:
        w.add("result_unpaired", path, "a function response in a model turn answers no call")
        return wire_id or synthetic, None

    return pair


def decode_response(payload: Any, root: str = "$") -> Converted[ModelResponse]:
    """A ``GenerateContentResponse`` (its first candidate) as a canonical response."""
    w = Warnings(PROTOCOL)
    body = normalize(expect(PROTOCOL, payload, root, dict))
    details: dict[str, Any] = {k: v for k, v in body.items() if k not in _RESPONSE_KEYS}
    candidates = expect(PROTOCOL, body.get("candidates", []), f"{root}.candidates", list)
    if len(candidates) > 1:
        w.add(
            "candidates_dropped",
            f"{root}.candidates",
            f"only the first of {len(candidates)} candidates is kept",
        )
    parts: list[Part] = []
    stop: StopReason | None = None
    if candidates:
        path = f"{root}.candidates[0]"
        cand = expect(PROTOCOL, candidates[0], path, dict)
        content = expect(PROTOCOL, cand.get("content", {}), f"{path}.content", dict)
        raw_parts = expect(PROTOCOL, content.get("parts", []), f"{path}.content.parts", list)
        dec = Decoder(w)
        pair = _unpaired(w)
        parts = [
            p
            for i, raw in enumerate(raw_parts)
            if (p := dec.part(raw, f"{path}.content.parts[{i}]", f"gemini_call_{i}", pair))
        ]
        finish = cand.get("finishReason")
        if finish is not None:
            expect(PROTOCOL, finish, f"{path}.finishReason", str)
        extra = {k: v for k, v in cand.items() if k not in ("content", "finishReason", "index")}
        stop = _stop_reason(finish, any(p.kind == "tool_call" for p in parts))
        # Kept only when the canonical stop reason would not give it back (RECITATION...).
        if finish is not None and _FINISH.get(stop or "") != finish:
            extra["finishReason"] = finish
        if extra:
            details["candidate"] = extra
    usage, usage_extra = decode_usage(body.get("usageMetadata"), f"{root}.usageMetadata")
    if usage_extra:
        details["usageMetadata"] = usage_extra
    model = body.get("modelVersion")
    if model is not None:
        expect(PROTOCOL, model, f"{root}.modelVersion", str)
    response_id = body.get("responseId")
    if response_id is not None:
        expect(PROTOCOL, response_id, f"{root}.responseId", str)
    resp = ModelResponse(
        message=Message(role="assistant", parts=parts),
        stop_reason=stop,
        id=response_id,
        model=model,
        usage=usage or None,
        provider_details=with_details(details),
    )
    return w.wrap(resp)


def _stop_reason(finish: str | None, has_calls: bool) -> StopReason | None:
    match finish:
        case None:
            return None
        case "STOP":
            return "tool_use" if has_calls else "end_turn"
        case "MAX_TOKENS":
            return "max_tokens"
        case _ if finish in _FILTERED:
            return "content_filter"
        case _:
            return "other"
