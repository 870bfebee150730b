"""What the host allows: shared mode, the MCP URL allowlist and the ceilings of every limit.

A workshop runs one server for a room. ``FLOWDEBUG_SHARED=1`` says so, and then nothing a
person supplies (a tool typed on the Tools page, an imported trace, a scenario file, a stored
session, the command line) may run code or commands on the server:

- ``code`` handlers are refused (``FLOWDEBUG_DISABLE_CODE_HANDLERS=1`` alone refuses only
  these, and only when they run);
- ``python`` handlers are refused unless they name a function of the shipped sample tool sets;
- MCP servers started over ``stdio`` are refused, and an MCP server over HTTP must be at a URL
  the host lists in ``FLOWDEBUG_ALLOWED_MCP_URLS``.

Every refusal is a :class:`Refused` built by :func:`refusal`, so every entrance says the same.
Limits that come with data (a tool's timeout, a session's result cap, a code handler's memory)
are clamped to the host's ceilings (:func:`limits`) whatever the mode.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from urllib.parse import urlsplit

from flowdebug.errors import UsageError

SHARED_ENV = "FLOWDEBUG_SHARED"
DISABLE_CODE_ENV = "FLOWDEBUG_DISABLE_CODE_HANDLERS"
# A shared server's host may let code handlers run when the child is isolated from the
# server (``1``), or even when it is not (``unisolated``): see flowdebug.engine.isolation.
SHARED_CODE_ENV = "FLOWDEBUG_SHARED_CODE_HANDLERS"
ALLOWED_MCP_URLS_ENV = "FLOWDEBUG_ALLOWED_MCP_URLS"
MAX_TIMEOUT_ENV = "FLOWDEBUG_MAX_TOOL_TIMEOUT"
MAX_MEMORY_ENV = "FLOWDEBUG_MAX_CODE_MEMORY_MB"
MAX_RESULT_ENV = "FLOWDEBUG_MAX_RESULT_CHARS"

_TRUE = ("1", "true", "yes", "on")


class Refused(UsageError):
    """Something would run code or commands on a shared server, or reach a server the host
    did not allow. ``what`` names it (a tool's handler, an MCP server)."""

    def __init__(self, what: str, message: str):
        self.what = what
        super().__init__(message)


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def shared() -> bool:
    """True when the host runs one server for many people (``FLOWDEBUG_SHARED=1``)."""
    return _flag(SHARED_ENV)


def allowed_mcp_urls() -> list[str]:
    """The MCP URLs the host allows, from ``FLOWDEBUG_ALLOWED_MCP_URLS`` (comma or space
    separated); a URL allows itself and every path below it on the same scheme, host and port."""
    raw = os.environ.get(ALLOWED_MCP_URLS_ENV, "")
    return [u for u in raw.replace(",", " ").split() if u]


def url_allowed(url: str) -> bool:
    """Whether ``url`` is one of :func:`allowed_mcp_urls` or below one."""
    try:
        want = urlsplit(url)
        port = want.port
    except ValueError:
        return False
    for allowed in allowed_mcp_urls():
        try:
            base = urlsplit(allowed)
            base_port = base.port
        except ValueError:
            continue
        same_origin = (want.scheme, want.hostname, port) == (base.scheme, base.hostname, base_port)
        prefix = base.path.rstrip("/")
        below = want.path == prefix or want.path.startswith(prefix + "/")
        if same_origin and below and not want.username and not want.password:
            return True
    return False


def refusal(what: str, runs: str) -> Refused:
    """The one message of every refusal: ``what`` (e.g. "tool 'x': a code handler") would
    ``runs`` (e.g. "Python code typed by a person") on this shared server."""
    urls = ", ".join(allowed_mcp_urls()) or "none"
    return Refused(
        what,
        f"refused on this shared server ({SHARED_ENV}=1): {what} would {runs}. Here tools "
        "answer through fixed, template or rules handlers, the shipped sample tools, or an "
        f"MCP server at a URL the host allows ({ALLOWED_MCP_URLS_ENV}: {urls}); "
        "give it one of those instead",
    )


def mcp_refusal(stdio: list[str] | None, url: str | None, label: str) -> Refused | None:
    """On a shared server, why an MCP server started by ``stdio`` or reached at ``url`` is
    refused; None when it is allowed."""
    if not shared():
        return None
    if stdio is not None:
        return refusal(f"the MCP server ({label})", "start a command on the server")
    if url is not None and not url_allowed(url):
        return refusal(f"the MCP server {url!r}", "connect to a URL the host did not allow")
    return None


# -- limits ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """The host's ceilings. ``timeout`` (seconds) bounds every tool call; ``result_chars``
    bounds a result's text; the rest bound a code handler's child process: ``memory_mb`` its
    address space (``memory_mb: null`` in a handler means this), ``output_bytes`` what the
    parent reads from its stdout (stderr: ``error_bytes``), ``processes`` how many processes
    it may add, ``file_bytes`` the largest file it may write."""

    timeout: float
    result_chars: int
    memory_mb: int
    output_bytes: int = 4 * 1024 * 1024
    error_bytes: int = 256 * 1024
    processes: int = 16
    file_bytes: int = 16 * 1024 * 1024


def _number(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if math.isfinite(value) and value > 0 else default


def limits() -> Limits:
    """The ceilings in force: the environment's (``FLOWDEBUG_MAX_*``), else 30 s a call on a
    shared server (an hour elsewhere), a million characters a result and 512 MiB a child."""
    return Limits(
        timeout=_number(MAX_TIMEOUT_ENV, 30.0 if shared() else 3600.0),
        result_chars=int(_number(MAX_RESULT_ENV, 1_000_000)),
        memory_mb=int(_number(MAX_MEMORY_ENV, 512)),
    )


def clamp_timeout(seconds: float) -> float:
    """A timeout from data (a tool, a policy), no longer than the host allows."""
    return min(seconds, limits().timeout)


def clamp_result_chars(chars: int) -> int:
    """A result cap from data, no larger than the host allows."""
    return min(chars, limits().result_chars)


def clamp_memory_mb(memory_mb: int | None) -> int:
    """A code handler's memory limit: None (no limit asked) and anything larger than the
    host's ceiling become the ceiling."""
    ceiling = limits().memory_mb
    return ceiling if memory_mb is None else min(memory_mb, ceiling)
