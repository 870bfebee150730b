"""What the host allows: shared mode, the MCP URL allowlist and the ceilings of every limit.

A workshop runs one server for a room. ``FLOWDEBUG_SHARED=1`` says so, and then nothing a
person supplies (a tool typed on the Tools page, an imported trace, a scenario file, a stored
session, the command line) may run code or commands on the server:

- ``code`` handlers are refused (``FLOWDEBUG_DISABLE_CODE_HANDLERS=1`` alone refuses only
  these, and only when they run);
- ``python`` handlers are refused unless they name a function of the shipped sample tool sets;
- MCP servers started over ``stdio`` are refused, and an MCP server over HTTP must be at a URL
  the host lists in ``FLOWDEBUG_ALLOWED_MCP_URLS``.

Nor may it make the server connect where the host did not say: one rule (:func:`url_allowed`)
reads both lists. An MCP server's URL must be under one of ``FLOWDEBUG_ALLOWED_MCP_URLS``; a
live model's base URL under the vendor's own endpoint or one of ``FLOWDEBUG_ALLOWED_BASE_URLS``
(the list that also says where the server's own API keys may go), or at a server this process
runs itself (:func:`serving`: the offline emulator of the Compare page). No URL whose path
climbs (``/v1/../admin``) is under anything. And where a connection
really goes is checked when it is made (:func:`address_refusal`): a host that resolves to a
loopback, private, link-local (the cloud metadata service) or otherwise non-public address is
refused unless the allowlist names that host and port, for every hop of a redirect too.

Every refusal is a :class:`Refused` built by :func:`refusal`, so every entrance says the same.
Limits that come with data (a tool's timeout, a session's result cap, a code handler's memory)
are clamped to the host's ceilings (:func:`limits`) whatever the mode.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
import threading
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from flowdebug.errors import UsageError
from flowdebug.redact import strip_url_credentials

SHARED_ENV = "FLOWDEBUG_SHARED"
DISABLE_CODE_ENV = "FLOWDEBUG_DISABLE_CODE_HANDLERS"
# A shared server's host may let code handlers run when the child is isolated from the
# server (``1``), or even when it is not (``unisolated``): see
# flowdebug.engine.sandboxing.isolation.
SHARED_CODE_ENV = "FLOWDEBUG_SHARED_CODE_HANDLERS"
ALLOWED_MCP_URLS_ENV = "FLOWDEBUG_ALLOWED_MCP_URLS"
ALLOWED_BASE_URLS_ENV = "FLOWDEBUG_ALLOWED_BASE_URLS"
MAX_TIMEOUT_ENV = "FLOWDEBUG_MAX_TOOL_TIMEOUT"
MAX_MEMORY_ENV = "FLOWDEBUG_MAX_CODE_MEMORY_MB"
MAX_RESULT_ENV = "FLOWDEBUG_MAX_RESULT_CHARS"
RESUME_ENV = "FLOWDEBUG_RESUME_LAST"

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


def resume_last() -> bool:
    """Whether opening the app without a session in its address resumes the session saved
    last (the default: this browser's own on a shared server). ``FLOWDEBUG_RESUME_LAST=0``
    starts every visitor on a new session instead: for a room on one server that is not
    shared, where the session saved last is somebody else's."""
    return os.environ.get(RESUME_ENV, "1").strip().lower() in _TRUE


def allowlist(env: str) -> list[str]:
    """The URLs the host lists in the variable ``env`` (comma or space separated)."""
    raw = os.environ.get(env, "")
    return [u for u in raw.replace(",", " ").split() if u]


def allowed_mcp_urls() -> list[str]:
    """The MCP URLs the host allows, from ``FLOWDEBUG_ALLOWED_MCP_URLS``."""
    return allowlist(ALLOWED_MCP_URLS_ENV)


def allowed_base_urls() -> list[str]:
    """The base URLs the host allows besides the vendors' own, from
    ``FLOWDEBUG_ALLOWED_BASE_URLS``."""
    return allowlist(ALLOWED_BASE_URLS_ENV)


def base_urls(vendor: str | None) -> list[str]:
    """Where a live model of the vendor whose own endpoint is ``vendor`` may be reached."""
    return [vendor, *allowed_base_urls()] if vendor else allowed_base_urls()


# The servers this process runs itself (the offline emulator the Compare page asks): a live
# model may be reached there whatever the mode, as the app's own offline model. Not a place
# the host's API keys may go (that is :func:`allowed_base_urls` alone).
_own: set[str] = set()
_own_lock = threading.Lock()


def serving(url: str, up: bool = True) -> None:
    """Say this process serves ``url`` itself (``up=False``: no longer)."""
    with _own_lock:
        (_own.add if up else _own.discard)(url)


def own_urls() -> list[str]:
    """The URLs this process serves itself (:func:`serving`)."""
    with _own_lock:
        return sorted(_own)


_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> tuple[str, str, int | None] | None:
    """``url``'s scheme, host and port (the scheme's default when it names none), lower-cased;
    None when it has no host."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port or _PORTS.get(parts.scheme.lower())
    except ValueError:
        return None
    if not parts.hostname:
        return None
    return parts.scheme.lower(), parts.hostname.lower(), port


def within(url: str, prefix: str) -> bool:
    """Is ``url`` under ``prefix``? Compared as URLs, not as text: same scheme, host and
    port, and the path continues at a ``/`` (so ``https://api.openai.com.evil.example`` and
    ``https://api.openai.com@evil.example`` are not under ``https://api.openai.com``). A URL
    carrying its own credentials (``user:pass@``) is never under a prefix, nor one whose path
    climbs (``/v1/../admin``, ``/v1/%2e%2e/admin``: the client, or the server after decoding,
    resolves the ``..`` and lands outside the prefix)."""
    try:
        u, p = urlsplit(url.strip()), urlsplit(prefix.strip())
    except ValueError:
        return False
    if u.username is not None or u.password is not None or _climbs(u.path):
        return False
    if origin(url) is None or origin(url) != origin(prefix):
        return False
    base = p.path.rstrip("/")
    return u.path == base or u.path.startswith(base + "/") or (not base and not u.path)


def _climbs(path: str) -> bool:
    """Does ``path`` hold a ``.`` or ``..`` segment, as sent or percent-decoded (once by the
    server, twice by a proxy in front of it), between ``/`` or ``\\`` (which some servers
    read as ``/``)?"""
    decoded = unquote(unquote(path))
    return any(seg in (".", "..") for seg in re.split(r"[/\\]", decoded))


def url_allowed(url: str, prefixes: list[str] | None = None) -> bool:
    """The one rule for every URL the server is asked to reach: is ``url`` under one of
    ``prefixes`` (by default the MCP allowlist, :func:`allowed_mcp_urls`)?"""
    listed = allowed_mcp_urls() if prefixes is None else prefixes
    return any(within(url, prefix) for prefix in listed)


def host_allowed(host: str, port: int, prefixes: list[str]) -> bool:
    """Does one of ``prefixes`` name ``host`` at ``port``? What a connection knows of its URL."""
    want = (host.strip("[]").lower(), port)
    return any((o[1], o[2]) == want for o in map(origin, prefixes) if o is not None)


# Addresses named for what they are; the metadata services of the clouds (AWS, GCP, Azure,
# Oracle: 169.254.169.254; AWS over IPv6; Alibaba) hand out the server's own credentials.
_METADATA = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200")
)


# IPv6 prefixes whose last 32 bits are an IPv4 address a packet may end up at: IPv4-mapped,
# IPv4-translated (RFC 2765), IPv4-compatible (deprecated, still routed by some stacks) and
# NAT64's well-known prefix (RFC 6052).
_V4_IN_V6 = tuple(
    ipaddress.ip_network(n) for n in ("::ffff:0:0/96", "::ffff:0:0:0/96", "::/96", "64:ff9b::/96")
)


def _embedded(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address ``ip`` carries (6to4's too), judged in its place: ``::127.0.0.1``,
    ``64:ff9b::7f00:1`` and ``2002:7f00:1::`` reach loopback as ``::ffff:127.0.0.1`` does."""
    if ip.sixtofour is not None:
        return ip.sixtofour
    if any(ip in net for net in _V4_IN_V6) and int(ip) & 0xFFFFFFFF > 1:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_kind(address: str) -> str | None:
    """Why the server may not connect to ``address`` (an IP) unasked: ``loopback``,
    ``private``, ``link-local``, ``cloud metadata``... None for a public address."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return "unparsable"
    if isinstance(ip, ipaddress.IPv6Address):
        ip = _embedded(ip) or ip
    kinds = (
        (ip in _METADATA, "cloud metadata"),
        (ip.is_loopback, "loopback"),
        (ip.is_link_local, "link-local"),
        (ip.is_unspecified, "unspecified"),
        (ip.is_multicast, "multicast"),
        (ip.is_private or getattr(ip, "is_site_local", False), "private"),
        (not ip.is_global, "non-public"),
    )
    return next((kind for hit, kind in kinds if hit), None)


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


def _unreachable(what: str, why: str, env: str, listed: list[str]) -> Refused:
    """The one message of a connection the host did not allow."""
    shown = ", ".join(strip_url_credentials(u) for u in listed)
    return Refused(
        what,
        f"refused on this shared server ({SHARED_ENV}=1): {what} {why}. The server connects "
        f"only where the host allows ({env}: {shown or 'none'}); "
        "use one of those",
    )


def base_url_refusal(url: str | None, vendor: str | None, shown: str | None) -> Refused | None:
    """On a shared server, why a live model may not be reached at ``url`` (its base URL;
    ``shown`` is the same without credentials): it is neither under the vendor's own
    endpoint ``vendor`` nor under one the host allowed. None when it may."""
    if not shared() or not url:
        return None
    listed = base_urls(vendor)
    if url_allowed(url, listed + own_urls()):
        return None
    return _unreachable(
        f"the base URL {shown or url!r}",
        "is not the vendor's endpoint nor one the host allowed",
        ALLOWED_BASE_URLS_ENV,
        listed,
    )


def address_refusal(host: str, port: int, address: str, prefixes: list[str]) -> Refused | None:
    """On a shared server, why a connection to ``host``:``port``, which resolved to
    ``address``, is refused: the address is not public and no one of ``prefixes`` (the
    host's allowlist) names that host and port. None when it may connect."""
    if not shared():
        return None
    kind = address_kind(address)
    if kind is None or host_allowed(host, port, prefixes):
        return None
    return _unreachable(
        f"the host {host}:{port}",
        f"resolves to {address}, a {kind} address",
        ALLOWED_BASE_URLS_ENV,
        prefixes,
    )


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
