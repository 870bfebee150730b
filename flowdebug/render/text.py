"""Payloads as text for people: fast pretty JSON, SSE lines, line diffs, changed JSON paths
and elision of the middle of long texts. Used by the Protocols and Failures pages."""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

MAX_PATHS = 12  # changed paths listed per payload; the diff has the rest

_PRETTY_ITEMS: dict[str, str] = {}
_LONG = 16  # lists longer than this are pretty-printed item by item, through the cache


def pretty(value: Any) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)``, fast for long histories.

    json's indenting encoder is pure Python; a 1,000-message request takes ~25 ms. The items
    of long lists (messages, contents, input items, a transcript) are cached by their compact
    JSON (C-encoded), so a step pretty-prints only the messages it added.
    """
    if isinstance(value, list) and len(value) > _LONG:
        return _pretty_list(value, "")
    if isinstance(value, dict) and any(
        isinstance(v, list) and len(v) > _LONG for v in value.values()
    ):
        lines = [
            f"  {json.dumps(k, ensure_ascii=False)}: "
            + (
                _pretty_list(v, "  ")
                if isinstance(v, list) and len(v) > _LONG
                else _indent(json.dumps(v, indent=2, ensure_ascii=False), "  ")
            )
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(lines) + "\n}"
    return json.dumps(value, indent=2, ensure_ascii=False)


def _pretty_list(items: list[Any], pad: str) -> str:
    inner = pad + "  "
    return "[\n" + ",\n".join(inner + _indent(_pretty_item(i), inner) for i in items) + f"\n{pad}]"


def _pretty_item(item: Any) -> str:
    key = json.dumps(item, ensure_ascii=False)
    text = _PRETTY_ITEMS.get(key)
    if text is None:
        if len(_PRETTY_ITEMS) > 20_000:
            _PRETTY_ITEMS.clear()
        text = _PRETTY_ITEMS[key] = json.dumps(item, indent=2, ensure_ascii=False)
    return text


def _indent(text: str, pad: str) -> str:
    return text.replace("\n", "\n" + pad) if pad else text


def event_stream_text(events: Any) -> str:
    """An AWS event stream as text: each frame's ``:event-type`` header, then its JSON payload
    (an event object's one key names its type)."""
    frames = []
    for e in events:
        name, payload = next(iter(e.items())) if isinstance(e, dict) and len(e) == 1 else ("", e)
        frames.append(f":event-type {name}\n{json.dumps(payload, ensure_ascii=False)}")
    return "\n\n".join(frames)


def sse_text(events: Any) -> str:
    """A stream as the SSE ``data:`` lines a client reads: one line per event, a blank line
    between events (as on the wire)."""
    if not isinstance(events, list):
        return pretty(events)
    return "\n\n".join(f"data: {json.dumps(e, ensure_ascii=False)}" for e in events)


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def text_diff(before: str, after: str, a_label: str, b_label: str, context: int = 2) -> str:
    """A unified diff of two texts ('' when equal).

    The common head and tail are cut before difflib runs (its matcher is slow on long
    near-identical inputs, e.g. a 1,000-message request that gained two messages: the head is
    found by comparing string slices in C); hunk line numbers are shifted back so they still
    point into the whole texts.
    """
    if before == after:
        return ""
    a, b = before, after
    shortest = min(len(a), len(b))
    head = a.rfind("\n", 0, _common_prefix(a, b)) + 1  # a line start in both texts
    tail = _common_prefix(a[head:][::-1], b[head:][::-1]) if shortest > head else 0
    # the common tail, from the first line start inside it (shared by both texts)
    nl = a.find("\n", len(a) - tail) if tail else -1
    a_tail = len(a) if nl < 0 else nl + 1
    b_tail = len(b) - (len(a) - a_tail)
    start = _back(a, head, context)
    a_end = _forward(a, a_tail, context)
    b_end = b_tail + (a_end - a_tail)
    offset = a.count("\n", 0, start)
    lines = difflib.unified_diff(
        a[start:a_end].splitlines(),
        b[start:b_end].splitlines(),
        a_label,
        b_label,
        lineterm="",
        n=context,
    )
    return "\n".join(_shift(line, offset) for line in lines)


def _common_prefix(a: str, b: str) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _back(text: str, pos: int, lines: int) -> int:
    """The start of the line ``lines`` lines before the line starting at ``pos``."""
    for _ in range(lines):
        if pos <= 0:
            break
        pos = text.rfind("\n", 0, pos - 1) + 1
    return pos


def _forward(text: str, pos: int, lines: int) -> int:
    """The position ``lines`` whole lines after the line start ``pos``."""
    for _ in range(lines):
        if pos >= len(text):
            break
        nl = text.find("\n", pos)
        pos = len(text) if nl < 0 else nl + 1
    return pos


def _shift(line: str, offset: int) -> str:
    m = _HUNK.match(line)
    if not m or not offset:
        return line
    a, b = int(m[1]) + offset, int(m[3]) + offset
    return f"@@ -{a}{m[2] or ''} +{b}{m[4] or ''} @@" + line[m.end() :]


def changed_paths(before: Any, after: Any, depth: int = 2) -> list[str]:
    """Where two JSON values differ, ``depth`` levels down: "$.messages[3] added"."""
    out: list[str] = []
    _walk(before, after, "$", depth, out)
    if len(out) > MAX_PATHS:
        out = [*out[:MAX_PATHS], f"… {len(out) - MAX_PATHS} more"]
    return out


def _walk(a: Any, b: Any, path: str, depth: int, out: list[str]) -> None:
    if a == b:
        return
    if depth <= 0 or type(a) is not type(b) or not isinstance(a, dict | list):
        out.append(f"{path} changed")
        return
    if isinstance(a, dict):
        for k in [*a, *(k for k in b if k not in a)]:
            sub = f"{path}.{k}"
            if k not in b:
                out.append(f"{sub} removed")
            elif k not in a:
                out.append(f"{sub} added")
            else:
                _walk(a[k], b[k], sub, depth - 1, out)
        return
    for i in range(min(len(a), len(b))):
        _walk(a[i], b[i], f"{path}[{i}]", depth - 1, out)
    out += [f"{path}[{i}] removed" for i in range(len(b), len(a))]
    out += [f"{path}[{i}] added" for i in range(len(a), len(b))]


def elide(text: str, head: int = 120, tail: int = 360) -> tuple[str, int]:
    """The text with its middle lines cut when it is long: (shown text, lines hidden)."""
    lines = text.splitlines()
    hidden = len(lines) - head - tail
    if hidden <= 40:
        return text, 0
    marker = f"… {hidden:,} lines hidden (tick “Whole payloads” to see them) …"
    return "\n".join([*lines[:head], marker, *lines[-tail:]]), hidden
