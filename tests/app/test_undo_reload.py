"""AppTest (issue 30 item 3): Undo and Undo tool edit survive a reload; Reset keeps the tools as
edited and "Restore the scenario's tools" brings the scenario's back as an undoable tool edit;
the manual player keeps the turn you typed."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from flowdebug.store.sessions import open_store
from tests.app.markdown import shown
from tests.app.opening import page


def edit_the_weather_tool(app: AppTest, description: str = "Searches stuff") -> None:
    app.text_area(key="tool_description").input(description).run()
    app.button(key="tool_save").click().run()
    assert app.session_state.fd_session.state.toolset.tools[0].description == description


def test_undo_works_after_a_reload():
    app = page("debugger.py")
    for _ in range(3):
        app.button(key="step").click().run()
    sid = app.session_state.fd_session.state.id
    again = page("debugger.py", session=sid)  # a new browser session on the same session
    assert again.session_state.fd_session.state.step == 3
    assert not again.button(key="undo").disabled
    again.button(key="undo").click().run()
    assert again.session_state.fd_session.state.step == 2
    assert open_store().load(sid).step == 2  # the undo is saved too


def test_undo_tool_edit_works_after_a_reload():
    app = page("tools.py")
    original = app.session_state.fd_session.state.toolset.tools[0].description
    edit_the_weather_tool(app)
    sid = app.session_state.fd_session.state.id
    again = page("tools.py", session=sid)
    assert "now: tool edit" in again.button(key="tools_undo").help
    again.button(key="tools_undo").click().run()
    assert again.session_state.fd_session.state.toolset.tools[0].description == original


def test_reset_keeps_the_tools_as_edited_and_restore_brings_the_scenarios_back_undoably():
    app = page("tools.py")
    original = app.session_state.fd_session.state.toolset.tools[0].description
    edit_the_weather_tool(app)
    sid = app.session_state.fd_session.state.id
    dbg = page("debugger.py", session=sid)
    for _ in range(3):
        dbg.button(key="step").click().run()
    dbg.button(key="reset").click().run()
    assert not dbg.exception
    state = dbg.session_state.fd_session.state
    assert state.step == 0 and state.scenario == "weather"
    assert state.toolset.tools[0].description == "Searches stuff"
    assert state.conversation.tools[0].description == "Searches stuff"  # what is declared
    tools = page("tools.py", session=state.id)
    tools.button(key="tools_restore").click().run()
    assert tools.session_state.fd_session.state.toolset.tools[0].description == original
    assert any("The scenario's tools are back" in shown(s.value) for s in tools.success)
    tools.button(key="tools_undo").click().run()  # a tool edit like any other
    assert tools.session_state.fd_session.state.toolset.tools[0].description == "Searches stuff"


def test_restore_says_when_the_tools_are_already_the_scenarios():
    tools = page("tools.py")
    tools.button(key="tools_restore").click().run()
    assert any("already scenario 'weather'" in shown(e.value) for e in tools.error)


def test_reset_of_a_session_of_your_own_keeps_its_tools_as_edited():
    from tests.app.test_new_session import fill_flights_form

    app = page("sessions.py")
    fill_flights_form(app)
    app.button(key="new_create").click().run()
    sid = app.session_state.fd_session.state.id
    tools = page("tools.py", session=sid)
    tools.text_area(key="tool_description").input("Finds flights between two cities").run()
    tools.button(key="tool_save").click().run()
    dbg = page("debugger.py", session=sid)
    dbg.button(key="step_turn").click().run()
    dbg.button(key="reset").click().run()
    state = dbg.session_state.fd_session.state
    assert state.id == sid and state.step == 0
    assert state.toolset.tools[0].description == "Finds flights between two cities"


def manual_turn(name: str, city: str) -> str:
    call = {"kind": "tool_call", "id": "call_m1", "name": name, "arguments": {"city": city}}
    return json.dumps({"role": "assistant", "parts": [call]}, indent=2)


def test_the_manual_player_keeps_the_turn_you_typed_after_undo_and_a_reload():
    app = page("debugger.py")
    app.radio(key="player_kind").set_value("manual").run()
    app.button(key="apply_player").click().run()
    app.button(key="step").click().run()  # declaration: next, the model's turn
    typed = manual_turn("get_weather", "Lyon")
    app.text_area(key="manual_turn").input(typed).run()
    app.button(key="manual_queue").click().run()
    app.button(key="step").click().run()  # the typed turn is the model's
    assert app.session_state.fd_session.state.conversation.messages[-1].tool_calls[0].arguments == {
        "city": "Lyon"
    }
    app.button(key="undo").click().run()
    assert app.text_area(key="manual_turn").value == typed  # not the template again
    sid = app.session_state.fd_session.state.id
    again = page("debugger.py", session=sid)
    assert again.text_area(key="manual_turn").value == typed


def test_the_manual_template_of_a_session_of_your_own_names_its_tool():
    from tests.app.test_new_session import fill_flights_form

    app = page("sessions.py")
    fill_flights_form(app)
    app.radio(key="new_player").set_value("manual")
    app.button(key="new_create").click().run()
    sid = app.session_state.fd_session.state.id
    dbg = page("debugger.py", session=sid)
    dbg.button(key="step").click().run()
    template = json.loads(dbg.text_area(key="manual_turn").value)
    assert template["parts"][0]["name"] == "search_flights"
