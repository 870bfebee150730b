"""The session store, on SQLite and on a real PostgreSQL server started for the tests."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

from flowdebug.engine.execution.runtime import Policy
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.session_state import SessionState
from flowdebug.errors import UsageError
from flowdebug.model import Conversation, Message, Text, ToolCall
from flowdebug.players import ScriptedPlayer, ScriptedTurn
from flowdebug.store.db import MIGRATIONS, Tx, migrate, open_database
from flowdebug.store.owners import NotOwner, owner_key
from flowdebug.store.sessions import (
    StaleSession,
    Store,
    StoreError,
    default_url,
    open_store,
)
from sample_tools import toolset
from tests import pgserver

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-test-FAKE0123456789abcdefghijklmnop"
TYPED_KEY = "sk-typed-FAKE9876543210zyxwvutsrqpo"


@pytest.fixture(scope="session")
def pg_server():
    server = pgserver.start_or_skip()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "sessions.db")
    server = request.getfixturevalue("pg_server")
    return server.create_database(f"t_{uuid.uuid4().hex[:10]}")


@pytest.fixture
def store(store_url):
    with open_store(store_url) as s:
        yield s


def tasks() -> Session:
    """The tasks scenario: four rounds of calls, fast (no call waits for a timeout)."""
    return Session.from_scenario("tasks")


def long_session(messages: int) -> Session:
    """A weather agent calling two tools a turn until the history has ``messages``."""
    tools = toolset("weather")
    turn = ScriptedTurn.model_validate(
        {
            "calls": [
                {"name": "get_weather", "arguments": {"location": "Paris"}},
                {"name": "get_weather", "arguments": {"location": "Lyon"}},
            ]
        }
    )
    state = SessionState(
        conversation=Conversation(
            tools=tools.tools, messages=[Message(role="user", parts=[Text(text="Watch it.")])]
        ),
        toolset=tools,
        policy=Policy(max_rounds=10_000),
    )
    session = Session(state, ScriptedPlayer([turn], repeat_last=True))
    while len(session.state.conversation.messages) < messages:
        session.step()
    return session


def same(a: SessionState, b: SessionState) -> bool:
    return a.model_dump_json() == b.model_dump_json()


# -- saving and loading ----------------------------------------------------------------------


def test_a_long_session_saved_step_by_step_reads_back_after_undos_of_any_length(store_url):
    # Rows are deflated against their block's first rows (flowdebug.store.compress): an undo
    # rewrites a list from inside a block, whose first rows the save then reads back.
    session, revision = long_session(1), 0
    with open_store(store_url) as store:
        for target, back in ((260, 1), (270, 3), (280, 20), (300, 9)):
            while len(session.state.conversation.messages) < target:
                session.step()
                revision = store.save(session.state, expected=revision).revision
            session.undo(back)
            revision = store.save(session.state, expected=revision).revision
        session.step()
        store.save(session.state, expected=revision)
    with open_store(store_url) as fresh:
        assert same(fresh.load(session.state.id), session.state)
        with fresh._db.transaction() as tx:
            rows = tx.one("SELECT COUNT(*), COUNT(zbody), SUM(LENGTH(body)) FROM flowdebug_items")
    assert rows is not None
    count, compressed, text = rows
    assert count > 1_000 and compressed > count * 0.9 and text < 50 * count


def test_a_saved_session_loads_back_identical(store: Store):
    s = tasks()
    s.run()
    store.save(s.state)
    assert same(store.load(s.state.id), s.state)


def test_saving_after_every_step_undo_and_edit_keeps_the_store_exact(store: Store):
    s = tasks()
    store.save(s.state)
    while not s.done:
        s.step()
        store.save(s.state)
        assert same(store.load(s.state.id), s.state)
    s.undo(3)  # shorter lists: rows past the end must go
    store.save(s.state)
    assert same(store.load(s.state.id), s.state)
    s.edit_message(0, {"role": "user", "parts": [{"kind": "text", "text": "Only Paris?"}]})
    store.save(s.state)
    loaded = store.load(s.state.id)
    assert loaded.conversation.messages[0].text == "Only Paris?"
    assert same(loaded, s.state)


def test_a_step_writes_only_the_rows_it_added(store: Store, monkeypatch):
    s = long_session(60)
    store.save(s.state)
    written: list[int] = []
    real = Tx.insert_items
    monkeypatch.setattr(
        Tx, "insert_items", lambda tx, rows: (written.append(len(rows)), real(tx, rows))
    )
    s.step()
    store.save(s.state)
    total = len(s.state.conversation.messages) + len(s.state.events) + len(s.state.executions)
    assert total > 150
    assert 0 < sum(written) <= 8
    assert same(store.load(s.state.id), s.state)


def test_a_session_loaded_then_stepped_saves_only_the_step(store: Store, store_url, monkeypatch):
    s = long_session(30)
    store.save(s.state)
    with open_store(store_url) as other:
        resumed = Session(other.load(s.state.id), s.player)
        written: list[int] = []
        real = Tx.insert_items
        monkeypatch.setattr(Tx, "insert_items", lambda tx, r: (written.append(len(r)), real(tx, r)))
        resumed.step()
        other.save(resumed.state)
        assert sum(written) <= 8
    assert same(store.load(s.state.id), resumed.state)


def test_a_save_by_another_server_in_between_is_not_mixed_into_ours(store: Store, store_url):
    s = tasks()
    for _ in range(3):
        s.step()
    store.save(s.state)
    with open_store(store_url) as other:
        theirs = Session(other.load(s.state.id), s.player)
        theirs.step()
        theirs.step()
        other.save(theirs.state)
    s.undo(1)
    s.step()
    store.save(s.state)  # our memory of what was written is stale: rewrite the session whole
    assert same(store.load(s.state.id), s.state)


def test_list_shows_each_session_newest_first(store: Store):
    a, b = Session.from_scenario("weather"), tasks()
    b.run()
    store.save(a.state, name="first")
    time.sleep(0.01)
    store.save(b.state, name="second", parent=a.state.id)
    found = store.list()
    assert [i.name for i in found] == ["second", "first"]
    second = found[0]
    assert (second.id, second.scenario, second.parent) == (b.state.id, "tasks", a.state.id)
    assert second.messages == len(b.state.conversation.messages)
    assert (second.step, second.status) == (b.state.step, "finished")
    assert second.updated >= second.created
    assert store.latest().id == b.state.id


def test_save_keeps_the_name_and_parent_when_not_given(store: Store):
    s = tasks()
    store.save(s.state, name="Paris demo", parent="abc")
    s.step()
    info = store.save(s.state)
    assert (info.name, info.parent) == ("Paris demo", "abc")
    assert store.info(s.state.id).name == "Paris demo"


def test_a_new_session_gets_a_name_from_its_scenario(store: Store):
    assert store.save(tasks().state).name.startswith("tasks ")


def test_rename_duplicate_and_delete(store: Store):
    s = tasks()
    s.run()
    store.save(s.state, name="original")
    store.rename(s.state.id, "  renamed ")
    assert store.info(s.state.id).name == "renamed"
    with pytest.raises(UsageError, match="needs a name"):
        store.rename(s.state.id, " ")

    copy = store.duplicate(s.state.id)
    assert copy.id != s.state.id and copy.name == "renamed (copy)"
    loaded = store.load(copy.id)
    assert loaded.id == copy.id
    assert loaded.conversation == s.state.conversation
    session = Session(loaded, s.player)
    session.delete_message(len(loaded.conversation.messages) - 1)
    store.save(session.state)
    assert same(store.load(s.state.id), s.state)  # the original is untouched

    store.delete(s.state.id)
    assert [i.id for i in store.list()] == [copy.id]
    for action in (store.load, store.delete, store.info):
        with pytest.raises(UsageError, match="no saved session"):
            action(s.state.id)


def test_fork_saves_a_child_with_the_history_up_to_the_message(store: Store):
    s = tasks()
    s.run()
    store.save(s.state, name="tasks")
    child = store.fork(s.state.id, 1)
    info = store.info(child.id)
    assert info.parent == s.state.id and info.name == "tasks · fork at message 1"
    assert store.load(child.id).conversation.messages == s.state.conversation.messages[:2]
    # Deleting the parent re-links its forks to the grandparent (none here).
    store.delete(s.state.id)
    assert store.info(child.id).parent is None


def with_exchanges(session: Session) -> Session:
    """``session`` with one recorded exchange per message, as a long recording has."""
    for i, message in enumerate(session.state.conversation.messages):
        request = {"model": "m", "messages": [message.model_dump(mode="json")], "n": i}
        session.state.exchanges.append({"protocol": "openai_chat", "request": request, "step": i})
    return session


def _rows(store: Store, session_id: str) -> list[tuple]:
    with store._db.transaction() as tx:
        return tx.all(
            "SELECT list, idx, body, zbody FROM flowdebug_items WHERE session = ?"
            " ORDER BY list, idx",
            (session_id,),
        )


def test_a_fork_copies_its_parents_stored_rows_instead_of_packing_them(store, monkeypatch):
    s = with_exchanges(long_session(80))
    store.save(s.state)
    written: list[int] = []
    real = Tx.insert_items
    monkeypatch.setattr(Tx, "insert_items", lambda tx, r: (written.append(len(r)), real(tx, r)))
    child = store.fork(s.state.id, 40)
    assert len(child.exchanges) == len(s.state.exchanges) >= 80
    assert sum(written) <= 8  # the fork's redrawn events after the point, not its history
    assert same(store.load(child.id), child)
    # The rows are the ones a whole write of the same state makes, byte for byte.
    again = child.model_copy(update={"id": "whole"})
    store.save(again)
    assert _rows(store, child.id) == _rows(store, "whole") != []


def test_a_session_saved_with_a_parent_another_server_changed_is_written_whole(store, store_url):
    s = with_exchanges(long_session(30))
    store.save(s.state)
    child = Session(store.load(s.state.id), s.player).fork(20)
    with open_store(store_url) as other:
        theirs = other.load(s.state.id)
        theirs.exchanges[5] = {"protocol": "openai_chat", "request": {"n": "changed"}}
        other.save(theirs)
    store.save(child.state, parent=s.state.id)  # the rows it shares with its parent changed
    with open_store(store_url) as fresh:
        assert same(fresh.load(child.state.id), child.state)
        assert same(fresh.load(s.state.id), theirs)


def test_resume_gives_a_session_that_goes_on_with_its_scenario(store: Store):
    s = tasks()
    s.step()
    s.step()
    store.save(s.state)
    resumed = store.resume(s.state.id)
    resumed.run()
    whole = tasks()
    whole.run()
    assert resumed.state.status == "finished"
    assert resumed.state.conversation.messages[-1] == whole.state.conversation.messages[-1]


def test_a_session_with_unsaveable_text_is_refused_and_the_store_keeps_the_last_save(store):
    s = tasks()
    store.save(s.state)
    bad = s.state.model_copy(
        update={
            "conversation": s.state.conversation.model_copy(
                update={"messages": [Message(role="user", parts=[Text(text="a\ud800")])]}
            )
        }
    )
    with pytest.raises(StoreError, match=r"messages\[0\].*surrogate"):
        store.save(bad)
    assert same(store.load(s.state.id), s.state)


# -- where the store lives, its schema ---------------------------------------------------------


def test_default_location_is_the_user_data_directory_unless_overridden(tmp_path, monkeypatch):
    monkeypatch.delenv("FLOWDEBUG_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_url() == str(tmp_path / "data" / "flowdebug" / "sessions.db")
    with open_store() as s:
        s.save(tasks().state)
    assert (tmp_path / "data" / "flowdebug" / "sessions.db").exists()
    monkeypatch.setenv("FLOWDEBUG_DB", f"sqlite://{tmp_path}/env.db")
    with open_store() as s:
        s.save(tasks().state)
    assert (tmp_path / "env.db").exists()
    with open_store(str(tmp_path / "param.db")) as s:
        assert s.list() == []
    with pytest.raises(UsageError, match="unknown session database mysql://"):
        open_store("mysql://localhost/x")


def test_a_file_that_is_not_a_database_is_refused_clearly(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("shopping list\n" * 200)
    with pytest.raises(StoreError, match=r"notes\.txt.*not a database"):
        open_store(str(path))
    assert path.read_text().startswith("shopping list")


def test_sqlite_store_runs_in_wal_mode(tmp_path):
    with open_store(str(tmp_path / "s.db")):
        pass
    with sqlite3.connect(tmp_path / "s.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_migrations_run_once_in_order_and_record_their_version(store_url):
    with open_store(store_url) as s:
        assert s.version == len(MIGRATIONS)
        s.save(tasks().state, name="kept")

    def add_note(tx: Tx) -> None:
        tx.execute("ALTER TABLE flowdebug_sessions ADD COLUMN note TEXT")

    db = open_database(store_url)
    n = len(MIGRATIONS) + 1
    try:
        assert migrate(db, [*MIGRATIONS, add_note]) == n
        assert migrate(db, [*MIGRATIONS, add_note]) == n  # nothing left to run
        with db.transaction() as tx:
            versions = tx.all("SELECT version FROM flowdebug_migrations ORDER BY version")
            assert versions == [(v,) for v in range(1, n + 1)]
            assert tx.one("SELECT name, note FROM flowdebug_sessions") == ("kept", None)
    finally:
        db.close()
    with pytest.raises(StoreError, match="newer flowdebug"):
        open_store(store_url)


# -- secrets -------------------------------------------------------------------------------------


def test_keys_and_tokens_are_stripped_before_they_reach_the_database(store, store_url, monkeypatch):
    from flowdebug.redact import register_secret

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    register_secret(TYPED_KEY)
    s = tasks()
    s.run()
    settings = {"protocol": "openai-chat", "model": "gpt-4.1", "api_key": TYPED_KEY}
    state = s.state.model_copy(
        update={
            "tool_state": {"live": settings, "note": f"sent with {KEY}"},
            "exchanges": [
                {
                    "step": 2,
                    "request_headers": {"Authorization": f"Bearer {KEY}", "x-api-key": KEY},
                    "raw_request": f"POST /v1/chat ... key={TYPED_KEY}",
                    "settings": settings,
                    "usage": {"max_tokens": 1024, "input_tokens": 12},
                }
            ],
            "conversation": s.state.conversation.model_copy(
                update={
                    "messages": [
                        *s.state.conversation.messages,
                        Message(role="user", parts=[Text(text=f"my key is {KEY}")]),
                        Message(
                            role="assistant",
                            parts=[ToolCall(id="c9", name="kv_get", arguments={"key": "user:42"})],
                        ),
                    ]
                }
            ),
        }
    )
    store.save(state)
    stored = _stored_text(store_url)
    assert KEY not in stored and TYPED_KEY not in stored
    loaded = store.load(state.id)
    assert loaded.tool_state["live"]["api_key"] == "[redacted]"
    assert loaded.tool_state["live"]["model"] == "gpt-4.1"
    assert loaded.exchanges[0]["request_headers"]["Authorization"] == "[redacted]"
    assert loaded.exchanges[0]["usage"] == {"max_tokens": 1024, "input_tokens": 12}
    assert loaded.conversation.messages[-2].text == "my key is [redacted]"
    # The person's own data keeps its names: a tool argument called "key" is not a secret.
    assert loaded.conversation.messages[-1].tool_calls[0].arguments == {"key": "user:42"}


def _stored_text(url: str) -> str:
    """Everything the database holds, as text: the files for SQLite, the rows for PostgreSQL
    (whose files compress long values)."""
    if not url.startswith("postgresql://"):
        path = Path(url)
        return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*")).decode(
            "utf-8", "replace"
        )
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT name || head || conversation FROM flowdebug_sessions"
            " UNION ALL SELECT body FROM flowdebug_items"
            " UNION ALL SELECT body FROM flowdebug_values"
        ).fetchall()
    return "\n".join(r[0] for r in rows)


# -- crashes and concurrency -------------------------------------------------------------------

SAVER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {root!r})
    from tests.store.test_store import long_session
    from flowdebug.store.sessions import open_store

    store = open_store({url!r})
    session = long_session(2)
    print("id", session.state.id, flush=True)
    for _ in range({steps}):
        session.step()
        store.save(session.state)
        print("saved", session.state.step, flush=True)
    """
)


