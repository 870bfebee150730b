"""The five wire protocols, one pure codec each, in a plain registry."""

from __future__ import annotations

from typing import Any

from flowdebug.errors import UsageError
from flowdebug.protocols.anthropic import codec as anthropic
from flowdebug.protocols.base import Codec, ConversionWarning, Converted, Kind
from flowdebug.protocols.gemini import codec as gemini
from flowdebug.protocols.mcp import codec as mcp
from flowdebug.protocols.openai_chat import codec as openai_chat
from flowdebug.protocols.openai_responses import codec as openai_responses

PROTOCOLS: dict[str, Codec] = {
    c.name: c
    for c in (
        anthropic.CODEC,
        openai_chat.CODEC,
        openai_responses.CODEC,
        gemini.CODEC,
        mcp.CODEC,
    )
}

__all__ = ["PROTOCOLS", "Codec", "ConversionWarning", "Converted", "Kind", "detect", "get"]


def get(name: str) -> Codec:
    """The codec called ``name`` (CLI spelling); a clear error for an unknown name."""
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise UsageError(
            f"unknown protocol {name!r}; choose one of: {', '.join(PROTOCOLS)}"
        ) from None


def detect(payload: Any) -> tuple[str, Kind] | None:
    """Which protocol and kind ``payload`` is, or None when no codec recognises it."""
    for codec in PROTOCOLS.values():
        kind = codec.detect(payload)
        if kind is not None:
            return codec.name, kind
    return None
