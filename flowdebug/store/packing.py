"""Each piece of a session stored once: an item's JSON with its larger values kept by hash.

A live call's exchange carries the whole history as the vendor received it (three times: the
codec's encoding, the SDK's body, its exact text), and an execution repeats its message's call
and result: saved as they are, a session grows with the square of its length. Packed, every
object, array and string of :data:`MIN_BYTES` or more is a row of ``flowdebug_values`` keyed by
its hash, and the item says ``{"$fd":"<hash>"}`` in its place; a value already stored (an
earlier exchange's messages) is not stored again. An element of a long array is shared from
:data:`ELEMENT_BYTES` on; the item itself always stays in its row, where
:mod:`flowdebug.store.compress` deflates it against its neighbours (an execution repeating
its message's call costs a few bytes there).

A long array is a tree of chunks cut where an element's hash says (content-defined chunking,
as in prolly trees): appending elements leaves the earlier chunks as they were, so a request
one turn longer than the last adds a few rows, not a copy of the history. A chunk is a run of
elements (``{"$fds":"<hash>"}`` splices it into its array). A string that is exactly the
compact JSON text of a value (the SDK's body as sent) is kept as that value
(``{"$fdj":"<hash>"}``), so it shares the rows of the parsed body beside it.

A packed body starts with :data:`PACKED`; any other body is plain JSON (rows written before
packing, or an item whose own data has a ``"$fd`` key, which is kept as it is).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from flowdebug.jsontext import compact
from flowdebug.store.errors import StoreError

PACKED = "@"
MIN_BYTES = 512  # a value shorter than this stays inline: its row compresses it with its neighbours
ELEMENT_BYTES = 64  # the same for an element of a long array: a reference costs 27 bytes
FANOUT = 8  # elements per chunk, on average
MAX_CHUNK = 64
_REF = re.compile(r'\{"\$fd([sj]?)":"([0-9a-f]{16})"\}')
_MARK = '"$fd'


# What the encoder writes for a string (ensure_ascii=False), called directly: a pack writes
# every key and string of a session this way, and the encoder's own dispatch per call was most
# of that time.
_string = json.encoder.encode_basestring  # type: ignore[attr-defined]


def _hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


class Packer:
    """Packs items, collecting the values they need (``values``: hash -> text)."""

    def __init__(self, quick: bool = True) -> None:
        self.values: dict[str, str] = {}
        self.quick = quick  # False: every container walked (the tests' reference for the quick way)

    def _keep(self, text: str, kind: str = "") -> str:
        h = _hash(text)
        self.values.setdefault(h, text)
        return f'{{"$fd{kind}":"{h}"}}'

    def _object(self, value: dict[str, Any]) -> str:
        return "{" + ",".join(f"{_string(k)}:{self._pack(v)}" for k, v in value.items()) + "}"

    def _pack(self, value: Any, least: int = MIN_BYTES) -> str:
        if self.quick and type(value) in (dict, list) and len(value) <= FANOUT:
            # Nothing inside a container whose text is shorter than MIN_BYTES and has fewer
            # than FANOUT commas is shared: no string or object in it reaches MIN_BYTES, and
            # no array in it is long enough for ELEMENT_BYTES. Its packed text is then its
            # JSON text, which the encoder writes at once (a history's messages, most of a
            # save's packing).
            text = compact(value)
            if len(text) < MIN_BYTES and text.count(",") < FANOUT:
                return self._keep(text) if len(text) >= least else text
        if isinstance(value, dict):
            text = self._object(value)
        elif isinstance(value, list):
            # A long array's elements (a history) are shared from a smaller size on: its
            # chunks then hold references, and a chunk rewritten by an append stays small.
            each = ELEMENT_BYTES if len(value) > FANOUT else MIN_BYTES
            text = "[" + ",".join(self._chunks([self._pack(v, each) for v in value])) + "]"
        elif isinstance(value, str):
            text = _string(value)
            if len(text) >= least and value[:1] in "{[":
                body = _json_text(value)
                if body is not None:
                    return self._keep(self._pack(body), "j")
        elif value is None:
            return "null"
        elif value is True:
            return "true"
        elif value is False:
            return "false"
        elif type(value) is int:
            return int.__repr__(value)
        else:
            return compact(value)  # a float (NaN and infinity refused), or what the encoder says
        return self._keep(text) if len(text) >= least else text

    def _chunks(self, level: list[str]) -> list[str]:
        while len(level) > FANOUT:
            chunks: list[list[str]] = [[]]
            for element in level:
                chunks[-1].append(element)
                if len(chunks[-1]) >= MAX_CHUNK or _hash(element)[-1] in "07":  # 1 in 8
                    chunks.append([])
            level = [self._keep(",".join(c), "s") for c in chunks if c]
        return level

    def pack(self, item_text: str) -> str:
        """The row body of one item given its JSON text (an object)."""
        if _MARK in item_text:
            return item_text
        # The item itself stays in its row (only its larger values are shared): rows are
        # compressed against their neighbours (flowdebug.store.compress), hashes are not.
        value = json.loads(item_text)
        return PACKED + (self._object(value) if isinstance(value, dict) else self._pack(value))


def _json_text(text: str) -> Any | None:
    """The value ``text`` is the compact JSON of, or None."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    try:
        return value if compact(value) == text else None
    except ValueError:  # NaN or Infinity
        return None


def references(text: str) -> list[tuple[str, str]]:
    """The values a packed text refers to, as (kind, hash): kind ``""`` a value, ``"s"`` a
    chunk of array elements, ``"j"`` a value written as its JSON text."""
    return [(kind, h) for kind, h in _REF.findall(text)]


def unpacker(values: Mapping[str, str]) -> Callable[[str], str]:
    """A function from a row body to its item's JSON text, over a session's ``values``."""
    done: dict[str, str] = {}

    def refs(text: str) -> list[str]:
        return [h for _, h in _REF.findall(text) if h not in done]

    def resolve(m: re.Match[str]) -> str:
        kind, h = m.groups()
        return compact(done[h]) if kind == "j" else done[h]

    def fill(h: str) -> None:
        # Children first, without recursion: a value nests as deep as its data.
        stack = [h]
        while stack:
            top = stack[-1]
            if top in done:
                stack.pop()
                continue
            if top not in values:
                raise StoreError(
                    f"a saved value ({top}) is missing: the database was changed by hand"
                )
            missing = refs(values[top])
            if missing:
                stack.extend(missing)
            else:
                done[top] = _REF.sub(resolve, values[top])
                stack.pop()

    def unpack(body: str) -> str:
        if not body.startswith(PACKED):
            return body
        for h in refs(body):
            fill(h)
        return _REF.sub(resolve, body[len(PACKED) :])

    return unpack
