"""Which key a live call may send, and where.

The server's environment key (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, ``GEMINI_API_KEY``...)
belongs to whoever runs the server: it goes only to the vendor's own endpoint or to a URL the
host allowed in ``FLOWDEBUG_ALLOWED_BASE_URLS`` (comma-separated URL prefixes). A base URL typed
in the app gets the key typed with it, or a placeholder (OpenAI-compatible local servers accept
any key, but the SDKs insist on one); never the environment's.

The SDKs also add, by themselves, headers and account ids the host set in its environment
(``ANTHROPIC_CUSTOM_HEADERS``, ``OPENAI_CUSTOM_HEADERS``, which may carry an
``Authorization``; ``OPENAI_ORG_ID``, ``OPENAI_PROJECT_ID``). Those too go only where the key
may: :func:`withheld_headers` names what to take back for any other URL.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import SplitResult, urlsplit

from flowdebug.protocols import facts

ALLOWED_ENV = "FLOWDEBUG_ALLOWED_BASE_URLS"
_PORTS = {"http": 80, "https": 443}


def allowed_prefixes() -> list[str]:
    """The host's allowlist, from ``FLOWDEBUG_ALLOWED_BASE_URLS``."""
    return [p.strip() for p in os.environ.get(ALLOWED_ENV, "").split(",") if p.strip()]


def _origin(parts: SplitResult) -> tuple[str, str, int | None] | None:
    try:
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
    carrying its own credentials (``user:pass@``) is never under a prefix."""
    u, p = urlsplit(url.strip()), urlsplit(prefix.strip())
    if u.username is not None or u.password is not None:
        return False
    if _origin(u) is None or _origin(u) != _origin(p):
        return False
    base = p.path.rstrip("/")
    return u.path == base or u.path.startswith(base + "/") or (not base and not u.path)


def env_key_allowed(protocol: str, base_url: str | None) -> bool:
    """May the environment's key for ``protocol`` go to ``base_url``?"""
    if not base_url:
        return True
    vendor = facts(protocol).base_url
    prefixes = [vendor, *allowed_prefixes()] if vendor else allowed_prefixes()
    return any(within(base_url, prefix) for prefix in prefixes)


def env_header_names(protocol: str) -> list[str]:
    """The header names the SDK of ``protocol`` reads from its custom-headers variable (the
    vendor's facts name it: ``sdk_headers_env``), parsed the way the SDK parses it (one
    ``Name: value`` a line)."""
    var = facts(protocol).sdk_headers_env
    raw = os.environ.get(var, "") if var else ""
    names = [line[: line.find(":")].strip() for line in raw.split("\n") if ":" in line]
    return [n for n in names if n]


def withheld_headers(protocol: str, omit: Any) -> dict[str, Any]:
    """``default_headers`` for an SDK client whose base URL is not trusted: each header the
    SDK would take from the server's environment, mapped to the SDK's ``Omit`` marker
    ``omit`` so it is not sent."""
    return {name: omit for name in env_header_names(protocol)}
