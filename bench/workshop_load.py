"""A room's load on one server: N attendees pressing Step over Streamlit's own websocket.

For each garbage-collection setting and each N, it starts ``streamlit run`` on a free port
(from the checkout under test, so it reads that checkout's ``.streamlit/config.toml``), lets
N simulated attendees (``bench/attendee.py``: no browser) press the Debugger's Step with
0.5-1.5 s of think time, Reset when the cycle is over (sometimes loading another scenario
instead), and prints Step latency (p50, p95, p99: BackMsg sent → ``script_finished``), server
CPU (/proc/PID/stat) and memory (VmRSS), beside the floor: ``bench/floor_app.py`` (one button,
five small graphviz charts) served the same way. At the largest N one more attendee opens a
saved session of 1,000 messages by its link and steps it under that load.

Steps are split by the phase they run: the execution phase waits for the scenario's tools
(the weather scenario's Tokyo call times out after 1 s on purpose), so the headline figures
are the Steps that run no tool; execution Steps are reported apart.

    .venv/bin/python bench/workshop_load.py                      # the table, 60 s a cell
    .venv/bin/python bench/workshop_load.py --gc off --clients 30 --seconds 20
    .venv/bin/python bench/workshop_load.py --minutes 20 --gc off   # a long workshop
    .venv/bin/python bench/workshop_load.py --root /tmp/wt-base --root .   # before / after

``--gc`` (given on the command line, so it overrides the checkout's ``.streamlit/config.toml``):
``default`` (Streamlit's ``gc.collect()`` after every script run), ``off``
(``--runner.postScriptGC false``), ``freeze`` (``gc.freeze()`` after the imports, through
``bench/serve.py``, with ``FLOWDEBUG_GC=freeze`` set for an app.py that reads it),
``freeze-off`` (both).
The machine's load average is printed beside every figure: on a shared machine they are noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(1, str(BENCH.parent))  # tests/e2e/app_server.py starts the servers

from attendee import Attendee  # noqa: E402
from procstat import cpu_seconds, loadavg, percentile, rss_mb, threads  # noqa: E402

ROOT = BENCH.parent
# Scenarios an attendee may switch to: their tools answer in the server at once (no MCP
# server, no code handler, no approval that would stop the cycle for a person).
SAFE_SCENARIOS = ("weather", "tasks", "runaway", "unknown_tool", "schema_retry")
# Said on the command line, so each mode means the same whatever the checkout's config.toml says.
ON, OFF = ["--runner.postScriptGC", "true"], ["--runner.postScriptGC", "false"]
GC_FLAGS = {"default": ON, "off": OFF, "freeze": ON, "freeze-off": OFF}
TRACE_MEMORY: Path | None = None  # --trace-memory: where the servers write what grew
GC_STATS = False  # --gc-stats: the server times its own collections


@dataclass
class Tally:
    """Everything one run measured; latencies in ms, with the time they ended."""

    steps: list[tuple[float, float]] = field(default_factory=list)  # no tool ran
    tool_steps: list[tuple[float, float]] = field(default_factory=list)  # execution phase
    big: list[tuple[float, float]] = field(default_factory=list)  # the 1,000-message session
    resets: list[float] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)  # scenario switches
    pages: list[float] = field(default_factory=list)  # page loads (arrivals)
    errors: list[str] = field(default_factory=list)
    wire: list[tuple[int, int]] = field(default_factory=list)  # (messages, bytes) per Step
    arrivals: int = 0
    departures: int = 0
    connected: int = 0


def phases(first: str = "declaration") -> Iterator[str]:
    """The phase each successive Step runs, from ``first``: the cycle's fixed order."""
    if first == "declaration":
        yield "declaration"
    while True:
        yield from ("request", "execution", "continuation")


