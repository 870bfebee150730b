"""Item rows compressed against their neighbours: a session's trace events, messages and
executions look alike (the same keys, tools, labels; only numbers and ids move), so each row
is deflated with a dictionary made of the first rows of its block, and a 5,000-message session
takes a few MB instead of twenty.

The rows of a list are cut into blocks of :data:`BLOCK`; the first :data:`KEYS` rows of a block
are compressed alone (or kept as text when that is not smaller), every later row with those
rows' texts as its zlib dictionary. Reading a row needs at most its block's first rows, so a
save that appends to a long list reads back a few rows, never the history. A compressed row
has its bytes in ``zbody`` and an empty ``body``; a row whose ``zbody`` is NULL is its text
(every row written before migration 5).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable

from flowdebug.store.errors import StoreError

BLOCK = 128  # rows per block
KEYS = 8  # first rows of a block: the dictionary of the others
MIN_ALONE = 200  # a key row shorter than this stays text: deflate gains nothing on it
LEVEL = 6

Row = tuple[str, bytes | None]  # (body, zbody)


def key_rows(idx: int) -> range | None:
    """The rows whose texts are row ``idx``'s dictionary (None: it is compressed alone)."""
    offset = idx % BLOCK
    return None if offset < KEYS else range(idx - offset, idx - offset + KEYS)


def _dictionary(texts: Iterable[str]) -> bytes:
    return "".join(texts).encode("utf-8")


def encode(text: str, zdict: bytes | None) -> Row:
    """A row for ``text``: compressed when that is smaller, else the text itself."""
    if zdict is None and len(text) < MIN_ALONE:
        return text, None
    raw = text.encode("utf-8")
    z = zlib.compressobj(LEVEL, zdict=zdict) if zdict else zlib.compressobj(LEVEL)
    packed = z.compress(raw) + z.flush()
    return ("", packed) if len(packed) < len(raw) else (text, None)


def decode(row: Row, zdict: bytes | None) -> str:
    body, packed = row
    if packed is None:
        return body
    z = zlib.decompressobj(zdict=zdict) if zdict else zlib.decompressobj()
    try:
        return (z.decompress(bytes(packed)) + z.flush()).decode("utf-8")
    except (zlib.error, UnicodeDecodeError) as e:
        raise StoreError(
            f"a saved row cannot be read ({e}): the database was changed by hand"
        ) from None


def encode_list(start: int, texts: list[str], earlier: Callable[[range], list[str]]) -> list[Row]:
    """Rows for ``texts`` at indices ``start``, ``start + 1``, …; ``earlier(range)`` gives the
    stored texts of rows before ``start`` that a dictionary needs (one call at most: only the
    block ``start`` falls in can begin before it)."""
    dicts: dict[int, bytes] = {}
    rows = []
    for idx, text in enumerate(texts, start):
        keys = key_rows(idx)
        if keys is None:
            rows.append(encode(text, None))
            continue
        zdict = dicts.get(keys.start)
        if zdict is None:
            before = range(keys.start, min(keys.stop, start))
            got = earlier(before) if before else []
            if len(got) != len(before):
                raise StoreError("a saved row is missing: the database was changed by hand")
            mine = [texts[i - start] for i in keys if i >= start]
            zdict = dicts[keys.start] = _dictionary([*got, *mine])
        rows.append(encode(text, zdict))
    return rows


def decode_list(rows: list[Row]) -> list[str]:
    """The texts of a whole list's rows (indices 0, 1, … in order)."""
    texts: list[str] = []
    dicts: dict[int, bytes] = {}
    for idx, row in enumerate(rows):
        keys = key_rows(idx)
        zdict = None
        if keys is not None and row[1] is not None:
            zdict = dicts.get(keys.start)
            if zdict is None:
                zdict = dicts[keys.start] = _dictionary(texts[i] for i in keys)
        texts.append(decode(row, zdict))
    return texts
