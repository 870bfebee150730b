"""Where a Run stops, as the Debugger sets it: before named tools, after an error result, at a
round.

A helper of the pages, not a page: app.py lists the pages st.navigation runs.
"""

from __future__ import annotations

import streamlit as st

from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.session_state import Breakpoint


def breakpoints(s: Session) -> None:
    """The breakpoint widgets, started from the session's breakpoints; a change is saved."""
    state = s.state
    tools = s.state.toolset.names
    before = st.multiselect(
        "Before these tools run",
        tools,
        key="bp_tools",
        default=[b.tool for b in state.breakpoints if b.kind == "tool" and b.tool in tools],
    )
    on_error = st.checkbox(
        "After an error result",
        key="bp_error",
        value=any(b.kind == "error" for b in state.breakpoints),
    )
    at_round = st.number_input(
        "At round (0: none)",
        0,
        100,
        key="bp_round",
        value=next((b.round for b in state.breakpoints if b.kind == "round"), 0),
    )
    wanted = [Breakpoint(kind="tool", tool=t) for t in before]
    if on_error:
        wanted.append(Breakpoint(kind="error"))
    if at_round:
        wanted.append(Breakpoint(kind="round", round=int(at_round)))
    if wanted != state.breakpoints:
        s.set_breakpoints(wanted)
