"""Server-side time of the Protocols page's content for long histories, all five protocols.

For histories of 20, 200 and 1,000 messages it times ``step_view.step_views`` three ways:
cold (nothing cached), after a step (the previous state's payloads were shown one step ago,
the new state's are computed) and warm (a rerun of the same step: everything cached).

    .venv/bin/python bench/step_view_latency.py [--repeat 5] [--page]

``--page`` also times a whole run of ``pages/protocols.py`` under Streamlit's AppTest after
a step (the page's own rendering included: payload texts, diffs, five columns per tab).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from codec_throughput import history

from flowdebug import protocols
from flowdebug.engine.session.debugger import Session
from flowdebug.views import protocols as step_view

NAMES = list(protocols.PROTOCOLS)


def session_at(n: int) -> tuple[Session, Session]:
    """A weather session whose history has ``n`` messages, and one a step later (the model's
    turn and the tool results appended: n + 2 messages)."""
    conv = history(n + 2)
    before = Session.from_scenario("weather")
    before.state.conversation = conv.model_copy(update={"messages": conv.messages[:n]})
    after = before.clone()
    after.undo_stack.append(before.state.snapshot())
    after.state.conversation = conv
    return before, after


def ms(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def page_ms(n: int, repeat: int) -> float:
    from streamlit.testing.v1 import AppTest

    page = Path(__file__).resolve().parent.parent / "pages" / "protocols.py"
    runs = []
    for _ in range(repeat):
        before, after = session_at(n)
        step_view.clear_cache()
        at = AppTest.from_file(str(page), default_timeout=120)
        at.session_state.fd_session = before
        at.run()
        at.session_state.fd_session = after
        runs.append(ms(at.run))
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--page", action="store_true", help="also time the whole page")
    args = parser.parse_args()
    header = f"{'messages':>8} {'cold ms':>9} {'step ms':>9} {'warm ms':>9}"
    print(header + (f" {'page ms':>9}" if args.page else ""))
    for n in (20, 200, 1000):
        cold, stepped, warm = [], [], []
        for _ in range(args.repeat):
            before, after = session_at(n)
            step_view.clear_cache()
            cold.append(ms(lambda b=before: step_view.step_views(b, NAMES)))
            stepped.append(ms(lambda a=after: step_view.step_views(a, NAMES)))
            warm.append(ms(lambda a=after: step_view.step_views(a, NAMES)))
        line = (
            f"{n:>8} {statistics.median(cold):>9.1f} {statistics.median(stepped):>9.1f} "
            f"{statistics.median(warm):>9.1f}"
        )
        if args.page:
            line += f" {page_ms(n, args.repeat):>9.1f}"
        print(line)


if __name__ == "__main__":
    main()
