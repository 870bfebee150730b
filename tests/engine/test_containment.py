"""Containment: a code handler's output is capped in bytes as the parent reads it, its process
tree dies with the call, its limits cannot be lifted; declarative handlers cannot freeze or
flood the server."""

from __future__ import annotations

import os
import time

import pytest

from flowdebug import hosting
from flowdebug.engine.execution.canned_handlers import (
    MAX_FIELD_WIDTH,
    Rule,
    RulesHandler,
    TemplateHandler,
)
from flowdebug.engine.execution.handler_io import ToolContext
from flowdebug.engine.execution.handlers import CodeHandler
from flowdebug.engine.sandboxing.isolation import ISOLATION_ENV
from flowdebug.engine.sandboxing.sandbox import run_code
from tests.threads import no_thread_left


@pytest.fixture(autouse=True)
def private(monkeypatch):
    monkeypatch.delenv(hosting.SHARED_ENV, raising=False)
    monkeypatch.delenv(hosting.DISABLE_CODE_ENV, raising=False)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


FLOOD = "import os\ndef handler(args):\n    os.write(1, b'x' * (50 * 1024 * 1024))\n    return 1\n"

# A grandchild in a session of its own that keeps the child's stdout and stderr open.
DETACHED = """
import os, time
def handler(args):
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(120)
        os._exit(0)
    os.waitpid(pid, 0)
    time.sleep(0.2)
    grandchild = [int(p) for p in os.listdir("/proc") if p.isdigit() and _mine(int(p))]
    print("GRANDCHILD", *grandchild, flush=True)
    if args.get("hang"):
        time.sleep(120)
    return grandchild

def _mine(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read()
        return pid != os.getpid() and os.environ["FLOWDEBUG_SANDBOX"].encode() in env
    except OSError:
        return False
"""


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc")
def test_output_written_past_sys_stdout_is_capped_in_bytes_and_stops_the_child():
    started = time.monotonic()
    res = run_code(FLOOD, {}, timeout=20)
    assert res.status == "oversized"
    assert "more than 4 MiB to stdout" in res.error
    assert len(res.stdout) <= 64_000
    assert time.monotonic() - started < 10
    assert not alive(res.pid)
    out = CodeHandler(source=FLOOD).run({}, ToolContext())
    assert (out.is_error, out.error_type) == (True, "oversized")


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc")
def test_a_detached_grandchild_dies_with_the_call_that_returned(monkeypatch):
    # The grandchild's pid is read from inside the sandbox: the same as the host's only
    # without a pid namespace (tests/engine/test_sandbox_isolation.py covers the other modes).
    monkeypatch.setenv(ISOLATION_ENV, "none")
    started = time.monotonic()
    with no_thread_left():
        res = run_code(DETACHED, {}, timeout=20)
    assert res.status == "ok", res
    assert time.monotonic() - started < 5  # the grandchild holding stdout is not waited for
    (grandchild,) = res.value
    assert not alive(grandchild)


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc")
def test_a_detached_grandchild_dies_at_the_timeout_and_no_thread_is_left_waiting(monkeypatch):
    # The grandchild's pid is read from inside the sandbox: the same as the host's only
    # without a pid namespace (tests/engine/test_sandbox_isolation.py covers the other modes).
    monkeypatch.setenv(ISOLATION_ENV, "none")
    started = time.monotonic()
    with no_thread_left():
        res = run_code(DETACHED, {"hang": True}, timeout=1.5)
    assert res.status == "timeout"
    assert time.monotonic() - started < 4
    grandchild = int(res.stdout.split("GRANDCHILD")[1].split()[0])
    assert not alive(grandchild)


def test_memory_null_cannot_lift_the_memory_limit(monkeypatch):
    monkeypatch.setenv(hosting.MAX_MEMORY_ENV, "128")
    big = "def handler(args):\n    return len(bytearray(400 * 1024 * 1024))\n"
    for memory_mb in (None, 4096):
        out = CodeHandler(source=big, memory_mb=memory_mb).run({}, ToolContext())
        assert (out.is_error, out.error_type) == (True, "exception")
        assert out.content.rstrip().endswith("MemoryError")


