"""From Chromium: the time from a Step click until the graphs have settled, at 20, 200 and
1,000 messages (issue 12: at most 300 ms at 200 messages, 600 ms at 1,000).

Serves the app (``tests/e2e/app_server.py``: ``streamlit run`` on a free port) with a sessions
database holding one saved session per size (``bench/seed_session.py``: the runaway scenario,
every phase without a slow tool), opens each by its link (``?session=ID``) in Debian's
Chromium at 1600x1000, and presses Step several times. A press is timed in the page: from the
click to the last DOM change in the main area, once Streamlit's status widget is gone and
nothing has changed for 100 ms, and the drawings (every SVG in the main area, whatever draws
them) differ from before the click: the graphs have settled.

    .venv/bin/python bench/browser_step.py [--steps 6] [--sizes 20,200,1000]
    .venv/bin/python bench/browser_step.py --root /tmp/wt-base     # another checkout
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
QUIET_MS = 100

# Click Step and resolve with the ms from the click to the last mutation of the main area,
# when the status widget is gone and nothing has moved for QUIET_MS.
MEASURE = """
([quiet, timeout]) => new Promise((resolve) => {
  const main = document.querySelector("[data-testid='stMain']") || document.body;
  const button = document.querySelector(".st-key-step button");
  if (!button || button.disabled) return resolve(-1);
  // The drawings' text: a Step always changes it (new arrows, the lit step moves).
  const drawn = () => Array.from(main.querySelectorAll("svg"), (s) => s.textContent).join("|");
  const before = drawn();
  let last = 0;
  const seen = new MutationObserver(() => { last = performance.now(); });
  seen.observe(main, {subtree: true, childList: true, attributes: true, characterData: true});
  const t0 = performance.now();
  button.click();
  const check = () => {
    const now = performance.now();
    const busy = document.querySelector("[data-testid='stStatusWidget']");
    if (last && !busy && now - last >= quiet && drawn() !== before) {
      seen.disconnect();
      return resolve(last - t0);
    }
    if (now - t0 > timeout) { seen.disconnect(); return resolve(-2); }
    setTimeout(check, 5);
  };
  setTimeout(check, 5);
})
"""


def seed_db(db: Path, sizes: list[int]) -> dict[int, str]:
    """One saved session per size in ``db``: size → session id."""
    from seed_session import long_session

    from flowdebug.store.sessions import open_store

    ids = {}
    with open_store(str(db)) as store:
        for n in sizes:
            session = long_session(n)
            store.save(session.state, name=f"bench {n} messages")
            ids[n] = session.state.id
    return ids


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--root", type=Path, default=BENCH.parent, help="the checkout to serve")
    ap.add_argument("--sizes", default="20,200,1000")
    ap.add_argument("--steps", type=int, default=6, help="Steps timed per size")
    ap.add_argument("--width", type=int, default=1600)
    ap.add_argument("--height", type=int, default=1000)
    args = ap.parse_args()
    sys.path.insert(0, str(args.root))
    sys.path.insert(1, str(BENCH))
    from playwright.sync_api import sync_playwright
    from procstat import loadavg

    from tests.e2e.app_server import CHROMIUM, FLAGS, app_server, wait_idle

    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"checkout {args.root}; Chromium {args.width}x{args.height}; load {loadavg()}")
    print(f"{'messages':>9}{'steps':>7}{'median ms':>11}{'max ms':>8}  all (ms)        load 1m")
    with tempfile.TemporaryDirectory(prefix="fd-browser-") as tmp:
        db = Path(tmp) / "sessions.db"
        ids = seed_db(db, sizes)
        with app_server(db) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
            for n in sizes:
                page = browser.new_page(viewport={"width": args.width, "height": args.height})
                page.goto(f"{url}/?session={ids[n]}")
                page.locator(".st-key-step button").first.wait_for(timeout=60_000)
                wait_idle(page)
                times = []
                for _ in range(args.steps + 1):
                    ms = page.evaluate(MEASURE, [QUIET_MS, 60_000])
                    if ms < 0:
                        why = "disabled" if ms == -1 else "timeout"
                        print(f"  {n}: Step could not be timed ({why})")
                        break
                    times.append(ms)
                    page.wait_for_timeout(300)
                times = times[1:]  # the first press also warms the page's caches
                if times:
                    shown = " ".join(f"{t:.0f}" for t in times)
                    print(
                        f"{n:>9}{len(times):>7}{statistics.median(times):>11.0f}"
                        f"{max(times):>8.0f}  {shown:<15} {loadavg()}",
                        flush=True,
                    )
                page.close()
            browser.close()


if __name__ == "__main__":
    main()
