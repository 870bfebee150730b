"""OpenAI Chat ``usage`` <-> the canonical counters.

``prompt_tokens`` (cached tokens included), ``completion_tokens`` (reasoning tokens included),
their details, and whatever a compatible server adds (DeepSeek's ``prompt_cache_hit_tokens``),
kept verbatim for a round trip.
"""

from __future__ import annotations

from typing import Any

from flowdebug.protocols.base import Warnings, expect
from flowdebug.protocols.openai_chat.parts import PROTOCOL

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
