"""Tool-call arguments assembling in a stream, one snapshot per fragment.

Vendors stream a call's arguments as text fragments (Anthropic ``input_json_delta``,
OpenAI Chat ``tool_calls[].function.arguments``, Responses
``response.function_call_arguments.delta``, Bedrock ``toolUse.input``); Gemini sends each
call whole. Each vendor's reader of its raw events is declared in its folder
(``Facts.stream_arguments``); the assembler keeps one slot per call and records
``(call index, arguments so far)`` after each fragment so the UI can replay the arguments
growing. It never raises: an event it does not understand is skipped, and the codec's
decode_stream reports what is wrong with it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable
from typing import Any, NamedTuple

from flowdebug.protocols import PROTOCOLS


class ArgumentSnapshot(NamedTuple):
    """Call ``index`` (order of the calls in the message) had ``text`` so far."""

    # The field shadows tuple.index on purpose: callers read snap.index, the call's position.
    index: int  # type: ignore[assignment]
    text: str


class ArgumentAssembler:
    """Feed stream events in wire order; ``snapshots`` holds every step so far."""

    def __init__(self, protocol: str):
        self.protocol = protocol
        self.snapshots: list[ArgumentSnapshot] = []
        codec = PROTOCOLS.get(protocol)
        self._read = codec.facts.stream_arguments if codec is not None else None
        self._slots: dict[Hashable, int] = {}
        self._text: dict[int, str] = {}
        self._added: list[ArgumentSnapshot] = []

    # -- the slots a vendor's reader fills (protocols.facts.ArgumentSlots) --
    def open(self, key: Hashable) -> int:
        """The slot of the call known by ``key`` (a new one at first sight)."""
        return self._slots.setdefault(key, len(self._slots))

    def is_open(self, key: Hashable) -> bool:
        """A call known by ``key`` was seen."""
        return key in self._slots

    def append(self, key: Hashable, fragment: Any) -> None:
        """Adds a text fragment to the call's arguments (anything else is ignored)."""
        if not isinstance(fragment, str) or not fragment:
            return
        index = self.open(key)
        self._text[index] = self._text.get(index, "") + fragment
        self._added.append(ArgumentSnapshot(index, self._text[index]))

    def __len__(self) -> int:
        return len(self._slots)

    def feed(self, event: Any) -> list[ArgumentSnapshot]:
        """The snapshots this event adds (usually zero or one)."""
        if self._read is None:
            return []
        self._added = []
        # A key of an unhashable type comes from an odd event: no call of ours.
        with contextlib.suppress(TypeError):
            self._read(event, self)
        self.snapshots += self._added
        return self._added


def assemble(protocol: str, events: list[Any]) -> list[ArgumentSnapshot]:
    """Every arguments snapshot of a recorded stream, in order."""
    assembler = ArgumentAssembler(protocol)
    for event in events:
        assembler.feed(event)
    return assembler.snapshots
