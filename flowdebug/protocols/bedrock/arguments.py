"""Tool-call arguments growing in a ConverseStream, for the debugger's replay: a
``contentBlockStart`` with ``start.toolUse`` opens a call at its ``contentBlockIndex``, each
``contentBlockDelta`` with ``delta.toolUse.input`` adds a fragment of its JSON."""

from __future__ import annotations

from typing import Any

from flowdebug.protocols.base import dig
from flowdebug.protocols.facts import ArgumentSlots


def stream_arguments(event: Any, slots: ArgumentSlots) -> None:
    """Feeds the argument fragment ``event`` carries, if any, into ``slots``."""
    if isinstance(start := dig(event, "contentBlockStart"), dict):
        if isinstance(dig(start, "start", "toolUse"), dict):
            slots.open(dig(start, "contentBlockIndex"))
    elif isinstance(delta := dig(event, "contentBlockDelta"), dict):
        index = dig(delta, "contentBlockIndex")
        if slots.is_open(index):
            slots.append(index, dig(delta, "delta", "toolUse", "input"))
