"""Several app servers on one database (issue 13 item 10): each server process has its own
:class:`Store` (its own memory of what it wrote), and none may lose or mix another's writes.

Run on SQLite and on a real PostgreSQL server (tests/pgserver.py); the browser side, two real
app servers, is tests/e2e/test_two_servers.py.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from flowdebug.engine.execution.runtime import Policy
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.session_state import SessionState
from flowdebug.model import Conversation, Message, Text
from flowdebug.store.sessions import open_store
from sample_tools import toolset
from tests import pgserver

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pg_server():
    server = pgserver.start_or_skip()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "sessions.db")
    server = request.getfixturevalue("pg_server")
    return server.create_database(f"s_{uuid.uuid4().hex[:10]}")


def same(a: SessionState, b: SessionState) -> bool:
    return a.model_dump_json() == b.model_dump_json()


def test_a_session_deleted_and_made_again_elsewhere_is_not_mixed_with_what_we_wrote(store_url):
    # Server one wrote the session at revision 1 and remembers its rows; server two deletes it
    # and saves another history under the same id, at revision 1 again. Server one's next save
    # must not take the rows it remembers for the ones in the database.
    with open_store(store_url) as one, open_store(store_url) as two:
        ours = Session.from_scenario("tasks")
        for _ in range(4):
            ours.step()
        one.save(ours.state)
        two.delete(ours.state.id)
        theirs = Session.from_scenario("weather")
        theirs.state.id = ours.state.id
        theirs.step()
        assert two.save(theirs.state).revision == 1
        ours.step()
        one.save(ours.state)  # no revision given (the CLI): the last save wins, whole
        assert same(two.load(ours.state.id), ours.state)


def test_a_server_sees_that_another_one_saved_without_reading_the_session(store_url):
    with open_store(store_url) as one, open_store(store_url) as two:
        s = Session.from_scenario("tasks")
        revision = one.save(s.state, expected=0).revision
        assert two.revision(s.state.id) == one.revision(s.state.id) == revision
        theirs, at = two.resume_at(s.state.id)
        theirs.step()
        two.save(theirs.state, expected=at)
        assert one.revision(s.state.id) == revision + 1
        two.delete(s.state.id)
        assert one.revision(s.state.id) is None
        assert one.revision("no-such-session") is None


def test_servers_starting_together_on_a_new_database_migrate_it_once(store_url):
    # Each process migrates on start; PostgreSQL serialises them with an advisory lock, SQLite
    # with its write lock. None may fail on a table another one is making.
    code = "import sys; from flowdebug.store.sessions import open_store; open_store(sys.argv[1])"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, store_url],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-2000:]
    with open_store(store_url) as store, store._db.transaction() as tx:
        versions = [v for (v,) in tx.all("SELECT version FROM flowdebug_migrations ORDER BY 1")]
    assert versions == list(range(1, store.version + 1))


# One app server: load the session, step, save based on the revision read; when the other
# server saved in between, the save is refused: read the newer steps and step again.
WRITER = textwrap.dedent(
    """
    import sys
    from flowdebug.engine.session.debugger import Session
    from flowdebug.players import ScriptedPlayer, ScriptedTurn
    from flowdebug.store.sessions import StaleSession, open_store

    url, sid, wanted = sys.argv[1], sys.argv[2], int(sys.argv[3])
    turn = ScriptedTurn.model_validate(
        {"calls": [{"name": "get_weather", "arguments": {"location": "Paris"}}]}
    )
    player = ScriptedPlayer([turn], repeat_last=True)
    saved = refused = 0
    with open_store(url) as store:
        print("ready", flush=True)
        sys.stdin.readline()  # both servers ready: go at once
        state, revision = store.load_at(sid)
        while saved < wanted:
            session = Session(state, player)
            session.step()
            try:
                revision = store.save(session.state, expected=revision).revision
            except StaleSession:
                refused += 1
                state, revision = store.load_at(sid)
                continue
            saved += 1
            print("saved", session.state.step, flush=True)
            state = session.state
    print("refused", refused, flush=True)
    """
)


def test_two_servers_stepping_one_session_lose_none_of_each_others_steps(store_url):
    tools = toolset("weather")
    state = SessionState(
        conversation=Conversation(
            tools=tools.tools, messages=[Message(role="user", parts=[Text(text="Watch it.")])]
        ),
        toolset=tools,
        policy=Policy(max_rounds=10_000),
    )
    with open_store(store_url) as store:
        store.save(state, expected=0)
    each = 30
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, store_url, state.id, str(each)],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for proc in procs:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    steps: list[int] = []
    refused = 0
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-2000:]
        lines = out.split("\n")
        steps += [int(line.split()[1]) for line in lines if line.startswith("saved")]
        refused += int(next(x for x in lines if x.startswith("refused")).split()[1])
    # Every step saved by one server or the other, each once: none overwritten, none lost.
    assert sorted(steps) == list(range(1, 2 * each + 1))
    with open_store(store_url) as store:
        final, revision = store.load_at(state.id)
        assert final.step == 2 * each and revision == 2 * each + 1
        assert [e.step for e in final.events] == sorted(e.step for e in final.events)
        assert {e.step for e in final.events} == set(range(1, 2 * each + 1))
        # Every model turn has its results: the two servers' steps were not interleaved.
        roles = [m.role for m in final.conversation.messages]
        assert roles[:3] == ["user", "assistant", "tool"]
        assert all(a != b for a, b in itertools.pairwise(roles[1:]))
    print(f"{refused} stale saves refused and retried")  # shown with -s
