"""Streamed function-call arguments (Gemini 3 on Vertex, ``streamFunctionCallArguments``).

With argument streaming on, a call arrives over several chunks: the first ``functionCall``
part has the ``name`` (and ``id``, and the part its ``thoughtSignature``) with
``willContinue: true``; later ones have no name, only ``partialArgs`` — a list of
``{jsonPath, stringValue | numberValue | boolValue | nullValue, willContinue}`` — and the
chunk with ``willContinue`` false or absent closes the call.

Assembled as Google's own aggregator does it (google/adk-python
``utils/streaming_utils.py``, ``StreamingResponseAggregator``): string pieces for one path are
concatenated (onto a string already there), a number, boolean or null replaces what the path
held, objects on the way are created, the first signature seen is kept. The call takes the
place of its first chunk. A stream that ends with a call still open is assembled from what
arrived and reported (``arguments_incomplete``): the model never said its arguments were done.
"""

from __future__ import annotations

import re
from typing import Any

from flowdebug.errors import CodecError
from flowdebug.protocols.base import expect

PROTOCOL = "gemini"
_STEP = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\['([^']*)'\]|\[\"([^\"]*)\"\]")
_VALUES = ("numberValue", "boolValue", "nullValue")


def is_streamed(part: Any, open_call: bool) -> bool:
    """Whether ``part`` is a piece of a streamed call (or closes the open one)."""
    if not isinstance(part, dict) or not isinstance(part.get("functionCall"), dict):
        return False
    fc = part["functionCall"]
    if fc.get("partialArgs") or fc.get("willContinue"):
        return True
    # A part without a name continues (and closes) the call being streamed.
    return open_call and "name" not in fc


def _steps(json_path: str, path: str) -> list[str | int]:
    """``$.a.b[0]['c']`` as ``["a", "b", 0, "c"]`` (RFC 9535 names and indexes)."""
    if not json_path.startswith("$"):
        raise CodecError(PROTOCOL, path, f"jsonPath {json_path!r} does not start with $")
    steps: list[str | int] = []
    pos = 1
    while pos < len(json_path):
        m = _STEP.match(json_path, pos)
        if m is None:
            raise CodecError(PROTOCOL, path, f"cannot read jsonPath {json_path!r}")
        name, index, quoted, dquoted = m.groups()
        steps.append(int(index) if index is not None else (name or quoted or dquoted or ""))
        pos = m.end()
    if not steps:
        raise CodecError(PROTOCOL, path, "jsonPath $ names no argument")
    return steps


class _Call:
    def __init__(self, slot: int):
        self.slot = slot  # where the assembled part goes among the response's parts
        self.name: str | None = None
        self.id: str | None = None
        self.signature: str | None = None
        self.args: dict[str, Any] = {}
        self.extras: dict[str, Any] = {}

    def get(self, steps: list[str | int]) -> Any:
        node: Any = self.args
        for step in steps:
            if isinstance(node, list) and isinstance(step, int) and step < len(node):
                node = node[step]
                continue
            if isinstance(node, dict) and isinstance(step, str) and step in node:
                node = node[step]
                continue
            return None
        return node

    def set(self, steps: list[str | int], value: Any) -> None:
        node: Any = self.args
        for step, following in zip(steps, [*steps[1:], None], strict=True):
            fresh: Any = value if following is None else [] if isinstance(following, int) else {}
            if isinstance(step, int):
                if not isinstance(node, list):
                    return
                node.extend([None] * (step + 1 - len(node)))
                if following is None or not isinstance(node[step], dict | list):
                    node[step] = fresh
            else:
                if not isinstance(node, dict):
                    return
                if following is None or not isinstance(node.get(step), dict | list):
                    node[step] = fresh
            node = node[step]

    def part(self) -> dict[str, Any]:
        fc: dict[str, Any] = {}
        if self.id is not None:
            fc["id"] = self.id
        fc["name"] = self.name or ""
        fc["args"] = self.args
        out: dict[str, Any] = {"functionCall": fc, **self.extras}
        if self.signature is not None:
            out["thoughtSignature"] = self.signature
        return out


class ArgumentAssembler:
    """Feeds streamed call pieces; ``parts`` gets each assembled call at its first slot."""

    def __init__(self, parts: list[Any]):
        self.parts = parts
        self.open: _Call | None = None
        self.incomplete: list[int] = []  # slots of calls the stream never closed

    def feed(self, part: dict[str, Any], path: str) -> None:
        fc = expect(PROTOCOL, part["functionCall"], f"{path}.functionCall", dict)
        if self.open is None:
            if not fc.get("partialArgs") and not fc.get("willContinue") and "name" not in fc:
                return  # an empty end marker after a closed call carries nothing
            self.open = _Call(len(self.parts))
            self.parts.append(None)
        call = self.open
        if fc.get("name"):
            call.name = expect(PROTOCOL, fc["name"], f"{path}.functionCall.name", str)
        if fc.get("id"):
            call.id = expect(PROTOCOL, fc["id"], f"{path}.functionCall.id", str)
        if part.get("thoughtSignature") and call.signature is None:
            call.signature = part["thoughtSignature"]
        call.extras.update(
            {k: v for k, v in part.items() if k not in ("functionCall", "thoughtSignature")}
        )
        pieces = expect(PROTOCOL, fc.get("partialArgs") or [], f"{path}.partialArgs", list)
        for i, raw in enumerate(pieces):
            here = f"{path}.functionCall.partialArgs[{i}]"
            piece = expect(PROTOCOL, raw, here, dict)
            if not piece.get("jsonPath"):
                continue
            steps = _steps(expect(PROTOCOL, piece["jsonPath"], f"{here}.jsonPath", str), here)
            if "stringValue" in piece:
                text = expect(PROTOCOL, piece["stringValue"], f"{here}.stringValue", str)
                before = call.get(steps)
                call.set(steps, before + text if isinstance(before, str) else text)
            elif value := next((k for k in _VALUES if k in piece), None):
                call.set(steps, None if value == "nullValue" else piece[value])
        if not fc.get("willContinue"):
            self.close()

    def close(self) -> None:
        if self.open is not None:
            self.parts[self.open.slot] = self.open.part()
            self.open = None

    def finish(self) -> None:
        """End of stream: a call still open is assembled from what arrived."""
        if self.open is not None:
            self.incomplete.append(self.open.slot)
            self.close()
