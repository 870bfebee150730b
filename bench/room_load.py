"""A room's load (issue 33 item 4): one instructor stepping, N followers polling the room.

In one process, as on one app server: the instructor steps the weather scenario (Step + the
save the Debugger makes after it; at the end, Undo back to the start, also saved) every
``--pace`` seconds; each follower is a thread that does what the Room page does: every
``--poll`` seconds its fragment's check of the room's pulse (``Rooms.pulse``), and when it
moved the page's rerun: the session (``Rooms.follow``, read once per pulse for all) and its
own teaching picture. ``--shared``: the picture made once per pulse for all the followers of
the process (``following.followed``), which the page does not do yet (see the closing note).

The instructor's Steps are timed in ``--rounds`` pairs of blocks of ``--steps`` changes, nobody
following then the followers polling, so that a noisy machine weighs on both alike. Measured:
the follow delay (the instructor's save committed -> the follower has the new picture), the
instructor's Step with nobody following and with N followers, the memory per follower (RSS
growth with N followers holding their page's data, divided by N), the pulses per second the
followers made and the reads of the database they cost. Run::

    .venv/bin/python bench/room_load.py            # 60 followers, a temporary SQLite file
    .venv/bin/python bench/room_load.py --db postgresql://... --followers 60
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.procstat import rss_mb
from flowdebug import protocols
from flowdebug.engine.session.debugger import Session
from flowdebug.store.rooms import RoomClosed, Rooms
from flowdebug.store.sessions import open_store
from flowdebug.views import following
from flowdebug.views.aligned import WINDOW
from flowdebug.views.debugger import refusals
from flowdebug.views.teaching import picture


def p95(values: list[float]) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def wall(times: list[tuple[float, float]]) -> list[float]:
    return [w for w, _ in times]


def cpu(times: list[tuple[float, float]]) -> list[float]:
    return [c for _, c in times]


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.1f} / {p95(values) * 1000:.1f}"


class Follower(threading.Thread):
    def __init__(self, rooms: Rooms, code: str, names: list[str], args, saved: dict):
        super().__init__(daemon=True)
        self.rooms, self.code, self.names, self.saved = rooms, code, names, saved
        self.poll, self.shared = args.poll, args.shared
        self.seen: tuple[int, int] | None = None
        self.delays: list[float] = []
        self.pulses = 0
        self.page: object = None  # what the page holds: the followed state and its picture
        self.active = threading.Event()  # cleared: nobody following (the thread waits)
        self.since = 0.0  # delays count for saves after this (the block's start)
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.active.wait()
            try:
                key = self.rooms.pulse(self.code).key
                self.pulses += 1
                if key != self.seen:
                    pulse = self.redraw()
                    done = time.perf_counter()
                    committed = self.saved.get(pulse.session_revision)
                    if self.seen is not None and committed is not None and committed > self.since:
                        self.delays.append(done - committed)
                    self.seen = pulse.key
            except RoomClosed:
                return
            self.stop.wait(self.poll)

    def redraw(self):
        if self.shared:
            seen = following.followed(self.rooms, self.code, self.names, WINDOW)
            self.page = seen
            return seen.pulse
        state, pulse = self.rooms.follow(self.code)
        refused = refusals(state.conversation, state.events, self.names)
        table = picture(state, self.names, refused, window=WINDOW, upto_seq=pulse.beat)
        self.page = (state, table, following.component_data(table))
        return pulse


class Reads:
    """The followers' transactions on the database, counted (not the instructor's saves)."""

    def __init__(self, db):
        self.count, self._transaction, self._lock = 0, db.transaction, threading.Lock()
        db.transaction = self

    def __call__(self, write: bool = False):
        if isinstance(threading.current_thread(), Follower):
            with self._lock:
                self.count += 1
        return self._transaction(write)


def instructor(
    store, session: Session, steps: int, pace: float, saved: dict
) -> list[tuple[float, float]]:
    """Step (and Undo back at the end) ``steps`` times; the Step times (step + save; wall
    clock, and this thread's CPU), but for the execution Steps."""
    times: list[tuple[float, float]] = []
    for _ in range(steps):
        t0, cpu = time.perf_counter(), time.thread_time()
        if session.done:
            while session.undo_stack:
                session.undo()
            change = "undo"
        else:
            session.step()
            change = "step"
        info = store.save(session.state)
        now = time.perf_counter()
        saved[info.revision] = now
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
    ap.add_argument("--poll", type=float, default=following.POLL, help="the pulse interval")
    ap.add_argument("--shared", action="store_true", help="one picture per pulse for all")
    ap.add_argument("--db", default=None, help="store URL (default: a temporary SQLite file)")
    args = ap.parse_args()
    url = args.db or os.path.join(tempfile.mkdtemp(), "room_load.db")
    names = list(protocols.model_protocols())[:4]
    load = os.getloadavg()
    with open_store(url) as store:
        rooms = Rooms(store)
        session = Session.from_scenario("weather")
        store.save(session.state)
        room = rooms.open(session.state.id)
        saved: dict[int, float] = {}
        followers = [Follower(rooms, room.code, names, args, saved) for _ in range(args.followers)]
        gc.collect()
        before = rss_mb(os.getpid())
        alone: list[tuple[float, float]] = []
        crowd: list[tuple[float, float]] = []
        per_follower = rate = reads = 0.0
        for n in range(args.rounds):
            alone += instructor(store, session, args.steps, args.pace, saved)
            since = time.perf_counter()
            for f in followers:
                f.since = since
                f.active.set()
                if n == 0:
                    f.start()
                time.sleep(args.poll / max(1, args.followers))  # joined over one poll
            time.sleep(2 * args.poll)  # every follower has drawn the current step
            if n == 0:
                gc.collect()
                per_follower = (rss_mb(os.getpid()) - before) / max(1, args.followers)
            counted = Reads(store._db)
            t0 = time.perf_counter()
            pulses0 = sum(f.pulses for f in followers)
            crowd += instructor(store, session, args.steps, args.pace, saved)
            time.sleep(2 * args.poll)
            elapsed = time.perf_counter() - t0
            rate += (sum(f.pulses for f in followers) - pulses0) / elapsed / args.rounds
            store._db.transaction = counted._transaction
            reads += counted.count / elapsed / args.rounds
            for f in followers:
                f.active.clear()
            time.sleep(args.poll)  # the last follower is back waiting
        rooms.close(room.code)
        for f in followers:
            f.stop.set()
            f.active.set()
        for f in followers:
            f.join(5)
    delays = [d for f in followers for d in f.delays]
    rows = [
        ("store", store.__repr__()),
        ("followers", f"{args.followers} ({'shared' if args.shared else 'own'} picture)"),
        ("load average at the start (1, 5, 15 min)", ", ".join(f"{x:.2f}" for x in load)),
        (
            "follow delay p50 / p95 (ms)",
            f"{statistics.median(delays) * 1000:.0f} / "
            f"{p95(delays) * 1000:.0f}  ({len(delays)} redraws)",
        ),
        ("instructor Step p50 / p95, nobody following (ms)", _ms(wall(alone))),
        (f"instructor Step p50 / p95, {args.followers} following (ms)", _ms(wall(crowd))),
        ("Step p95 ratio (following / alone)", f"{p95(wall(crowd)) / p95(wall(alone)):.2f}"),
        ("its CPU p50 / p95, alone / following (ms)", f"{_ms(cpu(alone))} / {_ms(cpu(crowd))}"),
        ("memory per follower (MB)", f"{per_follower:.2f}"),
        ("pulses per second / database reads per second", f"{rate:.0f} / {reads:.0f}"),
        ("Step samples alone / followed", f"{len(alone)} / {len(crowd)}"),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")


if __name__ == "__main__":
    main()
