"""Run Python source typed by a person in a child process.

The parent side is :func:`run_code`. The child side is this file run as a script
(``python -I sandbox.py``): it reads ``{"source", "arguments", "memory_mb", "marker"}`` as
JSON on stdin, defines the person's ``handler(args)``, calls it and writes the result as one
marker line on stdout after whatever the handler printed.

What the child gets: a minimal environment with nothing that looks like a secret, a fresh
temporary working directory, an address-space limit (``resource.setrlimit`` where the
platform has it), no core dumps, and a wall-clock limit after which its whole process group
is killed. This protects the debugger from hangs, crashes and leaked API keys; it is not a
security boundary against hostile code.

Only the standard library is imported here so the child starts fast.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

# Variables a child may inherit; everything else is dropped.
ENV_ALLOW = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT")
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)
OUTPUT_LIMIT = 64_000  # characters of stdout/stderr kept from a child

# A shared deployment turns code handlers off: strangers must not run code on the server.
DISABLE_ENV = "FLOWDEBUG_DISABLE_CODE_HANDLERS"
DISABLED_MESSAGE = (
    "code handlers are disabled on this server (FLOWDEBUG_DISABLE_CODE_HANDLERS); "
    "give the tool a fixed, template or rules handler instead"
)
_disabled_here = False

Status = Literal["ok", "error", "timeout", "crashed"]
_running: set[subprocess.Popen[bytes]] = set()  # killed if the debugger exits mid-run


@dataclass(frozen=True)
class SandboxResult:
    """What one run of a code handler produced.

    ``status``: ``ok`` (``value`` holds what ``handler`` returned), ``error`` (it raised:
    ``error`` is the last traceback line, ``traceback`` the handler's frames), ``timeout``
    (killed at the limit) or ``crashed`` (the process died: ``exit_code``, negative for a
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


def scrubbed_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a child runs with: allow-listed names whose name is not secret-like."""
    source = os.environ if environ is None else environ
    return {k: source[k] for k in ENV_ALLOW if k in source and not SECRET_NAME.search(k)}


def disable_code_handlers(disabled: bool = True) -> None:
    """Turn code handlers off (or back on) in this process. The environment variable
    ``FLOWDEBUG_DISABLE_CODE_HANDLERS=1`` turns them off whatever this says."""
    global _disabled_here
    _disabled_here = disabled


def code_handlers_enabled() -> bool:
    """False on a deployment that refuses to run code typed by a person."""
    env = os.environ.get(DISABLE_ENV, "").strip().lower()
    return not (_disabled_here or env in ("1", "true", "yes", "on"))


def run_code(
    source: str, arguments: Any, *, timeout: float, memory_mb: int | None = 256
) -> SandboxResult:
    """Run ``handler(arguments)`` from ``source`` in a child process, killed after ``timeout``
    seconds. Never raises for anything the code does; runs nothing when code handlers are
    disabled."""
    if not code_handlers_enabled():
        return SandboxResult("error", error=DISABLED_MESSAGE)
    marker = f"@@flowdebug-result-{uuid.uuid4().hex}@@"
    request = json.dumps(
        {"source": source, "arguments": arguments, "memory_mb": memory_mb, "marker": marker}
    )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="flowdebug-code-") as cwd:
        # -I: ignore PYTHON* variables and the user site; -u: unbuffered, so what the handler
        # printed before a crash still reaches us.
        proc = subprocess.Popen(
            [sys.executable, "-I", "-u", "-X", "utf8", os.path.abspath(__file__)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=scrubbed_env(),
            cwd=cwd,
            start_new_session=os.name == "posix",
        )
        _running.add(proc)
        try:
            out, err = proc.communicate(request.encode(), timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            _kill(proc)
            out, err = proc.communicate()
            timed_out = True
        finally:
            _running.discard(proc)
    elapsed = (time.perf_counter() - started) * 1000
    stdout = out.decode("utf-8", "replace")
    stderr = err.decode("utf-8", "replace")[-OUTPUT_LIMIT:]
    base = {"pid": proc.pid, "exit_code": proc.returncode, "duration_ms": elapsed}
    if timed_out:
        return SandboxResult("timeout", stdout=stdout, stderr=stderr, **base)
    printed, found, tail = stdout.rpartition(marker)
    if not found:
        return SandboxResult("crashed", stdout=stdout, stderr=stderr, **base)
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


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)  # the handler may have started children
        else:
            proc.kill()
    except ProcessLookupError:
        pass


@atexit.register
def _kill_running() -> None:
    for proc in list(_running):
        _kill(proc)


def describe_exit(code: int | None) -> str:
    """``exit code 3`` or ``signal SIGSEGV`` for a child's return code."""
    if code is not None and code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


# ---- the child side ---------------------------------------------------------------------


class _Bounded:
    """A text stream that writes through to ``raw`` until ``limit`` characters, then stops."""

    def __init__(self, raw: Any, limit: int):
        self.raw, self.left = raw, limit

    def write(self, text: str) -> int:
        if self.left > 0:
            self.raw.write(text[: self.left])
            if len(text) > self.left:
                self.raw.write("\n[output truncated]\n")
            self.left -= len(text)
        return len(text)

    def flush(self) -> None:
        self.raw.flush()


def _limit_resources(memory_mb: int | None) -> None:
    try:
        import resource
    except ImportError:  # not on Windows
        return
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if memory_mb:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _error_reply(exc: BaseException) -> dict[str, str]:
    import traceback

    if isinstance(exc, SyntaxError):
        text = "".join(traceback.format_exception_only(type(exc), exc))
    else:
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != "<handler>":
            tb = tb.tb_next  # show the person's frames, not ours
        text = "".join(traceback.format_exception(type(exc), exc, tb))
    lines = text.strip().splitlines()
    return {"error": lines[-1] if lines else type(exc).__name__, "traceback": text}


def _call_handler(source: str, arguments: Any) -> Any:
    import linecache

    linecache.cache["<handler>"] = (len(source), None, source.splitlines(True), "<handler>")
    namespace: dict[str, Any] = {"__name__": "__handler__"}
    exec(compile(source, "<handler>", "exec"), namespace)
    handler = namespace.get("handler")
    if not callable(handler):
        raise NameError("the code must define a function handler(args)")
    return handler(arguments)


def _child_main() -> None:
    import faulthandler

    faulthandler.enable()  # a segfault prints the Python stack on stderr before dying
    request = json.loads(sys.stdin.read())
    real_stdout, marker = sys.stdout, request["marker"]
    sys.stdout = _Bounded(real_stdout, OUTPUT_LIMIT)
    sys.stderr = _Bounded(sys.stderr, OUTPUT_LIMIT)
    try:
        _limit_resources(request["memory_mb"])
        value = _call_handler(request["source"], request["arguments"])
    except BaseException as exc:  # the person's code may raise anything, SystemExit included
        reply = json.dumps(_error_reply(exc), ensure_ascii=False)
    else:
        try:
            reply = json.dumps({"value": value}, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            error = f"TypeError: handler returned {type(value).__name__}, which is not JSON ({exc})"
            reply = json.dumps({"error": error, "traceback": ""}, ensure_ascii=False)
    real_stdout.write(marker + reply)
    real_stdout.flush()


if __name__ == "__main__":
    _child_main()
