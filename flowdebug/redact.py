"""Keep credentials out of everything flowdebug writes: the session store and every export.

Two rules, applied to JSON on its way out:

- by name: a string value under a key named like a credential (``api_key``, ``x-api-key``,
  ``token``, ``secret``, ``password``, ``authorization``, ``cookie``, ...) becomes
  ``[redacted]``. Counters such as ``max_tokens`` do not match. The person's own data is
  left alone by this rule: the conversation's messages, tool-call ``arguments``, results and
  mock replies (``result``, ``structured``) and mock rules (``when``, ``match``);
- by value: the values of environment variables named like secrets (``OPENAI_API_KEY``,
  ``GEMINI_API_KEY``, ...) and any key the app registered with :func:`register_secret`
  (one typed in the sidebar) are replaced wherever they occur, in any text.

A URL's own credentials (``https://user:pass@host``, ``?key=...``, ``&token=...``) are
removed by :func:`strip_url_credentials` wherever flowdebug shows or keeps a URL it was given,
and by :func:`redact_text` from every URL quoted in what the store and the exports write (a
live base URL, an MCP server's URL, a URL in a result).
"""

from __future__ import annotations

import base64
import json
import os
import re
import threading
from typing import Any
from urllib.parse import parse_qsl, unquote, unquote_plus, urlsplit, urlunsplit

REDACTED = "[redacted]"
# A key named like a credential, once camelCase, "-" and "." are spelled with "_".
SECRET_KEY = re.compile(
    r"(^|_)(api_?key|apikey|key|token|secret|password|passwd|authorization|auth|bearer"
    r"|credentials?|cookie|set_cookie)$"
)
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
# A cheap test on lower-cased JSON text before walking it: could a key be a credential's?
# (Substring tests run at memory speed; a regex alternation here costs 30x more.)
_MAYBE = (
    'key"',
    'token"',
    'secret"',
    "passw",
    "authori",
    'auth"',
    'bearer"',
    "credential",
    "cookie",
)
# Environment variables whose values are secrets: the names the sandbox keeps from children.
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)
SECRET_ENV = SECRET_NAME
MIN_SECRET = 12  # shorter values are too likely to be ordinary words to replace everywhere
EXEMPT = frozenset({"arguments", "result", "structured", "when", "match"})

_registered: set[str] = set()
_lock = threading.Lock()


def register_secret(value: str) -> None:
    """Treat ``value`` (a key typed in the app) as a secret from now on, in this process."""
    if len(value) >= MIN_SECRET:
        with _lock:
            _registered.add(value)


# The environment's secrets as last read, with what they were read from: a save asks at every
# Step, and reading the environment (each name decoded and matched) was a tenth of a save.
_from_env: tuple[object, list[str]] = ((), [])


def _env_secrets() -> list[str]:
    global _from_env
    raw = getattr(os.environ, "_data", None)  # CPython's encoded copy: one tuple to compare
    seen = tuple(raw.items()) if isinstance(raw, dict) else tuple(os.environ.items())
    if seen != _from_env[0]:
        found = [
            v for k, v in os.environ.items()
            if SECRET_ENV.search(k) and len(v.strip()) >= MIN_SECRET
        ]  # fmt: skip
        _from_env = (seen, found)
    return _from_env[1]


def secret_values() -> list[str]:
    """The secrets to replace wherever they occur, longest first."""
    found = set(_env_secrets())
    with _lock:
        found |= _registered
    return sorted(found, key=len, reverse=True)


def is_secret_name(name: str) -> bool:
    """``api_key``, ``apiKey``, ``x-api-key``, ``accessToken``: yes; ``max_tokens``: no."""
    snake = _CAMEL.sub(r"\1_\2", name).lower().replace("-", "_").replace(".", "_")
    return bool(SECRET_KEY.search(snake))


