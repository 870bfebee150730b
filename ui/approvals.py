"""A destructive call's Approve / Run edited / Reject, under the Debugger's control bar.

A helper of the pages, not a page: app.py lists the pages st.navigation runs.
"""

from __future__ import annotations

import json

import streamlit as st

from flowdebug.engine.execution.approval import Approve, Edit, Reject
from flowdebug.engine.session.debugger import Session
from flowdebug.errors import FlowdebugError
from flowdebug.views.debugger import edited_arguments
from ui import common


def decisions(s: Session) -> None:
    """Each destructive call of the last model turn still undecided, with its arguments to
    edit and the three decisions."""
    state = s.state
    waiting = [
        c
        for c in (s.conversation.messages[-1].tool_calls if s.conversation.messages else [])
        if c.id not in state.decisions
        and (entry := s.state.toolset.get(c.name)) is not None
        and entry.tool.destructive
    ]
    if state.status == "awaiting_approval" and waiting:
        st.warning("A destructive tool waits for your decision.")
        for call in s.conversation.messages[-1].tool_calls:
            entry = s.state.toolset.get(call.name)
            if call.id in state.decisions or entry is None or not entry.tool.destructive:
                continue
            with st.container(border=True):
                st.markdown(f"**{common.literal(call.name)}** {common.code_span(call.id)}")
                args = st.text_area(
                    "Arguments (edit to run with different ones)",
                    json.dumps(call.arguments, indent=2),
                    key=f"args_{call.id}",
                )
                tool = entry.tool
                edited, problems = edited_arguments(args, tool.parameters)
                if edited is not None and problems:
                    st.warning(
                        f"These arguments break {common.literal(call.name)}'s schema, so the "
                        "runtime will refuse the call as a validation error:\n"
                        + "\n".join(f"- {common.code_span(p)}" for p in problems)
                    )
                a, e, r = st.columns(3)
                if a.button("Approve", key=f"approve_{call.id}"):
                    s.decide(call.id, Approve())
                    st.rerun()
                if e.button("Run edited", key=f"edit_{call.id}"):
                    if edited is None:
                        st.error(f"Arguments not changed: {common.literal(problems[0])}")
                    else:
                        try:
                            s.decide(call.id, Edit(arguments=edited))
                            st.rerun()
                        except (ValueError, FlowdebugError) as err:
                            st.error(f"Arguments not changed: {common.literal(err)}")
                if r.button("Reject", key=f"reject_{call.id}"):
                    s.decide(call.id, Reject(reason="rejected in the debugger"))
                    st.rerun()
