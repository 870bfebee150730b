"""A room's load (issue 33 item 4): one instructor stepping, N followers polling the room.

In one process, as on one app server: the instructor steps the weather scenario (Step + the
save the Debugger makes after it; at the end, Undo back to the start, also saved) every
``--pace`` seconds; each follower is a thread that does what the Room page's fragment does,
``Rooms.pulse`` every ``--poll`` seconds, and when it moved what the page's rerun does: read the
session (``Rooms.follow``) and build the teaching picture's table for the vendors shown.

Measured: the follow delay (the instructor's save committed -> the follower has the new
picture), the instructor's Step with nobody following and with N followers, the memory per
follower (RSS growth with N followers holding their page's data, divided by N), and the
pulses per second the database answered. Run::

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
from flowdebug.views.debugger import refusals
from flowdebug.views.teaching import picture


def p95(values: list[float]) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


class Follower(threading.Thread):
    def __init__(self, rooms: Rooms, code: str, names: list[str], poll: float, saved: dict):
        super().__init__(daemon=True)
        self.rooms, self.code, self.names, self.poll, self.saved = rooms, code, names, poll, saved
        self.seen: tuple[int, int] | None = None
        self.delays: list[float] = []
        self.pulses = 0
        self.page: object = None  # what the page holds: the followed state and its picture
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                key = self.rooms.pulse(self.code).key
                self.pulses += 1
                if key != self.seen:
                    state, pulse = self.rooms.follow(self.code)
                    table = picture(
                        state, self.names, refusals(state.conversation, state.events, self.names)
                    )
                    self.page = (state, table.data())
                    done = time.perf_counter()
                    committed = self.saved.get(pulse.session_revision)
                    if self.seen is not None and committed is not None:
                        self.delays.append(done - committed)
                    self.seen = pulse.key
            except RoomClosed:
                return
            self.stop.wait(self.poll)


def instructor(store, session: Session, steps: int, pace: float, saved: dict) -> list[float]:
    """Step (and Undo back at the end) ``steps`` times; the Step times (step + save), but for
    the execution Steps."""
    times: list[float] = []
    for _ in range(steps):
        t0 = time.perf_counter()
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
            times.append(now - t0)
        time.sleep(max(0.0, pace - (now - t0)))
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--followers", type=int, default=60)
    ap.add_argument("--steps", type=int, default=36)
    ap.add_argument("--pace", type=float, default=0.5, help="seconds between instructor changes")
    ap.add_argument("--poll", type=float, default=0.5, help="the follow page's pulse interval")
    ap.add_argument("--db", default=None, help="store URL (default: a temporary SQLite file)")
    args = ap.parse_args()
    url = args.db or os.path.join(tempfile.mkdtemp(), "room_load.db")
    names = list(protocols.model_protocols())[:4]
    with open_store(url) as store:
        rooms = Rooms(store)
        session = Session.from_scenario("weather")
        store.save(session.state)
        room = rooms.open(session.state.id)
        saved: dict[int, float] = {}
        alone = instructor(store, session, args.steps, args.pace, saved)

        gc.collect()
        before = rss_mb(os.getpid())
        followers = [
            Follower(rooms, room.code, names, args.poll, saved) for _ in range(args.followers)
        ]
        for f in followers:
            f.start()
            time.sleep(args.poll / max(1, args.followers))  # joined over one poll, as people do
        time.sleep(2 * args.poll)  # every follower has drawn the current step
        gc.collect()
        per_follower = (rss_mb(os.getpid()) - before) / max(1, args.followers)
        t0 = time.perf_counter()
        pulses0 = sum(f.pulses for f in followers)
        crowd = instructor(store, session, args.steps, args.pace, saved)
        time.sleep(2 * args.poll)
        rate = (sum(f.pulses for f in followers) - pulses0) / (time.perf_counter() - t0)
        rooms.close(room.code)
        for f in followers:
            f.stop.set()
        for f in followers:
            f.join(5)
    delays = [d for f in followers for d in f.delays]
    rows = [
        ("store", store.__repr__()),
        ("followers", str(args.followers)),
        (
            "follow delay p50 / p95 (ms)",
            f"{statistics.median(delays) * 1000:.0f} / "
            f"{p95(delays) * 1000:.0f}  ({len(delays)} redraws)",
        ),
        (
            "instructor Step p50 / p95, nobody following (ms)",
            f"{statistics.median(alone) * 1000:.1f} / {p95(alone) * 1000:.1f}",
        ),
        (
            f"instructor Step p50 / p95, {args.followers} following (ms)",
            f"{statistics.median(crowd) * 1000:.1f} / {p95(crowd) * 1000:.1f}",
        ),
        ("Step p95 ratio (following / alone)", f"{p95(crowd) / p95(alone):.2f}"),
        ("memory per follower (MB)", f"{per_follower:.2f}"),
        ("pulses answered per second", f"{rate:.0f}"),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")


if __name__ == "__main__":
    main()
