"""Isolation of a code handler's child from the server, in each mode this machine can run
(flowdebug/engine/sandboxing/isolation.py): the attacks of issue 13 item 5, tried from a handler."""

from __future__ import annotations

import os
import socket
import sqlite3
import time
import uuid

import pytest

from flowdebug import hosting
from flowdebug.engine.sandboxing import isolation
from flowdebug.engine.sandboxing.sandbox import code_handlers_enabled, run_code
from tests.threads import no_thread_left

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs Linux /proc")


def available(mode: str) -> bool:
    return not isolation._resolve(mode).error


ISOLATED = [m for m in ("bwrap", "user") if available(m)]
EVERY = [*ISOLATED, "none"]


@pytest.fixture(autouse=True)
def private(monkeypatch):
    monkeypatch.delenv(hosting.SHARED_ENV, raising=False)
    monkeypatch.delenv(hosting.DISABLE_CODE_ENV, raising=False)
    monkeypatch.delenv(hosting.SHARED_CODE_ENV, raising=False)


def use(monkeypatch, mode: str) -> None:
    monkeypatch.setenv(isolation.ISOLATION_ENV, mode)


SNOOP = """
import os, socket
def attempt(path):
    try:
        if os.path.isdir(path):
            return "listed %d" % len(os.listdir(path))
        with open(path, "rb") as f:
            if path.endswith("/mem"):
                f.seek(int(open(path[:-3] + "stat").read().split()[25]))
            return "read %d" % len(f.read(64))
    except (OSError, ValueError) as e:
        return type(e).__name__

def handler(args):
    out = {p: attempt(p) for p in args["paths"]}
    try:
        socket.create_connection(("127.0.0.1", args["port"]), timeout=2).close()
        out["socket"] = "connected"
    except OSError as e:
        out["socket"] = type(e).__name__
    return out
"""


@pytest.fixture
def targets(tmp_path, monkeypatch):
    """What a handler must not reach: the server's environ and memory, its sessions
    database, ~/.ssh and a port it listens on."""
    db = tmp_path / "sessions.db"
    sqlite3.connect(db).execute("create table t (secret text)").connection.close()
    monkeypatch.setenv("FLOWDEBUG_DB", str(db))
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    me = os.getpid()
    paths = [f"/proc/{me}/environ", f"/proc/{me}/mem", str(db), os.path.expanduser("~/.ssh")]
    yield {"paths": paths, "port": server.getsockname()[1]}
    server.close()


@pytest.mark.parametrize("mode", ISOLATED)
def test_an_isolated_handler_sees_nothing_of_the_server(monkeypatch, targets, mode):
    use(monkeypatch, mode)
    res = run_code(SNOOP, targets, timeout=20)
    assert res.status == "ok", res
    for path in targets["paths"]:
        assert res.value[path] in ("PermissionError", "FileNotFoundError"), (path, res.value)
    assert res.value["socket"] != "connected"


def test_without_isolation_the_handler_reads_as_the_server(monkeypatch, targets):
    """Mode ``none`` is documented as not isolated: the same attack reads the server's
    environment (this is why a shared server refuses code handlers there)."""
    use(monkeypatch, "none")
    res = run_code(SNOOP, targets, timeout=20)
    assert res.status == "ok", res
    assert res.value[targets["paths"][0]].startswith("read")


# A grandchild that leaves the session, drops the mark (a fresh environment) and becomes
# another program: only a pid namespace, a user id of its own or a subreaper still hold it.
ESCAPE = """
import os, time
def handler(args):
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.execve("/bin/sleep", ["sleep", args["token"]], {})
        os._exit(0)
    os.waitpid(pid, 0)
    time.sleep(0.3)
    if args["how"] == "hang":
        time.sleep(120)
    if args["how"] == "exit":
        os._exit(0)
    return "returned"
"""


def survivors(token: str) -> list[int]:
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if token.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("mode", EVERY)
@pytest.mark.parametrize("how", ["hang", "return"])
def test_a_detached_reexecuted_grandchild_dies_with_the_call(monkeypatch, mode, how):
    use(monkeypatch, mode)
    token = f"{uuid.uuid4().int % 10**6}.{uuid.uuid4().int % 10**6}"
    started = time.monotonic()
    with no_thread_left():
        res = run_code(ESCAPE, {"token": token, "how": how}, timeout=2)
    assert res.status == ("timeout" if how == "hang" else "ok"), res
    assert time.monotonic() - started < 6
    assert survivors(token) == []


@pytest.mark.parametrize("mode", ISOLATED)
def test_a_child_that_exits_under_its_grandchild_still_takes_it_along(monkeypatch, mode):
    use(monkeypatch, mode)
    token = f"{uuid.uuid4().int % 10**6}.{uuid.uuid4().int % 10**6}"
    res = run_code(ESCAPE, {"token": token, "how": "exit"}, timeout=5)
    assert res.status == "crashed"
    assert survivors(token) == []


@pytest.mark.parametrize("mode", ISOLATED)
def test_a_fork_bomb_stops_at_the_process_limit_even_for_root(monkeypatch, mode):
    use(monkeypatch, mode)
    source = (
        "import os, time\n"
        "def handler(args):\n"
        "    n = 0\n"
        "    try:\n"
        "        for _ in range(200):\n"
        "            if os.fork() == 0:\n"
        "                time.sleep(30)\n"
        "                os._exit(0)\n"
        "            n += 1\n"
        "    except OSError:\n"
        "        return n\n"
    )
    res = run_code(source, {}, timeout=10)
    assert res.status == "ok" and res.value <= hosting.limits().processes, res


@pytest.mark.parametrize("mode", ISOLATED)
def test_an_isolated_handler_still_computes_and_writes_its_own_files(monkeypatch, mode):
    use(monkeypatch, mode)
    source = (
        "import json, math, os\n"
        "def handler(args):\n"
        "    with open('note.txt', 'w') as f:\n"
        "        f.write('hi')\n"
        "    return {'sqrt': math.sqrt(args['n']), 'file': open('note.txt').read()}\n"
    )
    res = run_code(source, {"n": 16}, timeout=20)
    assert (res.status, res.value) == ("ok", {"sqrt": 4.0, "file": "hi"}), res


def test_a_mode_this_machine_cannot_give_is_an_error_not_a_weaker_mode(monkeypatch):
    use(monkeypatch, "chroot")
    res = run_code("def handler(args):\n    return 1\n", {}, timeout=5)
    assert res.status == "error" and isolation.ISOLATION_ENV in res.error


def test_a_shared_server_runs_code_only_where_its_host_allows(monkeypatch):
    monkeypatch.setenv(hosting.SHARED_ENV, "1")
    use(monkeypatch, "none")
    assert not code_handlers_enabled()  # shared: refused by default
    monkeypatch.setenv(hosting.SHARED_CODE_ENV, "1")
    assert not code_handlers_enabled()  # opted in, but the child would not be isolated
    monkeypatch.setenv(hosting.SHARED_CODE_ENV, "unisolated")
    assert code_handlers_enabled()
    monkeypatch.setenv(hosting.DISABLE_CODE_ENV, "1")
    assert not code_handlers_enabled()  # the older switch still wins
    if ISOLATED:
        monkeypatch.delenv(hosting.DISABLE_CODE_ENV)
        monkeypatch.setenv(hosting.SHARED_CODE_ENV, "1")
        use(monkeypatch, ISOLATED[0])
        assert code_handlers_enabled()
