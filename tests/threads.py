"""The threads a call leaves behind: those alive after it that were not alive before it.

Counting ``threading.active_count()`` before and after is not that: a thread an earlier test
started (a server's worker, a reaper's last round) may end during the call and hide one the
call left, or fail a call that left none (CI saw 3 == 4 on a call that left nothing)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_thread_left(grace: float = 1.0) -> Iterator[None]:
    """Fail when a thread started inside the block is still alive ``grace`` seconds after it:
    long enough for a finished reader to be scheduled out, far shorter than any wait the
    code could be stuck in."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + grace
    while True:
        left = [t.name for t in threading.enumerate() if t not in before and t.is_alive()]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert left == [], f"threads left running: {left}"
