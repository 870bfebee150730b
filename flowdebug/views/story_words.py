"""Plain words for the story of a cycle: how a call, a value, a result and a duration read to a
novice. :mod:`flowdebug.views.story` builds its sentences from these."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from flowdebug.engine.tracing.trace import shorten

_TIMES = {1: "once", 2: "twice", 3: "three times"}
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


def times(n: int) -> str:
    """``once``, ``twice``, ``3 times``…"""
    return _TIMES.get(n, f"{n} times")


def ordinal(i: int) -> str:
    """The position ``i`` (from 0) in words: ``first``, ``second``… then ``9th``."""
    return _ORDINALS[i] if 0 <= i < len(_ORDINALS) else f"{i + 1}th"


def count(n: int, word: str) -> str:
    """``1 tool``, ``2 tools``, ``no tools``."""
    if n == 0:
        return f"no {word}s"
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def joined(items: Sequence[str], last: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {last} {items[-1]}"


def quoted(text: str, n: int = 80) -> str:
    """``text`` on one line, cut to ``n`` characters, in typographic quotes."""
    return f"“{shorten(text, n)}”"


def seconds(ms: float) -> str:
    """A duration as a person says it: ``under 1 ms``, ``12 ms``, ``1 s``, ``1.3 s``."""
    if ms < 1:
        return "under 1 ms"
    if ms < 1000:
        return f"{ms:.0f} ms"
    return f"{round(ms / 1000, 1):g} s"


_TIMEOUT = re.compile(r"\bafter (\d+(?:\.\d+)?)\s*s\b")


def timeout_after(text: str, duration_ms: float | None) -> str | None:
    """How long the runtime waited: the limit its error text names (``timeout after 1s``),
    else how long the call took."""
    m = _TIMEOUT.search(text)
    if m:
        return f"{float(m[1]):g} s"
    return seconds(duration_ms) if duration_ms is not None else None


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str | int | float):
        return shorten(str(value), 24)
    return None


def main_argument(arguments: Any) -> str | None:
    """What a call is about, in short: its first plain argument (``Paris``, ``T-1``)."""
    if not isinstance(arguments, dict):
        return None
    return next((s for v in arguments.values() if (s := _scalar(v)) is not None), None)


def subject(call: dict[str, Any] | None, tool: str | None) -> str:
    """A call named for a person: ``get_weather for Paris``, or the tool alone."""
    name = shorten(str((call or {}).get("name") or tool or "the tool"), 64)
    if call is None or call.get("raw_arguments") is not None:
        return str(name)
    about = main_argument(call.get("arguments"))
    return f"{name} for {about}" if about else str(name)


def plain(text: str, n: int = 90) -> str:
    """A tool's output in plain words: a JSON object as ``key value, …``, a list by its items,
    anything else quoted."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return quoted(text, n) if text.strip() else "nothing"
    if isinstance(value, dict):
        pairs = [f"{k} {_short(v)}" for k, v in value.items()]
        return shorten(", ".join(pairs), n) if pairs else "an empty object"
    if isinstance(value, list):
        if not value:
            return "an empty list"
        if all(_scalar(v) is not None for v in value):
            return shorten(", ".join(str(v) for v in value), n)
        return f"a list of {count(len(value), 'item')}"
    return quoted(text, n)


def _short(value: Any) -> str:
    if isinstance(value, dict | list):
        return "{…}" if isinstance(value, dict) else "[…]"
    return shorten(str(value), 30)


def first_line(text: str) -> str:
    """The first line of ``text`` (an error message's headline)."""
    return shorten(text.strip().splitlines()[0], 160) if text.strip() else ""
