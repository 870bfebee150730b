"""A room's load (issue 33 item 4): one instructor stepping, N followers polling the room.

One process plays the app server: the instructor steps the weather scenario (Step + the save
the Debugger makes after it; at the end, Undo back to the start, also saved) every ``--pace``
seconds in its main thread, as a script run would, while uvicorn serves the followers' poll
route (:func:`flowdebug.views.room_pulse.route`, as serve.py mounts it) in a thread of the same
process. The followers are a child process (their CPU is not the server's, as browsers' is
not): N HTTP pollers, each on a connection of its own, asking the route every ``--poll``
seconds as the Room page's component does, and only when the pulse moved past the one they
drew, fetching the route's follow payload (``?follow=1``: what the Room page's component
redraws without a script run, built once per pulse by the route). ``--redraw``: as before it,
asking the server to redraw instead (``/_bench/redraw``: what the follower's script run does in
the library: ``Rooms.follow``, the refusals and its own teaching picture as the component
takes it, kept per follower as its browser session keeps its page; ``--shared``: the picture
made once per pulse, ``views/following.py``).

The instructor's Steps are timed in ``--rounds`` pairs of blocks of ``--steps`` changes, nobody
following then the followers polling, so that a noisy machine weighs on both alike; then the
followers poll ``--idle`` seconds while nothing changes. Measured: the follow delay (the
instructor's save committed -> the follower's redraw done, or its payload received: the two
processes share the system's monotonic clock), the instructor's Step alone and
followed (wall clock; its thread's CPU beside), the memory per follower (the server's RSS
growth with N followers drawn, divided by N), the polls and the store reads per second, and
the redraws (script runs) per idle follower.

Not in it: Streamlit's own machinery of a script run (the page's elements, the websocket), which
a redraw of the real page adds (4.4-6.4 ms of CPU each, measured for the issue's closing note);
it is paid once per follower per change, no longer on every poll. Run::

    .venv/bin/python bench/room_load.py            # 60 followers, a temporary SQLite file
    .venv/bin/python bench/room_load.py --db postgresql://... --followers 60
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bench.procstat import cpu_seconds, rss_mb
from flowdebug import protocols
from flowdebug.emulator.serving import AsgiServer
from flowdebug.engine.session.debugger import Session
from flowdebug.store.rooms import Rooms
from flowdebug.store.sessions import open_store
from flowdebug.views import following, room_pulse
from flowdebug.views.aligned import WINDOW
from flowdebug.views.debugger import refusals
from flowdebug.views.teaching import picture

REDRAW = "/_bench/redraw/{code}"


def p95(values: list[float]) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.1f} / {p95(values) * 1000:.1f}"


class Room:
    """The server's side: the poll route, the redraws, what they count."""

    def __init__(self, rooms: Rooms, names: list[str], shared: bool):
        self.rooms, self.names, self.shared = rooms, names, shared
        self.cache = room_pulse.PulseCache(lambda: rooms)
        self.saved: dict[int, float] = {}  # session revision -> when its save committed
        self.counted: set[int] = set()  # the revisions saved in a followed block
        self.fetches = 0  # follow payloads sent
        self.since = float("inf")  # delays count for saves after this (a followed block)
        self.delays: list[float] = []
        self.redraws = 0
        self.polls = 0
        self.pages: dict[str, object] = {}  # what each follower's session holds: its page
        self.lock = threading.Lock()

    def redraw(self, code: str, follower: str) -> tuple[int, int]:
        if self.shared:
            seen = following.followed(self.rooms, code, self.names, WINDOW)
            page: object = seen
            pulse = seen.pulse
        else:
            state, pulse = self.rooms.follow(code)
            refused = refusals(state.conversation, state.events, self.names)
            table = picture(state, self.names, refused, window=WINDOW, upto_seq=pulse.beat)
            page = (state, table, following.component_data(table))
        done = time.monotonic()
        with self.lock:
            self.pages[follower] = page
            self.redraws += 1
            committed = self.saved.get(pulse.session_revision)
            if committed is not None and committed > self.since:
                self.delays.append(done - committed)
        return pulse.key

    def app(self) -> Starlette:
        def redraw(request: Request) -> JSONResponse:  # sync: a worker thread, as a script run
            key = self.redraw(request.path_params["code"], request.query_params["f"])
            return JSONResponse({"pulse": list(key)})

        answer = room_pulse.route(self.cache).endpoint

        async def poll(request: Request) -> Response:
            self.polls += 1  # the event loop's thread only
            self.fetches += bool(request.query_params.get("follow"))
            return await answer(request)

        return Starlette(routes=[Route(room_pulse.PATH, poll), Route(REDRAW, redraw)])


class Server(AsgiServer):
    what = "room bench"

    def __init__(self, room: Room):
        super().__init__()
        self.room = room

    def app(self) -> Starlette:
        return self.room.app()


# -- the followers: a child process -----------------------------------------------------------


