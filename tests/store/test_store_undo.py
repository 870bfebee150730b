"""The undo history saved with the session (issue 30 item 3): a session read back from a fresh
store (a reload, a restart) can Undo, and Undo tool edit, as the one that made the steps."""

from __future__ import annotations

import pytest

import flowdebug.engine.session.debugger as debugger
from flowdebug.engine.execution.handlers import Toolset
from flowdebug.engine.session.debugger import Session
from flowdebug.store.sessions import open_store
from flowdebug.views.history import last_change, undo_tool_edit
from tests.store import test_store_servers as servers

# SQLite and PostgreSQL, as the store's server tests take them
pg_server, store_url = servers.pg_server, servers.store_url


def saved_as_the_app_does(session: Session, url: str, revision: int | None = None) -> Session:
    """Save after every change with the undo history, as ui/common does (``revision``: the
    session was just read at it, nothing to save yet)."""
    store = open_store(url)
    read = {"n": revision or 0}

    def save(state) -> None:
        read["n"] = store.save(state, expected=read["n"], undo=session.undo_stack).revision

    session.on_change = save
    if revision is None:
        save(session.state)
    return session


def reopened(session: Session, url: str) -> Session:
    """The session opened again by a new browser session, which goes on saving it."""
    back, revision = open_store(url).resume_at(session.state.id)
    return saved_as_the_app_does(back, url, revision)


def reread(session: Session, url: str) -> Session:
    with open_store(url) as fresh:
        return fresh.resume(session.state.id)


def dumps(states) -> list[str]:
    return [s.model_dump_json() for s in states]


def with_description(toolset: Toolset, text: str) -> Toolset:
    entries = list(toolset.entries)
    tool = entries[0].tool.model_copy(update={"description": text})
    entries[0] = entries[0].model_copy(update={"tool": tool})
    return toolset.model_copy(update={"entries": entries})


def test_a_reread_session_keeps_every_state_it_can_undo_to(store_url):
    url = store_url
    session = saved_as_the_app_does(Session.from_scenario("weather"), url)
    for _ in range(3):
        session.step()
    session.set_toolset(with_description(session.state.toolset, "Searches stuff"))
    session.step()
    session.undo()
    session.step()
    session.edit_message(0, {"role": "user", "parts": [{"kind": "text", "text": "Rome?"}]})
    back = reread(session, url)
    assert len(back.undo_stack) == len(session.undo_stack) == 6
    assert dumps(back.undo_stack) == dumps(session.undo_stack)
    assert back.state.model_dump_json() == session.state.model_dump_json()
    # Undo on both, one at a time, meets the same states down to the start.
    while session.undo_stack:
        session.undo()
        back.undo()
        assert back.state.model_dump_json() == session.state.model_dump_json()
    assert back.state.step == 0 and not back.undo_stack


def test_undo_tool_edit_takes_back_a_tool_edit_after_a_reload(store_url):
    url = store_url
    session = saved_as_the_app_does(Session.from_scenario("weather"), url)
    session.step()
    original = session.state.toolset.tools[0].description
    session.set_toolset(with_description(session.state.toolset, "Searches stuff"))
    back = reopened(session, url)
    assert last_change(back) == "tool edit"
    undo_tool_edit(back)
    assert back.state.toolset.tools[0].description == original
    assert back.state.step == 1
    # ...and that undo is saved too: read again, the tool edit is gone and step 1 undoes.
    again = reread(back, url)
    assert again.state.toolset.tools[0].description == original
    assert last_change(again) == "step 1"


def test_a_step_writes_two_undo_rows_whatever_the_history(tmp_path, monkeypatch):
    import flowdebug.store.undo as undo

    url = str(tmp_path / "s.db")
    session = saved_as_the_app_does(Session.from_scenario("tasks"), url)
    for _ in range(8):
        session.step()
    written: list[int] = []
    row = undo._row
    monkeypatch.setattr(
        undo, "_row", lambda old, newer, s: written.append(old.step) or row(old, newer, s)
    )
    session.step()
    # the state pushed (step 8) and the one under it (step 7), whose newer state is now step 8
    assert sorted(written) == [7, 8]
    assert [s.step for s in reread(session, url).undo_stack] == list(range(9))


def test_the_undo_limit_drops_the_oldest_step_but_the_start_in_the_store_too(tmp_path, monkeypatch):
    monkeypatch.setattr(debugger, "UNDO_LIMIT", 3)
    url = str(tmp_path / "s.db")
    session = saved_as_the_app_does(Session.from_scenario("tasks"), url)
    for _ in range(6):
        session.step()
    back = reread(session, url)
    assert [s.step for s in back.undo_stack] == [0, 3, 4, 5]
    assert dumps(back.undo_stack) == dumps(session.undo_stack)


def test_a_save_without_an_undo_history_keeps_none(tmp_path):
    url = str(tmp_path / "s.db")
    session = saved_as_the_app_does(Session.from_scenario("weather"), url)
    session.step()
    session.step()
    with open_store(url) as store:
        store.save(session.state)  # the CLI, an import: no undo history given
        assert store.resume(session.state.id).undo_stack == []


@pytest.mark.parametrize("steps", [0, 1])
def test_a_deleted_session_leaves_no_undo_rows(tmp_path, steps):
    url = str(tmp_path / "s.db")
    session = saved_as_the_app_does(Session.from_scenario("weather"), url)
    for _ in range(steps + 1):
        session.step()
    with open_store(url) as store:
        store.delete(session.state.id)
        with store._db.transaction() as tx:
            assert tx.all("SELECT idx FROM flowdebug_undo") == []
