"""Sessions persisted: everything a person made survives a reload, a restart, a crash.

``open_store()`` opens the SQLite file under the user's data directory
(``$XDG_DATA_HOME/flowdebug/sessions.db``, else ``~/.local/share/flowdebug/sessions.db``);
the ``FLOWDEBUG_DB`` environment variable or the ``url`` argument picks another file, or a
PostgreSQL database (``postgresql://user@host/db``) that several app servers share.

The app saves after every step with ``store.save(session.state)``. A session is stored as a
small head (everything but the long lists) plus one row per message, trace event, execution
and wire exchange. Those items never change once made (pydantic models are frozen and the
debugger copies lists, not items), so the store remembers which item objects it wrote and a
save writes only the items that are new since then: a step costs a few rows whatever the
length of the history (see ``bench/store.py``). When another process or server changed the
session in between (its revision moved), the save rewrites the session whole.

Every save moves the session's revision on by one. A save that says which revision it was
based on (``expected``, what :meth:`Store.load_at` or the last save returned) is a
compare-and-set: when someone else saved in between (another tab, another app server), it
raises :class:`StaleSession` and writes nothing, so a stale tab never overwrites newer steps.

On a shared server (``FLOWDEBUG_SHARED=1``) a session belongs to the browser that made it:
pass that browser's secret as ``owner`` and only a hash of it is kept; every read, list and
change given an ``owner`` sees only that owner's sessions and refuses the rest with
:class:`NotOwner`. Without ``owner`` (one person's machine, the CLI) nothing is checked.

Credentials never reach the database: see :mod:`flowdebug.redact`. A save is one
transaction: killing the process mid-save loses that save only.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pydantic_core
from pydantic import BaseModel, ValidationError

from flowdebug.engine.debugger import SessionState
from flowdebug.errors import UsageError, json_path
from flowdebug.redact import redact_json_text, secret_values
from flowdebug.store.db import StoreError, Tx, default_path, migrate, open_database

if TYPE_CHECKING:
    from flowdebug.engine.debugger import Session

__all__ = [
    "ENV",
    "NotOwner",
    "SessionInfo",
    "StaleSession",
    "Store",
    "StoreError",
    "default_url",
    "open_store",
    "state_json",
]

ENV = "FLOWDEBUG_DB"
LISTS = ("messages", "events", "executions", "exchanges")
_HEAD_EXCLUDE = {"conversation", "events", "executions", "exchanges"}
_CACHE_SIZE = 256  # sessions whose written items a store remembers


@dataclass(frozen=True)
class SessionInfo:
    """One line of the session list."""

    id: str
    name: str
    scenario: str | None
    updated: datetime
    messages: int
    parent: str | None
    created: datetime
    step: int
    status: str
    revision: int = 0


class StaleSession(StoreError):
    """A save based on an older revision than the stored one: someone saved in between (another
    tab, another app server). Nothing was written."""


class NotOwner(UsageError):
    """On a shared server, a session that belongs to another browser."""

    def __init__(self, session_id: str):
        self.session_id = session_id
        super().__init__(
            f"session {session_id!r} belongs to another browser: on this shared server a "
            "session opens only in the browser that made it. To share one, export it as a "
            "trace (Sessions page) and let the other person import the file"
        )


def owner_key(secret: str) -> str:
    """What the database keeps of a browser's secret: a hash, so the database does not hold
    the secret itself."""
    return hashlib.sha256(b"flowdebug-owner:" + secret.encode()).hexdigest()


def _check_owner(session_id: str, stored: str | None, owner: str | None) -> None:
    if owner is not None and stored != owner_key(owner):
        raise NotOwner(session_id)


@dataclass
class _Written:
    revision: int
    items: dict[str, list[Any]]


def default_url() -> str:
    """Where sessions go when no URL is given: ``$FLOWDEBUG_DB``, else the default file."""
    return os.environ.get(ENV) or str(default_path())


def open_store(url: str | None = None) -> Store:
    """The session store at ``url`` (a file path, ``sqlite:///path``, ``postgresql://…``),
    ``$FLOWDEBUG_DB`` when None, else the default SQLite file; migrated to the current
    schema."""
    return Store(url or default_url())


def _items(state: SessionState) -> dict[str, list[Any]]:
    return {
        "messages": list(state.conversation.messages),
        "events": list(state.events),
        "executions": list(state.executions),
        "exchanges": list(state.exchanges),
    }


def _json(value: Any, where: str, exclude: set[str] | None = None) -> str:
    try:
        if isinstance(value, BaseModel):
            return value.model_dump_json(exclude=exclude)
        return pydantic_core.to_json(value).decode()
    except pydantic_core.PydanticSerializationError as e:
        raise StoreError(
            f"{where}: cannot be saved ({e}); text with a lone surrogate is not Unicode: "
            "edit it out, then save again"
        ) from None


def _item_json(kind: str, index: int, item: Any, secrets: list[str]) -> str:
    where = f"$.conversation.messages[{index}]" if kind == "messages" else f"$.{kind}[{index}]"
    text = _json(item, where)
    # Messages are the person's conversation: only the secret values rule applies to them.
    return redact_json_text(text, secrets, names=kind != "messages")


def _heads(state: SessionState, secrets: list[str]) -> tuple[str, str]:
    """The state without its long lists, and the conversation without its messages."""
    head = _json(state, "$", _HEAD_EXCLUDE)
    conversation = _json(state.conversation, "$.conversation", {"messages"})
    return redact_json_text(head, secrets), redact_json_text(conversation, secrets)


def state_json(state: SessionState) -> str:
    """The whole state as JSON with credentials redacted: what the store keeps, in one piece
    (exports use it too)."""
    secrets = secret_values()
    head, conversation = _heads(state, secrets)
    bodies = {
        kind: [_item_json(kind, i, item, secrets) for i, item in enumerate(items)]
        for kind, items in _items(state).items()
    }
    return _assemble(head, conversation, bodies)


def _first_change(old: list[Any], new: list[Any]) -> int:
    for i, (a, b) in enumerate(zip(old, new, strict=False)):
        if a is not b:
            return i
    return min(len(old), len(new))


def _assemble(head: str, conversation: str, bodies: dict[str, list[str]]) -> str:
    """The whole state's JSON from its parts: one parse validates everything at once."""

    def array(kind: str) -> str:
        return "[" + ",".join(bodies.get(kind, ())) + "]"

    conv = f'{conversation[:-1]},"messages":{array("messages")}}}'
    lists = "".join(f',"{k}":{array(k)}' for k in ("events", "executions", "exchanges"))
    return f'{head[:-1]},"conversation":{conv}{lists}}}'


def _time(t: float) -> datetime:
    return datetime.fromtimestamp(t, UTC)


_INFO = "id, name, scenario, updated, messages, parent, created, step, status, revision"


def _info(row: Sequence[Any]) -> SessionInfo:
    return SessionInfo(
        id=row[0],
        name=row[1],
        scenario=row[2],
        updated=_time(row[3]),
        messages=row[4],
        parent=row[5],
        created=_time(row[6]),
        step=row[7],
        status=row[8],
        revision=row[9],
    )


class Store:
    """Sessions in one database. Safe to share between threads (one connection each)."""

    def __init__(self, url: str):
        self.url = url
        self._db = open_database(url)
        self.version = migrate(self._db)
        self._written: OrderedDict[str, _Written] = OrderedDict()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Store({self._db.label!r})"

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    # -- saving ---------------------------------------------------------------------------

    def _remember(self, session_id: str, written: _Written | None) -> None:
        with self._lock:
            if written is None:
                self._written.pop(session_id, None)
                return
            self._written[session_id] = written
            self._written.move_to_end(session_id)
            while len(self._written) > _CACHE_SIZE:
                self._written.popitem(last=False)

    def _known(self, session_id: str) -> _Written | None:
        with self._lock:
            return self._written.get(session_id)

    def save(
        self,
        state: SessionState,
        name: str | None = None,
        parent: str | None = None,
        *,
        expected: int | None = None,
        owner: str | None = None,
    ) -> SessionInfo:
        """Save ``state`` under ``state.id`` (new or not). ``name`` and ``parent`` (the session
        it was forked from) are kept from the last save when None. Cheap to call after every
        step: only what is new since this store's last save of the session is written.

        ``expected``: the revision this state was based on (0: a session not saved yet); when
        the stored one differs, :class:`StaleSession` is raised and nothing is written.
        ``owner``: the secret of the browser saving it; a new session becomes its own, and
        another owner's session is refused (:class:`NotOwner`)."""
        secrets = secret_values()
        items = _items(state)
        head, conversation = _heads(state, secrets)
        known = self._known(state.id)
        plan = self._plan(known, items, secrets) if known else None
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
            _check_owner(state.id, stored_owner, owner)
            if expected is not None and revision != expected:
                raise StaleSession(
                    "this session was changed in another tab; reload to see the newer steps "
                    f"(it is at revision {revision}, this tab at {expected}: this tab's last "
                    "change was not saved, and nothing saved was overwritten)"
                )
            if plan is not None and known is not None and known.revision == revision:
                self._write_changes(tx, state.id, plan)
            else:
                tx.execute("DELETE FROM flowdebug_items WHERE session = ?", (state.id,))
                tx.insert_items(
                    [
                        (state.id, kind, i, _item_json(kind, i, item, secrets))
                        for kind in LISTS
                        for i, item in enumerate(items[kind])
                    ]
                )
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
        self._remember(state.id, _Written(revision + 1, items))
        return SessionInfo(
            state.id,
            name,
            state.scenario,
            _time(now),
            len(items["messages"]),
            parent,
            _time(created),
            state.step,
            state.status,
            revision + 1,
        )

    def _plan(
        self, known: _Written, items: dict[str, list[Any]], secrets: list[str]
    ) -> dict[str, tuple[int, list[str]]]:
        """Per list: the first index that changed and the new items' JSON from there on."""
        plan = {}
        for kind in LISTS:
            old, new = known.items[kind], items[kind]
            start = _first_change(old, new)
            if start < len(old) or start < len(new):
                rows = [_item_json(kind, i, new[i], secrets) for i in range(start, len(new))]
                plan[kind] = (start, rows)
        return plan

    def _write_changes(self, tx: Tx, session_id: str, plan: dict[str, tuple[int, list[str]]]):
        for kind, (start, rows) in plan.items():
            tx.execute(
                "DELETE FROM flowdebug_items WHERE session = ? AND list = ? AND idx >= ?",
                (session_id, kind, start),
            )
            tx.insert_items([(session_id, kind, start + i, body) for i, body in enumerate(rows)])

    # -- reading --------------------------------------------------------------------------

    def load(self, session_id: str, owner: str | None = None) -> SessionState:
        """The saved state of ``session_id`` (``owner``'s, when given)."""
        return self.load_at(session_id, owner)[0]

    def load_at(self, session_id: str, owner: str | None = None) -> tuple[SessionState, int]:
        """The saved state of ``session_id`` and the revision it is at: pass that revision to
        :meth:`save` as ``expected`` to save changes made to it."""
        with self._db.transaction() as tx:
            row = tx.one(
                "SELECT head, conversation, revision, owner FROM flowdebug_sessions WHERE id = ?"
                + tx.share_row,
                (session_id,),
            )
            if row is None:
                raise UsageError(f"no saved session {session_id!r}")
            _check_owner(session_id, row[3], owner)
            rows = tx.all(
                "SELECT list, body FROM flowdebug_items WHERE session = ? ORDER BY list, idx",
                (session_id,),
            )
        bodies: dict[str, list[str]] = {}
        for kind, body in rows:
            bodies.setdefault(kind, []).append(body)
        try:
            state = SessionState.model_validate_json(_assemble(row[0], row[1], bodies))
        except ValidationError as e:
            err = e.errors()[0]
            path = json_path(err["loc"])
            raise StoreError(
                f"saved session {session_id!r} cannot be read ({path}: {err['msg']}); "
                "it was written by another flowdebug version or edited by hand"
            ) from None
        state.id = session_id  # the row's id rules (a duplicate carries its source's head)
        self._remember(session_id, _Written(row[2], _items(state)))
        return state, row[2]

    def info(self, session_id: str, owner: str | None = None) -> SessionInfo:
        with self._db.transaction() as tx:
            row = tx.one(
                f"SELECT {_INFO}, owner FROM flowdebug_sessions WHERE id = ?", (session_id,)
            )
        if row is None:
            raise UsageError(f"no saved session {session_id!r}")
        _check_owner(session_id, row[-1], owner)
        return _info(row)

    def list(self, owner: str | None = None) -> list[SessionInfo]:
        """Every saved session (``owner``'s only, when given), the most recently updated
        first."""
        with self._db.transaction() as tx:
            if owner is None:
                rows = tx.all(f"SELECT {_INFO} FROM flowdebug_sessions ORDER BY updated DESC, id")
            else:
                rows = tx.all(
                    f"SELECT {_INFO} FROM flowdebug_sessions WHERE owner = ?"
                    " ORDER BY updated DESC, id",
                    (owner_key(owner),),
                )
        return [_info(r) for r in rows]

    def latest(self) -> SessionInfo | None:
        """The session saved last (what a restarted server resumes), or None."""
        found = self.list()
        return found[0] if found else None

    def resume(self, session_id: str, owner: str | None = None) -> Session:
        """A debugger session on the saved state, with its scenario's scripted player (or
        the manual player when the scenario is gone or there is none)."""
        return self.resume_at(session_id, owner)[0]

    def resume_at(self, session_id: str, owner: str | None = None) -> tuple[Session, int]:
        """:meth:`resume`, with the revision the session was read at (see :meth:`load_at`)."""
        from flowdebug.engine import scenarios
        from flowdebug.engine.debugger import Session
        from flowdebug.errors import FlowdebugError
        from flowdebug.players.manual import ManualPlayer

        state, revision = self.load_at(session_id, owner)
        player: Any = ManualPlayer()
        if state.scenario:
            with suppress(FlowdebugError):
                player = scenarios.load(state.scenario).player()
        return Session(state, player), revision

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
        _check_owner(session_id, row[2], owner)
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
        """A copy under a new id (same parent, same owner); independent from then on."""
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
                "INSERT INTO flowdebug_items (session, list, idx, body)"
                " SELECT ?, list, idx, body FROM flowdebug_items WHERE session = ?",
                (new_id, session_id),
            )
        return self.info(new_id)

    def fork(
        self, session_id: str, at_message: int, name: str | None = None, owner: str | None = None
    ) -> SessionState:
        """A new session whose history is the saved one's up to and including message
        ``at_message``, saved with ``parent`` = ``session_id`` (and the same ``owner``)."""
        from flowdebug.engine.debugger import Session
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
            tx.execute("DELETE FROM flowdebug_sessions WHERE id = ?", (session_id,))
        self._remember(session_id, None)


def _default_name(state: SessionState) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M")
    return f"{state.scenario or 'session'} {stamp}"
