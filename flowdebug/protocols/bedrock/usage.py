"""Converse ``TokenUsage`` <-> the canonical counters.

Bedrock, like Anthropic, counts cache reads and writes apart from ``inputTokens``, so they take
Anthropic's canonical names; a counter with no Bedrock field is named when it is dropped.
"""

from __future__ import annotations

from typing import Any

from flowdebug.model import ModelResponse
from flowdebug.protocols.base import Warnings, expect
from flowdebug.protocols.bedrock.parts import PROTOCOL, with_extra

# TokenUsage <-> canonical counters. Bedrock, like Anthropic, counts cache reads and writes
# apart from inputTokens, so they take Anthropic's canonical names.
USAGE = {
    "inputTokens": "input_tokens",
    "outputTokens": "output_tokens",
    "cacheReadInputTokens": "cache_read_input_tokens",
    "cacheWriteInputTokens": "cache_creation_input_tokens",
}

USAGE_WIRE = {v: k for k, v in USAGE.items()}


def encode_usage(resp: ModelResponse, extra: dict[str, Any], w: Warnings) -> dict[str, Any]:
    have = dict(resp.usage or {})
    if resp.usage is None:
        w.add(
            "usage_rewritten",
            "usage",
            "the response has no usage; Bedrock requires one, so 0 tokens in and out was sent",
        )
    out: dict[str, Any] = {}
    for key in ("input_tokens", "output_tokens"):
        if resp.usage is not None and key not in have:
            w.add(
                "usage_rewritten",
                f"usage.{key}",
                f"the usage has no {key}; Bedrock requires it, so 0 was sent",
            )
        out[USAGE_WIRE[key]] = have.pop(key, 0)
    total = have.pop("total_tokens", None)
    cache = {USAGE_WIRE[k]: have.pop(k) for k in list(have) if k in USAGE_WIRE}
    # totalTokens counts cache reads and writes too.
    counted = sum(out.values()) + sum(cache.values())
    out["totalTokens"] = total if total is not None else counted
    if total == counted:
        w.add(
            "usage_rewritten",
            "usage.total_tokens",
            "totalTokens is the sum of the other counters here, so it reads back as implied",
        )
    out |= cache
    for key in have:
        w.add("usage_dropped", f"usage.{key}", f"Bedrock TokenUsage has no {key}; it was dropped")
    return with_extra(out, extra.pop("usage", None) or {})


def decode_usage(raw: Any, path: str, extra: dict[str, Any]) -> dict[str, int] | None:
    if raw is None:
        return None
    usage = expect(PROTOCOL, raw, path, dict)
    out: dict[str, int] = {}
    rest: dict[str, Any] = {}
    for key, value in usage.items():
        if key in USAGE and isinstance(value, int) and not isinstance(value, bool):
            out[USAGE[key]] = value
        elif key != "totalTokens":
            rest[key] = value
    total = usage.get("totalTokens")
    if isinstance(total, int) and total != sum(out.values()):
        out["total_tokens"] = total
    if rest:
        extra["usage"] = rest
    return out or None
