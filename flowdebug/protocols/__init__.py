"""The wire protocols, one pure codec each, in a plain registry.

A vendor is one folder (``protocols/<vendor>/``: its codec and its facts) and one line here;
:func:`register` adds one at run time (a plugin, a test's toy vendor).
"""

from __future__ import annotations

from typing import Any

from flowdebug.errors import UsageError
from flowdebug.protocols import (
    anthropic,
    bedrock,
    gemini,
    mcp,
    openai_chat,
    openai_responses,
)
from flowdebug.protocols.base import (
    PROTOCOLS,
    Codec,
    ConversionWarning,
    Converted,
    Kind,
    register,
    unregister,
)
from flowdebug.protocols.facts import Facts

# The registry line: one entry per vendor folder, in the order lists and menus show them.
for _codec in (
    anthropic.CODEC,
    openai_chat.CODEC,
    openai_responses.CODEC,
    gemini.CODEC,
    mcp.CODEC,
    bedrock.CODEC,
):
    register(_codec)

__all__ = [
    "PROTOCOLS",
    "Codec",
    "ConversionWarning",
    "Converted",
    "Facts",
    "Kind",
    "default_protocol",
    "detect",
    "facts",
    "get",
    "model_protocols",
    "register",
    "unregister",
]


def get(name: str) -> Codec:
    """The codec called ``name`` (CLI spelling); a clear error for an unknown name."""
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise UsageError(
            f"unknown protocol {name!r}; choose one of: {', '.join(PROTOCOLS)}"
        ) from None


def facts(name: str) -> Facts:
    """What the code outside the codecs needs to know about the vendor called ``name``."""
    return get(name).facts


def model_protocols() -> list[str]:
    """The protocols a model speaks (every one but MCP, the runtime's talk with its tools)."""
    return [n for n, c in PROTOCOLS.items() if c.facts.kind == "model"]


def default_protocol(local: bool = False) -> str:
    """The protocol used until a person picks one: the first model protocol registered; with
    ``local``, the first whose facts say local model servers speak it (a live player's first
    choice: such a server needs no key), else the first."""
    names = model_protocols()
    return next((n for n in names if local and facts(n).local_servers), names[0])


def detect(payload: Any) -> tuple[str, Kind] | None:
    """Which protocol and kind ``payload`` is, or None when no codec recognises it."""
    for codec in PROTOCOLS.values():
        kind = codec.detect(payload)
        if kind is not None:
            return codec.name, kind
    return None
