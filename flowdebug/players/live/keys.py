"""Which key a live call may send, and where.

The server's environment key (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, ``GEMINI_API_KEY``...)
belongs to whoever runs the server: it goes only to the vendor's own endpoint or to a URL the
host allowed in ``FLOWDEBUG_ALLOWED_BASE_URLS`` (URL prefixes, read by :mod:`flowdebug.hosting`'s
one rule for every URL the server reaches). A base URL typed in the app gets the key typed with
it, or a placeholder (OpenAI-compatible local servers accept any key, but the SDKs insist on
one); never the environment's.

The SDKs also add, by themselves, headers and account ids the host set in its environment
(``ANTHROPIC_CUSTOM_HEADERS``, ``OPENAI_CUSTOM_HEADERS``, which may carry an
``Authorization``; ``OPENAI_ORG_ID``, ``OPENAI_PROJECT_ID``). Those too go only where the key
may: :func:`withheld_headers` names what to take back for any other URL.
"""

from __future__ import annotations

import os
from typing import Any

from flowdebug.hosting import ALLOWED_BASE_URLS_ENV as ALLOWED_ENV
from flowdebug.hosting import base_urls, url_allowed, within
from flowdebug.protocols import facts

__all__ = ["ALLOWED_ENV", "env_header_names", "env_key_allowed", "withheld_headers", "within"]


def env_key_allowed(protocol: str, base_url: str | None) -> bool:
    """May the environment's key for ``protocol`` go to ``base_url``?"""
    if not base_url:
        return True
    return url_allowed(base_url, base_urls(facts(protocol).base_url))


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
