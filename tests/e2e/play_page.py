"""A page for tests/e2e/test_play.py (run alone with ``streamlit run``): the Play controls and
the story panel over this browser session's debugger session, with a plain graph the Play
fragment grows event by event and whose text says how many events it draws (the Debugger's
aligned view is tested on the Debugger itself).

``?fault=SPEC`` starts the weather scenario with that fault injected."""

import streamlit as st

from flowdebug.engine.execution.faults import parse_fault
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.tracing.trace import lanes, sequence
from flowdebug.render import to_dot
from ui import common, play

st.set_page_config(page_title="flowdebug · play", layout="wide")
NAMES = ["anthropic", "openai-chat", "gemini", "mcp"]

fault = st.query_params.get("fault")
if fault and "fd_session" not in st.session_state:
    session = Session.from_scenario("weather")
    session.set_faults([parse_fault(fault)])
    common.set_session(session)

play.page_css()
bar = st.container(key="fd_controls", horizontal=True, vertical_alignment="center")
slot = st.container(key="play_graph")


def stage(upto: int | None) -> None:
    events = common.session().state.events
    shown = events if upto is None else [e for e in events if e.seq <= upto]
    with slot:
        st.text(f"revealed {len(shown)} of {len(events)}")
        if shown:
            st.graphviz_chart(to_dot(sequence(shown, "anthropic"), lanes("anthropic"), "Anthropic"))


with bar:
    play.play_controls(common.session().state, NAMES, stage=stage)
with bar:
    play.pace_control()  # the Debugger draws it above its bar, outside the Step's fragment
with bar:
    play.story_panel(common.session().state, NAMES)