def _saver(url: str, steps: int) -> subprocess.Popen[str]:
    code = SAVER.format(root=str(ROOT), url=url, steps=steps)
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )


def test_killing_a_process_mid_save_loses_at_most_the_step_in_flight(store_url):
    for delay in (0.0, 0.013):
        proc = _saver(store_url, steps=100_000)
        assert proc.stdout is not None
        session_id = proc.stdout.readline().split()[1]
        last = 0
        while last < 25:
            last = int(proc.stdout.readline().split()[1])
        time.sleep(delay)  # land the kill at different points of a save
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        for line in proc.stdout:  # saves committed after the one we read
            if line.endswith("\n"):  # a line cut by the kill: its save counts as in flight
                last = int(line.split()[1])
        proc.stdout.close()
        if not store_url.startswith("postgresql://"):
            with sqlite3.connect(store_url) as conn:
                assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        with open_store(store_url) as store:
            loaded = store.load(session_id)
            assert last <= loaded.step <= last + 1
            assert store.info(session_id).step == loaded.step
            Session(loaded, ScriptedPlayer([ScriptedTurn(text="done")], repeat_last=True)).step()


def test_two_threads_saving_different_sessions_lose_nothing(store: Store):
    sessions = [long_session(2), long_session(2)]
    errors: list[BaseException] = []

    def work(s: Session) -> None:
        try:
            for _ in range(40):
                s.step()
                store.save(s.state)
        except BaseException as e:  # reported below: a thread's failure must fail the test
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for s in sessions:
        assert same(store.load(s.state.id), s.state)


