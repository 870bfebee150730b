"""Wire capture: what an SDK really sent and received, recorded at its HTTP layer.

Each SDK gets an httpx (or httpx2, the fork some SDKs use) client whose transport records the
exact request bytes and headers and the response body as the SDK reads it, so streams are
captured event by event while the SDK consumes them. Secrets never reach a recording:
credential headers and ``key=`` query parameters are replaced before anything is stored.
"""

from __future__ import annotations

import codecs
import inspect
import json
import operator
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import Any

from flowdebug.players.live.route import Route, guard
from flowdebug.redact import strip_url_credentials

REDACTED = "[redacted]"
SECRET_HEADERS = frozenset(
    {
        "x-api-key",
        "authorization",
        "x-goog-api-key",
        "api-key",
        "proxy-authorization",
        "cookie",
        "x-amz-security-token",  # an AWS session token (botocore's SigV4)
    }
)


class Secret:
    """An API key held in memory only: it prints as ``[redacted]`` and refuses to pickle,
    so it cannot end up in a repr, a log line, a trace or a saved session."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret({REDACTED!r})"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError("an API key is never pickled or saved")

    def __copy__(self) -> Secret:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Secret:
        return self

    def __bool__(self) -> bool:
        return bool(self._value)


def redact_headers(headers: Any) -> dict[str, str]:
    """A plain dict of ``headers`` with credentials replaced by ``[redacted]``."""
    return {k.lower(): REDACTED if k.lower() in SECRET_HEADERS else v for k, v in headers.items()}


def redact_url(url: str) -> str:
    """``url`` without ``user:pass@`` and with credential query parameters (``?key=...``)
    replaced."""
    return strip_url_credentials(url)


class SSEParser:
    """Turns server-sent-event bytes into the JSON values of their ``data:`` fields.

    Fed incrementally as the bytes arrive; ``[DONE]`` (OpenAI's terminator) is dropped and a
    data field that is not JSON is kept as its text so decoding can name the problem.
    """

    def __init__(self) -> None:
        self._text = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes, final: bool = False) -> list[Any]:
        text = self._pending + self._text.decode(chunk, final)
        # A chunk may end between the \r and \n of one line ending: wait for the next byte.
        hold = not final and text.endswith("\r")
        lines = re.split(r"\r\n|\r|\n", text[:-1] if hold else text)
        self._pending = lines.pop() + ("\r" if hold else "")
        if final:
            lines += [self._pending, ""]
            self._pending = ""
        events = []
        for line in lines:
            if line == "":
                if self._data:
                    events.extend(self._dispatch())
            elif line.startswith("data:"):
                value = line[5:]
                self._data.append(value[1:] if value.startswith(" ") else value)
        return events

    def _dispatch(self) -> list[Any]:
        data, self._data = "\n".join(self._data), []
        if data.strip() == "[DONE]":
            return []
        try:
            return [json.loads(data)]
        except ValueError:
            return [data]


class _Inflater:
    """Undoes the response's Content-Encoding (the SDK does the same on its side)."""

    def __init__(self, encoding: str):
        self.encoding = encoding.strip().lower()
        self._z = (
            zlib.decompressobj(32 + zlib.MAX_WBITS)
            if self.encoding in ("gzip", "deflate")
            else None
        )
        self.failed = self.encoding not in ("", "identity", "gzip", "deflate")

    def __call__(self, chunk: bytes) -> bytes:
        if self._z is None or self.failed:
            return chunk
        try:
            return self._z.decompress(chunk)
        except zlib.error:
            self.failed = True
            return chunk


@dataclass
class Capture:
    """One HTTP exchange as it went over the wire (secrets already redacted)."""

    method: str
    url: str
    request_headers: dict[str, str]
    request_body: bytes
    status: int | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: bytearray = field(default_factory=bytearray)
    events: list[Any] | None = None
    complete: bool = False
    on_event: Callable[[Any], None] | None = field(default=None, repr=False)
    _inflate: _Inflater | None = field(default=None, repr=False)
    _sse: SSEParser | None = field(default=None, repr=False)

    def respond(self, status: int, headers: Any) -> None:
        self.status = status
        self.response_headers = redact_headers(headers)
        self._inflate = _Inflater(self.response_headers.get("content-encoding", ""))
        if "text/event-stream" in self.response_headers.get("content-type", ""):
            self._sse = SSEParser()
            self.events = []

    def feed(self, chunk: bytes, final: bool = False) -> None:
        data = self._inflate(chunk) if self._inflate else chunk
        self.response_body += data
        if self._sse is not None and self.events is not None:
            for event in self._sse.feed(data, final):
                self.events.append(event)
                if self.on_event is not None:
                    self.on_event(event)
        if final:
            self.complete = True

    @property
    def response_text(self) -> str:
        return bytes(self.response_body).decode("utf-8", "replace")

    @property
    def request_text(self) -> str:
        return self.request_body.decode("utf-8", "replace")


@dataclass
class Recording:
    """Every HTTP exchange of one player call; ``last`` is the one that counts."""

    on_event: Callable[[Any], None] | None = None
    captures: list[Capture] = field(default_factory=list)

    @property
    def last(self) -> Capture | None:
        return self.captures[-1] if self.captures else None

    def start(self, request: Any) -> Capture:
        capture = Capture(
            method=request.method,
            url=redact_url(str(request.url)),
            request_headers=redact_headers(request.headers),
            request_body=bytes(request.content),
            on_event=self.on_event,
        )
        self.captures.append(capture)
        return capture


@cache
def tls_context(lib: ModuleType) -> Any:
    """The TLS context of every recording transport of ``lib``, made once per process: a
    transport made its own, reading the system's CA certificates again (about 25 ms of CPU at
    every live call). ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` count as when it is made. Sharing
    it is safe: the transports are HTTP/1.1 only, so the ALPN list each connection sets on it
    is always the same."""
    return lib.create_ssl_context()


@cache
def _transport_class(lib: ModuleType) -> type:
    """A recording transport for ``lib`` (httpx or httpx2: same API, different classes)."""

    class RecordingStream(lib.SyncByteStream):  # type: ignore[name-defined, misc]
        def __init__(self, inner: Any, capture: Capture):
            self.inner = inner
            self.capture = capture

        def __iter__(self) -> Iterator[bytes]:
            for chunk in self.inner:
                self.capture.feed(chunk)
                yield chunk
            self.capture.feed(b"", final=True)

        def close(self) -> None:
            self.inner.close()

    class RecordingTransport(lib.BaseTransport):  # type: ignore[name-defined, misc]
        def __init__(self, recording: Recording, route: Route):
            self.inner = lib.HTTPTransport(verify=tls_context(lib))
            guard(self.inner, route)
            self.recording = recording
            self.route = route

        def handle_request(self, request: Any) -> Any:
            self.route.add_query(request)
            request.read()
            capture = self.recording.start(request)
            response = self.inner.handle_request(request)
            capture.respond(response.status_code, response.headers)
            return lib.Response(
                response.status_code,
                headers=response.headers,
                stream=RecordingStream(response.stream, capture),
                extensions=response.extensions,
                request=request,
            )

        def close(self) -> None:
            self.inner.close()

    return RecordingTransport


def recording_client(
    lib: ModuleType, recording: Recording, timeout: float, route: Route | None = None
) -> Any:
    """An ``lib.Client`` (httpx or httpx2) that records into ``recording`` and sends along
    ``route`` (:mod:`flowdebug.players.live.route`: the base URL's query, the shared server's
    check of every connection)."""
    transport = _transport_class(lib)(recording, route or Route())
    return lib.Client(transport=transport, timeout=timeout)


def sdk_call(client: Any, method: str, body: dict[str, Any]) -> dict[str, Any]:
    """Call ``client``'s ``method`` (dotted: ``messages.count_tokens``) with ``body`` as its
    keyword arguments (:func:`split_parameters`); returns the keys sent through
    ``extra_body``."""
    call = operator.attrgetter(method)(client)
    kwargs, extra = split_parameters(call, body)
    call(**kwargs)
    return extra


def split_parameters(method: Any, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``body`` as keyword arguments for an SDK ``create`` method.

    A key the method has no parameter for (the SDK version predates or dropped it) goes
    through the SDK's ``extra_body`` so the body on the wire stays the codec's; the second
    value holds those keys (``{"extra_body": {...}}`` or ``{}``) so the caller can say so.
    """
    params = inspect.signature(method).parameters
    known = {k: v for k, v in body.items() if k in params and k != "extra_body"}
    extra = {k: v for k, v in body.items() if k not in known}
    if not extra:
        return known, {}
    return {**known, "extra_body": extra}, {"extra_body": extra}
