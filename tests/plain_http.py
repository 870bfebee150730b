"""``post`` and ``get`` for the tests' requests to servers of their own (the emulator, the
recorder), with one TLS context for all: httpx's module functions build a client per call,
and each client read the CA certificates again (about 25 ms of CPU) though these servers
speak plain HTTP."""

from __future__ import annotations

from typing import Any

import httpx

TLS = httpx.create_ssl_context()


def post(url: str, **kw: Any) -> httpx.Response:
    return httpx.post(url, verify=TLS, **kw)


def get(url: str, **kw: Any) -> httpx.Response:
    return httpx.get(url, verify=TLS, **kw)
