"""Rooms: attendees follow an instructor's session live, from their own browsers.

A room belongs to one saved session and is known by a code (:func:`new_code`: 50 random bits,
ten base-32 letters, so it cannot be guessed). Everything about a room lives in the store, so
attendees on another app server sharing the PostgreSQL database follow it too.

What a follower polls is :meth:`Rooms.pulse`: one SELECT over two primary keys (the room and
its session) that returns the session's revision (moved on by every save: a Step, an Undo, an
edit), the room's own revision (a question asked or answered, a Play beat, closing) and the
lit Play beat. A follower redraws only when that pulse changed.

A room only ever reads its session: a follower gets a copy (:meth:`Rooms.follow`) and a fork of
its own (:meth:`Rooms.fork`), saved under the follower's owner. A room ends when it is closed,
when it outlives :data:`MAX_AGE`, or with its session (deleted: the room's rows go with it).
Questions and their answers are kept per session (:mod:`flowdebug.views.predictions` makes
them), so they are exported with it and outlive a closed room.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from flowdebug.engine.session.session_state import SessionState
from flowdebug.errors import UsageError
from flowdebug.store.db import Tx
from flowdebug.store.owners import check_owner, owner_key
from flowdebug.store.sessions import Store

CODE_BYTES = 10  # base-32 letters in a code
ENTROPY_BITS = CODE_BYTES * 5
MAX_AGE = 12 * 3600.0  # seconds a room stays open at most (a workshop day)
_CODE = re.compile(f"[A-Z2-7]{{{CODE_BYTES}}}")


class RoomClosed(UsageError):
    """The room was closed, has expired, or never existed (a code mistyped)."""


class NoRoom(RoomClosed):
    """No room has this code: it was mistyped, or the room's session was deleted."""


