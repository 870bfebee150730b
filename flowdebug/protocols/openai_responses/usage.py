"""OpenAI Responses token usage <-> the canonical flat counts.

Responses counts cached tokens inside ``input_tokens`` (``input_tokens_details``) and
reasoning tokens inside ``output_tokens`` (``output_tokens_details``). The canonical keys are
``input_tokens``, ``output_tokens``, ``cached_tokens``, ``cache_write_tokens``,
``reasoning_tokens`` and ``total_tokens`` (kept only when it is not the sum).
"""

from __future__ import annotations

from typing import Any

from flowdebug.protocols.base import Warnings, expect, require
from flowdebug.protocols.openai_responses.parts import PROTOCOL

CARRIED = {
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "total_tokens",
}
# Anthropic counts cache reads and writes apart from input_tokens; Responses counts them in.
_ANTHROPIC_CACHE = {
    "cache_read_input_tokens": "cached_tokens",
    "cache_creation_input_tokens": "cache_write_tokens",
}


def encode_usage(usage: dict[str, int] | None, w: Warnings) -> dict[str, Any] | None:
    """The ``usage`` object of a Response; counts it cannot carry are named."""
    if usage is None:
        return None
    usage = dict(usage)
    moved = {k: usage.pop(k) for k in _ANTHROPIC_CACHE if k in usage}
    if moved:
        usage["input_tokens"] = usage.get("input_tokens", 0) + sum(moved.values())
        for key, count in moved.items():
            target = _ANTHROPIC_CACHE[key]
            usage[target] = usage.get(target, 0) + count
        w.add(
            "usage_rewritten",
            "usage",
            "Responses counts cached tokens inside input_tokens: "
            f"{' and '.join(sorted(moved))} added to input_tokens and carried as "
            "input_tokens_details",
        )
    for key in sorted(set(usage) - CARRIED):
        w.add("usage_dropped", f"usage.{key}", f"Responses usage has no {key}; not sent")
    prompt, completion = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
    for key in sorted(k for k in ("cached_tokens", "cache_write_tokens", "reasoning_tokens")):
        if usage.get(key) == 0:
            w.add("usage_rewritten", f"usage.{key}", f"a zero {key} reads back as absent")
    if usage.get("total_tokens") == prompt + completion:
        w.add(
            "usage_rewritten", "usage.total_tokens", "a total equal to the sum reads back as absent"
        )
    return {
        "input_tokens": prompt,
        "input_tokens_details": {
            "cached_tokens": usage.get("cached_tokens", 0),
            "cache_write_tokens": usage.get("cache_write_tokens", 0),
        },
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": usage.get("reasoning_tokens", 0)},
        "total_tokens": usage.get("total_tokens", prompt + completion),
    }


def decode_usage(usage: Any, path: str) -> dict[str, int] | None:
    """Flat token counts; zero details and a total equal to the sum are left out."""
    if usage is None:
        return None
    expect(PROTOCOL, usage, path, dict)
    out = {k: require(PROTOCOL, usage, k, path, int) for k in ("input_tokens", "output_tokens")}
    for key, field in (
        ("input_tokens_details", "cached_tokens"),
        ("input_tokens_details", "cache_write_tokens"),
        ("output_tokens_details", "reasoning_tokens"),
    ):
        details = usage.get(key)
        value = details.get(field) if isinstance(details, dict) else None
        if isinstance(value, int) and value:
            out[field] = value
    total = usage.get("total_tokens")
    if isinstance(total, int) and total != out["input_tokens"] + out["output_tokens"]:
        out["total_tokens"] = total
    return out
