"""Packed rows read back as Python objects, each stored value parsed once and shared by every
row that refers to it (:mod:`flowdebug.store.packing` wrote them).

A recording's exchanges each carry the whole history so far: read back as text, 2,000 of them
would be a gigabyte to print and parse again. Read as objects, a history item stored once is
one object in every exchange that holds it, and a request's history is a list of those objects
(the session's in-memory form, :mod:`flowdebug.engine.session.exchange_bodies`): reading costs
what the stored values hold, plus one pointer per item of each list. A raw text that is the
compact JSON of its parsed body beside it stays a reference to that body.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from flowdebug.engine.session.exchange_bodies import JSON_OF, RAW, compact, parsed_key, same_json
from flowdebug.store.errors import StoreError
from flowdebug.store.packing import PACKED, references

_KINDS = {"$fd": "", "$fds": "s", "$fdj": "j"}


class _Splice:
    """A chunk of an array's elements, spliced into the array that holds it."""

    __slots__ = ("items",)

    def __init__(self, items: list[Any]):
        self.items = items


class _JsonText:
    """A string that is the compact JSON text of ``value`` (written out where it is kept)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


class Objects:
    """Rows of one session (over its ``values``: hash -> text) read as objects."""

    def __init__(self, values: Mapping[str, str]):
        self._values = values
        self._done: dict[tuple[str, str], Any] = {}  # (kind, hash) -> object (a chunk: list)
        self._shared: set[int] = set()  # ids of the objects in _done: never fixed again
        self._texts: dict[int, str] = {}  # id(a shared value) -> its compact text
        self._raw: list[tuple[dict[str, Any], str, _JsonText]] = []  # raw texts kept by reference

    def row(self, body: str) -> Any:
        """The item a row body holds (plain JSON, or packed)."""
        if not body.startswith(PACKED):
            return json.loads(body)
        text = body[len(PACKED) :]
        self._raw = []
        self._fill(text)
        item = self._fixed_top(json.loads(text, object_hook=self._hook))
        for holder, key, ref in self._raw:
            # Only the row's own keys: a raw text deeper down is the data's, written out.
            if holder is item:
                holder[key] = {JSON_OF: parsed_key(key)}
            else:
                holder[key] = self._text(ref)
        return item

    def _fill(self, text: str) -> None:
        """Parse every value ``text`` refers to, children first, without recursion (a value
        nests as deep as its data)."""
        stack = [r for r in references(text) if r not in self._done]
        while stack:
            top = stack[-1]
            if top in self._done:
                stack.pop()
                continue
            kind, h = top
            if h not in self._values:
                raise StoreError(
                    f"a saved value ({h}) is missing: the database was changed by hand"
                )
            value = self._values[h]
            missing = [r for r in references(value) if r not in self._done]
            if missing:
                stack.extend(missing)
                continue
            parsed = json.loads(f"[{value}]" if kind == "s" else value, object_hook=self._hook)
            self._done[top] = obj = self._fixed_top(parsed)
            self._shared.add(id(obj))
            stack.pop()

    def _fixed_top(self, value: Any) -> Any:
        if type(value) is list and id(value) not in self._shared:
            return self._fixed(value)
        if type(value) is _JsonText:
            return self._text(value)
        return value

    def _hook(self, d: dict[str, Any]) -> Any:
        if len(d) == 1:
            ((key, h),) = d.items()
            kind = _KINDS.get(key)
            if kind is not None and type(h) is str:
                found = self._done[kind, h]
                if kind == "s":
                    return _Splice(found)
                return _JsonText(found) if kind == "j" else found
        for key, v in d.items():
            t = type(v)
            if t is list and id(v) not in self._shared:
                d[key] = self._fixed(v)
            elif t is _JsonText:
                if key in RAW and same_json(d.get(parsed_key(key)), v.value):
                    self._raw.append((d, key, v))  # the row's own raw text: a reference
                else:
                    d[key] = self._text(v)
        return d

    def _fixed(self, items: list[Any]) -> list[Any]:
        """A list fresh from a parse with its chunks spliced and its JSON texts written."""
        out: list[Any] = []
        changed = False
        for x in items:
            t = type(x)
            if t is _Splice:
                out.extend(x.items)
                changed = True
            elif t is _JsonText:
                out.append(self._text(x))
                changed = True
            elif t is list and id(x) not in self._shared:
                y = self._fixed(x)  # fresh nested lists: a few hundred bytes of text at most
                out.append(y)
                changed = changed or y is not x
            else:
                out.append(x)
        return out if changed else items

    def _text(self, ref: _JsonText) -> str:
        key = id(ref.value)
        if key in self._texts:
            return self._texts[key]
        text = compact(ref.value)
        if text is None:  # the packer kept only texts that round-trip
            raise StoreError("a saved value cannot be read: the database was changed by hand")
        if key in self._shared:
            self._texts[key] = text
        return text