def test_threads_that_come_and_go_share_a_few_connections(store: Store, monkeypatch):
    opened: list[object] = []
    real = type(store._db)._connect
    monkeypatch.setattr(type(store._db), "_connect", lambda db: opened.append(1) or real(db))
    s = long_session(2)
    for _ in range(20):  # Streamlit runs every rerun of a page in a new thread
        t = threading.Thread(target=store.save, args=(s.state,))
        t.start()
        t.join()
    assert len(opened) <= 1
    assert len(store._db._idle) <= store._db.POOL


def test_two_processes_saving_different_sessions_lose_nothing(store_url):
    open_store(store_url).close()  # migrated once, before both start
    procs = [_saver(store_url, steps=30) for _ in range(2)]
    finals = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        lines = out.split("\n")
        finals.append((lines[0].split()[1], int(lines[-2].split()[1])))
    with open_store(store_url) as store:
        for session_id, step in finals:
            loaded = store.load(session_id)
            assert loaded.step == step == 32  # two steps to begin with, then 30 saved ones
            assert len(loaded.events) == len(json.loads(loaded.model_dump_json())["events"])
        assert {i.id for i in store.list()} >= {sid for sid, _ in finals}


# -- revisions: a stale writer is refused ----------------------------------------------------


def test_a_save_based_on_an_older_revision_is_refused_and_writes_nothing(store_url):
    with open_store(store_url) as first, open_store(store_url) as second:
        s = tasks()
        saved = first.save(s.state, expected=0)
        assert saved.revision == 1
        # Two tabs (or two app servers) hold the same session at revision 1.
        tab_a, rev_a = first.resume_at(s.state.id)
        tab_b, rev_b = second.resume_at(s.state.id)
        assert rev_a == rev_b == 1
        tab_a.step_turn()
        assert first.save(tab_a.state, expected=rev_a).revision == 2
        tab_b.step()
        with pytest.raises(StaleSession, match="changed in another tab; reload to see the newer"):
            second.save(tab_b.state, expected=rev_b)
        # Nothing was lost: the newer steps are whole, in both handles' eyes.
        for store in (first, second):
            kept, revision = store.load_at(s.state.id)
            assert revision == 2
            assert kept.step == tab_a.state.step and kept.events == tab_a.state.events
        # Reloaded, the stale tab saves again.
        tab_b, rev_b = second.resume_at(s.state.id)
        tab_b.step()
        assert second.save(tab_b.state, expected=rev_b).revision == 3


