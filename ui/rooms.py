"""Rooms, the pages' side: the follow page's pieces and the instructor's room panel.

A helper of the pages, not a page. The library keeps the rooms (:mod:`flowdebug.store.rooms`)
and makes the questions (:mod:`flowdebug.views.predictions`); this draws them.
"""

from __future__ import annotations

import json
import uuid
from importlib import resources
from urllib.parse import urlencode

import streamlit as st

from flowdebug.engine.session.session_state import SessionState
from flowdebug.errors import FlowdebugError
from flowdebug.store.rooms import Question, RoomClosed, Rooms
from flowdebug.views import predictions, room_pulse
from flowdebug.views.debugger import refusals
from ui import common, flash
from ui.browser import owner

ROOM_PAGE = "pages/room.py"
CODE = "fd_room_code"  # the room this tab follows (or came from, after a fork)
FORKED = "fd_room_fork"  # the id of this tab's own try, forked from the room
TALLY_EVERY = 1.0  # seconds between the instructor's tally refreshes


def rooms() -> Rooms:
    return Rooms(common.store())


def attendee() -> str:
    """Who answers: this browser's secret on a shared server, else one id per tab."""
    return owner() or st.session_state.setdefault("fd_attendee", uuid.uuid4().hex)


def link(code: str) -> str:
    """The follow page's address for ``code``, on the server this page came from."""
    base = (st.context.url or "").split("?")[0].rstrip("/")
    base = base.rsplit("/", 1)[0] if base.count("/") > 2 else base
    return f"{base}/room?room={code}"


# -- the attendee ---------------------------------------------------------------------------------

# The follower's poll: a component that asks the route of views/room_pulse.py, not a script run.
# Its script (2 KB) travels inline with the page.
_PULSE = st.components.v2.component(
    "flowdebug.room_pulse",
    html="",
    css=".fdr-heading {font-size: 1.5rem; font-weight: 600; padding: 0.5rem 0}"
    " .fdr-status {padding: 0.75rem 1rem; border-radius: 0.5rem;"
    " background: rgba(28, 131, 225, 0.1); margin: 0.25rem 0}",
    js=(resources.files("flowdebug.views") / "pulse" / "pulse.js").read_text(encoding="utf-8"),
)
CLOSED_LINE = "The room was closed: this page no longer follows it."
# app.py run alone (not serve.py) has no poll route: Streamlit answers its page instead.
NO_ROUTE_LINE = (
    "This server does not serve the room's updates: start it with `make run` (serve.py). "
    "Reload the page to see the instructor's latest step."
)


def _moved() -> None:
    """The question changed or the room closed: the run this asks for redraws the page."""


def follow_pulse(code: str, state: SessionState, seen: tuple[int, int], chosen: list[str]) -> None:
    """The step heading and the status line of room ``code``'s ``state`` (drawn at the pulse
    ``seen``, for the vendors ``chosen``), kept current from the browser: the component polls
    the room's pulse and, once it moved, fetches the follow payload and redraws them and the
    picture itself; a script run only when the question changes or the room closes."""
    refused = refusals(state.conversation, state.events, chosen)
    query = urlencode({"follow": 1, "vendors": ",".join(chosen)}, safe=",")
    data = {
        "url": (url := room_pulse.url(code, st.get_option("server.baseUrlPath"))),
        "follow": f"{url}?{query}",
        "seen": list(seen),
        "every": room_pulse.POLL,
        "heading": room_pulse.heading(code, state),
        "status": room_pulse.status(state, chosen, refused),
        "explained": room_pulse.phase_explained(state, chosen),
        "question": room_pulse.question_revision(rooms(), state.id),
        "closed": CLOSED_LINE,
        "noRoute": NO_ROUTE_LINE,
    }
    _PULSE(
        data=json.dumps(data).encode(),
        key="fd_room_pulse",
        height="content",
        on_moved_change=_moved,
    )


def question_for_attendee(code: str, state: SessionState) -> None:
    """The room's last question: a choice to pick while it is open, the mark once revealed."""
    q = predictions.current(rooms(), state.id)
    if q is None:
        return
    mine = rooms().my_answer(state.id, q.index, attendee())
    with st.container(border=True, key="fd_room_question"):
        st.markdown(f"**Predict:** {common.literal(q.prompt)}")
        if q.closed:
            right = ", ".join(q.answers or ())
            if mine is None:
                st.info(f"The answer: {common.literal(right)}")
            elif mine in (q.answers or ()):
                st.success(f"Right: {common.literal(mine)}", icon="✅")
            else:
                st.error(
                    f"You said {common.literal(mine)}; the answer: {common.literal(right)}",
                    icon="❌",
                )
            return
        pick = st.radio(
            "Your prediction",
            q.choices,
            index=q.choices.index(mine) if mine in q.choices else None,
            key=f"fd_room_pick_{state.id}_{q.index}",
        )
        if st.button("Answer", key=f"fd_room_answer_{q.index}", disabled=pick is None):
            try:
                rooms().answer(code, q.index, attendee(), str(pick))
            except FlowdebugError as e:
                st.error(common.literal(e))
            else:
                st.toast("Answer sent")
                mine = str(pick)  # no run follows an answer: the page draws it now
        if mine is not None:
            st.caption(f"Your answer: {common.literal(mine)} (you can change it until the Step)")


