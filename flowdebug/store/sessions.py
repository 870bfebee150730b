"""Sessions persisted: everything a person made survives a reload, a restart, a crash.

``open_store()`` opens the SQLite file under the user's data directory
(``$XDG_DATA_HOME/flowdebug/sessions.db``, else ``~/.local/share/flowdebug/sessions.db``);
the ``FLOWDEBUG_DB`` environment variable or the ``url`` argument picks another file, or a
PostgreSQL database (``postgresql://user@host/db``) that several app servers share.

The app saves after every step with ``store.save(session.state)``. A session is stored as a
small head (everything but the long lists) plus one row per message, trace event, execution
and wire exchange (:mod:`flowdebug.store.rows`); a save writes only the items that are new
since this store's last save of it (:mod:`flowdebug.store.increments`), its larger values
shared by hash (:mod:`flowdebug.store.packing`) and each row deflated against its neighbours
(:mod:`flowdebug.store.compress`). When another process or server changed the session in
between (its revision moved), the save rewrites the session whole.

Every save moves the session's revision on by one. A save that says which revision it was
based on (``expected``, what :meth:`Store.load_at` or the last save returned) is a
compare-and-set: when someone else saved in between (another tab, another app server), it
raises :class:`StaleSession` and writes nothing, so a stale tab never overwrites newer steps.

On a shared server a session belongs to the browser that made it: pass that browser's secret
as ``owner`` (see :mod:`flowdebug.store.owners`).

Credentials never reach the database: see :mod:`flowdebug.redact`. A save is one
transaction: killing the process mid-save loses that save only.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from flowdebug.engine.session.session_state import SessionState
from flowdebug.errors import UsageError
from flowdebug.redact import secret_values
from flowdebug.store.db import StoreError, Tx, default_path, migrate, open_database
from flowdebug.store.increments import (
    UndoWritten,
    Written,
    WrittenCache,
    plan_changes,
    write_changes,
    write_from_parent,
    write_whole,
)
from flowdebug.store.owners import check_owner, owner_key
from flowdebug.store.packing import Packer
from flowdebug.store.reading import read_rows, stored_state
from flowdebug.store.rows import (
    INFO,
    SessionInfo,
    heads,
    session_info,
    state_items,
    utc,
)
from flowdebug.store.undo import read_undo, write_undo

if TYPE_CHECKING:
    from flowdebug.engine.session.debugger import Session

__all__ = [
    "ENV",
    "StaleSession",
    "Store",
    "StoreError",
    "default_url",
    "open_store",
]

ENV = "FLOWDEBUG_DB"


class StaleSession(StoreError):
    """A save based on an older revision than the stored one: someone saved in between (another
    tab, another app server). Nothing was written."""


def default_url() -> str:
    """Where sessions go when no URL is given: ``$FLOWDEBUG_DB``, else the default file."""
    return os.environ.get(ENV) or str(default_path())


def open_store(url: str | None = None) -> Store:
    """The session store at ``url`` (a file path, ``sqlite:///path``, ``postgresql://…``),
    ``$FLOWDEBUG_DB`` when None, else the default SQLite file; migrated to the current
    schema."""
    return Store(url or default_url())


class Store:
    """Sessions in one database. Safe to share between threads (one connection each)."""

    def __init__(self, url: str):
        self.url = url
        self._db = open_database(url)
        self.version = migrate(self._db)
        self._written = WrittenCache()

    def __repr__(self) -> str:
        return f"Store({self._db.label!r})"

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    # -- saving ---------------------------------------------------------------------------

    def save(
        self,
        state: SessionState,
        name: str | None = None,
        parent: str | None = None,
        *,
        expected: int | None = None,
        owner: str | None = None,
        undo: Sequence[SessionState] = (),
    ) -> SessionInfo:
        """Save ``state`` under ``state.id`` (new or not). ``name`` and ``parent`` (the session
        it was forked from) are kept from the last save when None. Cheap to call after every
        step: only what is new since this store's last save of the session is written.

        ``expected``: the revision this state was based on (0: a session not saved yet); when
        the stored one differs, :class:`StaleSession` is raised and nothing is written.
        ``owner``: the secret of the browser saving it; a new session becomes its own, and
        another owner's session is refused (:class:`NotOwner`). ``undo``: the states the
        session can go back to (``Session.undo_stack``), kept so that Undo works after a
        reload (:mod:`flowdebug.store.undo`); none given, none is kept."""
        secrets = secret_values()
        items = state_items(state)
        head, conversation = heads(state, secrets)
        known = self._written.known(state.id)
        packer = Packer()
        plan = plan_changes(known, items, secrets, packer) if known else None
        now = time.time()
        select = (
            "SELECT revision, name, parent, created, owner FROM flowdebug_sessions WHERE id = ?"
        )
        with self._db.transaction(write=True) as tx:
            row = tx.one(select + tx.lock_row, (state.id,))
            if row is None:
                if expected:
                    raise StaleSession(
                        "this session was deleted in another tab: its steps since are not "
                        "saved; export it to keep them, or open another session"
                    )
                tx.execute(
                    "INSERT INTO flowdebug_sessions (id, name, created, updated, owner)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                    (
                        state.id,
                        name or _default_name(state),
                        now,
                        now,
                        None if owner is None else owner_key(owner),
                    ),
                )
                row = tx.one(select + tx.lock_row, (state.id,))
                assert row is not None
            revision, old_name, old_parent, created, stored_owner = row
            check_owner(state.id, stored_owner, owner)
            if expected is not None and revision != expected:
                raise StaleSession(
                    "this session was changed in another tab; reload to see the newer steps "
                    f"(it is at revision {revision}, this tab at {expected}: this tab's last "
                    "change was not saved, and nothing saved was overwritten)"
                )
            undo_known = None
            if plan is not None and known is not None and known.matches(revision, created):
                new = {h: v for h, v in packer.values.items() if h not in known.values}
                write_changes(tx, state.id, plan, new)
                stored, added = known.values, set(new)
                undo_known = known.undo
            elif (source := self._stored_parent(tx, parent, state.id)) is not None:
                stored = write_from_parent(tx, state.id, str(parent), source, items, secrets)
                added = set[str]()
            else:
                stored, added = write_whole(tx, state.id, items, secrets), set[str]()
            undo_rows = write_undo(tx, state.id, state, undo, undo_known, secrets)
            name, parent = name or old_name, parent or old_parent
            # Compare-and-set: the row lock above already serialises writers; the revision in
            # the WHERE clause makes the rule hold even where a lock is not taken.
            changed = tx.execute(
                "UPDATE flowdebug_sessions SET name = ?, scenario = ?, parent = ?, updated = ?,"
                " messages = ?, step = ?, status = ?, revision = ?, head = ?, conversation = ?"
                " WHERE id = ? AND revision = ?",
                (
                    name,
                    state.scenario,
                    parent,
                    now,
                    len(items["messages"]),
                    state.step,
                    state.status,
                    revision + 1,
                    head,
                    conversation,
                    state.id,
                    revision,
                ),
            )
            if changed != 1:
                raise StaleSession(
                    "this session was changed in another tab; reload to see the newer steps"
                )
        stored.update(added)  # in place: copying every hash would make a step O(history)
        written = Written(revision + 1, items, created, stored, undo_rows)
        self._written.remember(state.id, written)
        return SessionInfo(
            state.id,
            name,
            state.scenario,
            utc(now),
            len(items["messages"]),
            parent,
            utc(created),
            state.step,
            state.status,
            revision + 1,
        )

    def _stored_parent(self, tx: Tx, parent: str | None, session_id: str) -> Written | None:
        """What this store knows of ``parent``'s rows when they are still the stored ones
        (held until the end of ``tx``), so that a new session shares them; else None."""
        known = self._written.known(parent) if parent and parent != session_id else None
        if known is None:
            return None
        select = "SELECT revision, created FROM flowdebug_sessions WHERE id = ?"
        row = tx.one(select + tx.share_row, (parent,))
        return known if row is not None and known.matches(*row) else None

    # -- reading --------------------------------------------------------------------------

    def load(self, session_id: str, owner: str | None = None) -> SessionState:
        """The saved state of ``session_id`` (``owner``'s, when given)."""
        return self.load_at(session_id, owner)[0]

    def load_at(self, session_id: str, owner: str | None = None) -> tuple[SessionState, int]:
        """The saved state of ``session_id`` and the revision it is at: pass that revision to
        :meth:`save` as ``expected`` to save changes made to it."""
        state, revision, _ = self._load(session_id, owner, undo=False)
        return state, revision

    def _load(
        self, session_id: str, owner: str | None, undo: bool
    ) -> tuple[SessionState, int, UndoWritten | None]:
        """:meth:`load_at`, and the session's undo history when ``undo``."""
        with self._db.transaction() as tx:
            rows = read_rows(tx, session_id, owner, undo)
        state = stored_state(session_id, rows)
        history = read_undo(rows.undo, state) if undo else None
        for earlier in history.states if history else ():
            earlier.id = session_id  # so are a duplicate's undo rows: an Undo stays in it
        written = Written(
            rows.revision, state_items(state), rows.created, set(rows.values), history
        )
        self._written.remember(session_id, written)
        return state, rows.revision, history

    def revision(self, session_id: str) -> int | None:
        """The revision ``session_id`` is stored at (None: there is no such session): one
        small read, so a page can tell on every run that another tab or app server saved it
        since, without reading the session."""
        with self._db.transaction() as tx:
            row = tx.one("SELECT revision FROM flowdebug_sessions WHERE id = ?", (session_id,))
        return None if row is None else row[0]

    def info(self, session_id: str, owner: str | None = None) -> SessionInfo:
        with self._db.transaction() as tx:
            row = tx.one(
                f"SELECT {INFO}, owner FROM flowdebug_sessions WHERE id = ?", (session_id,)
            )
        if row is None:
            raise UsageError(f"no saved session {session_id!r}")
        check_owner(session_id, row[-1], owner)
        return session_info(row)

    def list(self, owner: str | None = None) -> list[SessionInfo]:
        """Every saved session (``owner``'s only, when given), the most recently updated
        first."""
        with self._db.transaction() as tx:
            if owner is None:
                rows = tx.all(f"SELECT {INFO} FROM flowdebug_sessions ORDER BY updated DESC, id")
            else:
                rows = tx.all(
                    f"SELECT {INFO} FROM flowdebug_sessions WHERE owner = ?"
                    " ORDER BY updated DESC, id",
                    (owner_key(owner),),
                )
        return [session_info(r) for r in rows]

    def latest(self) -> SessionInfo | None:
        """The session saved last (what a restarted server resumes), or None."""
        found = self.list()
        return found[0] if found else None

    def resume(self, session_id: str, owner: str | None = None) -> Session:
        """A debugger session on the saved state and its undo history, with the player it kept
        (else its scenario's scripted player, the manual player when the scenario is gone; a
        session of your own, the offline model)."""
        return self.resume_at(session_id, owner)[0]

    def resume_at(self, session_id: str, owner: str | None = None) -> tuple[Session, int]:
        """:meth:`resume`, with the revision the session was read at (see :meth:`load_at`)."""
        from flowdebug.engine.session.debugger import Session
        from flowdebug.engine.session.player_choice import restore_player

        state, revision, history = self._load(session_id, owner, undo=True)
        session = Session(state, restore_player(state))
        session.undo_stack = list(history.states) if history else []
        return session, revision

    # -- managing -------------------------------------------------------------------------

    def _require(
        self, tx: Tx, session_id: str, owner: str | None, lock: bool = False
    ) -> tuple[Any, ...]:
        row = tx.one(
            "SELECT name, parent, owner FROM flowdebug_sessions WHERE id = ?"
            + (tx.lock_row if lock else ""),
            (session_id,),
        )
        if row is None:
            raise UsageError(f"no saved session {session_id!r}")
        check_owner(session_id, row[2], owner)
        return row

    def rename(self, session_id: str, name: str, owner: str | None = None) -> None:
        name = name.strip()
        if not name:
            raise UsageError("a session needs a name")
        with self._db.transaction(write=True) as tx:
            self._require(tx, session_id, owner, lock=True)
            tx.execute("UPDATE flowdebug_sessions SET name = ? WHERE id = ?", (name, session_id))

    def duplicate(
        self, session_id: str, name: str | None = None, owner: str | None = None
    ) -> SessionInfo:
        """A copy under a new id (same parent, same owner), with its undo history; independent
        from then on."""
        new_id = uuid.uuid4().hex[:12]
        now = time.time()
        with self._db.transaction(write=True) as tx:
            old_name, _, _ = self._require(tx, session_id, owner)
            tx.execute(
                "INSERT INTO flowdebug_sessions (id, name, scenario, parent, created, updated,"
                " messages, step, status, revision, head, conversation, owner)"
                " SELECT ?, ?, scenario, parent, ?, ?, messages, step, status, 0, head,"
                " conversation, owner FROM flowdebug_sessions WHERE id = ?",
                (new_id, name or f"{old_name} (copy)", now, now, session_id),
            )
            tx.execute(
                "INSERT INTO flowdebug_items (session, list, idx, body, zbody)"
                " SELECT ?, list, idx, body, zbody FROM flowdebug_items WHERE session = ?",
                (new_id, session_id),
            )
            tx.execute(
                "INSERT INTO flowdebug_values (session, hash, body)"
                " SELECT ?, hash, body FROM flowdebug_values WHERE session = ?",
                (new_id, session_id),
            )
            tx.execute(
                "INSERT INTO flowdebug_undo (session, idx, zbody)"
                " SELECT ?, idx, zbody FROM flowdebug_undo WHERE session = ?",
                (new_id, session_id),
            )
        return self.info(new_id)

    def fork(
        self, session_id: str, at_message: int, name: str | None = None, owner: str | None = None
    ) -> SessionState:
        """A new session whose history is the saved one's up to and including message
        ``at_message``, saved with ``parent`` = ``session_id`` (and the same ``owner``)."""
        from flowdebug.engine.session.debugger import Session
        from flowdebug.players.manual import ManualPlayer

        source = self.info(session_id, owner)
        child = Session(self.load(session_id, owner), ManualPlayer()).fork(at_message)
        self.save(
            child.state,
            name=name or f"{source.name} · fork at message {at_message}",
            parent=session_id,
            expected=0,
            owner=owner,
        )
        return child.state

    def delete(self, session_id: str, owner: str | None = None) -> None:
        """Delete a session; its forks keep going, now children of its parent."""
        with self._db.transaction(write=True) as tx:
            _, parent, _ = self._require(tx, session_id, owner, lock=True)
            tx.execute(
                "UPDATE flowdebug_sessions SET parent = ? WHERE parent = ?", (parent, session_id)
            )
            tx.execute("DELETE FROM flowdebug_items WHERE session = ?", (session_id,))
            tx.execute("DELETE FROM flowdebug_values WHERE session = ?", (session_id,))
            tx.execute("DELETE FROM flowdebug_undo WHERE session = ?", (session_id,))
            tx.execute("DELETE FROM flowdebug_sessions WHERE id = ?", (session_id,))
        self._written.remember(session_id, None)


def _default_name(state: SessionState) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M")
    return f"{state.scenario or 'session'} {stamp}"