def test_a_save_of_a_session_deleted_elsewhere_is_refused(store):
    s = tasks()
    revision = store.save(s.state, expected=0).revision
    store.delete(s.state.id)
    s.step()
    with pytest.raises(StaleSession, match="deleted in another tab"):
        store.save(s.state, expected=revision)
    assert store.list() == []


def test_a_save_without_a_revision_still_overwrites(store):
    s = tasks()
    store.save(s.state)
    store.save(s.state)
    assert store.info(s.state.id).revision == 2


def test_racing_writers_on_one_revision_win_once(store_url):
    s = tasks()
    with open_store(store_url) as setup:
        setup.save(s.state, expected=0)
    outcomes: list[str] = []

    def write(n: int) -> None:
        with open_store(store_url) as mine:
            state, revision = mine.load_at(s.state.id)
            state.status_text = f"writer {n}"
            try:
                mine.save(state, expected=revision)
                outcomes.append("saved")
            except StaleSession:
                outcomes.append("stale")

    barrier_threads = [threading.Thread(target=write, args=(n,)) for n in range(6)]
    for t in barrier_threads:
        t.start()
    for t in barrier_threads:
        t.join()
    with open_store(store_url) as check:
        revision = check.info(s.state.id).revision
    assert outcomes.count("saved") == revision - 1 >= 1
    assert len(outcomes) == 6


