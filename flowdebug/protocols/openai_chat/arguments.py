"""Tool-call arguments growing in an OpenAI Chat stream, for the debugger's replay: each
chunk's ``delta.tool_calls[]`` entry (keyed by choice and call index) carries a fragment of
``function.arguments``."""

from __future__ import annotations

from typing import Any

from flowdebug.protocols.base import dig
from flowdebug.protocols.facts import ArgumentSlots


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def stream_arguments(event: Any, slots: ArgumentSlots) -> None:
    """Feeds the argument fragments ``event`` carries, if any, into ``slots``."""
    for choice in _list(dig(event, "choices")):
        for call in _list(dig(choice, "delta", "tool_calls")):
            key = (dig(choice, "index"), dig(call, "index"))
            slots.open(key)
            slots.append(key, dig(call, "function", "arguments"))
