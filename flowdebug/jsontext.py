"""JSON that a person, a file or a model supplied, read so that nothing downstream chokes on it.

Every entrance (the command line, a paste on the Tools page, an import, a history edit) reads
its JSON through :func:`loads`, or checks an already parsed value with :func:`check`. Both
refuse, naming the JSON path, what no codec, model or graph must ever see:

- nesting deeper than :data:`MAX_DEPTH` (real payloads nest a few levels around arguments;
  pydantic gives up from about 250 levels and Python's parser from about 1,000, each with a
  traceback instead of a reason);
- ``NaN``, ``Infinity`` and ``-Infinity``, which Python reads but JSON does not have (they
  would come out as invalid JSON, or silently as null);
- empty text, and text that is not JSON (a raw control character inside a string is not JSON
  either: it names the line and column).

Escaped control characters (``"\\u0000"``) and noncharacters such as U+FFFE are text: they are
kept as they are and shown literally.
"""

from __future__ import annotations

import json
import math
from typing import Any

from flowdebug.errors import CodecError, json_path

MAX_DEPTH = 128


class _Constant:
    """Where the JSON text said NaN, Infinity or -Infinity."""

    def __init__(self, name: str):
        self.name = name


def _syntax(e: json.JSONDecodeError, source: str, prefix: str = "") -> CodecError:
    # The json module ends some reasons with " at" ("Invalid control character at").
    reason = e.msg.removesuffix(" at")
    return CodecError(
        source, "$", f"{prefix}not valid JSON: {reason} at line {e.lineno} column {e.colno}"
    )


def _one(text: str, source: str) -> Any:
    try:
        return json.loads(text, parse_constant=_Constant)
    except RecursionError:
        raise CodecError(
            source, "$", f"nested too deeply (more than {MAX_DEPTH} levels) to be a payload"
        ) from None


def loads(text: str, source: str = "input", *, lines: bool = False) -> Any:
    """The JSON value in ``text``, checked by :func:`check`. With ``lines``, text holding one
    JSON value a line (JSON Lines) gives the list of them. Raises :class:`CodecError` naming
    ``source``, the JSON path and the reason."""
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise CodecError(source, "$", "not valid JSON: the text is empty")
    try:
        value = _one(text, source)
    except json.JSONDecodeError as e:
        if not (lines and e.msg == "Extra data"):
            raise _syntax(e, source) from None
        value = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    value.append(_one(line, source))
                except json.JSONDecodeError as err:
                    raise _syntax(err, source, f"line {n}: ") from None
    check(value, source)
    return value


def check(value: Any, source: str = "input") -> None:
    """Refuse a parsed value nested deeper than :data:`MAX_DEPTH` or holding a number that is
    not finite (NaN, Infinity), naming its JSON path. Iterative: any depth is safe to check."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        item, where = stack.pop()
        if isinstance(item, _Constant):
            raise CodecError(source, json_path(where), f"{item.name} is not a JSON number")
        if isinstance(item, float) and not math.isfinite(item):
            raise CodecError(source, json_path(where), f"{item} is not a JSON number")
        if len(where) > MAX_DEPTH:
            raise CodecError(
                source,
                json_path(where[:MAX_DEPTH]),
                f"nested more than {MAX_DEPTH} levels deep; no payload nests like this",
            )
        if isinstance(item, dict):
            stack += [(v, (*where, k)) for k, v in reversed(item.items())]
        elif isinstance(item, list | tuple):
            stack += [(v, (*where, i)) for i, v in reversed(list(enumerate(item)))]
