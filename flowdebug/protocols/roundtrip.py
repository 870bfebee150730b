"""The round-trip loss report: what A -> B -> A keeps and loses, for every ordered pair.

For a conversation or any payload (a request, a response, a stream), each row takes the
canonical value as protocol A holds it (encoded in A and decoded back, so what A alone cannot
hold is not blamed on B), sends it through B and back to A, and compares the canonical values
before and after, aspect by aspect (:data:`ASPECTS`):

- ``call_ids``: every call's id; ``names``: the calls' and the declarations' tool names;
  ``arguments``: every call's arguments;
- ``pairing``: which call each result answers (by position, so renamed ids that still pair
  count as kept); ``results``: each result's content as text; ``error_flags``: each result's
  error flag;
- ``text``, ``thinking``: the text and reasoning of each message; ``images``: every image,
  in messages and in results; ``model``: the model the value names.

Each aspect is ``kept``, ``lost`` (fewer after than before), ``changed``, or ``none`` when the
value has none. A row also lists the warning codes of the trip (B's encoding, and A's
encoding of what came back), and ``error`` when a step refused the value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flowdebug import protocols
from flowdebug.errors import FlowdebugError
from flowdebug.model import Conversation, Image, Message, Text, Thinking
from flowdebug.protocols.convert import Decoded, decode, encode

ASPECTS = (
    "call_ids",
    "names",
    "arguments",
    "pairing",
    "results",
    "error_flags",
    "text",
    "thinking",
    "images",
    "model",
)


@dataclass
class TripRow:
    """What ``source`` -> ``via`` -> ``source`` did to the value."""

    source: str
    via: str
    aspects: dict[str, str] = field(default_factory=dict)  # aspect -> kept/lost/changed/none
    warnings: list[str] = field(default_factory=list)  # codes, in order, repeats kept once
    error: str | None = None

    @property
    def lossless(self) -> bool:
        return self.error is None and all(v in ("kept", "none") for v in self.aspects.values())

    def summary(self) -> dict[str, Any]:
        """One flat row (a table, JSON)."""
        return {
            "from": self.source,
            "via": self.via,
            **self.aspects,
            "warnings": ", ".join(self.warnings),
            "error": self.error or "",
        }


def _messages(d: Decoded) -> list[Message]:
    return d.as_conversation().messages


def _images(m: Message) -> list[Any]:
    out: list[Any] = [(p.media_type, p.data, p.url) for p in m.parts if isinstance(p, Image)]
    for r in m.tool_results:
        if isinstance(r.content, list):
            out += [(c.media_type, c.data, c.url) for c in r.content if isinstance(c, Image)]
    return out


def facets(d: Decoded) -> dict[str, list[Any]]:
    """Each aspect of a decoded value, as a comparable list."""
    messages = _messages(d)
    calls = [c for m in messages for c in m.tool_calls]
    results = [r for m in messages for r in m.tool_results]
    index = {c.id: i for i, c in enumerate(calls)}
    tools = d.as_conversation().tools
    return {
        "call_ids": [c.id for c in calls],
        "names": [c.name for c in calls] + [t.name for t in tools],
        "arguments": [c.arguments for c in calls],
        "pairing": [index.get(r.call_id) for r in results],
        "results": [r.text for r in results],
        "error_flags": [r.is_error for r in results],
        "text": [
            t for m in messages if (t := "".join(p.text for p in m.parts if isinstance(p, Text)))
        ],
        "thinking": [p.text for m in messages for p in m.parts if isinstance(p, Thinking)],
        "images": [i for m in messages for i in _images(m)],
        "model": [m]
        if (m := d.as_conversation().model or (d.response and d.response.model))
        else [],
    }


def _verdict(before: list[Any], after: list[Any]) -> str:
    if not before and not after:
        return "none"
    if before == after:
        return "kept"
    return "lost" if len(after) < len(before) else "changed"


def _through(d: Decoded, name: str) -> tuple[Decoded, list[str]]:
    payload, warnings = encode(d, name)
    back = decode(payload, name)
    return back, [w.code for w in warnings]


def trip(start: Decoded, source: str, via: str) -> TripRow:
    """One row: ``start`` as ``source`` holds it, through ``via`` and back."""
    row = TripRow(source, via)
    try:
        held, _ = _through(start, source)
        there, lost_there = _through(held, via)
        back, lost_back = _through(there, source)
    except FlowdebugError as e:
        row.error = str(e)
        return row
    before, after = facets(held), facets(back)
    row.aspects = {a: _verdict(before[a], after[a]) for a in ASPECTS}
    row.warnings = list(dict.fromkeys([*lost_there, *lost_back]))
    return row


def roundtrip(value: Conversation | Any, names: list[str] | None = None) -> list[TripRow]:
    """A row per ordered pair of ``names`` (every model vendor by default: MCP carries no
    conversation) for a conversation or a payload of any protocol."""
    if isinstance(value, Conversation):
        start = Decoded("canonical", "request", conversation=value)
    else:
        start = decode(value)
    names = names or protocols.model_protocols()
    return [trip(start, a, b) for a in names for b in names if a != b]
