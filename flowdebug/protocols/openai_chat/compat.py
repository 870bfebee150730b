"""What OpenAI-compatible servers add to Chat Completions, and the usage object.

- Reasoning: DeepSeek, vLLM, Qwen and others send the model's reasoning as
  ``reasoning_content`` on the assistant message (some servers spell it ``reasoning``) and in
  stream deltas; DeepSeek wants it back on the assistant message within a tool-call turn.
- Thought signatures: Gemini's OpenAI endpoint puts the Gemini ``thoughtSignature`` of a call
  in ``extra_content: {"google": {"thought_signature": ...}}`` on the tool_calls entry; Gemini 3
  rejects a function-call turn sent back without it. It is decoded into the call's
  ``provider_details["gemini"]["thoughtSignature"]``, where the Gemini codec keeps it, so it
  survives a trip through native Gemini and back.
- Usage: ``prompt_tokens`` (cached tokens included), ``completion_tokens`` (reasoning tokens
  included), their details, and whatever a compatible server adds (DeepSeek's
  ``prompt_cache_hit_tokens``), kept verbatim for a round trip.
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

_DETAILS = {
    "prompt_tokens_details": "cached_tokens",
    "completion_tokens_details": "reasoning_tokens",
}


def decode_usage(usage: Any, path: str) -> tuple[dict[str, int] | None, dict[str, Any] | None]:
    """(canonical usage, the wire fields it does not hold, for provider_details)."""
    if usage is None:
        return None, None
    expect(PROTOCOL, usage, path, dict)
    out: dict[str, int] = {}
    for wire, canonical in (
        ("prompt_tokens", "input_tokens"),
        ("completion_tokens", "output_tokens"),
    ):
        if usage.get(wire) is not None:
            out[canonical] = expect(PROTOCOL, usage[wire], f"{path}.{wire}", int)
    for key, field in _DETAILS.items():
        details = usage.get(key)
        value = details.get(field) if isinstance(details, dict) else None
        if isinstance(value, int) and value:
            out[field] = value
    total = usage.get("total_tokens")
    if isinstance(total, int) and total != out.get("input_tokens", 0) + out.get("output_tokens", 0):
        out["total_tokens"] = total
    rest = {
        k: v
        for k, v in usage.items()
        if k not in ("prompt_tokens", "completion_tokens", "total_tokens", *_DETAILS)
    }
    for key, field in _DETAILS.items():
        details = usage.get(key)
        if isinstance(details, dict):
            # The canonical usage holds a non-zero count; the rest (zeros included) stays.
            kept = {k: v for k, v in details.items() if k != field or k not in out}
            if kept:
                rest[key] = kept
    return out, rest or None


def encode_usage(usage: dict[str, int], rest: dict[str, Any] | None, w: Warnings) -> dict[str, Any]:
    """The wire usage for canonical ``usage``, warning for every count it drops or rewrites."""
    u = dict(usage)
    cache_read = u.get("cache_read_input_tokens", 0)
    cache_write = u.get("cache_creation_input_tokens", 0)
    # Anthropic counts cache reads and writes apart from input_tokens; OpenAI's
    # prompt_tokens includes them (cached_tokens is the part read from the cache).
    prompt = u.get("input_tokens", 0) + cache_read + cache_write
    cached = u.get("cached_tokens", 0) or cache_read
    completion = u.get("output_tokens", 0)
    reasoning = u.get("reasoning_tokens", 0)
    total = u.get("total_tokens")
    if reasoning and total == prompt + completion + reasoning:
        # Gemini counts thoughts apart from candidates; OpenAI's completion_tokens
        # includes reasoning_tokens.
        completion += reasoning
    wire: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": total if total is not None else prompt + completion,
    }
    for key, field in _DETAILS.items():
        value = cached if field == "cached_tokens" else reasoning
        stored = (rest or {}).get(key)
        if value or isinstance(stored, dict):
            wire[key] = {**(stored if isinstance(stored, dict) else {}), field: value}
    for key, value in (rest or {}).items():
        wire.setdefault(key, value)
    back, _ = decode_usage(wire, "$.usage")
    for key in sorted(u.keys() | (back or {}).keys()):
        if key not in (back or {}):
            w.add("usage_dropped", f"usage.{key}", f"OpenAI Chat usage has no {key}; dropped")
        elif back[key] != u.get(key):  # type: ignore[index]
            w.add(
                "usage_rewritten",
                f"usage.{key}",
                f"{key} becomes {back[key]} in OpenAI's terms "  # type: ignore[index]
                "(prompt_tokens include cached tokens, completion_tokens include reasoning)",
            )
    return wire
