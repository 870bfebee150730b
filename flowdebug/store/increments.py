"""Saving only what is new: a session's items never change once made (pydantic models are
frozen and the debugger copies lists, not items), so a store remembers which item objects it
wrote (:class:`WrittenCache`) and a save rewrites each list from its first changed item on
(:func:`plan_changes`, :func:`write_changes`): a step costs a few rows whatever the length of
the history (see ``bench/store.py``). Items are packed (:mod:`flowdebug.store.packing`), and a
store remembers which values it knows are stored, so a step writes only the values it adds
(see ``bench/storage_growth.py``). When the stored rows are not the ones a store knows (another
server saved the session), :func:`write_whole` writes them all again.
"""

from __future__ import annotations

import operator
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from flowdebug.engine.session.session_state import SessionState
from flowdebug.store.compress import decode, encode_list
from flowdebug.store.db import Tx
from flowdebug.store.packing import Packer
from flowdebug.store.rows import LISTS, item_json

CACHE_SIZE = 256  # sessions whose written items a store remembers


@dataclass
class UndoWritten:
    """A session's undo rows (:mod:`flowdebug.store.undo`) as a store last wrote or read them:
    per row, the state it holds, its index, and the newer state it was written against."""

    states: list[SessionState]
    keys: list[int]
    bases: list[SessionState]


@dataclass
class Written:
    """A session as this store last wrote it: its revision, its items, and when its row was
    made (``created``): another server may delete the session and make it again under the same
    id, and the revisions start over, so a revision alone does not say the rows are ours."""

    revision: int
    items: dict[str, list[Any]]
    created: float | None = None
    values: set[str] = field(default_factory=set)  # hashes stored for the session
    undo: UndoWritten | None = None  # its undo rows (flowdebug.store.undo)

    def matches(self, revision: int, created: float) -> bool:
        """True when the stored row is the one this store last wrote or read."""
        return self.revision == revision and self.created == created


class WrittenCache:
    """What a store wrote of its most recent sessions. Safe to share between threads."""

    def __init__(self) -> None:
        self._written: OrderedDict[str, Written] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, session_id: str, written: Written | None) -> None:
        """Keep ``written`` for ``session_id``; None forgets the session."""
        with self._lock:
            if written is None:
                self._written.pop(session_id, None)
                return
            self._written[session_id] = written
            self._written.move_to_end(session_id)
            while len(self._written) > CACHE_SIZE:
                self._written.popitem(last=False)

    def known(self, session_id: str) -> Written | None:
        with self._lock:
            return self._written.get(session_id)


def first_change(old: list[Any], new: list[Any]) -> int:
    """The first index where ``new`` holds another value than ``old``. The same objects are
    the common case (a step appends); a copy of the state (a Step run in the background on a
    clone, a reload) holds equal items that are other objects, and they are not written
    again: comparing them costs far less than packing a long history at every Step."""
    if len(old) <= len(new) and all(map(operator.is_, old, new)):  # a step: in C, no loop
        return len(old)
    for i, (a, b) in enumerate(zip(old, new, strict=False)):
        if a is not b and a != b:
            return i
    return min(len(old), len(new))


def plan_changes(
    known: Written, items: dict[str, list[Any]], secrets: list[str], packer: Packer
) -> dict[str, tuple[int, list[str]]]:
    """Per list: the first index that changed and the new items' packed bodies from there on
    (their values collected by ``packer``)."""
    plan = {}
    for kind in LISTS:
        old, new = known.items[kind], items[kind]
        start = first_change(old, new)
        if start < len(old) or start < len(new):
            rows = [
                packer.pack(item_json(kind, i, new[i], secrets)) for i in range(start, len(new))
            ]
            plan[kind] = (start, rows)
    return plan


def write_changes(
    tx: Tx, session_id: str, plan: dict[str, tuple[int, list[str]]], values: dict[str, str]
) -> None:
    """Replace each planned list's rows from its first changed index on, and add ``values``.
    A value left behind by a replaced row (an undone step) stays: a redo often needs it."""
    tx.insert_values(session_id, values)
    for kind, (start, texts) in plan.items():
        tx.execute(
            "DELETE FROM flowdebug_items WHERE session = ? AND list = ? AND idx >= ?",
            (session_id, kind, start),
        )

        def earlier(keys: range, kind: str = kind) -> list[str]:
            rows = tx.all(
                "SELECT body, zbody FROM flowdebug_items WHERE session = ? AND list = ?"
                " AND idx >= ? AND idx < ? ORDER BY idx",
                (session_id, kind, keys.start, keys.stop),
            )
            return [decode((body, packed), None) for body, packed in rows]

        rows = encode_list(start, texts, earlier)
        tx.insert_items(
            [(session_id, kind, start + i, body, z) for i, (body, z) in enumerate(rows)]
        )


def write_whole(
    tx: Tx, session_id: str, items: dict[str, list[Any]], secrets: list[str]
) -> set[str]:
    """Write every row of the session again (its rows were changed by another store, or this
    store has not seen it): its items and only the values they need; the hashes stored."""
    packer = Packer()
    tx.execute("DELETE FROM flowdebug_items WHERE session = ?", (session_id,))
    tx.execute("DELETE FROM flowdebug_values WHERE session = ?", (session_id,))
    rows: list[tuple[str, str, int, str, bytes | None]] = []
    for kind in LISTS:
        texts = [
            packer.pack(item_json(kind, i, item, secrets)) for i, item in enumerate(items[kind])
        ]
        rows += [
            (session_id, kind, i, body, z)
            for i, (body, z) in enumerate(encode_list(0, texts, _nothing))
        ]
    tx.insert_items(rows)
    tx.insert_values(session_id, packer.values)
    return set(packer.values)


def _nothing(keys: range) -> list[str]:
    return []  # a whole list is written from its first row: no row comes before


def write_from_parent(
    tx: Tx,
    session_id: str,
    parent_id: str,
    parent: Written,
    items: dict[str, list[Any]],
    secrets: list[str],
) -> set[str]:
    """Write a session that shares the head of its lists with ``parent`` (a fork, a re-run
    turn) as :func:`write_whole` would, but copy the parent's stored rows of that head and its
    values in SQL (as ``Store.duplicate`` does) and pack only the items after it. ``parent``
    must be what this store knows of the parent's stored rows; the hashes stored returned."""
    packer = Packer()
    plan = plan_changes(parent, items, secrets, packer)
    tx.execute("DELETE FROM flowdebug_items WHERE session = ?", (session_id,))
    tx.execute("DELETE FROM flowdebug_values WHERE session = ?", (session_id,))
    for kind in LISTS:
        shared = plan[kind][0] if kind in plan else len(items[kind])
        tx.execute(
            "INSERT INTO flowdebug_items (session, list, idx, body, zbody)"
            " SELECT ?, list, idx, body, zbody FROM flowdebug_items"
            " WHERE session = ? AND list = ? AND idx < ?",
            (session_id, parent_id, kind, shared),
        )
    tx.execute(
        "INSERT INTO flowdebug_values (session, hash, body)"
        " SELECT ?, hash, body FROM flowdebug_values WHERE session = ?",
        (session_id, parent_id),
    )
    new = {h: v for h, v in packer.values.items() if h not in parent.values}
    write_changes(tx, session_id, plan, new)
    return {*parent.values, *new}