def test_files_a_child_writes_are_capped_in_size():
    source = (
        "def handler(args):\n"
        "    with open('big', 'wb') as f:\n"
        "        f.write(b'x' * (64 * 1024 * 1024))\n"
    )
    out = CodeHandler(source=source).run({}, ToolContext())
    assert out.is_error and "File too large" in out.content


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores RLIMIT_NPROC")
def test_a_fork_bomb_stops_at_the_process_limit():
    source = (
        "import os\n"
        "def handler(args):\n"
        "    n = 0\n"
        "    try:\n"
        "        for _ in range(200):\n"
        "            if os.fork() == 0:\n"
        "                import time; time.sleep(30)\n"
        "            n += 1\n"
        "    except OSError:\n"
        "        return n\n"
    )
    res = run_code(source, {}, timeout=10)
    assert res.status == "ok" and res.value <= hosting.limits().processes


# -- declarative handlers --------------------------------------------------------------------------


def test_a_catastrophic_rule_pattern_does_not_freeze_the_server():
    rules = RulesHandler(rules=[Rule(match={"q": "^(a+)+$"}, result="matched")])
    started = time.monotonic()
    out = rules.run({"q": "a" * 40 + "b"}, ToolContext())
    assert time.monotonic() - started < 3  # unguarded, 2**40 steps
    assert out.is_error and out.content.startswith("no mock rule matches")


def test_a_rule_pattern_that_backtracks_too_long_is_an_error_result():
    rules = RulesHandler(rules=[Rule(match={"q": r"^(?:(a+)\1*)+$"}, result="matched")])
    started = time.monotonic()
    out = rules.run({"q": "a" * 32 + "b"}, ToolContext())
    assert time.monotonic() - started < 2
    assert (out.is_error, out.error_type) == (True, "timeout")
    assert "took longer than 0.25s on the argument 'q'" in out.content


def test_rule_patterns_still_match():
    rules = RulesHandler(rules=[Rule(match={"city": r"^(Paris|Tokyo)$"}, result="known")])
    assert rules.run({"city": "Tokyo"}, ToolContext()).content == "known"


@pytest.mark.parametrize(
    ("template", "arguments"),
    [
        ("{q:>1500000000}", {"q": "x"}),
        ("{q:.1500000000f}", {"q": 1.5}),
        ("{q:>{w}}", {"q": "x", "w": 1_500_000_000}),
        ("{q:0>99999999999999999999}", {"q": "x"}),
    ],
)
def test_a_template_width_cannot_allocate_gigabytes(template, arguments):
    started = time.monotonic()
    out = TemplateHandler(template=template).run(arguments, ToolContext())
    assert time.monotonic() - started < 3  # gigabytes would take far longer, or fail
    assert out.is_error and f"larger than {MAX_FIELD_WIDTH}" in out.content


def test_templates_cannot_reach_private_attributes():
    out = TemplateHandler(template="{q.__class__.__mro__}").run({"q": "x"}, ToolContext())
    assert out.is_error and "private attributes" in out.content


def test_ordinary_templates_still_fill():
    out = TemplateHandler(template="{city:>8}|{t:.1f}|{n[0]}").run(
        {"city": "Paris", "t": 18.04, "n": [3]}, ToolContext()
    )
    assert (out.is_error, out.content) == (False, "   Paris|18.0|3")


def test_a_filled_template_is_capped_at_the_hosts_result_size(monkeypatch):
    monkeypatch.setenv(hosting.MAX_RESULT_ENV, "1000")
    out = TemplateHandler(template="{q}" * 100).run({"q": "x" * 100}, ToolContext())
    assert out.is_error and "longer than 1000 characters" in out.content


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc")
def test_the_child_limits_its_processes_to_what_runs_plus_a_few():
    import subprocess
    import sys

    probe = (
        "import os, resource\n"
        "from flowdebug.engine.sandboxing import sandbox_child\n"
        "os.geteuid = lambda: 1000\n"  # the limit is set for any user but root, who ignores it
        "before = sandbox_child._user_tasks()\n"
        "sandbox_child._limit_resources(256, 16, 1 << 20)\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)\n"
        "fsize = resource.getrlimit(resource.RLIMIT_FSIZE)\n"
        "print(before, soft, hard, *fsize)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    before, soft, hard, fsize_soft, fsize_hard = map(int, out.stdout.split())
    # What runs (this user's tasks, counted again inside) plus the allowance; other processes
    # may start or end between the two counts, so only the order is exact.
    assert before > 0 and soft == hard and soft >= 16 + 1
    assert abs((soft - 16) - before) < max(100, before)
    assert fsize_soft == fsize_hard == 1 << 20
