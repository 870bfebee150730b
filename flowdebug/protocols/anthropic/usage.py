"""Anthropic's ``usage`` <-> the canonical counters.

Anthropic requires ``input_tokens`` and ``output_tokens`` on every Message (0 is sent, and
said, when the source has none); counters it has no field for are named when they are
dropped; ``server_tool_use`` keeps every counter newer SDKs require."""

from __future__ import annotations

from typing import Any

from flowdebug.model import ModelResponse
from flowdebug.protocols.base import Warnings

# Anthropic's Usage counters. input_tokens excludes cache reads and writes, which have their
# own counters; output_tokens includes thinking, so no reasoning count exists apart.
USAGE_KEYS = ("input_tokens", "output_tokens")

USAGE_EXTRA = ("cache_creation_input_tokens", "cache_read_input_tokens")


def usage(resp: ModelResponse, w: Warnings) -> dict[str, int]:
    """Anthropic's Usage counters from the canonical usage; what it cannot hold is named."""
    have = resp.usage or {}
    if resp.usage is None:
        w.add(
            "usage_rewritten",
            "usage",
            "the response has no usage; Anthropic requires one, so 0 tokens in and out was sent",
        )
    else:
        for key in USAGE_KEYS:
            if key not in have:
                w.add(
                    "usage_rewritten",
                    f"usage.{key}",
                    f"the usage has no {key}; Anthropic requires it, so 0 was sent",
                )
    for key in have:
        if key not in USAGE_KEYS + USAGE_EXTRA:
            w.add(
                "usage_dropped",
                f"usage.{key}",
                f"Anthropic usage has no {key} counter (output_tokens already includes "
                "thinking); it was dropped",
            )
    out = {k: have.get(k, 0) for k in USAGE_KEYS}
    return out | {k: v for k, v in have.items() if k in USAGE_EXTRA}


# Anthropic: ServerToolUsage counts every server tool, and newer SDKs require each counter
# (web_fetch_requests came after web_search_requests; responses from before omit it).
SERVER_TOOL_COUNTERS = ("web_search_requests", "web_fetch_requests")


def usage_extra(extra: dict[str, Any], w: Warnings) -> dict[str, Any]:
    """The usage's vendor fields as kept from an Anthropic source, with every counter of
    ``server_tool_use`` present (0, named by a warning, when the source had none)."""
    server = extra.get("server_tool_use") if isinstance(extra, dict) else None
    if not isinstance(server, dict):
        return extra
    missing = [k for k in SERVER_TOOL_COUNTERS if k not in server]
    for key in missing:
        w.add(
            "usage_rewritten",
            f"usage.server_tool_use.{key}",
            f"the server tool usage has no {key}; Anthropic's types require it, so 0 was sent",
        )
    return extra | {"server_tool_use": server | dict.fromkeys(missing, 0)}
