"""JSON that a person, a file or a model supplied, read so that nothing downstream chokes on it.

This is the one reader of JSON text. Every entrance (the command line, the library's public
functions, a paste on the Tools page, an import, a history edit) reads its JSON through
:func:`loads`, or checks an already parsed value with :func:`check`. Both refuse, naming the
JSON path, what no codec, model or graph must ever see:

- text larger than :data:`MAX_BYTES` of UTF-8, whether it came as bytes or as a str (the limit
  does not depend on who calls);
- nesting deeper than :data:`MAX_DEPTH` (real payloads nest a few levels around arguments;
  pydantic gives up from about 250 levels and Python's parser from about 1,000, each with a
  traceback instead of a reason);
- ``NaN``, ``Infinity`` and ``-Infinity``, which Python reads but JSON does not have (they
  would come out as invalid JSON, or silently as null);
- empty text, bytes that are not UTF-8, and text that is not JSON (a raw control character
  inside a string is not JSON either: it names the line and column);
- a lone surrogate (``"\\ud800"`` is valid JSON but no text), a key that is not text, an
  integer too long to write, and (in a parsed value) anything that is not JSON.

Escaped control characters (``"\\u0000"``) and noncharacters such as U+FFFE are text: they are
kept as they are and shown literally.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from flowdebug.errors import CodecError, json_path

MAX_DEPTH = 128
MAX_BYTES = 64 * 1024 * 1024
_SHOWN = 12  # steps of a too deep value's path shown
# Python reads and writes no integer longer than this, so no payload can hold one.
_LONG_NUMBER = (
    f"a number of more than {sys.get_int_max_str_digits()} digits is not a value any payload holds"
)


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
    except json.JSONDecodeError:
        raise
    except ValueError:  # an integer longer than Python converts (sys.get_int_max_str_digits)
        raise CodecError(source, "$", _LONG_NUMBER) from None


def _text(data: str | bytes | bytearray, source: str) -> str:
    """``data`` as text, refused beyond :data:`MAX_BYTES` of UTF-8 and when not UTF-8."""
    too_big = CodecError(source, "$", f"larger than {MAX_BYTES // 2**20} MiB")
    if isinstance(data, bytes | bytearray):
        if len(data) > MAX_BYTES:
            raise too_big
        try:
            return bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise CodecError(source, "$", f"not UTF-8 text (byte {e.start} is invalid)") from None
    # A character is one to four bytes of UTF-8: count them only when it can matter.
    if len(data) > MAX_BYTES or (
        len(data) * 4 > MAX_BYTES and len(data.encode("utf-8", "surrogatepass")) > MAX_BYTES
    ):
        raise too_big
    return data.removeprefix("\ufeff")


def loads(data: str | bytes | bytearray, source: str = "input", *, lines: bool = False) -> Any:
    """The JSON value in ``data`` (text, or bytes of UTF-8), checked by :func:`check`. With
    ``lines``, text holding one JSON value a line (JSON Lines) gives the list of them. Raises
    :class:`CodecError` naming ``source``, the JSON path and the reason."""
    text = _text(data, source)
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


def _writable(number: int) -> bool:
    try:
        str(number)
    except ValueError:
        return False
    return True


def _refusal(item: Any) -> str | None:
    """Why a leaf (or a key) is no JSON a codec may see, if it is not."""
    if isinstance(item, str):
        try:
            item.encode("utf-8")
        except UnicodeEncodeError as e:
            return f"a lone surrogate (\\u{ord(item[e.start]):04x}) is not text"
        return None
    if isinstance(item, _Constant):
        return f"{item.name} is not a JSON number"
    if isinstance(item, float) and not math.isfinite(item):
        return f"{item} is not a JSON number"
    if isinstance(item, int) and item.bit_length() > 14_000 and not _writable(item):
        return _LONG_NUMBER
    if item is None or isinstance(item, bool | int | float | dict | list | tuple):
        return None
    return f"{type(item).__name__!r} is not a JSON value"


def check(value: Any, source: str = "input") -> None:
    """Refuse a parsed value nested deeper than :data:`MAX_DEPTH`, holding a number that is
    not finite (NaN, Infinity) or too long to write, a lone surrogate (``"\\ud800"`` is valid
    JSON but not text: nothing can encode it as UTF-8), a key that is not text or anything that
    is not JSON, naming its JSON path. Iterative: any depth is safe to check."""
    # Each entry holds its value, its depth and its place as a chain (key, parent's place):
    # the path is spelled out only for the value refused.
    stack: list[tuple[Any, int, _Place]] = [(value, 0, None)]
    while stack:
        item, depth, place = stack.pop()
        if (why := _refusal(item)) is not None:
            raise CodecError(source, _path(place), why)
        if depth > MAX_DEPTH:
            keys = _keys(place)  # the path's first steps: all of them would fill the screen
            raise CodecError(
                source,
                json_path(keys[:_SHOWN]) + ("…" if len(keys) > _SHOWN else ""),
                f"nested more than {MAX_DEPTH} levels deep; no payload nests like this",
            )
        if isinstance(item, dict):
            for k in item:
                if not isinstance(k, str):
                    why = f"a key must be text, not {type(k).__name__} ({k!r:.40})"
                    raise CodecError(source, _path(place), why)
                if (why := _refusal(k)) is not None:
                    raise CodecError(source, _path(place), f"a key: {why}")
            stack += [(v, depth + 1, (k, place)) for k, v in reversed(item.items())]
        elif isinstance(item, list | tuple):
            stack += [(v, depth + 1, (i, place)) for i, v in reversed(list(enumerate(item)))]


_Place = tuple[Any, "_Place"] | None


def _keys(place: _Place) -> list[Any]:
    keys = []
    while place is not None:
        key, place = place
        keys.append(key)
    return keys[::-1]


def _path(place: _Place) -> str:
    return json_path(_keys(place))


def embedded(text: str) -> Any:
    """The JSON value written in a string that a payload holds (a call's arguments, a streamed
    call's input, a tool's output, an SSE event's data), read and checked like any other JSON.
    Raises :class:`ValueError` (as :func:`json.loads` does) when it is no JSON this reader
    accepts, so a codec keeps the string as text; a value nested too deep or holding NaN never
    leaves a codec as JSON."""
    try:
        return loads(text, "embedded")
    except CodecError as e:
        raise ValueError(f"{e.path}: {e.reason}") from None


def _encoder(item_separator: str, key_separator: str, allow_nan: bool) -> Any:
    spelling = json.JSONEncoder(
        ensure_ascii=False,
        separators=(item_separator, key_separator),
        allow_nan=allow_nan,
    )
    c_make = getattr(json.encoder, "c_make_encoder", None)
    if c_make is None:  # an interpreter without the C accelerator
        return lambda value, _level: [spelling.encode(value)]
    # The accelerator's encoder made once: json.dumps with any option and JSONEncoder.encode
    # make a new one at every call, which was most of the time of a call on a small value (a
    # history's message, packed at every save; a key of a lit wire fragment). No circularity
    # check: a parsed value has no cycles.
    return c_make(
        None,
        spelling.default,
        json.encoder.encode_basestring,  # type: ignore[attr-defined]
        None,
        key_separator,
        item_separator,
        False,
        False,
        allow_nan,
    )


_COMPACT = _encoder(",", ":", allow_nan=False)
_SPACED = _encoder(", ", ": ", allow_nan=True)


def compact(value: Any) -> str:
    """``value``'s compact JSON text as the store packs it and an SDK sends a body: no spaces,
    UTF-8 as it is, keys in their order. Raises :class:`ValueError` for NaN and the infinities
    and :class:`TypeError` for what JSON does not have, as :func:`json.dumps` does."""
    return "".join(_COMPACT(value, 0))


def shown(value: Any) -> str:
    """``value`` as ``json.dumps(value, ensure_ascii=False)`` writes it (a wire fragment shown
    to a person), with an encoder made once."""
    return "".join(_SPACED(value, 0))
