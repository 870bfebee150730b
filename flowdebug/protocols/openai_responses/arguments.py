"""Tool-call arguments growing in an OpenAI Responses stream, for the debugger's replay: a
``function_call`` output item opens a call, ``response.function_call_arguments.delta`` events
add fragments of its arguments."""

from __future__ import annotations

from typing import Any

from flowdebug.protocols.base import dig
from flowdebug.protocols.facts import ArgumentSlots


def stream_arguments(event: Any, slots: ArgumentSlots) -> None:
    """Feeds the argument fragment ``event`` carries, if any, into ``slots``."""
    kind, index = dig(event, "type"), dig(event, "output_index")
    if kind == "response.output_item.added" and dig(event, "item", "type") == "function_call":
        slots.open(index)
    elif kind == "response.function_call_arguments.delta" and slots.is_open(index):
        slots.append(index, dig(event, "delta"))