def redact_names(value: Any) -> Any:
    """A copy of JSON ``value`` with the string under every credential-named key redacted."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in EXEMPT:
                out[k] = v
            elif isinstance(v, str) and is_secret_name(str(k)):
                out[k] = REDACTED
            else:
                out[k] = redact_names(v)
        return out
    if isinstance(value, list):
        return [redact_names(v) for v in value]
    return value


def redact_text(text: str, secrets: list[str] | None = None) -> str:
    """``text`` with every secret value replaced (JSON-escaped forms too) and the
    credentials of every URL it quotes removed (:func:`strip_urls_in_text`)."""
    for secret in secret_values() if secrets is None else secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
        escaped = json.dumps(secret)[1:-1]
        if escaped != secret and escaped in text:
            text = text.replace(escaped, REDACTED)
    return strip_urls_in_text(text)


def redact_json_text(text: str, secrets: list[str] | None = None, names: bool = True) -> str:
    """JSON text with both rules applied (the name rule only when ``names``)."""
    low = text.lower() if names else ""
    if names and any(word in low for word in _MAYBE):
        cleaned = redact_names(json.loads(text))
        text = json.dumps(cleaned, ensure_ascii=False, separators=(",", ":"))
    return redact_text(text, secrets)


def redact_value(value: Any) -> Any:
    """JSON ``value`` with both rules applied."""
    text = json.dumps(value, ensure_ascii=False)
    return json.loads(redact_json_text(text))


# A URL inside free text or JSON text: what an error message, a log line, a stored tool's MCP
# server or a tool result may quote. No backslash inside: in JSON text a URL then stops before
# any escape, so rewriting it cannot break the JSON around it.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>`\\]+")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_URL_STOP = frozenset(" \t\r\n\f\v\"'<>`\\")
# Query parameters that carry a credential, beyond the names :func:`is_secret_name` knows: a
# shared access signature's ``sig``, Azure Functions' ``code``, a ``jwt``, a ``pwd``; and any
# name ending in ``signature`` (presigned S3 and GCS URLs: ``X-Amz-Signature``,
# ``X-Goog-Signature``).
_SECRET_PARAMS = frozenset({"sig", "signature", "code", "jwt", "pwd"})


def strip_url_credentials(url: str) -> str:
    """``url`` without its credentials: ``user:pass@`` is dropped and the value of every
    credential query parameter (``key``, ``api_key``, ``token``, ``access_token``,
    ``password``...) becomes ``[redacted]``, in the query and in a fragment written like one
    (an OAuth ``#access_token=...``). Anything that is not a URL comes back as is."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises on a malformed port)
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = netloc.rsplit("@", 1)[1]
    # Each value replaced where it stands, so the rest of the URL keeps its own spelling.
    query, fragment = _redacted_pairs(parts.query), _redacted_pairs(parts.fragment)
    if (netloc, query, fragment) == (parts.netloc, parts.query, parts.fragment):
        return url
    return urlunsplit(parts._replace(netloc=netloc, query=query, fragment=fragment))


def _redacted_pairs(query: str) -> str:
    return "&".join(_redacted_pair(pair) for pair in query.split("&"))


def _redacted_pair(pair: str) -> str:
    name, eq, _ = pair.partition("=")
    return f"{name}={REDACTED}" if eq and _secret_param(unquote_plus(name)) else pair


def _secret_param(name: str) -> bool:
    low = name.lower()
    return low in _SECRET_PARAMS or low.endswith("signature") or is_secret_name(name)


def strip_urls_in_text(text: str) -> str:
    """``text`` with :func:`strip_url_credentials` applied to every URL it quotes. Linear,
    and at memory speed when no URL carries an ``@`` or a query: it runs on every text the
    store and the exports write."""
    at = text.find("://")
    if at < 0:
        return text
    pieces, done = [], 0
    while at >= 0:
        start = at
        while start > done and text[start - 1] in _SCHEME_CHARS:
            start -= 1
        end = at + 3
        while end < len(text) and text[end] not in _URL_STOP:
            end += 1
        url = text[start:end]
        if start < at and _may_hold_credentials(url) and _URL.fullmatch(url):
            clean = strip_url_credentials(url)
            if clean != url:
                pieces += [text[done:start], clean]
                done = end
        at = text.find("://", end)
    return "".join([*pieces, text[done:]]) if pieces else text


# Words every credential query parameter :func:`_secret_param` knows contains.
_PARAM_WORDS: tuple[str, ...] = ("key", "token", "secret", "pass", "auth", "sig", "cred", "bearer")
_PARAM_WORDS += ("cookie", "code", "jwt", "pwd")


def _may_hold_credentials(url: str) -> bool:
    """A cheap test before parsing: a user part, or a query or fragment naming a credential."""
    if "@" in url:
        return True
    cut = min((i for i in (url.find("?"), url.find("#")) if i >= 0), default=len(url))
    query = url[cut + 1 :].lower()
    return "=" in query and any(word in query for word in _PARAM_WORDS)


# A query parameter (or a fragment's) wherever a text quotes one, with or without the URL before
# it (a server's error often repeats only the path and query it was sent): its name and value.
# A value stops where a JSON string or an HTML attribute would, so a rewrite keeps the text
# around it whole.
_QUERY_PARAM = re.compile(r"(?<=[?&;#])([A-Za-z0-9_.\-\[\]]+)=([^&;#\s\"'<>`\\]*)")


def strip_query_credentials(text: str) -> str:
    """``text`` with the value of every credential query parameter it quotes (``?token=...``,
    ``&api-key=...``, ``&sig=...``) made ``[redacted]``, whether a whole URL is around it or
    not. For what comes back from a server, which may echo the request's path and query."""
    if "=" not in text or not _may_hold_credentials("?" + text):
        return text

    def clean(m: re.Match[str]) -> str:
        if not _secret_param(m.group(1)) or m.group(2) in ("", REDACTED):
            return m.group(0)
        return f"{m.group(1)}={REDACTED}"

    return _QUERY_PARAM.sub(clean, text)


def scrub(value: Any, secrets: list[str], queries: bool = True) -> Any:
    """JSON ``value`` (or a text) with every one of ``secrets`` replaced in each string, the
    credentials of every URL it quotes removed and, when ``queries``, every credential query
    parameter's value (:func:`strip_query_credentials`). Other objects come back as they are."""
    if isinstance(value, str):
        text = strip_query_credentials(value) if queries else value
        return redact_text(text, secrets)
    if isinstance(value, dict):
        return {k: scrub(v, secrets, queries) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, secrets, queries) for v in value]
    return value


def url_secrets(url: str) -> list[str]:
    """The credential values inside ``url``, to :func:`register_secret` so they are redacted
    wherever else they turn up: credential query (and fragment) values, the password, and
    the ``Authorization: Basic`` value the HTTP client makes of the user part (a server's
    error may echo it); the user name too when it stands alone and is long enough to be a
    token (``https://<token>@host``)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    pairs = parse_qsl(parts.query) + parse_qsl(parts.fragment)
    found = [v for k, v in pairs if v and _secret_param(k)]
    user, password = parts.username, parts.password
    if password:
        found += [password, unquote(password)]
    elif user and len(user) >= MIN_SECRET:
        found += [user, unquote(user)]
    if user is not None:
        pair = f"{unquote(user)}:{unquote(password or '')}"
        found.append(base64.b64encode(pair.encode()).decode())
    return list(dict.fromkeys(found))
