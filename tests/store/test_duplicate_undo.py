"""A duplicated session keeps its undo history (issue 30 item 3: undo survives a reload), and
an Undo in the copy stays in the copy: the source is never written through it."""

from __future__ import annotations

from flowdebug.engine.session.debugger import Session
from flowdebug.store.sessions import open_store
from flowdebug.views.history import last_change, undo_tool_edit
from tests.store import test_store_servers as servers
from tests.store.test_store_undo import dumps, reopened, saved_as_the_app_does, with_description

# SQLite and PostgreSQL, as the store's server tests take them
pg_server, store_url = servers.pg_server, servers.store_url


def test_a_duplicate_can_undo_every_step_and_tool_edit_of_its_source(store_url):
    session = saved_as_the_app_does(Session.from_scenario("weather"), store_url)
    for _ in range(2):
        session.step()
    session.set_toolset(with_description(session.state.toolset, "Searches stuff"))
    source = session.state.id
    copy = open_store(store_url).duplicate(source).id

    twin = open_store(store_url).resume(copy)
    assert twin.state.id == copy
    assert len(twin.undo_stack) == len(session.undo_stack) == 3
    assert [s.step for s in twin.undo_stack] == [0, 1, 2]
    assert [s.id for s in twin.undo_stack] == [copy] * 3
    assert last_change(twin) == "tool edit"
    undo_tool_edit(twin)
    assert twin.state.toolset == session.undo_stack[-1].toolset
    assert twin.state.id == copy


def test_an_undo_in_a_duplicate_saves_the_duplicate_and_leaves_the_source_as_it_was(store_url):
    session = saved_as_the_app_does(Session.from_scenario("weather"), store_url)
    for _ in range(3):
        session.step()
    source = open_store(store_url).load(session.state.id).model_dump_json()
    copy = open_store(store_url).duplicate(session.state.id).id

    twin = reopened(open_store(store_url).resume(copy), store_url)
    twin.undo()
    twin.undo()

    store = open_store(store_url)
    assert store.load(copy).step == 1
    assert store.load(session.state.id).model_dump_json() == source
    again = store.resume(copy)
    assert again.state.step == 1 and [s.step for s in again.undo_stack] == [0]
    assert dumps(store.resume(session.state.id).undo_stack) == dumps(session.undo_stack)


def test_deleting_the_source_keeps_the_duplicates_undo_history(store_url):
    session = saved_as_the_app_does(Session.from_scenario("weather"), store_url)
    session.step()
    store = open_store(store_url)
    copy = store.duplicate(session.state.id).id
    store.delete(session.state.id)
    twin = open_store(store_url).resume(copy)
    assert [s.step for s in twin.undo_stack] == [0]
    twin.undo()
    assert twin.state.step == 0 and twin.state.id == copy