def new_code() -> str:
    """A fresh room code: :data:`ENTROPY_BITS` bits from :mod:`secrets`, in base 32
    (letters and digits 2-7 only: no 0/O or 1/I to confuse when read off a projector)."""
    raw = secrets.token_bytes((ENTROPY_BITS + 7) // 8)
    return base64.b32encode(raw).decode()[:CODE_BYTES]


def normal_code(text: str) -> str:
    """A code as typed or linked (any case, spaces or dashes) in its stored form; refused when
    it cannot be one."""
    code = re.sub(r"[\s-]", "", text or "").upper()
    if not _CODE.fullmatch(code):
        raise RoomClosed(f"{text!r} is not a room code: a code is {CODE_BYTES} letters and digits")
    return code


@dataclass(frozen=True)
class Room:
    code: str
    session_id: str
    created: float
    expires: float
    closed: bool


@dataclass(frozen=True)
class Pulse:
    """What a follower compares between two polls: when it changed, redraw."""

    session_revision: int
    room_revision: int
    beat: int | None  # the last event the instructor's Play has revealed; None: all of them
    step: int

    @property
    def key(self) -> tuple[int, int]:
        return (self.session_revision, self.room_revision)


@dataclass(frozen=True)
class Question:
    """A prediction asked before a Step: ``choices`` to pick from; ``answers`` (the right
    ones, None until known) are revealed once the session moved past ``asked_step``.
    ``asked_messages``: how long the history was when it was asked."""

    index: int
    kind: str
    prompt: str
    choices: tuple[str, ...]
    answers: tuple[str, ...] | None
    asked_step: int
    asked_messages: int
    closed: bool = False

    def body(self) -> str:
        return json.dumps(
            {
                "kind": self.kind,
                "prompt": self.prompt,
                "choices": list(self.choices),
                "answers": None if self.answers is None else list(self.answers),
                "asked_step": self.asked_step,
                "asked_messages": self.asked_messages,
                "closed": self.closed,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_body(cls, index: int, body: str) -> Question:
        d = json.loads(body)
        return cls(
            index,
            d["kind"],
            d["prompt"],
            tuple(d["choices"]),
            None if d.get("answers") is None else tuple(d["answers"]),
            d["asked_step"],
            d["asked_messages"],
            d.get("closed", False),
        )


# The sessions followers read, by (store, room, pulse): see Rooms.follow.
_FOLLOWED: OrderedDict[tuple[str, str, tuple[int, int]], SessionState] = OrderedDict()
_GATES: dict[tuple[str, ...], threading.Lock] = {}  # one reader at a time per room (and what)
_FOLLOWING = threading.Lock()
# The last pulse row read per (store, room) in this process, and when (time.monotonic()): see
# Rooms.pulse's max_age. A row of None: no such room.
_PULSES: dict[tuple[str, str], tuple[float, tuple[Any, ...] | None]] = {}

_PULSE = (
    "SELECT r.revision, r.beat, r.closed, r.expires, s.revision, s.step"
    " FROM flowdebug_rooms r JOIN flowdebug_sessions s ON s.id = r.session WHERE r.code = ?"
)


class Rooms:
    """The rooms of one :class:`~flowdebug.store.sessions.Store` (its database)."""

    def __init__(self, store: Store):
        self.store = store
        self._db = store._db  # same package: the rooms' tables come with the store's migrations

    # -- the instructor ---------------------------------------------------------------------

    def open(self, session_id: str, owner: str | None = None, now: float | None = None) -> Room:
        """The open room of ``session_id`` (``owner``'s), made now when it has none."""
        now = time.time() if now is None else now
        with self._db.transaction(write=True) as tx:
            row = tx.one(
                "SELECT owner FROM flowdebug_sessions WHERE id = ?" + tx.lock_row, (session_id,)
            )
            if row is None:
                raise UsageError(f"no saved session {session_id!r}: save it before opening a room")
            check_owner(session_id, row[0], owner)
            found = tx.one(
                "SELECT code, created, expires FROM flowdebug_rooms"
                " WHERE session = ? AND closed IS NULL AND expires > ?",
                (session_id, now),
            )
            if found is not None:
                return Room(found[0], session_id, found[1], found[2], False)
            code = new_code()
            tx.execute(
                "INSERT INTO flowdebug_rooms (code, session, owner, created, expires, revision)"
                " VALUES (?, ?, ?, ?, ?, 0)",
                (code, session_id, None if owner is None else owner_key(owner), now, now + MAX_AGE),
            )
        return Room(code, session_id, now, now + MAX_AGE, False)

    def of_session(self, session_id: str, now: float | None = None) -> Room | None:
        """The open room of ``session_id``, if it has one."""
        now = time.time() if now is None else now
        with self._db.transaction() as tx:
            found = tx.one(
                "SELECT code, created, expires FROM flowdebug_rooms"
                " WHERE session = ? AND closed IS NULL AND expires > ?",
                (session_id, now),
            )
        return None if found is None else Room(found[0], session_id, found[1], found[2], False)

    def close(self, code: str, owner: str | None = None) -> None:
        """Close the room: its followers stop, saying so. Its questions stay with the session."""
        with self._db.transaction(write=True) as tx:
            self._owned(tx, code, owner)
            tx.execute(
                "UPDATE flowdebug_rooms SET closed = ?, revision = revision + 1 WHERE code = ?",
                (time.time(), code),
            )

    def beat(self, code: str, upto: int | None, owner: str | None = None) -> None:
        """The instructor's Play revealed up to event ``upto`` (None: Play is over)."""
        with self._db.transaction(write=True) as tx:
            self._owned(tx, code, owner)
            tx.execute(
                "UPDATE flowdebug_rooms SET beat = ?, revision = revision + 1"
                " WHERE code = ? AND beat IS DISTINCT FROM ?"
                if tx.postgres
                else "UPDATE flowdebug_rooms SET beat = ?, revision = revision + 1"
                " WHERE code = ? AND beat IS NOT ?",
                (upto, code, upto),
            )

    def _owned(self, tx: Tx, code: str, owner: str | None) -> str:
        row = tx.one(
            "SELECT r.session, s.owner FROM flowdebug_rooms r"
            " JOIN flowdebug_sessions s ON s.id = r.session WHERE r.code = ?" + tx.lock_row,
            (code,),
        )
        if row is None:
            raise RoomClosed(f"no room {code}")
        check_owner(row[0], row[1], owner)
        return str(row[0])

    # -- questions ----------------------------------------------------------------------------

    def ask(self, code: str, question: Question, owner: str | None = None) -> Question:
        """Ask ``question`` in the room (the previous open one is closed); it is kept with the
        session, numbered in order."""
        with self._db.transaction(write=True) as tx:
            session_id = self._owned(tx, code, owner)
            last = tx.one(
                "SELECT MAX(idx) FROM flowdebug_questions WHERE session = ?", (session_id,)
            )
            index = 0 if last is None or last[0] is None else last[0] + 1
            for i, body in tx.all(
                "SELECT idx, body FROM flowdebug_questions WHERE session = ?", (session_id,)
            ):
                old = Question.from_body(i, body)
                if not old.closed:
                    tx.execute(
                        "UPDATE flowdebug_questions SET body = ? WHERE session = ? AND idx = ?",
                        (_closed(old).body(), session_id, i),
                    )
            asked = Question(index, *_fields(question))
            tx.execute(
                "INSERT INTO flowdebug_questions (session, idx, body) VALUES (?, ?, ?)",
                (session_id, index, asked.body()),
            )
            tx.execute("UPDATE flowdebug_rooms SET revision = revision + 1 WHERE code = ?", (code,))
        return asked

    def answer(self, code: str, index: int, attendee: str, choice: str) -> None:
        """``attendee`` (a browser's secret or tab id; only its hash is kept) picks ``choice``
        for question ``index``; a second pick replaces the first. Refused once the question
        is closed or the room is."""
        with self._db.transaction(write=True) as tx:
            room = tx.one(
                "SELECT session, closed, expires FROM flowdebug_rooms WHERE code = ?", (code,)
            )
            if room is None or room[1] is not None or room[2] <= time.time():
                raise RoomClosed("this room is closed: answers are no longer taken")
            row = tx.one(
                "SELECT body FROM flowdebug_questions WHERE session = ? AND idx = ?",
                (room[0], index),
            )
            if row is None:
                raise UsageError(f"no question {index} in this room")
            question = Question.from_body(index, row[0])
            if question.closed:
                raise UsageError("this question is closed: its answer is out")
            if choice not in question.choices:
                raise UsageError(f"{choice!r} is not one of the choices")
            who = owner_key(attendee)
            tx.execute(
                "DELETE FROM flowdebug_answers WHERE session = ? AND question = ? AND attendee = ?",
                (room[0], index, who),
            )
            tx.execute(
                "INSERT INTO flowdebug_answers (session, question, attendee, choice)"
                " VALUES (?, ?, ?, ?)",
                (room[0], index, who, choice),
            )
            tx.execute("UPDATE flowdebug_rooms SET revision = revision + 1 WHERE code = ?", (code,))

    def reveal(self, session_id: str, index: int, answers: tuple[str, ...]) -> Question:
        """Close question ``index`` with its ``answers`` (known once the session moved on)."""
        with self._db.transaction(write=True) as tx:
            row = tx.one(
                "SELECT body FROM flowdebug_questions WHERE session = ? AND idx = ?" + tx.lock_row,
                (session_id, index),
            )
            if row is None:
                raise UsageError(f"no question {index}")
            old = Question.from_body(index, row[0])
            done = Question(*_fields_indexed(old, answers=answers, closed=True))
            tx.execute(
                "UPDATE flowdebug_questions SET body = ? WHERE session = ? AND idx = ?",
                (done.body(), session_id, index),
            )
            tx.execute(
                "UPDATE flowdebug_rooms SET revision = revision + 1 WHERE session = ?",
                (session_id,),
            )
        return done

    def questions(self, session_id: str) -> list[Question]:
        with self._db.transaction() as tx:
            rows = tx.all(
                "SELECT idx, body FROM flowdebug_questions WHERE session = ? ORDER BY idx",
                (session_id,),
            )
        return [Question.from_body(i, body) for i, body in rows]

    def tally(self, session_id: str, index: int) -> dict[str, int]:
        """How many attendees picked each choice of question ``index`` (every choice listed)."""
        with self._db.transaction() as tx:
            row = tx.one(
                "SELECT body FROM flowdebug_questions WHERE session = ? AND idx = ?",
                (session_id, index),
            )
            counts = tx.all(
                "SELECT choice, COUNT(*) FROM flowdebug_answers WHERE session = ? AND question = ?"
                " GROUP BY choice",
                (session_id, index),
            )
        if row is None:
            raise UsageError(f"no question {index}")
        tally = dict.fromkeys(Question.from_body(index, row[0]).choices, 0)
        tally.update({c: n for c, n in counts})
        return tally

    def my_answer(self, session_id: str, index: int, attendee: str) -> str | None:
        with self._db.transaction() as tx:
            row = tx.one(
                "SELECT choice FROM flowdebug_answers"
                " WHERE session = ? AND question = ? AND attendee = ?",
                (session_id, index, owner_key(attendee)),
            )
        return None if row is None else str(row[0])

    def export(self, session_id: str) -> list[dict[str, Any]]:
        """The session's questions with their tallies, as plain JSON (for an export)."""
        return [
            {**json.loads(q.body()), "index": q.index, "tally": self.tally(session_id, q.index)}
            for q in self.questions(session_id)
        ]

    # -- followers ------------------------------------------------------------------------------

    def pulse(self, code: str, now: float | None = None, max_age: float = 0.0) -> Pulse:
        """The follower's poll: one SELECT by primary keys. :class:`RoomClosed` when the room
        was closed, has expired or its session was deleted.

        ``max_age``: how many seconds old a pulse another follower in this process read may be
        (0: read it now). The Room page passes a fraction of its poll, so sixty followers on one
        server cost one read per that time, not sixty: the first reads, the others take it."""
        now = time.time() if now is None else now
        row = self._pulse_row(code, max_age) if max_age > 0 else self._read_pulse(code)
        if row is None:
            raise NoRoom("this room has ended: its session was deleted or the code is wrong")
        room_rev, beat, closed, expires, session_rev, step = row
        if closed is not None:
            raise RoomClosed("the instructor closed this room")
        if expires <= now:
            raise RoomClosed("this room has expired")
        return Pulse(session_rev, room_rev, beat, step)

    def _read_pulse(self, code: str) -> tuple[Any, ...] | None:
        with self._db.transaction() as tx:
            return tx.one(_PULSE, (code,))

    def _pulse_row(self, code: str, max_age: float) -> tuple[Any, ...] | None:
        key = (self.store.url, code)
        with _FOLLOWING:
            gate = _GATES.setdefault(key, threading.Lock())
        with gate:
            read = _PULSES.get(key)
            if read is None or time.monotonic() - read[0] > max_age:
                read = (time.monotonic(), self._read_pulse(code))
                _PULSES[key] = read
        return read[1]

    def follow(self, code: str, max_age: float = 0.0) -> tuple[SessionState, Pulse]:
        """The room's session, read-only, and the pulse it was read at (``max_age``: as
        :meth:`pulse`). It is never saved: nothing a follower does reaches the instructor's
        session.

        One copy per pulse per process: sixty followers on one server see a Step at once, and
        the first of them reads it for all (the others wait for it rather than read it too).
        Treat it as frozen: followers share it."""
        pulse = self.pulse(code, max_age=max_age)
        key = (self.store.url, code, pulse.key)
        with _FOLLOWING:
            gate = _GATES.setdefault((self.store.url, code, "state"), threading.Lock())
        with gate:
            state = _FOLLOWED.get(key)
            if state is None:
                state = self.store.load(self.session_of(code))
                with _FOLLOWING:
                    _FOLLOWED[key] = state
                    while len(_FOLLOWED) > 64:
                        _FOLLOWED.popitem(last=False)
        return state, pulse

    def session_of(self, code: str) -> str:
        with self._db.transaction() as tx:
            row = tx.one("SELECT session FROM flowdebug_rooms WHERE code = ?", (code,))
        if row is None:
            raise RoomClosed("this room has ended")
        return str(row[0])

    def fork(self, code: str, owner: str | None, at_message: int | None = None) -> SessionState:
        """The followed session at its current step (up to message ``at_message``: default, its
        last), as a new session of the follower's (``owner``), parent the followed one."""
        from flowdebug.engine.session.debugger import Session
        from flowdebug.players.manual import ManualPlayer

        self.pulse(code)  # an open room
        state = self.store.load(self.session_of(code))  # its own copy: the fork changes it
        messages = state.conversation.messages
        if not messages:
            child = Session(state.snapshot(), ManualPlayer())
            child.state.id = uuid.uuid4().hex[:12]
        else:
            last = len(messages) - 1 if at_message is None else at_message
            child = Session(state, ManualPlayer()).fork(last)
        self.store.save(
            child.state,
            name=f"room {code} · my try at step {state.step}",
            parent=state.id,
            expected=0,
            owner=owner,
        )
        return child.state


def _fields(q: Question) -> tuple[Any, ...]:
    return (q.kind, q.prompt, q.choices, q.answers, q.asked_step, q.asked_messages, q.closed)


def _fields_indexed(q: Question, answers: tuple[str, ...] | None, closed: bool) -> tuple[Any, ...]:
    return (q.index, q.kind, q.prompt, q.choices, answers, q.asked_step, q.asked_messages, closed)


def _closed(q: Question) -> Question:
    return Question(*_fields_indexed(q, answers=q.answers, closed=True))
