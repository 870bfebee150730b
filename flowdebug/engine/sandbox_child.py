"""The child side of a code handler's run: this file run as a script (``python -I
sandbox_child.py``) by :func:`flowdebug.engine.sandbox.run_code`.

It reads ``{"source", "arguments", "memory_mb", "processes", "file_bytes", "marker"}`` as JSON
on stdin, limits its own resources, defines the person's ``handler(args)``, calls it and writes
the result as one marker line on stdout after whatever the handler printed (each stream kept
to :data:`OUTPUT_LIMIT` characters).

Only the standard library is imported here so the child starts fast.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

OUTPUT_LIMIT = 64_000  # characters of stdout/stderr kept from a child


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
    request = json.loads(sys.stdin.read())
    real_stdout, marker = sys.stdout, request["marker"]
    sys.stdout = _Bounded(real_stdout, OUTPUT_LIMIT)
    sys.stderr = _Bounded(sys.stderr, OUTPUT_LIMIT)
    try:
        _limit_resources(request["memory_mb"], request["processes"], request["file_bytes"])
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
