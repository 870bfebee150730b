"""AppTest (issue 33): the instructor opens a room on the Debugger, an attendee follows it on the
Room page (read-only), answers a prediction that the next Step reveals, forks the step and goes
back to the room. Each AppTest is one tab; ``fd_owner`` stands for a browser's cookie."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from flowdebug import hosting
from flowdebug.protocols import PROTOCOLS
from flowdebug.store.rooms import Rooms
from flowdebug.store.sessions import open_store
from flowdebug.views import predictions
from tests.app.markdown import shown

PAGES = Path(__file__).resolve().parents[2] / "pages"
TEACHER, ANN = "T" * 43, "A" * 43


@pytest.fixture(autouse=True)
def shared(monkeypatch):
    monkeypatch.setenv(hosting.SHARED_ENV, "1")


def tab(page: str, owner: str, **query: str) -> AppTest:
    app = AppTest.from_file(str(PAGES / page), default_timeout=60)
    app.session_state["fd_owner"] = owner
    for k, v in query.items():
        app.query_params[k] = v
    app.run()
    assert not app.exception, app.exception
    return app


PULSE = "flowdebug.room_pulse"


def follow_data(app: AppTest) -> dict[str, Any]:
    """What the page hands the follower's component: the heading, the status line, its poll."""
    [pulse] = [e for e in app.get("bidi_component") if e.proto.component_name == PULSE]
    return json.loads(pulse.proto.bytes)


def _teacher_with_room() -> tuple[AppTest, str]:
    teacher = tab("debugger.py", TEACHER)
    teacher.button(key="fd_room_open").click().run()
    assert not teacher.exception
    sid = teacher.session_state.fd_session.state.id
    room = Rooms(open_store()).of_session(sid)
    assert room is not None
    assert any(room.code in shown(m.value) for m in teacher.markdown)
    return teacher, room.code


def test_an_attendee_follows_the_instructors_step_read_only(tmp_path):
    teacher, code = _teacher_with_room()
    ann = tab("room.py", ANN, room=code.lower())
    drawn = follow_data(ann)
    assert drawn["heading"].startswith(f"Room {code} · ") and "step 0" in drawn["heading"]
    assert drawn["url"] == f"/_flowdebug/rooms/{code}"
    assert drawn["follow"] == f"{drawn['url']}?follow=1&vendors=" + ",".join(PROTOCOLS)
    assert drawn["question"] == ""
    for _ in range(2):
        teacher.button(key="step").click().run()
    ann.run()  # the pulse moved: the page draws the instructor's step 2
    assert "step 2" in follow_data(ann)["heading"]
    sid = teacher.session_state.fd_session.state.id
    assert ann.session_state.fd_session.state.id != sid  # the attendee never holds it
    assert open_store().info(sid).step == 2


def test_closing_the_room_stops_the_following_page_with_a_clear_line():
    teacher, code = _teacher_with_room()
    ann = tab("room.py", ANN, room=code)
    teacher.button(key="fd_room_close").click().run()
    ann.run()
    assert any("closed this room" in shown(w.value) for w in ann.warning)
    assert not [e for e in ann.get("bidi_component") if e.proto.component_name == PULSE]


def test_a_prediction_is_answered_tallied_and_revealed_by_the_next_step():
    teacher, code = _teacher_with_room()
    teacher.button(key="step").click().run()  # declaration: the model's turn is next
    teacher.selectbox(key="fd_room_kind").set_value("next_tool").run()
    teacher.button(key="fd_room_ask").click().run()
    ann = tab("room.py", ANN, room=code)
    ann.radio(key=next(r.key for r in ann.radio if r.key.startswith("fd_room_pick"))).set_value(
        "get_weather"
    ).run()
    ann.button(key="fd_room_answer_0").click().run()
    sid = teacher.session_state.fd_session.state.id
    assert Rooms(open_store()).tally(sid, 0) == {"get_weather": 1, predictions.NO_TOOL: 0}
    teacher.run()
    assert teacher.get("arrow_vega_lite_chart") or teacher.get("vega_lite_chart")
    teacher.button(key="step").click().run()  # the model calls get_weather
    teacher.run()  # the room's tally fragment settles the question
    ann.run()
    assert any("Right: get_weather" in shown(s.value) for s in ann.success)
    assert teacher.get("download_button")  # the trace with its questions


def test_try_it_yourself_forks_the_step_and_back_to_the_room_follows_again():
    teacher, code = _teacher_with_room()
    for _ in range(3):
        teacher.button(key="step").click().run()
    ann = tab("room.py", ANN, room=code)
    ann.button(key="fd_room_try").click().run()
    mine = ann.session_state.fd_session.state
    sid = teacher.session_state.fd_session.state.id
    info = open_store().info(mine.id, owner=ANN)
    assert info.parent == sid and info.step == mine.step
    assert (
        mine.conversation.messages == teacher.session_state.fd_session.state.conversation.messages
    )
    # On the Debugger, the attendee's copy steps alone and offers the way back.
    debugger = AppTest.from_file(str(PAGES / "debugger.py"), default_timeout=60)
    debugger.session_state["fd_owner"] = ANN
    debugger.session_state["fd_room_code"] = code
    debugger.session_state["fd_room_fork"] = mine.id
    debugger.query_params["session"] = mine.id
    debugger.run()
    debugger.button(key="step").click().run()
    assert open_store().info(sid).step == 3  # the instructor's session did not move
    assert debugger.button(key="fd_room_back").label.endswith(code)
