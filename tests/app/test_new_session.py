"""AppTest: a session of your own from scratch on the Sessions page (issue 30 item 1), played by
the offline model that reads the request (the issue's done-when: it calls your tool with an
argument taken from the prompt); opening the app resumes the session saved last."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from flowdebug import hosting
from flowdebug.model import ToolCall
from flowdebug.store.sessions import open_store
from tests.app.markdown import shown

PAGES = Path(__file__).resolve().parents[2] / "pages"
PROMPT = "Find flights from Paris to Tokyo on 2026-12-01"
FLIGHTS_SCHEMA = {
    "type": "object",
    "properties": {
        "origin": {"type": "string", "description": "city the flight leaves from"},
        "destination": {"type": "string", "description": "city the flight lands in"},
        "date": {"type": "string", "description": "day of departure"},
    },
    "required": ["origin", "destination", "date"],
}


def page(name: str, session: str | None = None) -> AppTest:
    app = AppTest.from_file(str(PAGES / name), default_timeout=60)
    if session is not None:
        app.query_params["session"] = session
    app.run()
    assert not app.exception
    return app


def fill_flights_form(app: AppTest, description: str = "Searches stuff") -> None:
    app.text_area(key="new_system").input("You help people travel.")
    app.text_area(key="new_user").input(PROMPT)
    app.text_input(key="new_tool_name_0").input("search_flights")
    app.text_area(key="new_tool_desc_0").input(description)
    app.text_area(key="new_tool_schema_0").input(json.dumps(FLIGHTS_SCHEMA))


def test_a_new_session_with_your_own_tool_is_played_by_the_offline_model_with_prompt_arguments():
    app = page("sessions.py")
    before = app.session_state.fd_session.state.id
    fill_flights_form(app)
    app.button(key="new_create").click().run()
    assert not app.exception
    fresh = app.session_state.fd_session
    assert fresh.state.id != before
    state = fresh.state
    assert state.scenario is None
    assert state.conversation.system == "You help people travel."
    assert [m.text for m in state.conversation.messages] == [PROMPT]
    assert state.toolset.names == ["search_flights"]
    assert state.conversation.tools[0].description == "Searches stuff"
    # Named from its first user message, in the list and in the store.
    assert any("Created “Find flights from Paris to Tokyo" in s.value for s in app.success)
    assert {i.id: i.name for i in open_store().list()}[state.id] == PROMPT
    # The sidebar names it by its first message too (not "(imported)").
    assert shown(app.session_state.fd_status_text) == (
        "Session **Find flights from Paris to Tokyo on…** · step 0 · ready"
    )


def test_the_new_session_resumed_on_the_debugger_calls_your_tool_with_the_prompts_arguments():
    app = page("sessions.py")
    fill_flights_form(app)
    app.button(key="new_create").click().run()
    sid = app.session_state.fd_session.state.id
    dbg = page("debugger.py", session=sid)
    assert type(dbg.session_state.fd_session.player).__name__ == "ReadingPlayer"
    dbg.button(key="step_turn").click().run()
    assert not dbg.exception
    turn = dbg.session_state.fd_session.state.conversation.messages[1]
    calls = [p for p in turn.parts if isinstance(p, ToolCall)]
    assert [c.name for c in calls] == ["search_flights"]
    assert calls[0].arguments == {
        "origin": "Paris",
        "destination": "Tokyo",
        "date": "2026-12-01",
    }
    assert open_store().load(sid).conversation.messages[1].tool_calls == calls


def test_tools_pasted_in_a_vendor_format_a_named_tool_choice_one_call_per_turn_and_a_round_cap():
    app = page("sessions.py")
    app.text_area(key="new_user").input("What's the weather in Lyon?")
    app.text_input(key="new_name").input("my weather check")
    app.number_input(key="new_tool_count").set_value(0)
    pasted = [
        {
            "type": "function",
            "function": {
                "name": "get_forecast",
                "description": "Weather forecast for a city",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            },
        }
    ]
    app.text_area(key="new_tools_pasted").input(json.dumps(pasted))
    app.selectbox(key="new_tool_choice").set_value("tool").run()
    app.text_input(key="new_tool_named").input("get_forecast")
    app.selectbox(key="new_parallel").set_value("one call per turn")
    app.number_input(key="new_max_rounds").set_value(3)
    app.radio(key="new_player").set_value("manual")
    app.button(key="new_create").click().run()
    assert not app.exception
    session = app.session_state.fd_session
    conv = session.state.conversation
    assert conv.tools[0].name == "get_forecast"
    assert conv.tools[0].parameters["required"] == ["city"]
    assert conv.tool_choice is not None
    assert (conv.tool_choice.mode, conv.tool_choice.name, conv.tool_choice.parallel) == (
        "tool",
        "get_forecast",
        False,
    )
    assert session.state.policy.max_rounds == 3
    assert type(session.player).__name__ == "ManualPlayer"
    names = {i.id: i.name for i in open_store().list()}
    assert names[session.state.id] == "my weather check"


def test_a_bad_schema_or_an_unknown_named_tool_is_refused_and_nothing_is_opened():
    app = page("sessions.py")
    before = app.session_state.fd_session.state.id
    fill_flights_form(app)
    app.text_area(key="new_tool_schema_0").input("{not json")
    app.button(key="new_create").click().run()
    assert app.session_state.fd_session.state.id == before
    assert shown(app.error[0].value).startswith("Not created: tool 1 parameters:")
    app.text_area(key="new_tool_schema_0").input(json.dumps(FLIGHTS_SCHEMA))
    app.selectbox(key="new_tool_choice").set_value("tool").run()
    app.text_input(key="new_tool_named").input("book_hotel")
    app.button(key="new_create").click().run()
    assert app.session_state.fd_session.state.id == before
    assert shown(app.error[0].value) == (
        "Not created: the named tool must be one of the session's tools (search_flights)"
    )
    assert len(open_store().list()) == 1


def test_opening_the_app_resumes_the_session_saved_last_instead_of_making_a_new_one():
    app = page("sessions.py")
    fill_flights_form(app)
    app.button(key="new_create").click().run()
    mine = app.session_state.fd_session.state.id
    count = len(open_store().list())
    visit = page("debugger.py")  # a new visit to /, no ?session= in the address
    assert visit.session_state.fd_session.state.id == mine
    assert len(open_store().list()) == count
    assert type(visit.session_state.fd_session.player).__name__ == "ReadingPlayer"


def test_a_host_can_start_every_visitor_on_a_new_session(monkeypatch):
    app = page("sessions.py")
    fill_flights_form(app)
    app.button(key="new_create").click().run()
    mine = app.session_state.fd_session.state.id
    monkeypatch.setenv(hosting.RESUME_ENV, "0")
    visit = page("debugger.py")
    assert visit.session_state.fd_session.state.id != mine
    assert visit.session_state.fd_session.state.scenario == "weather"


def test_an_exported_trace_imported_again_keeps_its_name():
    app = page("sessions.py")
    fill_flights_form(app)
    app.text_input(key="new_name").input("flights, vague description")
    app.button(key="new_create").click().run()
    app.selectbox(key="exp_format").set_value("trace").run()
    data = app.code[0].value  # the preview of the file the download button holds
    assert json.loads(data)["metadata"]["name"] == "flights, vague description"
    app.text_area(key="imp_text").input(data)
    app.button(key="imp_go").click().run()
    assert not app.exception
    names = [i.name for i in open_store().list()]
    assert names.count("flights, vague description") == 2
    assert app.session_state.fd_session.state.conversation.messages[0].text == PROMPT
