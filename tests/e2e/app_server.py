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


def wait_idle(page) -> None:
    """Until the script run is over and no element is still a loading skeleton."""
    page.wait_for_timeout(300)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " && !document.querySelector('[data-testid=\"stSkeleton\"]')",
        timeout=30_000,
    )
    page.wait_for_timeout(500)