class Connection:
    """One follower's keep-alive HTTP/1.1 connection, as lean as a browser's is to the server:
    the load generator runs on the server's own two cores, so it spends little of them."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, path: str) -> tuple[int, bytes]:
        try:
            return await self._get(path)
        except (asyncio.IncompleteReadError, ConnectionError):
            # The server let the connection go while nobody followed (its keep-alive is 5 s):
            # a browser opens a new one, and so does this.
            self.writer = None
            return await self._get(path)

    async def _get(self, path: str) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\n\r\n".encode())
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = int(head.lower().split(b"content-length:", 1)[1].split(b"\r\n", 1)[0])
        return status, await self.reader.readexactly(length)


async def _follower(
    i: int, base: str, code: str, poll: float, on: asyncio.Event, out: dict, follow: str
):
    host, port = base.removeprefix("http://").rsplit(":", 1)
    http = Connection(host, int(port))
    seen: list[int] | None = None
    while True:
        await on.wait()
        try:
            status, body = await http.get(room_pulse.url(code))
            out["polls"] += 1
            if status != 200:
                return
            now = json.loads(body)["pulse"]
            if seen is None or any(n > s for n, s in zip(now, seen, strict=True)):
                if follow:  # the page's component: the payload, drawn in the browser
                    _, sent = await http.get(follow)
                    seen = json.loads(sent)["pulse"]
                    out["received"].append((seen[0], time.monotonic()))
                else:
                    _, drawn = await http.get(REDRAW.format(code=code) + f"?f={i}")
                    seen = json.loads(drawn)["pulse"]
        except (OSError, asyncio.IncompleteReadError, ValueError) as e:
            out["errors"] += 1
            out["error"] = repr(e)
            http = Connection(host, int(port))
        await asyncio.sleep(poll)


async def _followers(base: str, code: str, n: int, poll: float, follow: str) -> dict:
    """N followers; stdin says ``on`` (poll, joining over one poll), ``off`` (wait), ``quit``.
    ``follow``: the payload's path (empty: ask the server to redraw)."""
    out: dict = {"polls": 0, "errors": 0, "error": None, "received": []}
    on = asyncio.Event()
    loop = asyncio.get_running_loop()
    tasks: list[asyncio.Task] = []
    while True:
        line = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
        if line == "on":
            on.set()
            for i in range(len(tasks), n):
                tasks.append(asyncio.create_task(_follower(i, base, code, poll, on, out, follow)))
                await asyncio.sleep(poll / n)
        elif line == "off":
            on.clear()
        else:
            break
    for t in tasks:
        t.cancel()
    return out


def followers_main(base: str, code: str, n: int, poll: float, follow: str) -> None:
    print(json.dumps(asyncio.run(_followers(base, code, n, poll, follow))), flush=True)


# -- the instructor ---------------------------------------------------------------------------


