"""AppTest: the player persists with the session, never the key (issue 30 item 4); reopening
a session (by its address, or the app resuming the session saved last) restores its player."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from flowdebug.engine.session.debugger import Session
from flowdebug.store.sessions import open_store
from tests.app.opening import page

KEY = "sk-test-never-saved-0123456789abcdef"


def choose_live_player(app: AppTest) -> None:
    app.radio(key="player_kind").set_value("live").run()
    app.selectbox(key="live_protocol").set_value("openai-chat")
    app.text_input(key="live_model").input("qwen2.5:7b")
    app.text_input(key="live_base_url").input("http://localhost:11434/v1")
    app.text_input(key="live_key").input(KEY)
    app.checkbox(key="live_stream").check()
    app.button(key="apply_player").click().run()
    assert not app.exception


def test_a_live_player_is_kept_with_the_session_and_its_key_is_not(tmp_path):
    app = page("debugger.py")
    choose_live_player(app)
    sid = app.session_state.fd_session.state.id
    kept = open_store().load(sid).player
    assert kept is not None
    assert (kept.kind, kept.protocol, kept.model, kept.base_url, kept.stream) == (
        "live",
        "openai-chat",
        "qwen2.5:7b",
        "http://localhost:11434/v1",
        True,
    )
    for stored in tmp_path.glob("sessions.db*"):  # the database and its write-ahead log
        assert KEY.encode() not in stored.read_bytes()


def test_reopening_the_session_by_its_address_restores_its_player_and_the_sidebar_says_so():
    first = page("debugger.py")
    choose_live_player(first)
    sid = first.session_state.fd_session.state.id
    again = page("debugger.py", session=sid)  # a reload: a new browser session
    player = again.session_state.fd_session.player
    assert type(player).__name__ == "LivePlayer"
    assert (player.settings.protocol, player.settings.model, player.settings.stream) == (
        "openai-chat",
        "qwen2.5:7b",
        True,
    )
    assert player.settings.base_url == "http://localhost:11434/v1"
    assert player.settings.api_key is None  # from the environment: the key was never saved
    assert again.radio(key="player_kind").value == "live"
    assert again.text_input(key="live_model").value == "qwen2.5:7b"
    assert again.checkbox(key="live_stream").value is True


def test_the_app_resuming_the_last_session_restores_its_manual_player():
    first = page("debugger.py")
    first.radio(key="player_kind").set_value("manual").run()
    first.button(key="apply_player").click().run()
    sid = first.session_state.fd_session.state.id
    again = page("debugger.py")  # no address: the session saved last
    assert again.session_state.fd_session.state.id == sid
    assert type(again.session_state.fd_session.player).__name__ == "ManualPlayer"
    assert again.radio(key="player_kind").value == "manual"


def test_opening_another_session_on_the_sessions_page_shows_that_sessions_player():
    first = page("debugger.py")
    first.radio(key="player_kind").set_value("manual").run()
    first.button(key="apply_player").click().run()
    manual_id = first.session_state.fd_session.state.id
    scripted = Session.from_scenario("weather").state  # no player kept: its scenario's script
    open_store().save(scripted)
    app = page("sessions.py", session=manual_id)
    assert app.radio(key="player_kind").value == "manual"
    app.selectbox(key="sess_pick").set_value(scripted.id)
    app.button(key="sess_open").click().run()
    assert app.session_state.fd_session.state.id == scripted.id
    assert app.radio(key="player_kind").value == "scripted"
    assert type(app.session_state.fd_session.player).__name__ == "ScriptedPlayer"
    app.selectbox(key="sess_pick").set_value(manual_id)
    app.button(key="sess_open").click().run()
    assert app.radio(key="player_kind").value == "manual"
    assert type(app.session_state.fd_session.player).__name__ == "ManualPlayer"


def test_a_scenario_opened_from_a_session_of_your_own_plays_its_script():
    from tests.app.test_new_session import fill_flights_form

    app = page("sessions.py")
    fill_flights_form(app)
    app.button(key="new_create").click().run()
    dbg = page("debugger.py", session=app.session_state.fd_session.state.id)
    assert type(dbg.session_state.fd_session.player).__name__ == "ReadingPlayer"
    dbg.selectbox(key="scenario").set_value("weather").run()
    assert dbg.session_state.fd_session.state.scenario == "weather"
    assert type(dbg.session_state.fd_session.player).__name__ == "ScriptedPlayer"
    assert dbg.radio(key="player_kind").value == "scripted"


def test_a_player_chosen_on_purpose_goes_on_playing_the_next_scenario():
    dbg = page("debugger.py")
    dbg.radio(key="player_kind").set_value("manual").run()
    dbg.button(key="apply_player").click().run()
    dbg.selectbox(key="scenario").set_value("tasks").run()
    assert dbg.session_state.fd_session.state.scenario == "tasks"
    assert type(dbg.session_state.fd_session.player).__name__ == "ManualPlayer"
    assert dbg.session_state.fd_session.state.player.kind == "manual"
