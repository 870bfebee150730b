"""Where one Step's server time goes: cProfile over Debugger page runs that each press Step.

The page runs in Streamlit's AppTest (the same script run the server does for a click, without
the websocket), on a session whose history holds about 20 or 1,000 messages (the ``runaway``
scenario with its round cap lifted: every phase runs, no tool waits). Prints the total per
Step and the functions that took the most time, by their own time and with what they call.

    PYTHONPATH=. .venv/bin/python bench/step_profile.py [--messages 20,1000] [--steps 12]
    PYTHONPATH=/tmp/wt-base .venv/bin/python bench/step_profile.py --root /tmp/wt-base
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
# The script runs in Streamlit's script thread and a Step in the page's background job: each
# thread started while profiling gets its own profile, merged at the end.
PROFILES: list[cProfile.Profile] = []
PROFILING = threading.Event()
_run = threading.Thread.run


def _profiled_run(self: threading.Thread) -> None:
    if not PROFILING.is_set():
        return _run(self)
    profile = cProfile.Profile()
    PROFILES.append(profile)
    profile.enable()
    try:
        return _run(self)
    finally:
        profile.disable()


threading.Thread.run = _profiled_run  # type: ignore[method-assign]


def _one_script_cache() -> None:
    """A server compiles a page once; AppTest makes a new cache every run. Share one."""
    from streamlit.runtime.scriptrunner import script_cache

    shared = script_cache.ScriptCache()
    script_cache.ScriptCache = lambda: shared  # type: ignore[assignment,misc]
    import streamlit.testing.v1.app_test as app_test
    import streamlit.testing.v1.local_script_runner as local

    app_test.ScriptCache = local.ScriptCache = script_cache.ScriptCache  # type: ignore[misc]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--root", type=Path, default=BENCH.parent, help="the checkout to profile")
    ap.add_argument("--messages", default="20,1000")
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--presenter", action="store_true", help="presenter mode (its default layout)")
    args = ap.parse_args()
    sys.path.insert(0, str(args.root))
    sys.path.insert(1, str(BENCH))
    from seed_session import long_session
    from streamlit.testing.v1 import AppTest

    _one_script_cache()

    for n in (int(m) for m in args.messages.split(",")):
        session = long_session(n)
        at = AppTest.from_file(str(args.root / "pages" / "debugger.py"), default_timeout=300)
        at.session_state["fd_session"] = session
        if args.presenter:
            at.session_state["presenter"] = True
        at.run()
        at.button(key="step").click().run()  # warm: imports, caches
        PROFILES.clear()
        PROFILING.set()
        t = time.perf_counter()
        for _ in range(args.steps):
            at.button(key="step").click().run()
        PROFILING.clear()
        per_step = (time.perf_counter() - t) * 1000 / args.steps
        if at.exception:
            print(f"  the page raised: {at.exception[0].message}")
        messages = len(at.session_state["fd_session"].conversation.messages)
        how = f"AppTest, under cProfile, {len(PROFILES)} threads"
        print(f"\n== {messages} messages: {per_step:.1f} ms a Step ({how}) ==")
        for order in ("tottime", "cumulative"):
            out = io.StringIO()
            stats = pstats.Stats(*PROFILES, stream=out).strip_dirs().sort_stats(order)
            stats.print_stats(args.top)
            lines = out.getvalue().splitlines()
            start = next(i for i, line in enumerate(lines) if "ncalls" in line)
            print(f"-- top {args.top} by {order} (per {args.steps} Steps) --")
            print("\n".join(lines[start : start + args.top + 1]))


if __name__ == "__main__":
    main()