@contextmanager
def server(
    root: Path, app: Path, gc_mode: str, opts: list[str], db: Path
) -> Iterator[tuple[int, int]]:
    """``streamlit run app`` from ``root`` on a free port until the block ends: (port, pid).
    Started as the browser tests start theirs (``tests/e2e/app_server.start``: a port another
    process takes first is tried again, never mistaken for ours)."""
    from tests.e2e.app_server import start, stop

    env = {
        **dict(os.environ),
        "PYTHONPATH": str(root),
        "FLOWDEBUG_DB": str(db),
        # thirty attendees on one server without owners: each starts on a session of their
        # own, as every visitor did before the app resumed the session saved last
        "FLOWDEBUG_RESUME_LAST": "0",
    }
    if TRACE_MEMORY:
        named = f"{TRACE_MEMORY.stem}-{root.name}-{app.stem}.txt"
        env["FLOWDEBUG_BENCH_TRACEMALLOC"] = str(TRACE_MEMORY.with_name(named))
        env["FLOWDEBUG_BENCH_TRACE_EVERY"] = "120"
    if GC_STATS:
        env["FLOWDEBUG_BENCH_GCSTATS"] = str(Path(db).with_name("gc-stats.json"))
    if gc_mode.startswith("freeze") or TRACE_MEMORY or GC_STATS:
        launcher = [str(BENCH / "serve.py")]
        if gc_mode.startswith("freeze"):
            app_itself = app.name in ("app.py", "serve.py")
            env["FLOWDEBUG_BENCH_PRELOAD"] = "flowdebug" if app_itself else ""
            env["FLOWDEBUG_GC"] = "freeze"
    else:
        launcher = ["-m", "streamlit"]
    extra = []
    for opt in opts:
        key, _, value = opt.partition("=")
        extra += [f"--{key}", value]
    proc, url = start(
        [*launcher, "run", str(app)],
        env,
        db.parent,
        *GC_FLAGS[gc_mode],
        *extra,
        cwd=root,
        timeout=90,
    )
    try:
        yield int(url.rsplit(":", 1)[1]), proc.pid
    finally:
        stop(proc, wait=15)


