"""The recording proxy's ASGI app (Starlette): forward, stream back, record.

A POST on a vendor's route (the emulator's routes: each vendor's facts) is read whole (up to the
proxy's cap: the vendor's 413 beyond it) and sent unchanged to the upstream, the vendor's own
endpoint by default: its path is the agent's with the vendor's base path (OpenAI's ``/v1``)
put after the upstream's base URL. The answer's status, headers and body bytes go back as they
arrive (SSE and AWS event-stream frames alike, never held back: each chunk is handed on as it
is read, the recording's copy costing only CPU time); the exchange is decoded and saved once
the answer is over, on the recorder's thread. An agent that hangs up before the answer's end
(OpenAI's SDK does at ``data: [DONE]``) leaves it read on for the recording, for a grace of two
seconds: a complete answer is recorded as complete whenever the agent stopped reading, and what
the recording holds is what the upstream sent (the agent may have read less of it).

Headers go on as the agent sent them, keys included, except the hop-by-hop ones, and
``Accept-Encoding`` narrowed to what the recording can read back (gzip, deflate). The recording
keeps them with credentials redacted (:func:`flowdebug.players.live.wire.redact_headers`).

With an MCP URL, ``/mcp`` (and the paths under it) stands in front of that Streamable HTTP
server: POST, GET and DELETE pass through, and every JSON-RPC message of a body or of an SSE
event is recorded as it passes (:mod:`flowdebug.record.mcp`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from flowdebug import protocols
from flowdebug.emulator.app import TooLarge, read_body, request_target, vendor_error, vendor_route
from flowdebug.errors import FlowdebugError
from flowdebug.players.live.wire import Capture, redact_headers
from flowdebug.record.exchanges import mcp_exchange, model_exchange
from flowdebug.record.sessions import Recorder
from flowdebug.redact import strip_url_credentials

log = logging.getLogger("flowdebug.record")
MCP_PATH = "/mcp"
# Headers of one connection, not of the request (RFC 9110 7.6.1), and those httpx sets itself.
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
     "upgrade", "proxy-authorization", "proxy-authenticate", "host", "content-length"}
)  # fmt: skip
READABLE_ENCODINGS = ("gzip", "deflate", "identity")
TIMEOUT = httpx.Timeout(connect=10, read=600, write=60, pool=10)  # a model may think for minutes
GRACE = 2.0  # seconds an answer is still read for the recording after its agent hung up


class Host(Protocol):
    """What the app serves (a :class:`~flowdebug.record.server.RecordingProxy`)."""

    recorder: Recorder
    upstream: str | None
    # The forward proxy's: where each host it intercepts goes (the request's Host names it).
    upstreams: Mapping[str, str] | None
    mcp_url: str | None
    max_body: int

    def serving(self, loop: asyncio.AbstractEventLoop, stopping: asyncio.Event) -> None: ...


class ForeignTarget(FlowdebugError):
    """A request target that would not stay on the upstream's host."""


def joined(base: str, target: str) -> str:
    """``base`` followed by ``target``, a path and query (or a query, or nothing);
    :class:`ForeignTarget` for anything else, and unless the result is on ``base``'s host. The
    raw target of ``POST %2F@evil.host/x`` decodes to a path that starts with "/" (so a route
    takes it) but, pasted after ``http://upstream``, would make the upstream's address a user
    name and send the request, with the agent's key, to ``evil.host``."""
    url = base.rstrip("/") + target
    if target[:1] not in ("", "/", "?") or httpx.URL(url).netloc != httpx.URL(base).netloc:
        raise ForeignTarget(f"the request target {target[:200]!r} is not a path")
    return url


def upstream_url(protocol: str, target: str, upstream: str | None) -> str | None:
    """Where a request for ``target`` (path and query) goes: ``upstream`` (else the vendor's
    base URL) followed by the path past the vendor's base path, which the agent's base URL
    ends in when it follows the vendor's own (``/v1``); None without either."""
    facts = protocols.facts(protocol)
    base = upstream or facts.base_url
    if base is None:
        return None
    prefix = facts.base_path
    if prefix and (target.startswith(prefix + "/") or target.startswith(prefix + "?")):
        target = target[len(prefix) :]
    return joined(base, target)


def _outgoing(headers: Any) -> dict[str, str]:
    out = {k: v for k, v in headers.items() if k.lower() not in HOP_BY_HOP}
    if "accept-encoding" in out:
        wanted = [e.strip() for e in out["accept-encoding"].split(",")]
        out["accept-encoding"] = (
            ", ".join(e for e in wanted if e.split(";")[0].strip().lower() in READABLE_ENCODINGS)
            or "identity"
        )
    return out


