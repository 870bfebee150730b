"""A session read back from its rows (:mod:`flowdebug.store.rows` says how it lies in them).

Messages, trace events and executions are unpacked to text and validated in one parse; the
wire exchanges, whose requests repeat the history, are read as shared objects
(:mod:`flowdebug.store.objects`) and checked to be objects, as ``SessionState`` types them
(any JSON value inside is valid), so opening a long recording costs what it stores, not the
square of its length.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from flowdebug.engine.session.session_state import SessionState
from flowdebug.errors import UsageError, json_path
from flowdebug.store.compress import decode_list
from flowdebug.store.db import StoreError, Tx
from flowdebug.store.objects import Objects
from flowdebug.store.owners import check_owner
from flowdebug.store.packing import unpacker
from flowdebug.store.rows import assemble

AS_OBJECTS = "exchanges"  # the list read as shared objects


@dataclass
class StoredRows:
    """A session's rows as one transaction read them."""

    head: str
    conversation: str
    revision: int
    owner: str | None
    created: float
    items: list[tuple[str, str, bytes | None]]  # (list, body, zbody), by list and index
    values: dict[str, str]
    undo: list[tuple[Any, ...]]  # (idx, zbody), newest first; empty unless asked for


def read_rows(tx: Tx, session_id: str, owner: str | None, undo: bool) -> StoredRows:
    """Every row of ``session_id``, ``owner``'s when given (its undo rows when ``undo``)."""
    row = tx.one(
        "SELECT head, conversation, revision, owner, created FROM flowdebug_sessions"
        " WHERE id = ?" + tx.share_row,
        (session_id,),
    )
    if row is None:
        raise UsageError(f"no saved session {session_id!r}")
    check_owner(session_id, row[3], owner)
    items = tx.all(
        "SELECT list, body, zbody FROM flowdebug_items WHERE session = ? ORDER BY list, idx",
        (session_id,),
    )
    values = dict(
        tx.all("SELECT hash, body FROM flowdebug_values WHERE session = ?", (session_id,))
    )
    undo_rows = (
        tx.all(
            "SELECT idx, zbody FROM flowdebug_undo WHERE session = ? ORDER BY idx DESC",
            (session_id,),
        )
        if undo
        else []
    )
    return StoredRows(row[0], row[1], row[2], row[3], row[4], items, values, undo_rows)


def stored_state(session_id: str, rows: StoredRows) -> SessionState:
    """The state ``rows`` hold."""
    stored: dict[str, list[tuple[str, bytes | None]]] = {}
    for kind, body, packed in rows.items:
        stored.setdefault(kind, []).append((body, packed))
    texts = {kind: decode_list(r) for kind, r in stored.items()}
    unpack = unpacker(rows.values)
    objects = Objects(rows.values)
    bodies = {kind: [unpack(t) for t in ts] for kind, ts in texts.items() if kind != AS_OBJECTS}
    try:
        exchanges = [objects.row(t) for t in texts.get(AS_OBJECTS, [])]
        state = SessionState.model_validate_json(assemble(rows.head, rows.conversation, bodies))
    except ValidationError as e:
        err = e.errors()[0]
        raise StoreError(
            f"saved session {session_id!r} cannot be read ({json_path(err['loc'])}: "
            f"{err['msg']}); it was written by another flowdebug version or edited by hand"
        ) from None
    except ValueError as e:  # JSON that does not parse
        raise StoreError(
            f"saved session {session_id!r} cannot be read ({e}): the database was changed by hand"
        ) from None
    for i, exchange in enumerate(exchanges):
        if not isinstance(exchange, dict):
            raise StoreError(
                f"saved session {session_id!r} cannot be read ($.exchanges[{i}]: not an "
                "object); it was written by another flowdebug version or edited by hand"
            )
    state.exchanges = exchanges
    state.id = session_id  # the row's id rules (a duplicate carries its source's head)
    return state