def try_it(code: str) -> None:
    """Fork the followed session at its current step into this browser's own, and open it."""
    try:
        mine = rooms().fork(code, owner=owner())
    except FlowdebugError as e:
        flash.error(f"could not make your copy: {e}")
        return
    common.open_saved(mine.id)  # with its scenario's player, as the Sessions page opens one
    st.session_state[FORKED] = mine.id
    st.switch_page("pages/debugger.py")


# -- the instructor -------------------------------------------------------------------------------


def _tally(q: Question, session_id: str) -> None:
    counts = rooms().tally(session_id, q.index)
    st.markdown(f"**{common.literal(q.prompt)}** · {sum(counts.values())} answers")
    st.bar_chart({"answers": counts}, horizontal=True, height=40 + 32 * len(counts))
    if q.closed:
        st.success(f"Answer: {common.literal(', '.join(q.answers or ()))}", icon="✅")


def _live(code: str) -> None:
    """Every second, what the room should know that no save says: the question's reveal once
    the session moved on, Play's beat; and the tally as answers come in."""
    state = common.session().state
    box = rooms()
    try:
        predictions.settle(box, state)
        from ui import play  # the Debugger's Play: its beat is this tab's

        upto = play.play_upto()
        if st.session_state.get("fd_room_beat", (code, None)) != (code, upto):
            box.beat(code, upto, owner=owner())  # a write only when Play moved
            st.session_state.fd_room_beat = (code, upto)
    except RoomClosed:
        return
    q = predictions.current(box, state.id)
    if q is not None:
        _tally(q, state.id)


def _ask(code: str, state: SessionState, kind: str, vendor: str | None) -> None:
    try:
        shown = common.chosen_protocols()
        rooms().ask(code, predictions.make(kind, state, shown, vendor), owner=owner())
    except FlowdebugError as e:
        flash.error(f"could not ask: {e}")


def host_panel() -> None:
    """The instructor's room: open it, its code and link (large in presenter mode), a question
    to ask before the next Step and its tally, close it."""
    state = common.session().state
    box = rooms()
    room = box.of_session(state.id)
    with st.expander("👥 Room: attendees follow this session", expanded=room is not None):
        if room is None:
            st.caption("Attendees open a link and see each Step here as it happens.")
            if st.button("Open a room", key="fd_room_open"):
                try:
                    box.open(state.id, owner=owner())
                except FlowdebugError as e:
                    st.error(common.literal(e))
                else:
                    st.rerun()
            return
        size = "#" if common.presenter() else "###"
        st.markdown(f"{size} Room code: `{room.code}`")
        st.code(link(room.code), language=None)
        cols = st.columns([2, 2, 1, 1])
        kind = cols[0].selectbox(
            "Ask before the next Step",
            list(predictions.KINDS),
            format_func=lambda k: predictions.KINDS[k].format(vendor="a vendor"),
            key="fd_room_kind",
        )
        shown = common.chosen_protocols()
        vendor = cols[1].selectbox(
            "Vendor (result field)", shown, key="fd_room_vendor", disabled=kind != "result_field"
        )
        cols[2].button(
            "Ask", key="fd_room_ask", on_click=_ask, args=(room.code, state, kind, vendor)
        )
        if cols[3].button("Close room", key="fd_room_close"):
            box.close(room.code, owner=owner())
            st.rerun()
        st.fragment(_live, run_every=TALLY_EVERY)(room.code)
        if box.questions(state.id):
            st.download_button(
                "Download the trace with its questions",
                data=predictions.trace_with_questions(box, state),
                file_name=f"{state.scenario or state.id}.room.trace.json",
                mime="application/json",
                key="fd_room_export",
                on_click="ignore",
            )


def back_to_room(code: str) -> None:
    """On the Debugger, for an attendee trying the room's step alone: the way back."""
    if st.button(f"⬅ Back to the room {code}", key="fd_room_back", type="primary"):
        st.query_params.clear()
        st.switch_page(ROOM_PAGE, query_params={"room": code})


def after_debugger() -> None:
    """The Debugger's hook: an attendee's way back to the room, else the instructor's room."""
    code = st.session_state.get(CODE)
    if code and st.session_state.get(FORKED) == common.session().state.id:
        back_to_room(code)
    else:
        host_panel()