# -- owners: on a shared server a session belongs to its browser -------------------------------

ALICE, BOB = "alice-secret-" + "a" * 20, "bob-secret-" + "b" * 20


def test_a_browser_lists_and_opens_only_its_own_sessions(store):
    mine = tasks()
    theirs = tasks()
    store.save(mine.state, name="alice's", owner=ALICE, expected=0)
    store.save(theirs.state, name="bob's", owner=BOB, expected=0)
    assert [i.name for i in store.list(owner=ALICE)] == ["alice's"]
    assert [i.name for i in store.list(owner=BOB)] == ["bob's"]
    assert {i.name for i in store.list()} == {"alice's", "bob's"}  # outside shared mode
    assert store.load(mine.state.id, owner=ALICE).id == mine.state.id
    for attempt in (
        lambda: store.load(theirs.state.id, owner=ALICE),
        lambda: store.resume(theirs.state.id, owner=ALICE),
        lambda: store.info(theirs.state.id, owner=ALICE),
        lambda: store.rename(theirs.state.id, "pwned", owner=ALICE),
        lambda: store.delete(theirs.state.id, owner=ALICE),
        lambda: store.duplicate(theirs.state.id, owner=ALICE),
        lambda: store.fork(theirs.state.id, 0, owner=ALICE),
        lambda: store.save(theirs.state, owner=ALICE),
    ):
        with pytest.raises(NotOwner, match="belongs to another browser"):
            attempt()
    bob_view = store.info(theirs.state.id, owner=BOB)
    assert bob_view.name == "bob's" and bob_view.revision == 1
    assert [i.name for i in store.list(owner=ALICE)] == ["alice's"]


def test_copies_and_forks_belong_to_the_same_browser(store):
    s = tasks()
    s.step_turn()
    store.save(s.state, name="mine", owner=ALICE, expected=0)
    copy = store.duplicate(s.state.id, owner=ALICE)
    fork = store.fork(s.state.id, 0, owner=ALICE)
    assert {i.id for i in store.list(owner=ALICE)} == {s.state.id, copy.id, fork.id}
    assert store.list(owner=BOB) == []


def test_sessions_made_outside_shared_mode_belong_to_nobody_there(store):
    s = tasks()
    store.save(s.state, name="local")
    assert store.list(owner=ALICE) == []
    with pytest.raises(NotOwner):
        store.load(s.state.id, owner=ALICE)


def test_the_database_keeps_a_hash_of_the_owner_not_the_secret(store_url):
    with open_store(store_url) as store:
        store.save(tasks().state, owner=ALICE, expected=0)
    db = open_database(store_url)
    try:
        with db.transaction() as tx:
            (stored,) = tx.one("SELECT owner FROM flowdebug_sessions")
    finally:
        db.close()
    assert stored == owner_key(ALICE) and ALICE not in stored
