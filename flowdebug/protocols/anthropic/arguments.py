"""Tool-call arguments growing in an Anthropic stream, for the debugger's replay: a
``tool_use`` block opens a call, each ``input_json_delta`` adds a fragment of its JSON."""

from __future__ import annotations

from typing import Any

from flowdebug.protocols.base import dig
from flowdebug.protocols.facts import ArgumentSlots


def stream_arguments(event: Any, slots: ArgumentSlots) -> None:
    """Feeds the argument fragment ``event`` carries, if any, into ``slots``."""
    kind, index = dig(event, "type"), dig(event, "index")
    if kind == "content_block_start" and dig(event, "content_block", "type") == "tool_use":
        slots.open(index)
    elif (
        kind == "content_block_delta"
        and dig(event, "delta", "type") == "input_json_delta"
        and slots.is_open(index)
    ):
        slots.append(index, dig(event, "delta", "partial_json"))