def instructor(store, session: Session, room: Room, steps: int, pace: float) -> list[tuple]:
    """Step (and Undo back at the end) ``steps`` times; the Step times (step + save; wall
    clock, and this thread's CPU), but for the execution Steps."""
    times: list[tuple[float, float]] = []
    for _ in range(steps):
        t0, cpu = time.monotonic(), time.thread_time()
        if session.done:
            while session.undo_stack:
                session.undo()
            change = "undo"
        else:
            session.step()
            change = "step"
        info = store.save(session.state)
        now = time.monotonic()
        room.saved[info.revision] = now
        if now > room.since:
            room.counted.add(info.revision)
        # The execution Step waits out the scenario's 1 s Tokyo timeout, alike with or without
        # followers: the other Steps say what the room costs.
        if change == "step" and session.state.events[-1].phase != "execution":
            times.append((now - t0, time.thread_time() - cpu))
        time.sleep(max(0.0, pace - (now - t0)))
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--followers", type=int, default=60)
    ap.add_argument("--steps", type=int, default=16, help="changes in each block")
    ap.add_argument("--rounds", type=int, default=3, help="pairs of blocks: alone, followed")
    ap.add_argument("--pace", type=float, default=0.5, help="seconds between instructor changes")
    ap.add_argument("--poll", type=float, default=room_pulse.POLL, help="the poll interval")
    ap.add_argument("--idle", type=float, default=10.0, help="seconds watched with no change")
    ap.add_argument("--redraw", action="store_true", help="a script run's redraw per change")
    ap.add_argument("--shared", action="store_true", help="--redraw: one picture for all")
    ap.add_argument("--switch", type=float, default=None, help="sys.setswitchinterval (s)")
    ap.add_argument("--db", default=None, help="store URL (default: a temporary SQLite file)")
    ap.add_argument("--pollers", nargs=4, metavar=("URL", "CODE", "N", "FOLLOW"),
                    help=argparse.SUPPRESS)  # fmt: skip
    args = ap.parse_args()
    if args.pollers:
        url, code, n, follow = args.pollers
        followers_main(url, code, int(n), args.poll, follow)
        return
    url = args.db or os.path.join(tempfile.mkdtemp(), "room_load.db")
    if args.switch:
        sys.setswitchinterval(args.switch)
    names = list(protocols.model_protocols())[:4]
    load = os.getloadavg()
    pid = os.getpid()
    with open_store(url) as store:
        rooms = Rooms(store)
        session = Session.from_scenario("weather")
        store.save(session.state)
        code = rooms.open(session.state.id).code
        room = Room(rooms, names, args.shared)
        vendors = ",".join(names)
        follow = "" if args.redraw else f"{room_pulse.url(code)}?follow=1&vendors={vendors}"
        with Server(room) as server:
            child = subprocess.Popen(
                [sys.executable, __file__, "--poll", str(args.poll),
                 "--pollers", server.url, code, str(args.followers), follow],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            assert child.stdin is not None and child.stdout is not None

            def say(word: str) -> None:
                child.stdin.write(word + "\n")  # type: ignore[union-attr]
                child.stdin.flush()  # type: ignore[union-attr]

            gc.collect()
            before = rss_mb(pid)
            alone: list[tuple[float, float]] = []
            crowd: list[tuple[float, float]] = []
            per_follower = reads = 0.0
            busy = {"alone": [0.0, 0.0], "followed": [0.0, 0.0]}  # server CPU s, wall s

            def block(kind: str) -> list[tuple[float, float]]:
                cpu0, t0 = cpu_seconds(pid), time.monotonic()
                times = instructor(store, session, room, args.steps, args.pace)
                busy[kind][0] += cpu_seconds(pid) - cpu0
                busy[kind][1] += time.monotonic() - t0
                return times

            for n in range(args.rounds):
                alone += block("alone")
                say("on")
                time.sleep(args.poll + 2 * args.poll)  # joined over one poll, all drawn
                if n == 0:
                    gc.collect()
                    per_follower = (rss_mb(pid) - before) / max(1, args.followers)
                room.since = time.monotonic()
                t0, reads0 = time.monotonic(), room.cache.reads
                crowd += block("followed")
                time.sleep(2 * args.poll)
                room.since = float("inf")
                reads += (room.cache.reads - reads0) / (time.monotonic() - t0) / args.rounds
                say("off")
                time.sleep(2 * args.poll)  # the last poll is answered
            say("on")
            time.sleep(3 * args.poll)  # every follower has drawn the current step
            redraws0, polls0, reads0 = room.redraws + room.fetches, room.polls, room.cache.reads
            cpu0, t0 = cpu_seconds(pid), time.monotonic()
            time.sleep(args.idle)
            idle_runs = room.redraws + room.fetches - redraws0
            took = time.monotonic() - t0
            idle_cpu = (cpu_seconds(pid) - cpu0) / took
            idle_polls = (room.polls - polls0) / took
            idle_reads = (room.cache.reads - reads0) / took
            pollers_cpu = cpu_seconds(child.pid)
            say("quit")
            out, _ = child.communicate(timeout=30)
            polled = json.loads(out.strip().splitlines()[-1])
        rooms.close(code)
    delays = room.delays + [
        t - room.saved[rev] for rev, t in polled["received"] if rev in room.counted
    ]
    drawn = (
        "the route's payload (built once per pulse)"
        if not args.redraw
        else "a shared picture"
        if args.shared
        else "their own picture"
    )
    rows = [
        ("store", repr(store)),
        ("GIL switch interval (ms)", f"{sys.getswitchinterval() * 1000:g}"),
        ("followers", f"{args.followers} HTTP pollers, {drawn} on a change"),
        ("follow payloads built / sent", f"{room.cache.builds} / {room.fetches}"),
        ("load average at the start (1, 5, 15 min)", ", ".join(f"{x:.2f}" for x in load)),
        (
            "follow delay p50 / p95 (ms)",
            f"{statistics.median(delays) * 1000:.0f} / {p95(delays) * 1000:.0f}"
            f"  ({len(delays)} draws)"
            if delays
            else "none measured",
        ),
        ("instructor Step p50 / p95, nobody following (ms)", _ms([w for w, _ in alone])),
        (f"instructor Step p50 / p95, {args.followers} following (ms)", _ms([w for w, _ in crowd])),
        (
            "Step p95 ratio (following / alone)",
            f"{p95([w for w, _ in crowd]) / p95([w for w, _ in alone]):.2f}",
        ),
        (
            "its CPU p50 / p95, alone / following (ms)",
            f"{_ms([c for _, c in alone])} / {_ms([c for _, c in crowd])}",
        ),
        (
            "the server's CPU in the blocks, alone / followed (cores)",
            " / ".join(f"{c / w:.3f}" for c, w in busy.values()),
        ),
        ("the pollers' own CPU, all the run (s; the child process)", f"{pollers_cpu:.1f}"),
        ("memory per follower (MB)", f"{per_follower:.3f}"),
        ("store reads per second, followed blocks", f"{reads:.1f}"),
        (
            f"script runs (redraws) or payloads per idle follower in {args.idle:.0f} s",
            f"{idle_runs / max(1, args.followers):.2f}",
        ),
        ("idle: polls / store reads per second", f"{idle_polls:.0f} / {idle_reads:.1f}"),
        ("idle: the server's CPU, all followers (cores)", f"{idle_cpu:.3f}"),
        ("polls answered, errors", f"{polled['polls']}, {polled['errors']} {polled['error']}"),
        ("Step samples alone / followed", f"{len(alone)} / {len(crowd)}"),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")


if __name__ == "__main__":
    main()
