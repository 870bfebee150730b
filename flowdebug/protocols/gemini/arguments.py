"""Tool-call arguments in a Gemini stream, for the debugger's replay: each ``functionCall``
part comes whole, so each is one snapshot of its ``args`` as JSON. (Vertex's streamed
``partialArgs`` are assembled by the codec, :mod:`flowdebug.protocols.gemini.stream_args`.)"""

from __future__ import annotations

import json
from typing import Any

from flowdebug.protocols.base import dig
from flowdebug.protocols.facts import ArgumentSlots


def stream_arguments(event: Any, slots: ArgumentSlots) -> None:
    """Feeds the calls ``event`` carries, if any, into ``slots``."""
    parts = dig(event, "candidates", 0, "content", "parts")
    for part in parts if isinstance(parts, list) else []:
        call = dig(part, "functionCall")
        if isinstance(call, dict):
            args = call.get("args") if isinstance(call.get("args"), dict) else {}
            slots.append(len(slots), json.dumps(args, ensure_ascii=False))
