"""`streamlit run app.py` (or another script) on a free port, for the browser tests, and
Chromium's settings."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def app_server(db: Path, script: Path | None = None, **env: str) -> Iterator[str]:
    """The app's URL, served with its sessions in ``db`` until the block ends; ``script``: a
    page to serve alone instead of app.py (a test's own page)."""
    port = free_port()
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "FLOWDEBUG_DB": str(db), **env}
    # The server's output goes to a file: an unread pipe fills up and blocks the server.
    log = db.parent / f"streamlit-{port}.log"
    out = log.open("wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(script or ROOT / "app.py"),
            "--server.port",
            str(port),
            "--server.headless",
            "true",
            "--server.address",
            "127.0.0.1",
            "--browser.gatherUsageStats",
            "false",
            # Others edit the checkout while tests run: a "File change" banner never settles.
            "--server.fileWatcherType",
            "none",
        ],
        cwd=ROOT,
        env=environ,
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.3)
        else:
            raise RuntimeError(
                "streamlit did not become healthy: " + log.read_text(errors="replace")[-2000:]
            )
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        out.close()


# What wait_idle reads in the page. Streamlit marks its root with the script's state
# (data-test-script-state: initial, running, notRunning, ...); observers set on the page's
# document once count the changes of that state and time the last change of the content.
_WATCH = """() => {
  const w = window.__fdIdle ||= {changes: 0, mark: 0, called: performance.now(),
                                 content: performance.now(), app: null};
  const app = document.querySelector('[data-testid="stApp"]');
  if (app && w.app !== app) {
    w.app = app;
    new MutationObserver(() => { w.changes += 1; })
      .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  }
  if (!w.body && document.body) {
    w.body = true;
    new MutationObserver(() => { w.content = performance.now(); })
      .observe(document.body, {subtree: true, childList: true, characterData: true});
  }
  return w;
}"""
_CALLED = (
    "() => { const w = (" + _WATCH + ")(); w.called = performance.now(); w.mark = w.changes; }"
)
# Idle: a run began since the call and is over, or 500 ms went by (time for the run an action
# asked for to start, when none began yet); the script not running; no status widget or
# loading skeleton; and the content unchanged for 200 ms (what a finished run sent is drawn).
_IDLE = (
    "() => { const w = ("
    + _WATCH
    + """)(), now = performance.now();
  const app = document.querySelector('[data-testid="stApp"]');
  return (w.changes > w.mark || now - w.called >= 500) && now - w.content >= 200
    && app?.dataset.testScriptState === 'notRunning'
    && !document.querySelector('[data-testid="stStatusWidget"]')
    && !document.querySelector('[data-testid="stSkeleton"]');
}"""
)


def wait_idle(page) -> None:
    """Until the script run the last action started is over and drawn: Streamlit says no
    script runs (once one began since this call, or after 500 ms for it to begin), no element
    is a loading skeleton, and the page's content has not changed for 200 ms."""
    page.evaluate(_CALLED)
    page.wait_for_function(_IDLE, polling=50, timeout=30_000)
