"""A tool call that sleeps past its deadline, timed out at once: the tests' clock for
handlers that wait cooperatively (``ToolContext.sleep``).

The weather scenario's Tokyo call sleeps 30 s under a 1 s timeout, so every test that runs its
execution step waited a second for an outcome that was certain when the handler began to
sleep: 160 tests and 160 s of ``make test-fast``. Under this clock a ``sleep`` that reaches
the call's deadline ends the runtime's wait right away, and everything after it happens as
on the wall clock: the runtime sees no result, abandons the call (``cancelled``), writes
"timeout after 1s", and the handler wakes to find itself abandoned. A handler that finishes
before its deadline, a code handler in its child process and an MCP server's own sleep are
on the wall clock as before.

``tests/conftest.py`` installs it for the whole run (module and session fixtures run
scenarios too); a test marked ``real_clock`` (the runtime's own, ``tests/engine/test_runtime.py``)
runs on the wall clock."""

from __future__ import annotations

import threading
import time

from flowdebug.engine.execution import runtime
from flowdebug.engine.execution.handler_io import ToolContext

_OVERSLEPT = "_tests_overslept"  # an Event on the context: its handler sleeps past the deadline
_POLL = 0.005
real = False  # True while a ``real_clock`` test runs


def _overslept(ctx: ToolContext) -> threading.Event:
    return ctx.__dict__.setdefault(_OVERSLEPT, threading.Event())


def install() -> None:
    """Put the cooperative sleep and the runtime's wait on this clock (once per process)."""
    sleep, wait = ToolContext.sleep, runtime._Job.wait
    assert wait.__qualname__ == "_Job.wait", "the runtime's wait moved: tests/clock.py follows it"

    def cooperative_sleep(self: ToolContext, seconds: float) -> bool:
        if not real and seconds >= self.remaining:
            _overslept(self).set()
        return sleep(self, seconds)

    def wait_for_the_job(self: runtime._Job) -> bool:
        if real:
            return wait(self)
        deadline = time.monotonic() + max(self.ctx.remaining, 0.0)
        overslept = _overslept(self.ctx)
        while not self.done.wait(min(_POLL, max(deadline - time.monotonic(), 0.0))):
            if overslept.is_set() or time.monotonic() >= deadline:
                return self.done.is_set()
        return True

    ToolContext.sleep = cooperative_sleep  # type: ignore[method-assign]
    runtime._Job.wait = wait_for_the_job  # type: ignore[method-assign]
