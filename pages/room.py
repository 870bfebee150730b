"""Room: follow an instructor's session live (?room=CODE), read-only; predict the next event;
try the step yourself in a copy of your own."""

import streamlit as st

from flowdebug.store.rooms import RoomClosed, normal_code
from flowdebug.views.aligned import WINDOW
from ui import common, rooms
from ui import picture as teaching

common.sidebar()
st.title("👥 Room")
typed = st.query_params.get("room") or st.session_state.get(rooms.CODE)
if not typed:
    with st.form("fd_room_join", border=False):
        typed = st.text_input("Room code (on the instructor's screen)", key="fd_room_typed")
        if not st.form_submit_button("Follow") or not typed:
            st.stop()
try:
    code = normal_code(typed)
except RoomClosed as e:
    st.error(common.literal(e))
    st.stop()
st.session_state[rooms.CODE] = code
st.query_params["room"] = code

try:
    state, pulse = rooms.rooms().follow(code)
except RoomClosed as e:
    st.warning(
        f"{common.literal(e)}. This page no longer follows it; your own copies are on the "
        "Sessions page.",
        icon="🚪",
    )
    st.session_state.pop(rooms.CODE, None)
    st.stop()
chosen = common.chosen_protocols()
head, act = st.columns([4, 1])
with head:  # the heading and the status line, redrawn from the browser at each Step
    rooms.follow_pulse(code, state, pulse.key, chosen)
if act.button("🧪 Try it yourself", key="fd_room_try", help="A copy of this step, your own"):
    rooms.try_it(code)
common.show_error()
rooms.question_for_attendee(code, state)
teaching.draw_picture(state, chosen, WINDOW, upto=pulse.beat)
st.caption("Read-only: this page follows the instructor. Try it yourself to step on alone.")
