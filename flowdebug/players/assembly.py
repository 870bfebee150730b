"""Tool-call arguments assembling in a stream, one snapshot per fragment.

Vendors stream a call's arguments as text fragments (Anthropic ``input_json_delta``,
OpenAI Chat ``tool_calls[].function.arguments``, Responses
``response.function_call_arguments.delta``); Gemini sends each call whole. The assembler
follows the raw event objects and records ``(call index, arguments so far)`` after each
fragment so the UI can replay the arguments growing. It never raises: an event it does not
understand is skipped, and the codec's decode_stream reports what is wrong with it.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple


class ArgumentSnapshot(NamedTuple):
    """Call ``index`` (order of the calls in the message) had ``text`` so far."""

    index: int
    text: str


def _get(obj: Any, *keys: str | int) -> Any:
    for key in keys:
        if isinstance(key, int):
            obj = obj[key] if isinstance(obj, list) and -len(obj) <= key < len(obj) else None
        else:
            obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


class ArgumentAssembler:
    """Feed stream events in wire order; ``snapshots`` holds every step so far."""

    def __init__(self, protocol: str):
        self.protocol = protocol
        self.snapshots: list[ArgumentSnapshot] = []
        self._slots: dict[Any, int] = {}
        self._text: dict[int, str] = {}

    def _slot(self, key: Any) -> int:
        return self._slots.setdefault(key, len(self._slots))

    def _append(self, key: Any, fragment: Any) -> list[ArgumentSnapshot]:
        if not isinstance(fragment, str) or not fragment:
            return []
        index = self._slot(key)
        self._text[index] = self._text.get(index, "") + fragment
        snap = ArgumentSnapshot(index, self._text[index])
        self.snapshots.append(snap)
        return [snap]

    def feed(self, event: Any) -> list[ArgumentSnapshot]:
        """The snapshots this event adds (usually zero or one)."""
        match self.protocol:
            case "anthropic":
                return self._anthropic(event)
            case "openai-chat":
                return self._openai_chat(event)
            case "openai-responses":
                return self._openai_responses(event)
            case "gemini":
                return self._gemini(event)
        return []

    def _anthropic(self, event: Any) -> list[ArgumentSnapshot]:
        kind = _get(event, "type")
        if kind == "content_block_start" and _get(event, "content_block", "type") == "tool_use":
            self._slot(_get(event, "index"))
        elif (
            kind == "content_block_delta"
            and _get(event, "delta", "type") == "input_json_delta"
            and _get(event, "index") in self._slots
        ):
            return self._append(_get(event, "index"), _get(event, "delta", "partial_json"))
        return []

    def _openai_chat(self, event: Any) -> list[ArgumentSnapshot]:
        out: list[ArgumentSnapshot] = []
        for choice in _list(_get(event, "choices")):
            for call in _list(_get(choice, "delta", "tool_calls")):
                key = (_get(choice, "index"), _get(call, "index"))
                self._slot(key)
                out += self._append(key, _get(call, "function", "arguments"))
        return out

    def _openai_responses(self, event: Any) -> list[ArgumentSnapshot]:
        kind = _get(event, "type")
        if kind == "response.output_item.added" and _get(event, "item", "type") == "function_call":
            self._slot(_get(event, "output_index"))
        elif (
            kind == "response.function_call_arguments.delta"
            and _get(event, "output_index") in self._slots
        ):
            return self._append(_get(event, "output_index"), _get(event, "delta"))
        return []

    def _gemini(self, event: Any) -> list[ArgumentSnapshot]:
        out: list[ArgumentSnapshot] = []
        for part in _list(_get(event, "candidates", 0, "content", "parts")):
            call = _get(part, "functionCall")
            if isinstance(call, dict):
                args = call.get("args") if isinstance(call.get("args"), dict) else {}
                out += self._append(len(self._slots), json.dumps(args, ensure_ascii=False))
        return out


def assemble(protocol: str, events: list[Any]) -> list[ArgumentSnapshot]:
    """Every arguments snapshot of a recorded stream, in order."""
    assembler = ArgumentAssembler(protocol)
    for event in events:
        assembler.feed(event)
    return assembler.snapshots
