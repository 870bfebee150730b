"""Gemini ``usageMetadata`` <-> the canonical counters.

``promptTokenCount`` -> ``input_tokens``, ``candidatesTokenCount`` + ``thoughtsTokenCount`` ->
``output_tokens`` (Gemini counts thoughts apart; OpenAI and Anthropic output counts include
reasoning, so the canonical count does too), ``totalTokenCount`` -> ``total_tokens``,
``thoughtsTokenCount`` -> ``reasoning_tokens``, ``cachedContentTokenCount`` -> ``cached_tokens``
(the OpenAI Responses spellings, also part of the prompt count); ``toolUsePromptTokenCount``
keeps its Gemini name.
"""

from __future__ import annotations

from typing import Any

from flowdebug.model import ModelResponse
from flowdebug.protocols.base import Warnings, expect
from flowdebug.protocols.gemini.parts import PROTOCOL, own

_USAGE = {
    "promptTokenCount": "input_tokens",
    "candidatesTokenCount": "output_tokens",
    "totalTokenCount": "total_tokens",
    "thoughtsTokenCount": "reasoning_tokens",
    "cachedContentTokenCount": "cached_tokens",
}

_USAGE_WIRE = {v: k for k, v in _USAGE.items()}

_USAGE_KEPT = {"toolUsePromptTokenCount"}


def usage_metadata(resp: ModelResponse, w: Warnings) -> dict[str, Any]:
    usage: dict[str, Any] = {}
    for key, count in (resp.usage or {}).items():
        if key in _USAGE_WIRE or key in _USAGE_KEPT:
            usage[_USAGE_WIRE.get(key, key)] = count
        else:
            w.add("usage_dropped", f"usage.{key}", f"Gemini usageMetadata has no {key}")
    thoughts = usage.get("thoughtsTokenCount")
    output = usage.get("candidatesTokenCount")
    if isinstance(thoughts, int) and isinstance(output, int):
        # Gemini's candidatesTokenCount leaves the thoughts out; the canonical count has them.
        if thoughts > output:
            w.add(
                "usage_rewritten",
                "usage.output_tokens",
                f"the output count ({output}) is smaller than the reasoning count ({thoughts}) "
                "it should include; Gemini's candidatesTokenCount was sent as 0",
            )
        usage["candidatesTokenCount"] = max(output - thoughts, 0)
    extra = own(resp.provider_details).get("usageMetadata")
    usage.update(extra if isinstance(extra, dict) else {})
    return usage


def decode_usage(raw: Any, path: str) -> tuple[dict[str, int], dict[str, Any]]:
    usage: dict[str, int] = {}
    extra: dict[str, Any] = {}
    for key, value in expect(PROTOCOL, raw or {}, path, dict).items():
        if (
            (key in _USAGE or key in _USAGE_KEPT)
            and isinstance(value, int)
            and not isinstance(value, bool)
        ):
            usage[_USAGE.get(key, key)] = value
        else:
            extra[key] = value
    if "output_tokens" in usage and "reasoning_tokens" in usage:
        usage["output_tokens"] += usage["reasoning_tokens"]
    return usage, extra
