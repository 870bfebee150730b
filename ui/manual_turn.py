"""The model's turn written by the person who plays it (the manual player), in the Debugger.

A helper of the pages, not a page: app.py lists the pages st.navigation runs.
"""

from __future__ import annotations

import json

import streamlit as st

from flowdebug.engine.session.debugger import Session
from flowdebug.errors import FlowdebugError
from flowdebug.model import Message
from flowdebug.players import ManualPlayer
from ui import common


def _keep_manual_turn() -> None:
    common.session().set_settings(manual_turn=st.session_state.manual_turn)


def manual_turn(s: Session) -> None:
    """The box for the model's next turn, when the person plays the model and a request is
    next."""
    state = s.state
    if (
        isinstance(s.player, ManualPlayer)
        and state.next_phase == "request"
        and state.status == "ready"
    ):
        with st.container(border=True):
            st.markdown(
                "**You play the model.** Write its next turn as a canonical assistant "
                "message (text parts and/or tool_call parts), then Step."
            )
            example = {
                "role": "assistant",
                "parts": [
                    {
                        "kind": "tool_call",
                        "id": "call_m1",
                        "name": (s.state.toolset.names or ["x"])[0],
                        "arguments": {},
                    }
                ],
            }
            # The turn last typed for this session stays (after an Undo, a Step, a reload);
            # the template only until one is typed.
            if st.session_state.get("fd_manual_for") != state.id or (
                "manual_turn" not in st.session_state
            ):
                st.session_state.manual_turn = state.manual_turn or json.dumps(example, indent=2)
                st.session_state.fd_manual_for = state.id
            text = st.text_area(
                "Model turn (JSON)", key="manual_turn", height=180, on_change=_keep_manual_turn
            )
            if st.button("Queue this turn", key="manual_queue"):
                try:
                    s.set_settings(manual_turn=text)
                    s.player.write(Message.model_validate_json(text))
                    st.success("Queued: press Step.")
                except (ValueError, FlowdebugError) as err:
                    st.error(f"Not queued: {common.literal(err)}")
