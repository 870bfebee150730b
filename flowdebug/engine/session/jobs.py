"""Long work off the UI thread: step a clone of the session in the background.

A live model call or a slow handler can take seconds. The app starts a :class:`Job`, shows
progress while it runs, and adopts the clone's state when it finishes; a cancelled job is
simply never adopted, so the session is exactly as it was, and its clone stops stepping
(the phase under way finishes; a cancelled Run does not go on).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from flowdebug.engine.session.debugger import Session


class Job:
    """Runs ``action(clone)`` in a daemon thread on a clone of ``session``."""

    def __init__(self, session: Session, action: Callable[[Session], Any], label: str = ""):
        self.session = session
        self.clone = session.clone()
        self.label = label
        self.result: Any = None
        self.error: BaseException | None = None
        self.started = time.monotonic()
        self.cancelled = False
        self._thread = threading.Thread(target=self._run, args=(action,), daemon=True)
        self._thread.start()

    def _run(self, action: Callable[[Session], Any]) -> None:
        try:
            self.result = action(self.clone)
        except BaseException as e:  # reported to the person, never raised in the thread
            self.error = e

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return self.done

    def cancel(self) -> None:
        """Forget the job: its clone is never adopted and takes no further step (the thread
        ends with the phase under way, which its handlers' timeouts bound)."""
        self.cancelled = True
        self.clone.cancel()

    def finish(self) -> Any:
        """Adopt the clone into the session when it succeeded; re-raise its error if not."""
        if not self.done:
            raise RuntimeError("the job is still running")
        if self.cancelled:
            return None
        if self.error is not None:
            raise self.error
        self.session.adopt(self.clone)
        return self.result
