"""Who holds what a session starts (flowdebug.engine.execution.resources), and the debugger
session's
MCP servers ending with its cycle, its reset and its release, against the real sample server."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import httpx
import pytest

from flowdebug.emulator.server import Emulator
from flowdebug.engine.execution.mcp_tools import list_server_tools
from flowdebug.engine.execution.resources import RESOURCES, Reaper, Resources
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.jobs import Job
from flowdebug.errors import UsageError
from flowdebug.players.keyword import KeywordPlayer, KeywordRule
from tests import plain_http
from tests.mcp_servers import SAMPLE_STDIO


class Thing:
    def __init__(self, name: str, log: list[str]):
        self.name, self.log = name, log

    def close(self) -> None:
        self.log.append(self.name)


def test_closing_an_owner_closes_what_it_holds_and_nothing_else():
    closed: list[str] = []
    res = Resources()
    a = res.open("alice", "db", lambda: Thing("alice-db", closed))
    assert res.open("alice", "db", lambda: Thing("again", closed)) is a  # one per key
    res.open("bob", "db", lambda: Thing("bob-db", closed))
    assert res.close("alice") == 1
    assert closed == ["alice-db"]
    assert res.owners() == {"bob"} and res.count() == 1


def test_a_child_is_closed_with_its_last_parent():
    closed: list[str] = []
    res = Resources()
    res.open("session-1", "mcp", lambda: Thing("server", closed))
    res.link("tab-a", "session-1")
    res.link("tab-b", "session-1")  # the same session open in two tabs
    assert res.close("tab-a") == 0 and closed == []
    assert res.roots() == {"tab-b"}
    assert res.close("tab-b") == 1 and closed == ["server"]
    assert res.owners() == set()


def test_letting_go_of_a_child_closes_it_unless_another_parent_holds_it():
    closed: list[str] = []
    res = Resources()
    res.open("s1", "mcp", lambda: Thing("s1", closed))
    res.link("tab-a", "s1")
    res.link("tab-b", "s1")
    assert res.let_go("tab-a", "s1") == 0
    assert res.let_go("tab-b", "s1") == 1
    deadline = time.monotonic() + 5
    while closed != ["s1"] and time.monotonic() < deadline:  # closed in the background
        time.sleep(0.01)
    assert closed == ["s1"]


def test_a_group_beyond_its_bound_closes_the_least_recently_used():
    closed: list[str] = []
    res = Resources(limits={"mcp": 2})
    for owner in ("a", "b"):
        res.open(owner, "k", lambda o=owner: Thing(o, closed), group="mcp")
    res.open("a", "k", lambda: Thing("a2", closed), group="mcp")  # a is used again
    res.open("c", "k", lambda: Thing("c", closed), group="mcp")
    assert _until(lambda: closed == ["b"])  # closed in the background
    assert res.count(group="mcp") == 2 and res.get("b", "k") is None


def test_a_closeable_that_fails_does_not_keep_the_others_open():
    closed: list[str] = []

    class Broken:
        def close(self) -> None:
            raise OSError("gone")

    res = Resources()
    res.add("o", 1, Broken())
    res.add("o", 2, Thing("fine", closed))
    assert res.close("o") == 2 and closed == ["fine"]


def test_the_reaper_closes_roots_nobody_vouches_for_after_its_grace():
    closed: list[str] = []
    res = Resources()
    res.open("orphan", "k", lambda: Thing("orphan", closed))
    res.open("s1", "k", lambda: Thing("s1", closed))
    res.link("browser:live", "s1")
    reaper = Reaper(lambda owner: owner.startswith("browser:live"), res, grace=2)
    assert reaper.sweep() == []  # first miss: a holder may be about to link it
    assert reaper.sweep() == ["orphan"]
    assert closed == ["orphan"] and res.owners() == {"browser:live", "s1"}


def test_the_reaper_skips_a_sweep_when_it_cannot_ask():
    res = Resources()
    res.open("o", "k", lambda: Thing("o", []))

    def broken(owner: str) -> bool:
        raise RuntimeError("no runtime yet")

    reaper = Reaper(broken, res, grace=1)
    assert reaper.sweep() == [] and res.owners() == {"o"}


def test_the_reaper_thread_runs_and_stops():
    closed: list[str] = []
    res = Resources()
    res.open("o", "k", lambda: Thing("o", closed))
    # The app's own reaper may already run in this process (an AppTest started it): only the
    # thread this reaper started must be gone.
    before = set(threading.enumerate())
    reaper = Reaper(lambda owner: False, res, interval=0.05, grace=1).start()
    (mine,) = [t for t in threading.enumerate() if t not in before]
    assert mine.name == "flowdebug-reaper" and mine.is_alive()
    deadline = time.monotonic() + 5
    while not closed and time.monotonic() < deadline:
        time.sleep(0.02)
    reaper.stop()
    assert closed == ["o"]
    assert not mine.is_alive()


# --- the debugger session's MCP servers ------------------------------------------------------


def _children() -> list[str]:
    """This process's live children's command lines (no psutil: /proc)."""
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z":
            found.append(cmd)
    return found


def _servers() -> int:
    return sum("sample_tools.mcp_server" in c for c in _children())


def _until(check, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


@pytest.fixture
def mcp_session():
    session = Session.from_scenario("mcp_weather")
    yield session
    session.release()


def test_a_listing_leaves_no_server_running():
    list_server_tools(SAMPLE_STDIO, refresh=True)
    assert _until(lambda: _servers() == 0)


def test_the_server_ends_with_the_cycle(mcp_session):
    assert _until(lambda: _servers() == 0)  # loading the scenario left nothing
    mcp_session.step()  # declaration
    mcp_session.step()  # the model's calls
    mcp_session.step()  # execution: the session's own server
    assert _servers() == 1 and RESOURCES.count(mcp_session.state.id) == 1
    mcp_session.step()  # continuation
    mcp_session.step()  # the final answer: the cycle is over
    assert mcp_session.done
    assert RESOURCES.count(mcp_session.state.id) == 0
    assert _until(lambda: _servers() == 0)


def test_a_reset_and_a_release_end_the_server(mcp_session):
    for _ in range(3):
        mcp_session.step()
    assert _servers() == 1
    mcp_session.undo_to(0)  # back at the start
    assert _until(lambda: _servers() == 0)
    for _ in range(3):
        mcp_session.step()
    assert _servers() == 1
    assert mcp_session.release() == 1
    assert _servers() == 0
    mcp_session.step()  # the next step that needs it starts it again
    mcp_session.undo()
    mcp_session.undo()
    mcp_session.step()
    assert _servers() == 1


def test_a_cancelled_job_takes_no_further_step(mcp_session):
    gate = threading.Event()

    def run_after_the_gate(session: Session) -> str:
        gate.wait(10)
        return session.run()

    job = Job(mcp_session, run_after_the_gate)
    job.cancel()  # the person clicked Cancel (or left) while the run was under way
    gate.set()
    assert job.wait(30)
    assert job.finish() is None  # never adopted
    assert job.clone.state.step == 0 and isinstance(job.error, UsageError)
    assert _servers() == 0


# --- one emulator, many players --------------------------------------------------------------


def test_one_emulator_answers_as_each_mounted_player():
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            {
                "type": "function",
                "function": {"name": "get_weather", "description": "The weather somewhere."},
            }
        ],
    }
    with Emulator() as emu:
        calls = emu.mount(KeywordPlayer([KeywordRule(tool="get_weather", word="weather")]), "a")
        text = emu.mount(KeywordPlayer([KeywordRule(tool="get_weather", word="nope")]), "b")
        assert emu.mount(KeywordPlayer([]), "a") == calls  # same name, same token

        def ask(mount: str) -> httpx.Response:
            url = emu.base_url("openai-chat", mount) + "/chat/completions"
            return plain_http.post(url, json=body, timeout=10)

        emu.mount(KeywordPlayer([KeywordRule(tool="get_weather", word="weather")]), "a")
        first = ask(calls).json()["choices"][0]["message"]
        second = ask(text).json()["choices"][0]["message"]
        assert first["tool_calls"][0]["function"]["name"] == "get_weather"
        assert second["content"] == "I have no tool for that."
        missing = ask("0" * 16)
        assert missing.status_code == 404
        assert "no player is mounted" in missing.text
