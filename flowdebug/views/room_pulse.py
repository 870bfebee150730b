"""A room's pulse over plain HTTP: what a follower's page polls without a Streamlit script run.

``GET /_flowdebug/rooms/{code}`` answers JSON: the room's pulse (``{"pulse": [session
revision, room revision], "step": n}``), 404 for a code that is no room (mistyped, or its
session deleted), 410 once the room is closed or has expired, 503 while the store cannot be
reached (the page asks again). The follower's page (a small component,
``flowdebug/views/pulse/``) asks every :data:`POLL` seconds; once the pulse moved it fetches
the follow payload below and redraws from it, and asks the server for a script run only when
the question changes or the room closes: a follower costs no script run while nothing
changes, nor for a Step.

Sixty followers on one app server share one read of the store per :data:`MAX_AGE`: the answer
is kept per (store, code) in this process (:class:`PulseCache`), and while one request reads
it the others wait for that read rather than make their own. The truth stays in the store, so
a follower on another app server sharing the PostgreSQL database sees the same pulse.

The plain answer holds what the follower's page already shows (the step) and nothing else.
With ``?follow=1`` (and ``vendors=a,b``, checked against :data:`flowdebug.protocols.PROTOCOLS`,
default all) it is the follow payload (:func:`follow_payload`): the picture's row table as the
picture component receives it, the step heading, the status line, the phase title and what
the phase is, and the question's revision, so a follower's page can redraw a Step without a
script run. It is built once per (room, pulse, vendors, window) in this process and kept as
bytes (:meth:`PulseCache.follow`). Never HTML: the page sets it as text.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from flowdebug import protocols
from flowdebug.engine.session.session_state import SessionState
from flowdebug.engine.tracing.trace import Rejection
from flowdebug.store.errors import StoreError
from flowdebug.store.rooms import NoRoom, RoomClosed, Rooms, normal_code
from flowdebug.store.sessions import Store, open_store
from flowdebug.views import predictions
from flowdebug.views.aligned import WINDOW
from flowdebug.views.debugger import (
    PHASE_TITLES,
    answered,
    explain,
    phase_now,
    phase_title,
    status_line,
)
from flowdebug.views.teaching_payload import drawn

PATH = "/_flowdebug/rooms/{code}"
POLL = 0.5  # seconds between a follower page's polls
MAX_AGE = 0.1  # seconds an answer is reused for the other followers of this process
KEEP = 256  # answers kept: the rooms of a server, and a few mistyped codes
HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}


def _under(base: str) -> str:
    """Streamlit's ``server.baseUrlPath`` as a path prefix ("" or "/base")."""
    base = base.strip("/")
    return f"/{base}" if base else ""


def url(code: str, base: str = "") -> str:
    """The path a follower of room ``code`` polls (``code`` in its stored form), under the
    server's ``base`` path (Streamlit's ``server.baseUrlPath``)."""
    return _under(base) + PATH.format(code=code)


@dataclass(frozen=True)
class Answer:
    """One poll's answer: the HTTP status and its JSON body."""

    status: int
    body: dict[str, Any]


def refused(e: RoomClosed | StoreError) -> Answer:
    """The answer for a room that cannot be followed now: gone (404), closed or expired (410),
    or a store out of reach (503, its message names the database: not for a follower's page)."""
    if isinstance(e, NoRoom):
        return Answer(404, {"error": str(e)})
    if isinstance(e, RoomClosed):
        return Answer(410, {"closed": True, "error": str(e)})
    return Answer(503, {"error": "the session database cannot be reached: polling goes on"})


def answer(rooms: Rooms, typed: str) -> Answer:
    """Room ``typed``'s pulse read now from the store, as the route answers it."""
    try:
        code = normal_code(typed)
    except RoomClosed:  # its message quotes what was typed: the answer never echoes a request
        return Answer(404, {"error": "not a room code"})
    try:
        pulse = rooms.pulse(code)
    except (RoomClosed, StoreError) as e:
        return refused(e)
    return Answer(200, {"pulse": list(pulse.key), "step": pulse.step})


def vendors(typed: str | None) -> tuple[str, ...] | None:
    """The vendors of a follow request's ``vendors=a,b``, in the usual order: all of them when
    none is named; None when one is not a protocol."""
    names = [n for n in (typed or "").split(",") if n]
    if any(n not in protocols.PROTOCOLS for n in names):
        return None
    return tuple(n for n in protocols.PROTOCOLS if n in names or not names)


def heading(code: str, state: SessionState) -> str:
    """The follow page's step heading: the room, the phase, the step and the next phase."""
    upcoming = f" · next: {PHASE_TITLES[state.next_phase]}" if state.events else ""
    return f"Room {code} · {phase_title(state)} · step {state.step}{upcoming}"


def status(state: SessionState, names: Sequence[str], refused: dict[str, Rejection]) -> str:
    """The follower's status line: the Debugger's, with its icon."""
    icon, text = status_line(state, refused, list(names))
    return f"{icon} {text}"


