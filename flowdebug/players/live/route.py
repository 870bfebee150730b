"""Where a live call's HTTP requests go, and what they carry there.

- **The base URL's query.** Every SDK appends its own path to the whole base URL, so a
  gateway's ``?token=...`` in it ended up inside the path (``/v1?token=X`` + ``chat/
  completions`` made ``/v1/?token=Xchat/completions``). The SDK is given the base URL without
  its query, and the recording transport adds the query back to every request to the base
  URL's origin, and to no other (a redirect elsewhere does not take the credential along).
- **Where a connection goes, on a shared server.** Each connection is checked when it is made,
  redirects' hops included: the host's name is resolved once, every address it resolves to
  must be public unless the host's allowlist names that host and port
  (:func:`flowdebug.hosting.address_refusal`), and the connection is made to the address that
  was checked, so a name that resolves again elsewhere (DNS rebinding) gains nothing.
"""

from __future__ import annotations

import importlib
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from flowdebug import hosting


@dataclass(frozen=True)
class Route:
    """How one call reaches its server: ``base_url`` is what the SDK is given (no query),
    ``query`` the base URL's own parameters for every request to ``origin``, ``guarded``
    whether connections are checked (shared mode) against the allowlist ``allowed``."""

    base_url: str | None = None
    query: tuple[tuple[str, str], ...] = ()
    origin: tuple[str, str, int | None] | None = None
    guarded: bool = False
    allowed: tuple[str, ...] = ()

    def add_query(self, request: Any) -> None:
        """Put the base URL's query on ``request`` (an httpx or httpx2 request) when it goes
        to the base URL's origin."""
        if self.query and hosting.origin(str(request.url)) == self.origin:
            request.url = request.url.copy_merge_params(list(self.query))


def route(base_url: str | None) -> Route:
    """The route of a call to ``base_url`` (None: the SDK's own endpoint) in this process's
    mode."""
    guarded = hosting.shared()
    allowed = tuple(hosting.allowed_base_urls() + hosting.own_urls()) if guarded else ()
    if not base_url:
        return Route(guarded=guarded, allowed=allowed)
    try:
        parts = urlsplit(base_url)
    except ValueError:
        return Route(base_url, guarded=guarded, allowed=allowed)
    bare = urlunsplit(parts._replace(query="", fragment=""))
    query = tuple(parse_qsl(parts.query, keep_blank_values=True))
    return Route(bare, query, hosting.origin(base_url), guarded, allowed)


class GuardedBackend:
    """An httpcore (or httpcore2) network backend that connects only where
    :func:`flowdebug.hosting.address_refusal` lets it: the name is resolved here, every
    address checked, and the connection made to a checked address."""

    def __init__(self, inner: Any, allowed: Iterable[str]):
        self.inner = inner
        self.allowed = list(allowed)

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> Any:
        try:
            found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as e:
            # No address: fail as the backend would, never let it resolve the name again (a
            # second answer, unchecked, may be the private one).
            raise _connect_error(self.inner)(str(e)) from e
        addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
        for address in addresses:
            refused = hosting.address_refusal(host, port, address, self.allowed)
            if refused is not None:
                raise refused
        failure: Exception = _connect_error(self.inner)(f"{host} resolves to no address")
        for address in addresses:
            try:
                return self.inner.connect_tcp(address, port, timeout, local_address, socket_options)
            except Exception as e:  # httpcore's ConnectError or ConnectTimeout: try the next
                failure = e
        raise failure

    def connect_unix_socket(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.connect_unix_socket(*args, **kwargs)

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


def _connect_error(backend: Any) -> type[Exception]:
    """The ``ConnectError`` of the httpcore (or httpcore2) that ``backend`` comes from: what
    its clients turn into their own connection error."""
    package = importlib.import_module(type(backend).__module__.split(".", 1)[0])
    error: type[Exception] = getattr(package, "ConnectError", OSError)
    return error


def guard(transport: Any, route: Route) -> None:
    """Make ``transport`` (an ``HTTPTransport`` of httpx or httpx2) connect through
    :class:`GuardedBackend` when ``route`` is guarded. Its connection pool holds the backend
    (httpcore's ``network_backend``); a version that no longer does is refused rather than
    left unguarded."""
    if not route.guarded:
        return
    pool = getattr(transport, "_pool", None)
    if pool is None or not hasattr(pool, "_network_backend"):
        raise hosting.Refused(
            "the live model's connection",
            "this httpx version's transport cannot be guarded on a shared server",
        )
    pool._network_backend = GuardedBackend(pool._network_backend, route.allowed)
