"""``python -m streamlit`` with ``gc.freeze()`` after the app's imports (``--gc freeze``),
or with the server's memory traced (``--trace-memory``).

Imports every module of the packages named in ``$FLOWDEBUG_BENCH_PRELOAD`` (comma-separated,
e.g. ``flowdebug``) and the vendor SDKs they pull in, freezes what that built (a full
collection then skips it) when ``$FLOWDEBUG_GC`` is ``freeze``, and hands over to Streamlit's
own command line. This is what the few lines proposed for ``app.py`` do at its first run,
done here so the benchmark can measure any checkout, including one without them.

With ``$FLOWDEBUG_BENCH_GCSTATS`` set to a file, every collection Python runs is timed by
generation, and the totals are written there (``--gc-stats``).

With ``$FLOWDEBUG_BENCH_TRACEMALLOC`` set to a file, :mod:`tracemalloc` follows every
allocation from the start, and every ``$FLOWDEBUG_BENCH_TRACE_EVERY`` seconds (120) the
file gets the traced total and the source lines whose memory grew most since the first
snapshot (taken after the first interval): what a long run keeps.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import pkgutil
import sys
import threading
import time
import tracemalloc


def preload(packages: list[str]) -> int:
    """Import every module under ``packages``; how many were imported."""
    count = 0
    for name in packages:
        package = importlib.import_module(name)
        count += 1
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{name}."):
            if info.name.endswith(".__main__"):  # a command line: it would run, not load
                continue
            try:
                importlib.import_module(info.name)
                count += 1
            except Exception:  # a module that needs what this host lacks: not frozen, fine
                continue
    return count


def _trace(path: str, every: float) -> None:
    """Every ``every`` seconds, what grew since the first snapshot, appended to ``path``."""
    first = None
    started = time.monotonic()
    while True:
        time.sleep(every)
        snap = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(False, tracemalloc.__file__)]
        )
        total = sum(s.size for s in snap.statistics("filename")) / 2**20
        lines = [f"== {(time.monotonic() - started) / 60:.1f} min: traced {total:.1f} MB"]
        if first is None:
            first = snap
            top = snap.statistics("lineno")[:15]
            lines += [f"  {s.size / 2**20:7.2f} MB {s.count:8d} {s.traceback}" for s in top]
        else:
            grew = snap.compare_to(first, "lineno")[:20]
            lines += [
                f"  {d.size_diff / 2**20:+7.2f} MB ({d.size / 2**20:.2f}) {d.count_diff:+8d} "
                f"{d.traceback}"
                for d in grew
            ]
        with open(path, "a") as out:
            out.write("\n".join(lines) + "\n")


def _time_collections(path: str) -> None:
    """Time every collection Python runs in the server, by generation; the totals (count,
    seconds, objects collected) are written to ``path`` as JSON every 2 s, so the benchmark
    reads what a cell cost however the server ends."""
    totals = {g: [0, 0.0, 0] for g in range(3)}
    started: list[float] = []

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            entry = totals[info["generation"]]
            entry[0] += 1
            entry[1] += time.perf_counter() - started.pop()
            entry[2] += info.get("collected", 0)

    def write() -> None:
        while True:
            time.sleep(2)
            with open(path, "w") as out:
                json.dump({str(g): v for g, v in totals.items()}, out)

    gc.callbacks.append(callback)
    threading.Thread(target=write, daemon=True).start()


def main() -> None:
    if stats := os.environ.get("FLOWDEBUG_BENCH_GCSTATS"):
        _time_collections(stats)
    wanted = [p for p in os.environ.get("FLOWDEBUG_BENCH_PRELOAD", "").split(",") if p]
    if trace := os.environ.get("FLOWDEBUG_BENCH_TRACEMALLOC"):
        tracemalloc.start()
        every = float(os.environ.get("FLOWDEBUG_BENCH_TRACE_EVERY", "120"))
        threading.Thread(target=_trace, args=(trace, every), daemon=True).start()
    import streamlit.web.cli  # noqa: F401  (Streamlit's own modules are frozen too)

    preload(wanted)
    if os.environ.get("FLOWDEBUG_GC") == "freeze":
        gc.collect()
        gc.freeze()
    from streamlit.web.cli import main as streamlit_main

    sys.argv = ["streamlit", *sys.argv[1:]]
    streamlit_main(prog_name="streamlit")


if __name__ == "__main__":
    main()
