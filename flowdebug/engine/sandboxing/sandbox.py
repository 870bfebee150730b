"""Run Python source typed by a person in a child process.

This is the parent side, :func:`run_code`. The child side is
:mod:`flowdebug.engine.sandboxing.sandbox_child` run as a script (``python -I sandbox_child.py``):
it
reads ``{"source", "arguments", "memory_mb", "marker"}`` as JSON on stdin, defines the
person's ``handler(args)``, calls it and writes the result as one marker line on stdout after
whatever the handler printed.

What the child gets: a minimal environment with nothing that looks like a secret (``HOME`` and
``TMPDIR`` are its own fresh temporary directory), limits on its address space (the host's
ceiling when the handler asks for none), processes and file size, no core dumps,
``no_new_privs``, and a wall-clock limit. The parent reads its output in bytes, up to the
host's caps, and kills it past them; when the call ends (returned, timed out, over a cap) the
child and everything it started are killed (its user id, its pid namespace, its session, its
descendants, every process carrying its mark), so nothing outlives it and no thread waits.

How far it is kept from the server (its environment, memory, files, network) depends on the
isolation mode (:mod:`flowdebug.engine.sandboxing.isolation`): ``bwrap``, ``user`` or ``none``. In
``none`` the child runs as the server's user and can read what that user can, so a shared
server refuses code handlers there unless its host says otherwise.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import selectors
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from flowdebug import hosting
from flowdebug.engine.sandboxing import isolation, sandbox_child
from flowdebug.engine.sandboxing.sandbox_child import OUTPUT_LIMIT
from flowdebug.redact import SECRET_NAME

# Variables a child may inherit; everything else is dropped.
ENV_ALLOW = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT")
# Every process a child starts inherits this variable (unless it replaces its whole
# environment): with the child's session it finds what to kill when the call ends.
MARK_ENV = "FLOWDEBUG_SANDBOX"

# A shared deployment turns code handlers off: strangers must not run code on the server.
DISABLE_ENV = hosting.DISABLE_CODE_ENV
DISABLED_MESSAGE = (
    "code handlers are disabled on this server (FLOWDEBUG_DISABLE_CODE_HANDLERS); "
    "give the tool a fixed, template or rules handler instead"
)
_disabled_here = False

Status = Literal["ok", "error", "timeout", "crashed", "oversized"]
_running: set[subprocess.Popen[bytes]] = set()  # killed if the debugger exits mid-run


@dataclass(frozen=True)
class SandboxResult:
    """What one run of a code handler produced.

    ``status``: ``ok`` (``value`` holds what ``handler`` returned), ``error`` (it raised:
    ``error`` is the last traceback line, ``traceback`` the handler's frames), ``timeout``
    (killed at the limit), ``oversized`` (killed when its output passed the host's byte cap:
    ``error`` says which) or ``crashed`` (the process died: ``exit_code``, negative for a
    signal, and ``stderr`` with the fault handler's report).
    """

    status: Status
    value: Any = None
    error: str = ""
    traceback: str = ""
    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = None
    pid: int | None = None
    duration_ms: float = 0.0


def scrubbed_env(
    environ: Mapping[str, str] | None = None, home: str | None = None, mark: str | None = None
) -> dict[str, str]:
    """The environment a child runs with: allow-listed names whose name is not secret-like,
    ``HOME`` and ``TMPDIR`` pointing at its own directory, and its mark."""
    source = os.environ if environ is None else environ
    env = {k: source[k] for k in ENV_ALLOW if k in source and not SECRET_NAME.search(k)}
    if home is not None:
        env["HOME"] = env["TMPDIR"] = home
    if mark is not None:
        env[MARK_ENV] = mark
    return env


def disable_code_handlers(disabled: bool = True) -> None:
    """Turn code handlers off (or back on) in this process. The environment variable
    ``FLOWDEBUG_DISABLE_CODE_HANDLERS=1`` turns them off whatever this says."""
    global _disabled_here
    _disabled_here = disabled


def code_handlers_enabled() -> bool:
    """False on a deployment that refuses to run code typed by a person:
    ``FLOWDEBUG_DISABLE_CODE_HANDLERS=1``, or a shared server (``FLOWDEBUG_SHARED=1``) whose
    host did not let them run
    (:func:`flowdebug.engine.sandboxing.isolation.shared_code_allowed`)."""
    env = os.environ.get(DISABLE_ENV, "").strip().lower()
    if _disabled_here or env in ("1", "true", "yes", "on"):
        return False
    return not hosting.shared() or isolation.shared_code_allowed()


def run_code(
    source: str, arguments: Any, *, timeout: float, memory_mb: int | None = 256
) -> SandboxResult:
    """Run ``handler(arguments)`` from ``source`` in a child process, killed after ``timeout``
    seconds with every process it started. Never raises for anything the code does; runs
    nothing when code handlers are disabled.

    The host's limits (:func:`flowdebug.hosting.limits`) bound the timeout, the memory
    (``memory_mb`` None means the host's ceiling, not "none"), the bytes read from the child's
    stdout and stderr (past them it is killed), its processes and the size of its files.
    """
    if not code_handlers_enabled():
        return SandboxResult("error", error=DISABLED_MESSAGE)
    resolution = isolation.current()
    if resolution.error:
        return SandboxResult("error", error=f"code handlers cannot run here: {resolution.error}")
    limits = hosting.limits()
    timeout = min(timeout, limits.timeout)
    marker = f"@@flowdebug-result-{uuid.uuid4().hex}@@"
    mark = uuid.uuid4().hex
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="flowdebug-code-", ignore_cleanup_errors=True) as cwd:
        # -I: ignore PYTHON* variables and the user site; -u: unbuffered, so what the handler
        # printed before a crash still reaches us; -c: the launcher needs no file it can read.
        launcher = ["-I", "-u", "-X", "utf8", "-c", _launcher_source()]
        plan = isolation.plan(resolution, launcher, cwd)
        request = json.dumps(
            {
                "source": source,
                "arguments": arguments,
                "memory_mb": hosting.clamp_memory_mb(memory_mb),
                "processes": limits.processes,
                "file_bytes": limits.file_bytes,
                "marker": marker,
                "drop_to": plan.drop_to,
                "unshare_net": plan.unshare_net,
                "sweep_all": plan.sweep_all,
            }
        )
        try:
            proc = subprocess.Popen(
                plan.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=scrubbed_env(home=plan.home, mark=mark),
                cwd=cwd,
                start_new_session=os.name == "posix",  # its own session and process group
                **plan.popen,
            )
        except OSError as exc:
            isolation.release_uid(plan.uid)
            return SandboxResult("error", error=f"the code handler could not start: {exc}")
        _running.add(proc)
        try:
            out, err, ending = _exchange(proc, request.encode(), timeout, limits)
        finally:
            # Whatever the child left behind (a detached grandchild holding its stdout) ends
            # with the call: nothing outlives it, and no pipe is left for anyone to wait on.
            _kill_tree(proc, mark, plan.uid)
            _running.discard(proc)
            isolation.release_uid(plan.uid)
    elapsed = (time.perf_counter() - started) * 1000
    stdout = out.decode("utf-8", "replace")
    stderr = err.decode("utf-8", "replace")[-OUTPUT_LIMIT:]
    code = proc.returncode
    if plan.mode == "bwrap" and code is not None and code > 128:
        code = 128 - code  # bubblewrap exits 128+N when its child died of signal N
    base = {"pid": proc.pid, "exit_code": code, "duration_ms": elapsed}
    if ending == "timeout":
        return SandboxResult("timeout", stdout=stdout, stderr=stderr, **base)
    if ending != "exited":
        cap = limits.output_bytes if ending == "stdout" else limits.error_bytes
        error = (
            f"the handler wrote more than {_size(cap)} to {ending}, the limit on this server: "
            "it was stopped (return the data instead of printing it, or less of it)"
        )
        return SandboxResult("oversized", error=error, stdout=stdout[:OUTPUT_LIMIT], **base)
    printed, found, tail = stdout.rpartition(marker)
    if not found:
        return SandboxResult("crashed", stdout=stdout[:OUTPUT_LIMIT], stderr=stderr, **base)
    reply = json.loads(tail)
    if "error" in reply:
        return SandboxResult(
            "error",
            error=reply["error"],
            traceback=reply["traceback"],
            stdout=printed,
            stderr=stderr,
            **base,
        )
    return SandboxResult("ok", value=reply["value"], stdout=printed, stderr=stderr, **base)


@cache
def _launcher_source() -> str:
    with open(sandbox_child.__file__, encoding="utf-8") as f:
        return f.read()


def _size(n: int) -> str:
    return f"{n // 2**20} MiB" if n % 2**20 == 0 else f"{n // 1024} KiB"


def _exchange(
    proc: subprocess.Popen[bytes], request: bytes, timeout: float, limits: hosting.Limits
) -> tuple[bytes, bytes, str]:
    """Send ``request`` on the child's stdin and read its stdout and stderr, in this thread,
    until it exits (``"exited"``), ``timeout`` passes (``"timeout"``) or a stream passes its
    byte cap (``"stdout"`` / ``"stderr"``). Never waits on a pipe past the deadline: a
    grandchild that keeps the child's stdout open does not hold this call."""
    if os.name != "posix":  # no select() on pipes: bound the wait, not the bytes
        try:
            out, err = proc.communicate(request, timeout=timeout)
        except subprocess.TimeoutExpired:
            return b"", b"", "timeout"
        return out[: limits.output_bytes], err[: limits.error_bytes], "exited"
    assert proc.stdin and proc.stdout and proc.stderr
    deadline = time.monotonic() + timeout
    streams = {proc.stdout.fileno(): "stdout", proc.stderr.fileno(): "stderr"}
    caps = {"stdout": limits.output_bytes, "stderr": limits.error_bytes}
    got = {"stdout": bytearray(), "stderr": bytearray()}
    pending = memoryview(request)
    stdin = proc.stdin.fileno()
    with selectors.DefaultSelector() as sel:
        os.set_blocking(stdin, False)
        sel.register(stdin, selectors.EVENT_WRITE)
        for fd in streams:
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ)

        def read(fd: int) -> str | None:
            """Read what is there; the stream's name when it passed its cap."""
            name = streams[fd]
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                return None
            if not chunk:
                sel.unregister(fd)
                return None
            room = caps[name] - len(got[name])
            got[name] += chunk[:room]
            return name if len(chunk) > room else None

        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return bytes(got["stdout"]), bytes(got["stderr"]), "timeout"
            exited = _exited(proc)
            for key, _ in sel.select(0 if exited else min(left, 0.05)):
                if key.fd == stdin:
                    try:
                        pending = pending[os.write(key.fd, pending[:65536]) :]
                    except BrokenPipeError:
                        pending = pending[:0]
                    if not pending:
                        sel.unregister(key.fd)
                        proc.stdin.close()
                elif (over := read(key.fd)) is not None:
                    return bytes(got["stdout"]), bytes(got["stderr"]), over
            reading = [fd for fd in streams if fd in sel.get_map()]
            if exited or not reading:
                # The child is gone (or closed its output): what is left in the pipes is
                # all it wrote; a grandchild still holding them is not waited for.
                for fd in reading:
                    while fd in sel.get_map():
                        before = len(got[streams[fd]])
                        if (over := read(fd)) is not None:
                            return bytes(got["stdout"]), bytes(got["stderr"]), over
                        if len(got[streams[fd]]) == before:
                            break
                if exited:
                    return bytes(got["stdout"]), bytes(got["stderr"]), "exited"
                time.sleep(min(max(deadline - time.monotonic(), 0), 0.02))


def _exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the child has exited, without reaping it: until :func:`_kill_tree` reaps it,
    its pid (the id of its session) cannot be given to another process."""
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _kill_tree(proc: subprocess.Popen[bytes], mark: str, uid: int | None) -> None:
    """Kill the child, its process group and session, its descendants, every process of its
    own user id (``uid``) and every process carrying its mark; then reap the child and close
    the pipes."""
    if os.name == "posix":
        # Sweep until none is left alive: a process may fork while its siblings are killed,
        # and a killed one stays listed until the kernel has torn it down (bounded: 2 s).
        # The child itself goes last: while it lives, orphans are its children (it is their
        # subreaper), so none slips out of the tree to init.
        give_up = time.monotonic() + 2.0
        while True:
            found = isolation.tree(proc.pid, f"{MARK_ENV}={mark}", uid)
            for pid in found:
                with _quiet():
                    os.kill(pid, signal.SIGKILL)
            if not found or time.monotonic() > give_up:
                break
            time.sleep(0.01)
        with _quiet():
            os.killpg(proc.pid, signal.SIGKILL)
    with _quiet():
        proc.kill()
    with _quiet():
        proc.wait(timeout=5)
    if uid is not None:  # what it forked while dying
        for pid in isolation.tree(proc.pid, f"{MARK_ENV}={mark}", uid):
            with _quiet():
                os.kill(pid, signal.SIGKILL)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with _quiet():
                stream.close()


def _quiet() -> contextlib.suppress:
    """Ignore the errors of killing and closing what may already be gone."""
    return contextlib.suppress(OSError, subprocess.TimeoutExpired)


@atexit.register
def _kill_running() -> None:
    for proc in list(_running):
        with _quiet():
            if os.name == "posix":
                os.killpg(proc.pid, signal.SIGKILL)
            proc.kill()


def describe_exit(code: int | None) -> str:
    """``exit code 3`` or ``signal SIGSEGV`` for a child's return code."""
    if code is not None and code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"