def phase_explained(state: SessionState, names: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """What the phase now is, as plain text for the follower's "What this phase is" (its wire
    terms without the Markdown backticks the Debugger's page sets them in): the meaning and,
    per vendor shown, where its fields are."""
    meaning, fields = explain(phase_now(state), list(names), final=answered(state))
    return {
        "meaning": meaning.replace("`", ""),
        "fields": [[protocols.get(n).title, where.replace("`", "")] for n, where in fields.items()],
    }


def question_revision(rooms: Rooms, session_id: str) -> str:
    """Which question the page shows and whether it is open: a script run when it changes."""
    q = predictions.current(rooms, session_id)
    return "" if q is None else f"{q.index}:{'closed' if q.closed else 'open'}"


def follow_payload(rooms: Rooms, code: str, names: tuple[str, ...], window: int = WINDOW) -> bytes:
    """What a follower of room ``code`` (stored form) redraws, as JSON bytes: the pulse, the
    heading, the status line, the phase title, the question's revision and the picture's row
    table (the bytes :func:`flowdebug.views.teaching_payload.drawn` gives the picture
    component, as the page draws it with nothing picked). :class:`RoomClosed` or
    :class:`NoRoom` as :meth:`Rooms.follow`."""
    state, pulse = rooms.follow(code)
    made = drawn(state, names, window, None, pulse.beat)
    head = {"pulse": list(pulse.key), "step": pulse.step, "heading": heading(code, state),
            "status": status(state, names, made.refused), "phase": phase_title(state),
            "explained": phase_explained(state, names),
            "question": question_revision(rooms, state.id)}  # fmt: skip
    sent = json.dumps(head, ensure_ascii=False, separators=(",", ":")).encode()
    return sent[:-1] + b',"picture":' + made.data + b"}"


class PulseCache:
    """The answers of this process, each reused for :data:`MAX_AGE` seconds; a miss is read
    once (in a worker thread, off the event loop) while the other requests for it wait."""

    def __init__(self, rooms: Callable[[], Rooms], max_age: float = MAX_AGE):
        self._rooms, self.max_age = rooms, max_age
        self._kept: OrderedDict[str, tuple[float, Answer]] = OrderedDict()
        self._reading: dict[str, asyncio.Lock] = {}
        self.reads = 0  # reads of the store, for the tests and the bench
        self.builds = 0  # follow payloads built, for the tests and the bench
        self._payloads: OrderedDict[tuple[object, ...], bytes] = OrderedDict()
        self._building: dict[tuple[object, ...], asyncio.Lock] = {}
        self._count = threading.Lock()

    def _fresh(self, code: str) -> Answer | None:
        kept = self._kept.get(code)
        if kept is None or time.monotonic() - kept[0] > self.max_age:
            return None
        return kept[1]

    def _read(self, code: str) -> Answer:
        with self._count:
            self.reads += 1
        return answer(self._rooms(), code)

    async def get(self, code: str) -> Answer:
        """Room ``code``'s answer, at most :attr:`max_age` seconds old."""
        found = self._fresh(code)
        if found is not None:
            return found
        gate = self._reading.setdefault(code, asyncio.Lock())
        try:
            async with gate:
                found = self._fresh(code)
                if found is None:
                    found = await anyio.to_thread.run_sync(self._read, code)
                    self._kept[code] = (time.monotonic(), found)
                    self._kept.move_to_end(code)
                    while len(self._kept) > KEEP:
                        self._kept.popitem(last=False)
        finally:
            self._reading.pop(code, None)  # the waiters hold the lock; the next read makes one
        return found

    def _build(self, code: str, names: tuple[str, ...], window: int) -> Answer | bytes:
        with self._count:
            self.builds += 1
        try:
            return follow_payload(self._rooms(), normal_code(code), names, window)
        except (RoomClosed, StoreError) as e:
            return refused(e)

    async def follow(
        self, code: str, names: tuple[str, ...], window: int = WINDOW
    ) -> Answer | bytes:
        """Room ``code``'s follow payload for the vendors ``names`` (JSON bytes), built once
        per pulse in this process; the pulse's answer itself when it is no 200."""
        found = await self.get(code)
        if found.status != 200:
            return found
        key = (code, tuple(found.body["pulse"]), names, window)
        kept = self._payloads.get(key)
        if kept is not None:
            return kept
        gate = self._building.setdefault(key, asyncio.Lock())
        try:
            async with gate:
                kept = self._payloads.get(key)
                if kept is not None:
                    return kept
                built = await anyio.to_thread.run_sync(self._build, code, names, window)
                if isinstance(built, Answer):
                    return built
                self._payloads[key] = built
                while len(self._payloads) > KEEP:
                    self._payloads.popitem(last=False)
                return built
        finally:
            self._building.pop(key, None)  # the waiters hold the lock; the next build makes one


@cache
def _store() -> Store:
    """This process's store for the route: $FLOWDEBUG_DB, as the pages open it."""
    return open_store()


def route(cache: PulseCache | None = None, base: str = "") -> Route:
    """The poll's route under the server's ``base`` path, answered from ``cache`` (default:
    one over this process's store)."""
    kept = cache or PulseCache(lambda: Rooms(_store()))

    async def poll(request: Request) -> Response:
        # One key per room however it was typed; a malformed code never reaches the cache.
        try:
            code = normal_code(str(request.path_params["code"])[:64])
        except RoomClosed:  # its message quotes what was typed: never echoed
            return JSONResponse({"error": "not a room code"}, status_code=404, headers=HEADERS)
        if not request.query_params.get("follow"):
            found = await kept.get(code)
            return JSONResponse(found.body, status_code=found.status, headers=HEADERS)
        names = vendors(request.query_params.get("vendors"))
        if names is None:
            return JSONResponse({"error": "not a vendor"}, status_code=400, headers=HEADERS)
        made = await kept.follow(code, names)
        if isinstance(made, Answer):
            return JSONResponse(made.body, status_code=made.status, headers=HEADERS)
        return Response(made, media_type="application/json", headers=HEADERS)

    return Route(_under(base) + PATH, poll, methods=["GET"], name="flowdebug_room_pulse")
