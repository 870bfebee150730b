"""A fork or a re-run made on the History page is saved under its parent's name and its
branch, so the Sessions list tells it apart (it read "session 2026-11-27 18:54")."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from flowdebug.store.sessions import open_store
from tests.app.test_new_session import PROMPT, fill_flights_form

APP = Path(__file__).resolve().parents[2] / "app.py"


def test_a_re_run_and_a_fork_are_listed_under_their_parents_name_and_branch():
    app = AppTest.from_file(str(APP), default_timeout=60)
    app.run()
    app.switch_page("pages/sessions.py").run()
    fill_flights_form(app)
    app.button(key="new_create").click().run()
    mine = app.session_state.fd_session.state.id
    app.switch_page("pages/debugger.py").run()
    app.button(key="step_turn").click().run()
    app.switch_page("pages/history.py").run()
    app.button(key="rerun_0").click().run()
    assert not app.exception
    rerun = app.session_state.fd_session.state.id
    app.button(key="fork_0").click().run()
    assert not app.exception
    fork = app.session_state.fd_session.state.id

    names = {i.id: (i.name, i.parent) for i in open_store().list()}
    assert names[mine] == (PROMPT, None)
    assert names[rerun] == (f"{PROMPT} · re-run after message 0", mine)
    assert names[fork] == (f"{PROMPT} · re-run after message 0 · fork at message 0", rerun)
