"""Recording MCP traffic: a stdio server wrapped for its client, JSON-RPC lines recorded.

``flowdebug record --mcp-stdio "CMD"`` is what the MCP client starts instead of CMD: the
client's lines go to CMD's stdin and CMD's lines to the client's stdout unchanged, byte for
byte, each recorded as it passes; CMD's stderr is the wrapper's. The wrapper ends when CMD
does (with its exit status) or when the client closes stdin (CMD's stdin is closed then, and
CMD is waited for). The Streamable HTTP side is in :mod:`flowdebug.record.proxy`.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import threading
from contextlib import suppress
from typing import IO, Any

from flowdebug.errors import UsageError
from flowdebug.record.exchanges import mcp_exchange
from flowdebug.record.sessions import Recorder


def mcp_messages(raw: bytes) -> list[Any]:
    """The JSON-RPC messages in a body or line: one message, or a batch (a list)."""
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return []
    return value if isinstance(value, list) else [value]


def _pump(source: IO[bytes], sink: IO[bytes], direction: str, recorder: Recorder) -> None:
    try:
        for line in iter(source.readline, b""):
            sink.write(line)
            sink.flush()
            if line.strip():
                recorder.mcp(mcp_exchange(direction, "stdio", line, mcp_messages(line)))
    except (BrokenPipeError, ValueError, OSError):
        pass  # the other side is gone
    finally:
        if direction == "client":
            with suppress(OSError):
                sink.close()  # the client is done: so is the server's input


def wrap_stdio(
    command: str,
    recorder: Recorder,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
) -> int:
    """Run ``command`` between ``stdin``/``stdout`` (this process's by default), recording
    every line each way; returns its exit status."""
    args = shlex.split(command)
    if not args:
        raise UsageError("--mcp-stdio needs the command that starts the MCP server")
    try:
        child = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    except OSError as e:
        raise UsageError(f"cannot start {args[0]!r}: {e.strerror}") from None
    assert child.stdin is not None and child.stdout is not None
    client_in = stdin or sys.stdin.buffer
    client_out = stdout or sys.stdout.buffer
    to_server = threading.Thread(
        target=_pump, args=(client_in, child.stdin, "client", recorder), daemon=True
    )
    to_server.start()
    _pump(child.stdout, client_out, "server", recorder)
    return child.wait()
