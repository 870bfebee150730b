"""AppTest: on a shared server a session belongs to its browser; a stale tab cannot overwrite
newer steps. Each AppTest is one tab; ``fd_owner`` stands for the browser's cookie."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from flowdebug import hosting
from flowdebug.store.sessions import open_store
from tests.app.markdown import shown

PAGES = Path(__file__).resolve().parents[2] / "pages"
ALICE, BOB = "A" * 43, "B" * 43


def tab(page: str, owner: str | None = None, session: str | None = None) -> AppTest:
    app = AppTest.from_file(str(PAGES / page), default_timeout=60)
    if owner is not None:
        app.session_state["fd_owner"] = owner
    if session is not None:
        app.query_params["session"] = session
    app.run()
    assert not app.exception
    return app


def errors(app: AppTest) -> list[str]:
    return [shown(e.value) for e in app.error]


def edit_description(app: AppTest, text: str) -> None:
    app.text_area(key="tool_description").input(text).run()
    app.button(key="tool_save").click().run()


def description(session_id: str) -> str:
    return open_store().load(session_id).toolset.get("get_weather").tool.description


# -- shared mode: a session is its browser's -------------------------------------------------


@pytest.fixture
def shared(monkeypatch):
    monkeypatch.setenv(hosting.SHARED_ENV, "1")


def test_a_browser_sees_only_its_own_sessions(shared):
    alice = tab("sessions.py", ALICE)
    bob = tab("sessions.py", BOB)
    mine = alice.session_state.fd_session.state.id
    theirs = bob.session_state.fd_session.state.id
    alice.run()
    assert alice.dataframe[0].value["id"].tolist() == [mine]
    assert not any(theirs in o for o in alice.selectbox(key="sess_pick").options)
    assert bob.dataframe[0].value["id"].tolist() == [theirs]


def test_a_link_to_another_browsers_session_opens_nothing_of_it(shared):
    alice = tab("tools.py", ALICE)
    sid = alice.session_state.fd_session.state.id
    edit_description(alice, "alice's own words")
    bob = tab("sessions.py", BOB, session=sid)
    assert any("belongs to another browser" in e for e in errors(bob))
    assert bob.session_state.fd_session.state.id != sid
    assert bob.query_params["session"] != [sid]
    assert sid not in bob.dataframe[0].value["id"].tolist()
    # Bob's tab works on his own new session; Alice's is untouched.
    assert description(sid) == "alice's own words"
    assert open_store().info(sid).name != ""


def test_the_owner_reopens_her_session_from_its_link(shared):
    alice = tab("tools.py", ALICE)
    sid = alice.session_state.fd_session.state.id
    edit_description(alice, "kept")
    again = tab("tools.py", ALICE, session=sid)
    assert errors(again) == []
    assert again.session_state.fd_session.state.id == sid
    assert again.session_state.fd_session.state.toolset.get("get_weather").tool.description == (
        "kept"
    )


def test_a_browser_without_a_cookie_gets_a_fresh_secret(shared):
    app = tab("sessions.py")
    secret = app.session_state.fd_owner
    assert len(secret) >= 32
    other = tab("sessions.py")
    assert other.session_state.fd_owner != secret


def test_outside_shared_mode_every_session_is_listed_and_opens(monkeypatch):
    monkeypatch.delenv(hosting.SHARED_ENV, raising=False)
    first = tab("sessions.py")
    sid = first.session_state.fd_session.state.id
    second = tab("sessions.py", session=sid)
    assert errors(second) == [] and second.session_state.fd_session.state.id == sid
    assert "fd_owner" not in second.session_state


# -- two tabs on one session ---------------------------------------------------------------


@pytest.mark.parametrize("mode", ["local", "shared"])
def test_a_stale_tab_is_refused_and_the_newer_steps_are_kept(mode, monkeypatch):
    if mode == "shared":
        monkeypatch.setenv(hosting.SHARED_ENV, "1")
    owner = ALICE if mode == "shared" else None
    first = tab("tools.py", owner)
    sid = first.session_state.fd_session.state.id
    second = tab("tools.py", owner, session=sid)
    assert errors(second) == []
    edit_description(first, "from the first tab")
    edit_description(second, "from the second tab")
    said = errors(second)
    assert any("changed in another tab; reload to see the newer steps" in e for e in said)
    assert description(sid) == "from the first tab"
    # The second tab reloads the newer steps, and its next change is saved.
    second.button(key="fd_reload").click().run()
    assert second.session_state.fd_session.state.toolset.get("get_weather").tool.description == (
        "from the first tab"
    )
    edit_description(second, "after the reload")
    assert errors(second) == []
    assert description(sid) == "after the reload"
    # Now the first tab is the stale one.
    edit_description(first, "too late")
    assert any("changed in another tab" in e for e in errors(first))
    assert description(sid) == "after the reload"


def test_opening_a_session_in_a_second_tab_does_not_make_the_first_stale():
    first = tab("tools.py")
    sid = first.session_state.fd_session.state.id
    tab("tools.py", session=sid)
    edit_description(first, "still mine")
    assert errors(first) == [] and description(sid) == "still mine"
