"""The child side of a code handler's run: this file run as a script (``python -I
sandbox_child.py``) by :func:`flowdebug.engine.sandboxing.sandbox.run_code`.

It reads ``{"source", "arguments", "memory_mb", "processes", "file_bytes", "marker"}`` (and
how to contain itself: ``drop_to``, ``unshare_net``, ``sweep_all``) as JSON on stdin, contains
itself (:func:`_contain`), limits its own resources, defines the person's ``handler(args)``,
calls it, kills every process the handler left (:func:`_sweep`) and writes the result as one
marker line on stdout after whatever the handler printed (each stream kept to
:data:`OUTPUT_LIMIT` characters). It may be run from its text (``python -I -c``), so it needs
no file of its own.

Only the standard library is imported here so the child starts fast.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any

OUTPUT_LIMIT = 64_000  # characters of stdout/stderr kept from a child
PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER = 38, 36
NEW_NET = 0x10000000 | 0x40000000  # unshare(2): a user namespace and a network namespace


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


def _limit_resources(memory_mb: int, processes: int, file_bytes: int) -> None:
    try:
        import resource
    except ImportError:  # not on Windows
        return
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    # RLIMIT_NPROC counts every process of the user, not only ours: allow what runs already
    # plus a few. (root is exempt: the parent kills the whole tree at the end instead.)
    if os.geteuid() != 0:
        n = _user_tasks() + processes
        resource.setrlimit(resource.RLIMIT_NPROC, (n, n))


def _contain(request: dict[str, Any]) -> Any:
    """Before any of the person's code runs: no set-uid program may raise its privileges;
    orphans of the handler's processes become this process's children (so :func:`_sweep` and
    the parent find them after a ``setsid`` and a double fork); then become ``drop_to`` (a
    user of its own) when started as root. Returns libc (None off Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "could not set no_new_privs")
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    uid = request.get("drop_to")
    if uid is not None and os.geteuid() == 0:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    return libc


def _unshare_net(libc: Any) -> None:
    """A network namespace of our own, with nothing in it: no socket reaches anything."""
    import ctypes

    if libc is None or libc.unshare(NEW_NET) != 0:
        raise OSError(ctypes.get_errno() if libc else 0, "could not isolate the network")


def _sweep(everything: bool) -> None:
    """Kill what the handler started. ``everything``: every process this one may signal is
    the call's own (a user id or a pid namespace of its own); else its descendants."""
    import signal

    if everything:
        with contextlib.suppress(OSError):
            os.kill(-1, signal.SIGKILL)  # all we may signal but ourselves, in one step
        return
    for _ in range(200):  # until none is left (a process may fork while we kill)
        found = _descendants(os.getpid())
        if not found:
            return
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _descendants(root: int) -> list[int]:
    """Live processes below ``root``, from /proc."""
    parents: dict[int, int] = {}
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rpartition(b")")[2].split()
        except OSError:
            continue
        if fields and fields[0] not in (b"Z", b"X"):
            parents[pid] = int(fields[1])
    below, todo = [], [root]
    while todo:
        parent = todo.pop()
        kids = [p for p, pp in parents.items() if pp == parent]
        below += kids
        todo += kids
    return below


def _user_tasks() -> int:
    """Processes and threads of this user (what RLIMIT_NPROC counts)."""
    uid, total = str(os.getuid()), 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/status") as f:
                status = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        if status.get("Uid", "").split()[:1] == [uid]:
            total += int(status.get("Threads", "1"))
    return total


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
    os.environ.pop("PWD", None)  # bubblewrap's --chdir sets it; the parent passes none
    request = json.loads(sys.stdin.read())
    real_stdout, marker = sys.stdout, request["marker"]
    sys.stdout = _Bounded(real_stdout, OUTPUT_LIMIT)
    sys.stderr = _Bounded(sys.stderr, OUTPUT_LIMIT)
    try:
        libc = _contain(request)
        _limit_resources(request["memory_mb"], request["processes"], request["file_bytes"])
        if request.get("unshare_net"):  # after the limits: it hides our uid from /proc
            _unshare_net(libc)
    except BaseException as exc:  # not contained: the person's code does not run
        reply = json.dumps({"error": f"sandbox: {exc}", "traceback": ""})
        real_stdout.write(marker + reply)
        real_stdout.flush()
        return
    try:
        value = _call_handler(request["source"], request["arguments"])
    except BaseException as exc:  # the person's code may raise anything, SystemExit included
        reply = json.dumps(_error_reply(exc), ensure_ascii=False)
    else:
        try:
            reply = json.dumps({"value": value}, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            error = f"TypeError: handler returned {type(value).__name__}, which is not JSON ({exc})"
            reply = json.dumps({"error": error, "traceback": ""}, ensure_ascii=False)
    _sweep(bool(request.get("sweep_all")))
    real_stdout.write(marker + reply)
    real_stdout.flush()


if __name__ == "__main__":
    _child_main()
