"""OpenAI Chat messages <-> canonical parts (:mod:`.encode`, :mod:`.decode`, a result's
``tool`` message in :mod:`.tool_message`), and what OpenAI-compatible servers add to them.

- Reasoning: DeepSeek, vLLM, Qwen and others send the model's reasoning as
  ``reasoning_content`` on the assistant message (some servers spell it ``reasoning``) and in
  stream deltas; DeepSeek wants it back on the assistant message within a tool-call turn.
- Thought signatures: Gemini's OpenAI endpoint puts the Gemini ``thoughtSignature`` of a call
  in ``extra_content: {"google": {"thought_signature": ...}}`` on the tool_calls entry; Gemini 3
  rejects a function-call turn sent back without it. It is decoded into the call's
  ``provider_details["gemini"]["thoughtSignature"]``, where the Gemini codec keeps it, so it
  survives a trip through native Gemini and back.
"""

from __future__ import annotations

from typing import Any

from flowdebug.protocols.base import Warnings, expect

PROTOCOL = "openai-chat"
REASONING_FIELDS = ("reasoning_content", "reasoning")


def decode_reasoning(raw: dict[str, Any], path: str) -> list[dict[str, Any]]:
    """The message's reasoning as a canonical thinking part (at most one)."""
    for key in REASONING_FIELDS:
        if raw.get(key) is not None:
            text = expect(PROTOCOL, raw[key], f"{path}.{key}", str)
            out: dict[str, Any] = {"kind": "thinking", "text": text, "source": PROTOCOL}
            if key != "reasoning_content":
                out["provider_details"] = {PROTOCOL: {"field": key}}
            return [out]
    return []


def reasoning_field(details: dict[str, Any] | None) -> str:
    own = (details or {}).get(PROTOCOL)
    field = own.get("field") if isinstance(own, dict) else None
    return field if field in REASONING_FIELDS else "reasoning_content"


def decode_extra_content(item: dict[str, Any], path: str) -> dict[str, Any] | None:
    """provider_details for a tool_calls entry's ``extra_content`` (None when absent)."""
    extra = item.get("extra_content")
    if extra is None:
        return None
    expect(PROTOCOL, extra, f"{path}.extra_content", dict)
    google = extra.get("google")
    signature = google.get("thought_signature") if isinstance(google, dict) else None
    if extra == {"google": {"thought_signature": signature}} and isinstance(signature, str):
        return {"gemini": {"thoughtSignature": signature}}
    # Anything else Google (or another server) put there comes back verbatim.
    return {PROTOCOL: {"extra_content": extra}}


def is_gemini_model(model: str | None) -> bool:
    """Gemini's OpenAI endpoint is chosen by its model names (``gemini-2.5-flash``)."""
    return model is not None and "gemini" in model.lower()


def encode_extra_content(
    details: dict[str, Any] | None, model: str | None, path: str, w: Warnings
) -> dict[str, Any] | None:
    """The ``extra_content`` to send with a call, warning when a signature cannot go."""
    own = (details or {}).get(PROTOCOL)
    if isinstance(own, dict) and isinstance(own.get("extra_content"), dict):
        return own["extra_content"]
    gemini = (details or {}).get("gemini")
    signature = gemini.get("thoughtSignature") if isinstance(gemini, dict) else None
    if not isinstance(signature, str):
        return None
    if is_gemini_model(model):
        return {"google": {"thought_signature": signature}}
    w.add(
        "provider_details_dropped",
        f"{path}.provider_details.gemini",
        f"the Gemini thought signature travels in extra_content only to Gemini's OpenAI "
        f"endpoint; the model here is {model or 'not named'!r}, so it was left out",
    )
    return None


# --- usage ------------------------------------------------------------------------------------


def own_details(details: dict[str, Any] | None) -> dict[str, Any]:
    value = (details or {}).get(PROTOCOL)
    return value if isinstance(value, dict) else {}