def seed(root: Path, db: Path, messages: int) -> str:
    """A saved session of ``messages`` messages in ``db``, written by ``root``'s own store."""
    out = subprocess.run(
        [sys.executable, str(BENCH / "seed_session.py"), str(db), "--messages", str(messages)],
        cwd=root,
        env={**dict(os.environ), "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()[-1]


async def attendee(
    url: str,
    tally: Tally,
    until: float,
    rng: random.Random,
    args: argparse.Namespace,
    query: str = "",
    big: bool = False,
    churn: float = 0.0,
    phased: bool = True,
) -> None:
    """One seat in the room: arrive, step, reset, sometimes switch scenario; with ``churn``
    (mean seconds of a stay) leave and let a newcomer take the seat."""
    lo, hi = args.think
    while time.monotonic() < until:
        a = Attendee(url, query=query, timeout=args.timeout)
        leave = time.monotonic() + (rng.expovariate(1 / churn) if churn else math.inf)
        try:
            tally.pages.append(await a.connect())
            tally.connected += 1
            if args.presenter and "presenter" in a.widgets:  # the instructor's screen
                await a.rerun({"presenter": ("bool", True)})
            cycle = phases("request" if big else "declaration")
            while time.monotonic() < min(until, leave):
                await asyncio.sleep(rng.uniform(lo, hi))
                if a.can_press("step"):
                    phase = next(cycle)
                    msgs, sent = a.msgs_in, a.bytes_in
                    ms = await a.press("step")
                    if not big:
                        tally.wire.append((a.msgs_in - msgs, a.bytes_in - sent))
                    done = time.monotonic()
                    tool = phased and phase == "execution"
                    target = tally.big if big else (tally.tool_steps if tool else tally.steps)
                    target.append((done, ms))
                elif not big and "scenario" in a.widgets and rng.random() < args.switch:
                    w = a.widgets["scenario"]
                    options = [o for o in w.options if o.split(" ")[0] in SAFE_SCENARIOS]
                    tally.loads.append(await a.choose("scenario", rng.choice(options)))
                    cycle = phases()
                elif a.can_press("reset"):
                    tally.resets.append(await a.press("reset"))
                    cycle = phases()
                else:
                    tally.errors.append("neither Step nor Reset can be pressed")
                    break
                if a.exceptions:
                    tally.errors.append(a.exceptions[0][:200])
        except (TimeoutError, ConnectionError, OSError) as e:
            tally.errors.append(f"{type(e).__name__}: {e}"[:200])
        finally:
            await a.close()
            tally.connected -= 1
        if time.monotonic() < until:  # a newcomer takes the seat a little later
            tally.departures += 1
            await asyncio.sleep(rng.uniform(1, 5))
            tally.arrivals += 1


def ms_list(pairs: list[tuple[float, float]], since: float = 0.0) -> list[float]:
    return [ms for t, ms in pairs if t >= since]


async def measure(
    port: int,
    pid: int,
    n: int,
    big_id: str | None,
    args: argparse.Namespace,
    seconds: float,
    churn: float,
    report_every: float,
    phased: bool = True,
    say: bool = False,
) -> dict[str, object]:
    """Warm the server, connect ``n`` attendees (and the 1,000-message one), let them step for
    ``seconds``; the figures of the run. ``phased``: the app runs the cycle's phases (the
    floor does not), so execution Steps are told apart. ``say``: print a line per sample
    (memory, CPU, the window's Steps), every ``report_every`` seconds."""
    url = f"http://127.0.0.1:{port}"
    rng = random.Random(args.seed + n)
    warm = Attendee(url, timeout=args.timeout)
    await warm.connect()
    for _ in range(3):
        if warm.can_press("step"):
            await warm.press("step")
    await warm.close()
    settle = min(2.0, seconds / 2)  # a tiny smoke run does not wait long
    await asyncio.sleep(settle / 2)
    rss_before = rss_mb(pid)
    idle = [Attendee(url, timeout=args.timeout) for _ in range(n)]
    await asyncio.gather(*(a.connect() for a in idle))
    await asyncio.sleep(settle)
    rss_idle = rss_mb(pid)
    await asyncio.gather(*(a.close() for a in idle))
    load0, cpu0, t0 = loadavg(), cpu_seconds(pid), time.monotonic()
    until = t0 + seconds
    tally = Tally()
    seats = [
        attendee(url, tally, until, random.Random(rng.random()), args, churn=churn, phased=phased)
        for _ in range(n)
    ]
    if big_id:
        seats.append(attendee(url, tally, until, rng, args, query=f"session={big_id}", big=True))
    samples: list[float] = []

    async def monitor() -> None:
        last_t, last_cpu = t0, cpu0
        while time.monotonic() < until:
            await asyncio.sleep(min(report_every, max(0.05, until - time.monotonic())))
            now, cpu, rss = time.monotonic(), cpu_seconds(pid), rss_mb(pid)
            samples.append(rss)
            if say:
                window = ms_list(tally.steps, since=last_t)
                busy = 100 * (cpu - last_cpu) / (now - last_t)
                print(
                    f"  t={now - t0:6.0f}s rss={rss:7.1f} MB cpu={busy:5.1f}% "
                    f"steps={len(window):4d} p95={percentile(window, 95):7.1f} ms "
                    f"connected={tally.connected:3d} arrivals={tally.arrivals:3d} "
                    f"threads={threads(pid):3d} load={loadavg()}",
                    flush=True,
                )
            last_t, last_cpu = now, cpu

    await asyncio.gather(monitor(), *seats)
    wall = time.monotonic() - t0
    steps, tool, big = ms_list(tally.steps), ms_list(tally.tool_steps), ms_list(tally.big)
    return {
        "N": n,
        "steps": len(steps),
        "p50": percentile(steps, 50),
        "p95": percentile(steps, 95),
        "p99": percentile(steps, 99),
        "step_ms": steps,  # for --rounds: the Steps of every round pooled
        "tool_p95": percentile(tool, 95),
        "big_n": len(big),
        "big_p50": percentile(big, 50),
        "big_p95": percentile(big, 95),
        "reset_p95": percentile(tally.resets + tally.loads, 95),
        "cpu_pct": 100 * (cpu_seconds(pid) - cpu0) / wall,
        "rss_before": rss_before,
        "rss_idle": rss_idle,
        "mb_per_idle": (rss_idle - rss_before) / n,
        "rss_end": rss_mb(pid),
        "rss_max": max(samples, default=math.nan),
        "msgs_step": sum(m for m, _ in tally.wire) / max(len(tally.wire), 1),
        "kb_step": sum(b for _, b in tally.wire) / 1024 / max(len(tally.wire), 1),
        "errors": len(tally.errors),
        "first_error": tally.errors[0] if tally.errors else "",
        "arrivals": tally.arrivals,
        "load": f"{load0}->{loadavg()}",
    }


HEADER = (
    f"{'app':<10}{'gc':<8}{'N':>3}{'steps':>7}{'p50':>8}{'p95':>8}{'p99':>8}{'exec p95':>9}"
    f"{'1k p50':>8}{'1k p95':>8}{'cpu%':>6}{'RSS MB idle/end/max':>21}{'MB/sess':>8}"
    f"{'msg/St':>7}{'KB/St':>7}{'err':>5}  load 1m"
)


def row(app: str, gc_mode: str, r: dict[str, object]) -> str:
    def f(key: str, width: int, digits: int = 0) -> str:
        v = r[key]
        return (
            f"{'-':>{width}}"
            if isinstance(v, float) and math.isnan(v)
            else f"{v:>{width}.{digits}f}"
        )

    rss = f"{r['rss_idle']:.0f}/{r['rss_end']:.0f}/{r['rss_max']:.0f}"
    return (
        f"{app:<10}{gc_mode:<8}{r['N']:>3}{r['steps']:>7}{f('p50', 8)}{f('p95', 8)}{f('p99', 8)}"
        f"{f('tool_p95', 9)}{f('big_p50', 8)}{f('big_p95', 8)}{f('cpu_pct', 6)}{rss:>21}"
        f"{f('mb_per_idle', 8, 1)}{f('msgs_step', 7, 1)}{f('kb_step', 7, 1)}{r['errors']:>5}"
        f"  {r['load']}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--root",
        type=Path,
        action="append",
        help="a checkout to serve (default: this one); given twice, the two run cell by cell",
    )
    ap.add_argument("--app", default="floor,flowdebug", help="floor, flowdebug or floor,flowdebug")
    ap.add_argument("--clients", default="1,10,30", help="the N to run, comma-separated")
    ap.add_argument("--seconds", type=float, default=60, help="stepping time per cell")
    ap.add_argument("--minutes", type=float, default=0, help="one long run at the largest N")
    ap.add_argument(
        "--gc", default="default,off,freeze", help="default, off, freeze, freeze-off (a list)"
    )
    ap.add_argument(
        "--server-opt",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="another server option, e.g. runner.fastReruns=false",
    )
    ap.add_argument("--big", type=int, default=1000, help="messages of the big session (0: none)")
    ap.add_argument("--big-at", type=int, default=30, help="the N from which it joins")
    ap.add_argument("--think", type=float, nargs=2, default=(0.5, 1.5))
    ap.add_argument("--switch", type=float, default=0.3, help="chance to switch scenario")
    ap.add_argument("--churn", type=float, default=300, help="mean stay (s) in a long run")
    ap.add_argument("--every", type=float, default=30, help="seconds between long-run lines")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run each cell this many times, the checkouts in turn (A B, B A, A B ...), and "
        "print each checkout's Steps pooled over the rounds: one run's p95 moves by tens of "
        "ms from run to run on a shared machine",
    )
    ap.add_argument(
        "--presenter", action="store_true", help="every attendee turns presenter mode on first"
    )
    ap.add_argument("--json", type=Path, help="also append each row to this file (JSON lines)")
    ap.add_argument(
        "--trace-memory",
        type=Path,
        help="trace the servers' allocations (slow): every 2 minutes, what grew, in "
        "FILE-<checkout>-<app>.txt beside FILE",
    )
    ap.add_argument(
        "--gc-stats",
        action="store_true",
        help="time every collection the server runs (by generation) and print the totals "
        "under each row",
    )
    args = ap.parse_args()
    unknown = sorted(set(args.app.split(",")) - {"floor", "flowdebug"})
    if unknown:  # any other name ran the app without its 1,000-message seat, unannounced
        ap.error(f"--app {','.join(unknown)}: use floor, flowdebug or floor,flowdebug")
    global TRACE_MEMORY, GC_STATS
    TRACE_MEMORY, GC_STATS = args.trace_memory, args.gc_stats
    roots = [r.resolve() for r in args.root or [ROOT]]
    counts = [int(c) for c in args.clients.split(",")]
    long_run = args.minutes > 0
    if long_run:
        counts = [max(counts)]
    seconds = args.minutes * 60 if long_run else args.seconds
    print(
        f"checkouts {', '.join(map(str, roots))}; {seconds:.0f} s a run; think "
        f"{args.think[0]}-{args.think[1]} s; {os.cpu_count()} cores; load average now "
        f"{loadavg()} (a shared machine: noisy)",
        flush=True,
    )
    print(f"{'code':<9}{HEADER}", flush=True)
    for gc_mode in args.gc.split(","):
        for app in args.app.split(","):
            for n in counts:
                runs: dict[Path, list[dict[str, object]]] = {root: [] for root in roots}
                for k in range(args.rounds):
                    # back to back, the order turned each round: the machine's load drifts
                    for root in roots if k % 2 == 0 else roots[::-1]:
                        r = cell(root, app, gc_mode, n, seconds, long_run, args)
                        runs[root].append(r)
                        print(f"{root.name[:8]:<9}{row(app, gc_mode, r)}", flush=True)
                        if r["first_error"]:
                            print(f"  first error: {r['first_error']}", flush=True)
                        if args.json:
                            with args.json.open("a") as out:
                                record = {"code": str(root), "app": app, "gc": gc_mode, **r}
                                record.pop("step_ms")
                                out.write(json.dumps(record) + "\n")
                if args.rounds > 1:
                    for root, done in runs.items():
                        print(f"{root.name[:8]:<9}{pooled(done)}", flush=True)


def pooled(runs: list[dict[str, object]]) -> str:
    """One checkout's rounds in one line: the Steps that run no tool pooled, and the spread."""
    steps = [ms for r in runs for ms in cast(list[float], r["step_ms"])]
    each = "/".join(f"{r['p95']:.0f}" for r in runs)
    cpu = sum(cast(float, r["cpu_pct"]) for r in runs) / len(runs)
    return (
        f"pooled over {len(runs)} rounds: {len(steps)} steps, p50 "
        f"{percentile(steps, 50):.0f}, p95 {percentile(steps, 95):.0f}, p99 "
        f"{percentile(steps, 99):.0f} ms; cpu% {cpu:.0f} (mean); p95 by round {each}"
    )


def cell(
    root: Path, app: str, gc_mode: str, n: int, seconds: float, long_run: bool, ns: Any
) -> dict[str, object]:
    """One run: a fresh server of ``app`` from ``root`` under ``n`` attendees."""
    # serve.py: the app with the room's poll route (a checkout before it has app.py alone)
    entry = root / "serve.py" if (root / "serve.py").exists() else root / "app.py"
    path = BENCH / "floor_app.py" if app == "floor" else entry
    with tempfile.TemporaryDirectory(prefix="fd-bench-") as tmp:
        db = Path(tmp) / "sessions.db"
        big_id = None
        if app == "flowdebug" and ns.big and (long_run or n >= ns.big_at):
            big_id = seed(root, db, ns.big)
        churn = ns.churn if long_run else 0.0
        every = ns.every if long_run else 1.0
        with server(root, path, gc_mode, ns.server_opt, db) as (port, pid):
            r = asyncio.run(
                measure(port, pid, n, big_id, ns, seconds, churn, every, app != "floor", long_run)
            )
            stats = db.with_name("gc-stats.json")
            time.sleep(2.5 if GC_STATS else 0)  # the server writes its totals every 2 s
        if GC_STATS and stats.exists():
            totals = json.loads(stats.read_text())
            print(
                "  collections (count, s, objects freed) by generation: "
                + "; ".join(f"gen{g} {c} / {t:.2f} s / {k}" for g, (c, t, k) in totals.items())
                + f" — {sum(t for _, t, _ in totals.values()) / seconds * 100:.1f} % of the run",
                flush=True,
            )
        return r


if __name__ == "__main__":
    main()