def _incoming(headers: httpx.Headers) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() not in HOP_BY_HOP - {"content-length"}}


class OriginForm:
    """ASGI middleware: a request whose target is not a path ("/..."), such as the
    absolute-form a forward-proxy client sends (``POST http://host/...``) or ``@host/...``, is
    refused with 400 before any route reads it."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        raw = scope.get("raw_path") or b""
        if scope["type"] != "http" or raw.startswith(b"/"):
            return await self.app(scope, receive, send)
        target = raw.decode("latin-1")[:200]
        log.warning("record: refused the request target %r", target)
        message = (
            f"the request target {target!r} is not a path: this is a reverse proxy "
            "(give the agent its base URL), not a forward proxy (flowdebug record --forward)"
        )
        body = json.dumps({"error": {"message": message}})
        await Response(body, 400, media_type="application/json")(scope, receive, send)


def create_app(host: Host) -> Starlette:
    """The ASGI app forwarding to ``host``'s upstream and recording into its recorder."""
    client: httpx.AsyncClient | None = None
    readers: set[asyncio.Task[None]] = set()  # answers still read for the recording

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        nonlocal client
        host.serving(asyncio.get_running_loop(), asyncio.Event())
        async with httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False) as client:
            try:
                yield
            finally:  # the server stops: what is still being read ends, recorded as cut off
                for task in list(readers):
                    task.cancel()
                await asyncio.gather(*readers, return_exceptions=True)

    async def relay(
        request: Request,
        url: str,
        body: bytes,
        capture: Capture,
        done: Callable[[], None] | None,
    ) -> Response | None:
        """Send the request on and stream the answer back; None when the upstream cannot be
        reached (``done`` has been called, ``capture`` says why). ``done``: the recording's,
        called once the answer is over; None for an answer nothing records (it streams
        through at the agent's pace)."""
        assert client is not None
        outgoing = client.build_request(request.method, url, headers=_outgoing(request.headers),
                                        content=body)  # fmt: skip
        try:
            answer = await client.send(outgoing, stream=True)
        except httpx.HTTPError as e:
            capture.respond(502, {"content-type": "text/plain"})
            capture.feed(f"the upstream {capture.url} cannot be reached: {e}".encode(), True)
            if done is not None:
                done()
            return None
        capture.respond(answer.status_code, answer.headers)
        headers = _incoming(answer.headers)
        if done is None:
            return StreamingResponse(through(answer), answer.status_code, headers)
        return StreamingResponse(recorded(answer, capture, done), answer.status_code, headers)

    async def through(answer: httpx.Response) -> AsyncIterator[bytes]:
        try:
            async for chunk in answer.aiter_raw():
                yield chunk
        finally:
            await answer.aclose()

    def recorded(
        answer: httpx.Response, capture: Capture, done: Callable[[], None]
    ) -> AsyncIterator[bytes]:
        """The answer's chunks for the agent, as they arrive, from a task that reads it to its
        end for the recording: an agent may hang up as soon as it has what it needs (OpenAI's
        SDK closes at ``data: [DONE]``, before the body's end). Once the agent has gone, the
        task reads on for :data:`GRACE` seconds at most, then cuts the upstream off (the
        exchange is then incomplete). The chunks wait in memory while the agent is slower
        than the upstream: a model's answer, which the recording keeps whole anyway."""
        handed: asyncio.Queue[bytes | BaseException | None] = asyncio.Queue()
        listening = True

        async def read() -> None:
            try:
                async for chunk in answer.aiter_raw():
                    if listening:
                        handed.put_nowait(chunk)
                    capture.feed(chunk)
                capture.feed(b"", final=True)
                handed.put_nowait(None)
            except Exception as e:  # the agent's answer breaks off as the upstream's did
                handed.put_nowait(e)
            except BaseException:  # cancelled: the grace is over, or the proxy stops
                handed.put_nowait(ConnectionAbortedError("the recording proxy cut the answer off"))
                raise
            finally:
                try:
                    await answer.aclose()
                finally:  # recorded even when cancelled again while closing
                    done()

        reader = asyncio.create_task(read())
        readers.add(reader)
        reader.add_done_callback(readers.discard)

        async def chunks() -> AsyncIterator[bytes]:
            nonlocal listening
            try:
                while (item := await handed.get()) is not None:
                    if isinstance(item, BaseException):
                        raise item
                    yield item
            finally:
                listening = False
                if not reader.done() and not capture.complete:  # the agent hung up early
                    asyncio.get_running_loop().call_later(GRACE, reader.cancel)

        return chunks()

    def refused(e: ForeignTarget) -> Response:
        log.warning("record: refused: %s", e)
        return Response(json.dumps({"error": {"message": str(e)}}), 400,
                        media_type="application/json")  # fmt: skip

    async def model(request: Request) -> Response:
        try:
            return await forward(request)
        except ForeignTarget as e:
            return refused(e)

    def misdirected(name: str) -> Response:
        message = f"{name!r} is not a host this proxy records"
        return Response(json.dumps({"error": {"message": message}}), 421,
                        media_type="application/json")  # fmt: skip

    async def forward(request: Request) -> Response:
        target = request_target(request)
        upstream, origin = host.upstream, host.upstream
        if host.upstreams is not None:
            name = urlsplit("//" + request.headers.get("host", "")).hostname or ""
            upstream = host.upstreams.get(name)
            if upstream is None:
                return misdirected(name)
            origin = urlsplit(upstream)._replace(path="", query="").geturl()
        found = vendor_route(target.split("?", 1)[0])
        if found is None:
            return await passthrough(request, target, origin)
        protocol, model_name, _, version = found
        try:
            body = await read_body(request, host.max_body)
        except TooLarge:
            message = f"the request body exceeds the proxy's limit of {host.max_body} bytes"
            return vendor_error(protocol, 413, model_name or "", message, version)
        except ClientDisconnect:
            return Response(status_code=499)
        url = upstream_url(protocol, target, upstream)
        if url is None:
            message = "this vendor has no default endpoint: start flowdebug record with --upstream"
            return vendor_error(protocol, 502, model_name or "", message, version)
        capture = Capture(request.method, strip_url_credentials(url),
                          redact_headers(request.headers), body)  # fmt: skip
        started = time.perf_counter()
        host.recorder.begin()

        def done() -> None:
            elapsed = (time.perf_counter() - started) * 1000
            path = strip_url_credentials(target)
            host.recorder.model(model_exchange(protocol, path, capture, elapsed))

        answer = await relay(request, url, body, capture, done)
        if answer is None:
            return vendor_error(protocol, 502, model_name or "", capture.response_text, version)
        log.info("record: %s %s -> %s", request.method, target, capture.status)
        return answer

    async def passthrough(request: Request, target: str, origin: str | None) -> Response:
        """Any other path goes on to ``origin`` (``--upstream``; the forward proxy's host)
        unrecorded (a model list, a token count); without one there is nowhere to send it."""
        if origin is None:
            return Response(
                json.dumps({"error": {"message": f"no such route: {target}"}}),
                404,
                media_type="application/json",
            )
        url = joined(origin, target)
        body = await request.body()
        capture = Capture(request.method, url, {}, body)
        answer = await relay(request, url, body, capture, None)
        return answer or Response(capture.response_text, 502)

    async def mcp(request: Request) -> Response:
        from flowdebug.record.mcp import mcp_messages

        assert host.mcp_url is not None
        target = request_target(request)
        try:
            url = joined(host.mcp_url, target[len(MCP_PATH) :])
        except ForeignTarget as e:
            return refused(e)
        body = await read_body(request, host.max_body) if request.method == "POST" else b""
        if body:
            host.recorder.mcp(mcp_exchange("client", "http", body, mcp_messages(body)))
        capture = Capture(request.method, url, {}, body)

        def event(value: Any) -> None:
            raw = json.dumps(value).encode()
            host.recorder.mcp(mcp_exchange("server", "http", raw, [value]))

        capture.on_event = event

        def done() -> None:
            if capture.events is None and capture.response_body:
                raw = bytes(capture.response_body)
                host.recorder.mcp(mcp_exchange("server", "http", raw, mcp_messages(raw)))

        answer = await relay(request, url, body, capture, done)
        return answer or Response(capture.response_text, 502)

    routes = []
    if host.mcp_url is not None:
        verbs = ["GET", "POST", "DELETE"]
        routes += [Route(MCP_PATH, mcp, methods=verbs), Route(MCP_PATH + "/{rest:path}", mcp,
                                                               methods=verbs)]  # fmt: skip
    routes.append(Route("/{path:path}", model, methods=["GET", "POST", "PUT", "DELETE"]))
    return Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(OriginForm)])
