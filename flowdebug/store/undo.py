"""A session's undo history in the store, so Undo (and Undo tool edit) still works after a
browser reload or a server restart.

The debugger keeps up to 200 earlier states (``Session.undo_stack``); each shares most of its
history with the next newer one. A row of ``flowdebug_undo`` holds one state as what differs
from the next newer state (the top one: from the session's current state): its head and its
conversation without messages, and per long list how many items it shares with the newer one
(a prefix) and its own items after them. A row is deflated.

Rows are keyed by an index that grows with each state pushed, so a step writes the state it
pushed and rewrites the row under it (whose newer state changed), whatever the length of the
history, and dropping the oldest step but the start (the debugger's limit) deletes one row
and rewrites the start's. A store remembers which state objects it wrote under which index
and against which newer state (:class:`UndoWritten`); without that (another app server saved
the session, or it was never read here) the rows are written whole.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from typing import Any

from flowdebug.engine.session.session_state import SessionState
from flowdebug.store.db import Tx
from flowdebug.store.increments import UndoWritten, first_change
from flowdebug.store.rows import LISTS, assemble, heads, item_json, state_items

LEVEL = 6


def _row(state: SessionState, newer: SessionState, secrets: list[str]) -> bytes:
    head, conversation = heads(state, secrets)
    mine, theirs = state_items(state), state_items(newer)
    lists = {}
    for kind in LISTS:
        # the older state is most often a prefix of the newer one: compared in C
        keep = min(first_change(mine[kind], theirs[kind]), len(mine[kind]))
        tail = [item_json(kind, i, mine[kind][i], secrets) for i in range(keep, len(mine[kind]))]
        lists[kind] = [keep, tail]
    body = json.dumps({"head": head, "conversation": conversation, "lists": lists})
    return zlib.compress(body.encode("utf-8", "surrogatepass"), LEVEL)


def _state(row: bytes, newer: SessionState) -> SessionState | None:
    """The state a row holds, given the newer state it was written against (None: the row
    does not fit that state, its history is shorter than the row says)."""
    data = json.loads(zlib.decompress(row).decode("utf-8", "surrogatepass"))
    lists: dict[str, list[Any]] = data["lists"]
    theirs = state_items(newer)
    if any(lists[k][0] > len(theirs[k]) for k in LISTS):
        return None
    tails = {k: lists[k][1] for k in LISTS}
    state = SessionState.model_validate_json(assemble(data["head"], data["conversation"], tails))
    conv = state.conversation
    messages = [*theirs["messages"][: lists["messages"][0]], *conv.messages]
    state.conversation = conv.model_copy(update={"messages": messages})
    for kind in ("events", "executions", "exchanges"):
        setattr(state, kind, [*theirs[kind][: lists[kind][0]], *getattr(state, kind)])
    return state


def _newer(stack: Sequence[SessionState], state: SessionState) -> list[SessionState]:
    """The state each one of ``stack`` goes forward to: the next one up, the top one to
    ``state``."""
    return [*stack[1:], state] if stack else []


def _known_keys(stack: Sequence[SessionState], known: UndoWritten) -> list[int | None] | None:
    """Each state's stored index (None: a state not written yet), or None when the stored
    rows cannot be kept in order (a new state below a stored one: written all again)."""
    at = {id(s): (s, k) for s, k in zip(known.states, known.keys, strict=True)}
    keys: list[int | None] = []
    for s in stack:
        hit = at.get(id(s))
        keys.append(hit[1] if hit is not None and hit[0] is s else None)
    stored = [k for k in keys if k is not None]
    first_new = keys.index(None) if None in keys else len(keys)
    if len(stored) != first_new or stored != sorted(stored):
        return None
    return keys


def write_undo(
    tx: Tx,
    session_id: str,
    state: SessionState,
    stack: Sequence[SessionState],
    known: UndoWritten | None,
    secrets: list[str],
) -> UndoWritten:
    """Make the stored undo rows of ``session_id`` say ``stack`` (oldest first) over
    ``state``; ``known``: what this store wrote or read last (None: write them all again)."""
    keys = _known_keys(stack, known) if known is not None else None
    if keys is None or known is None:
        tx.execute("DELETE FROM flowdebug_undo WHERE session = ?", (session_id,))
        known, keys = UndoWritten([], [], []), [None] * len(stack)
    bases = _newer(stack, state)
    base_of = {k: b for k, b in zip(known.keys, known.bases, strict=True)}
    final: list[int] = []
    written: list[tuple[int, bytes]] = []
    for old, newer, key in zip(stack, bases, keys, strict=True):
        if key is None:
            key = final[-1] + 1 if final else 0
        elif base_of[key] is newer:
            final.append(key)
            continue
        written.append((key, _row(old, newer, secrets)))
        final.append(key)
    stale = sorted(set(known.keys) - set(final)) + [k for k, _ in written]
    tx.executemany(
        "DELETE FROM flowdebug_undo WHERE session = ? AND idx = ?",
        [(session_id, k) for k in stale],
    )
    tx.executemany(
        "INSERT INTO flowdebug_undo (session, idx, zbody) VALUES (?, ?, ?)",
        [(session_id, k, body) for k, body in written],
    )
    return UndoWritten(list(stack), final, bases)


def read_undo(rows: Sequence[tuple[Any, ...]], state: SessionState) -> UndoWritten:
    """The undo history in ``rows`` (index and body, the newest first) over the session's
    ``state`` as read, oldest first; the states older than a row that no longer fits are
    left out."""
    states: list[SessionState] = []
    keys: list[int] = []
    newer = state
    for key, body in rows:
        old = _state(bytes(body), newer)
        if old is None:
            break
        states.append(old)
        keys.append(key)
        newer = old
    states.reverse()
    keys.reverse()
    return UndoWritten(states, keys, _newer(states, state))
