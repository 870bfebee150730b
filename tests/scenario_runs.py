"""Sample scenarios run to their end once per test process, for the tests that only read the
finished session: the weather scenario waits 1 s for Tokyo, and mcp_weather starts the sample
MCP server (about 1.5 s of CPU) and waits for its Tokyo call to time out. A test that steps,
edits, undoes or forks makes its own session."""

from __future__ import annotations

from functools import cache

from flowdebug.engine.execution.faults import parse_fault
from flowdebug.engine.session.debugger import Session


@cache
def ran(scenario: str, fault: str | None = None) -> Session:
    """``scenario`` run to its end (``fault`` injected when given), shared: never change it."""
    s = Session.from_scenario(scenario)
    if fault:
        s.set_faults([parse_fault(fault)])
    s.run()
    return s
