"""Start and stop the sample MCP server for the MCP tests (stdio spec, HTTP process)."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from flowdebug.mcp.spec import McpServerSpec

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ["python", "-m", "sample_tools.mcp_server"]
SAMPLE_STDIO = McpServerSpec(stdio=SAMPLE)
FAULTY_STDIO = McpServerSpec(stdio=[*SAMPLE, "--fault-tools"])


@contextmanager
def http_server(*extra: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """The sample server over streamable HTTP on a free loopback port: (process, URL)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "sample_tools.mcp_server", "--http", "--port", "0", *extra],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # "... listening on http://127.0.0.1:PORT/mcp"
        found = re.search(r"http://127\.0\.0\.1:\d+/mcp", line)
        assert found, f"the server did not start: {line!r}"
        # Keep reading so a chatty server never blocks on a full stderr pipe.
        threading.Thread(target=proc.stderr.read, daemon=True).start()
        yield proc, found.group(0)
    finally:
        proc.kill()
        proc.wait(5)
